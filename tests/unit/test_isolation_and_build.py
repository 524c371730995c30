from harness.eval.build import build_sha256, log_excerpt, summarize_failure
from harness.eval.candidate import candidate_from_source
from harness.process import child_env
from harness.types import DeviceInfo


def test_child_env_drops_secrets_and_keeps_the_rest(monkeypatch):
    for name in ("OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "github_token"):
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("HARMLESS", "1")
    env = child_env({"EXTRA": "2"})
    assert not {"OPENAI_API_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "github_token"} & set(env)
    assert env["HARMLESS"] == "1" and env["EXTRA"] == "2" and "PATH" in env


def test_build_key_covers_source_and_target():
    a, b = candidate_from_source("a"), candidate_from_source("b")
    h100 = DeviceInfo(target="cuda", name="H100", index=0, arch="9.0a")
    a100 = DeviceInfo(target="cuda", name="A100", index=0, arch="8.0")
    cpu = DeviceInfo(target="cpu", name="cpu")
    keys = {build_sha256(a, h100), build_sha256(b, h100), build_sha256(a, a100), build_sha256(a, cpu)}
    assert len(keys) == 4
    assert build_sha256(a, h100) == build_sha256(a, h100.model_copy(update={"index": 3}))  # same arch, same build


LOG = """[1/2] c++ -MMD -MF main.o.d ... -c main.cpp -o main.o
FAILED: main.o
main.cpp:4:12: error: 'foo' was not declared in this scope
    4 |     return foo(x);
ninja: build stopped: subcommand failed.
Traceback (most recent call last):
  File "cpp_extension.py", line 2893, in _run_ninja_build
subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "candidate.py", line 11, in <module>
RuntimeError: Error building extension 'broken'
"""


def test_failure_summary_names_the_compiler_error_and_the_exception():
    summary = summarize_failure(LOG)
    assert summary.splitlines() == ["main.cpp:4:12: error: 'foo' was not declared in this scope",
                                    "RuntimeError: Error building extension 'broken'"]


def test_log_excerpt_stops_before_the_python_traceback():
    excerpt = log_excerpt(LOG)
    assert "error: 'foo'" in excerpt and "Traceback" not in excerpt


def test_failure_summary_of_a_plain_exception():
    log = ("Traceback (most recent call last):\n  File x\n"
           "TypeError: load_inline() got an unexpected keyword argument 'extra_cuda_flags'\n")
    assert summarize_failure(log) == "TypeError: load_inline() got an unexpected keyword argument 'extra_cuda_flags'"


def test_a_flooded_log_keeps_its_head_and_tail_within_the_limit(tmp_path):
    from harness.process import read_log

    log = tmp_path / "build.log"
    log.write_bytes(b"harness: first line\n" + b"x" * (3 << 20) + b"\nerror: the last words\n")
    text = read_log(log, limit=1 << 20)
    assert len(text) < (1 << 20) + 100 and "bytes of this log cut" in text
    assert text.startswith("harness: first line") and text.endswith("error: the last words\n")
    log.write_text("short\n")
    assert read_log(log) == "short\n"


def test_a_report_that_is_not_one_is_none(tmp_path):
    from harness.eval.children import REPORT_LIMIT, read_report
    from harness.protocol import WorkerReport

    report = WorkerReport(status="incorrect", device_name="cpu", torch_version="t", error="e")
    good = tmp_path / "good.json"
    good.write_text(report.model_dump_json())
    assert read_report(good) == report
    (tmp_path / "dir").mkdir()
    (tmp_path / "garbage.json").write_text('{"status": "correct", "speedup": ')
    (tmp_path / "wrong.json").write_text('{"status": "fastest"}')
    (tmp_path / "big.json").write_text(report.model_dump_json()[:-1] + " " * REPORT_LIMIT + "}")
    for name in ("dir", "garbage.json", "wrong.json", "big.json", "missing.json"):
        assert read_report(tmp_path / name) is None, name
