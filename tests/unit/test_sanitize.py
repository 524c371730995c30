"""compute-sanitizer's report read (eval/sanitize.py: findings, judged), where `--sanitize` can run (require), and
which stored results it may serve again (pipeline.sanitized_with). The report below is in the tool's own shape."""
import pytest

from harness.errors import InputError
from harness.eval import cuda_tools, sanitize
from harness.eval.pipeline import sanitized_with
from harness.eval.sanitize import ERROR_EXIT, ToolRun, findings, judged, require
from harness.evidence import Sanitized
from tests.conftest import eval_result

REPORT = """\
========= COMPUTE-SANITIZER
candidate printed this
========= Invalid __global__ write of size 16 bytes
=========     at relu4(const float4 *, float4 *, long)+0x2b0 in /cache/builds/abc/ext0_relu/cuda.cu:7
=========     by thread (31,0,0) in block (4095,0,0)
=========     Address 0x7f1e40000000 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f1e00000000 of size 1073741823 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f2b5f] in libcuda.so.1
=========         Host Frame: [0x15803] in libcudart.so.13
=========
========= ERROR SUMMARY: 1 error
"""


def test_findings_are_the_summary_s_count_and_the_report_s_lines_without_backtraces():
    errors, lines = findings(REPORT, {"/cache/builds/abc": "<build>"})
    assert errors == 1
    assert lines == ("Invalid __global__ write of size 16 bytes",
                     "    at relu4(const float4 *, float4 *, long)+0x2b0 in <build>/ext0_relu/cuda.cu:7",
                     "    by thread (31,0,0) in block (4095,0,0)",
                     "    Address 0x7f1e40000000 is out of bounds",
                     "    and is 1 bytes after the nearest allocation at 0x7f1e00000000 of size 1073741823 bytes")


RACECHECK_CLEAN = """\
========= COMPUTE-SANITIZER
ok
========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)
"""  # compute-sanitizer 2025.3.1's racecheck on an H100, verbatim


def test_racecheck_s_summary_counts_its_errors_not_its_warnings():
    assert findings(RACECHECK_CLEAN, {}) == (0, ())
    raced = ("========= Error: Race reported between Write access at relu(float*)+0x90\n"
             "=========     and Read access at relu(float*)+0xd0 [128 hazards]\n"
             "========= RACECHECK SUMMARY: 3 hazards displayed (1 error, 2 warnings)\n")
    assert findings(raced, {}) == (1, ("Error: Race reported between Write access at relu(float*)+0x90",
                                       "    and Read access at relu(float*)+0xd0 [128 hazards]"))
    assert judged(eval_result(), "racecheck", ToolRun(0, RACECHECK_CLEAN, "correct", None), {}, 1.0).status == "correct"


def test_no_summary_is_no_count():
    assert findings("========= COMPUTE-SANITIZER\nkilled\n", {}) == (None, ())


@pytest.mark.parametrize("run, status", [
    (ToolRun(0, "========= ERROR SUMMARY: 0 errors\n", "correct", None), "correct"),
    (ToolRun(ERROR_EXIT, REPORT, "correct", None), "runtime_error"),
    (ToolRun(ERROR_EXIT, "", "correct", None), "runtime_error"),  # its log cut: the status still says errors
    (ToolRun(0, "killed before its summary", "correct", None), "runtime_error"),  # the tool did not finish
    (ToolRun(-9, "========= ERROR SUMMARY: 0 errors\n", "correct", None), "runtime_error"),  # a summary printed
    (ToolRun(None, "========= ERROR SUMMARY: 0 errors\n", "correct", None), "runtime_error"),  # no end
    (ToolRun(0, "========= ERROR SUMMARY: 0 errors\n", "runtime_error", "the channel closed"), "runtime_error"),
    (ToolRun(0, "", "harness_error", "the judge failed"), "harness_error"),
])
def test_only_the_tool_s_clean_end_keeps_the_verdict(run, status):
    result = judged(eval_result(), "memcheck", run, {}, 12.5)
    assert result.status == status, result.error
    assert result.sanitizer.tool == "memcheck" and result.sanitizer.seconds == 12.5
    if status != "correct":
        assert result.speedup is None


def test_a_clean_run_keeps_an_incorrect_verdict_and_its_message():
    wrong = eval_result().model_copy(update={"status": "incorrect", "error": "mismatch at [3]", "speedup": None})
    result = judged(wrong, "memcheck", ToolRun(0, "========= ERROR SUMMARY: 0 errors", "incorrect", None), {}, 1.0)
    assert (result.status, result.error) == ("incorrect", "mismatch at [3]")
    flagged = judged(wrong, "memcheck", ToolRun(ERROR_EXIT, REPORT, "incorrect", None), {}, 1.0)
    assert flagged.status == "runtime_error" and "(the check: mismatch at [3])" in flagged.error
    assert "its outputs matched" not in flagged.error


def test_sanitize_is_refused_where_it_cannot_run(monkeypatch):
    require(None, "cpu")  # not asked: nothing to refuse
    with pytest.raises(InputError, match="needs the cuda target"):
        require("memcheck", "cpu")
    with pytest.raises(InputError, match="the tools are memcheck, racecheck"):
        require("initcheck", "cuda")
    monkeypatch.delenv(sanitize.PATH_ENV, raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("CUDA_HOME", "/nonexistent")
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(cuda_tools, "DEFAULT_CUDA_HOME", "/nonexistent")
    with pytest.raises(InputError, match="needs NVIDIA's compute-sanitizer"):
        require("memcheck", "cuda")
    monkeypatch.setenv(sanitize.PATH_ENV, "/opt/cuda/bin/compute-sanitizer --check-api-memory-access yes")
    require("memcheck", "cuda")
    assert list(sanitize.runner_tool("racecheck").argv[:4]) == ["/opt/cuda/bin/compute-sanitizer",
                                                       "--check-api-memory-access", "yes", "--tool"]


def test_a_stored_result_serves_a_sanitized_run_only_with_the_same_tool_s_findings():
    found = Sanitized(tool="memcheck", errors=0, exit_status=0)
    assert sanitized_with(eval_result().model_copy(update={"sanitizer": found}), "memcheck")
    assert not sanitized_with(eval_result().model_copy(update={"sanitizer": found}), "racecheck")
    assert not sanitized_with(eval_result(), "memcheck")  # correct, never sanitized
    assert sanitized_with(eval_result().model_copy(update={"status": "compile_error"}), "memcheck")  # never ran
