"""The child-process sandbox (harness/sandbox.py, issue 19): each test runs a real sandboxed `python -c` child and
checks from both sides what it could and could not do. Skipped where the kernel refuses the sandbox, except
under CI (the CI variable set), where that fails."""
import contextlib
import errno
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from harness import sandbox
from harness.process import child_env
from tests.conftest import REPO


@pytest.fixture(autouse=True, scope="module")
def sandbox_works():
    reason = sandbox.probe()
    if reason is not None and os.environ.get("CI"):
        pytest.fail(f"CI must be able to run the sandbox, but: {reason}")
    if reason is not None:
        pytest.skip(f"the sandbox does not work on this machine: {reason}")


def sandboxed(policy: sandbox.Policy, code: str) -> list[str]:
    return sandbox.command(policy, [sys.executable, "-c", textwrap.dedent(code)])


def run(policy: sandbox.Policy, code: str, timeout: float = 60, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(sandboxed(policy, code), capture_output=True, text=True, timeout=timeout,
                          env=child_env(kwargs.pop("env", None)), **kwargs)


def report(done: subprocess.CompletedProcess) -> dict:
    """The JSON object a child printed last."""
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


TRY_WRITE = """
import errno, json, os, sys
def attempt(path):
    try:
        with open(path, "w") as f:
            f.write("x")
        return "ok"
    except OSError as exc:
        return errno.errorcode[exc.errno]
print(json.dumps({path: attempt(path) for path in sys.argv[1:]}))
"""


def test_only_scratch_and_shm_are_writable(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    tag = uuid.uuid4().hex
    outside = [tmp_path / "beside-scratch", REPO / f".sandbox-escape-{tag}", Path("/tmp") / f"sandbox-escape-{tag}"]
    if Path.home().is_dir():
        outside.append(Path.home() / f".sandbox-escape-{tag}")
    shm = f"/dev/shm/sandbox-{tag}"
    argv = [sys.executable, "-c", TRY_WRITE, str(scratch / "a"), "relative", shm, "/proc/sys/kernel/hostname",
            *map(str, outside)]
    done = subprocess.run(sandbox.command(sandbox.Policy(scratch), argv), capture_output=True, text=True,
                          timeout=60, cwd=scratch, env=child_env())
    found = report(done)
    assert found.pop(str(scratch / "a")) == "ok" and (scratch / "a").read_text() == "x"
    assert found.pop("relative") == "ok" and (scratch / "relative").read_text() == "x"  # cwd is scratch
    assert found.pop(shm) == "ok" and not os.path.exists(shm)  # a private /dev/shm
    assert set(found.values()) <= {"EROFS", "EACCES"}, found
    assert not any(path.exists() for path in outside)


def test_hidden_store_cannot_be_read_written_or_removed(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    store = [results / "harness.db", results / "harness.db-wal", results / "harness.db-shm"]
    for path in store:
        path.write_text("secret")
    code = """
    import json, os, sys
    found = {}
    for path in sys.argv[1:]:
        try:
            found[path] = open(path).read()
        except OSError as exc:
            found[path] = exc.__class__.__name__
        for name, act in (("write", lambda: open(path, "a").write("x")), ("unlink", lambda: os.unlink(path)),
                          ("rename", lambda: os.rename(path, path + ".moved"))):
            try:
                act()
                found[path + " " + name] = "ok"
            except OSError as exc:
                found[path + " " + name] = "refused"
    print(json.dumps(found))
    """
    # The store sits in a writable directory here, the hardest case: it must stay covered all the same.
    policy = sandbox.Policy(tmp_path / "results", hidden=tuple(store))
    done = subprocess.run(sandbox.command(policy, [sys.executable, "-c", textwrap.dedent(code), *map(str, store)]),
                          capture_output=True, text=True, timeout=60, env=child_env())
    found = report(done)
    for path in map(str, store):
        assert found[path] in ("", "PermissionError", "FileNotFoundError"), found
        assert [found[f"{path} {act}"] for act in ("write", "unlink", "rename")] == ["refused"] * 3, found
    assert all(path.read_text() == "secret" for path in store)


def test_no_network(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(0.5)
        port = listener.getsockname()[1]
        code = f"""
        import json, socket
        try:
            socket.create_connection(("127.0.0.1", {port}), timeout=5).sendall(b"leak")
            print(json.dumps("connected"))
        except OSError as exc:
            print(json.dumps(exc.__class__.__name__))
        """
        assert report(run(sandbox.Policy(tmp_path), code)) in ("ConnectionRefusedError", "OSError")
        with pytest.raises(socket.timeout):
            listener.accept()


def test_parent_is_invisible_and_out_of_reach(tmp_path):
    me = os.getpid()
    code = f"""
    import json, os
    try:
        os.kill({me}, 0)
        kill = "ok"
    except OSError as exc:
        kill = exc.__class__.__name__
    try:
        init_env = len(open("/proc/1/environ").read())
    except OSError as exc:
        init_env = exc.__class__.__name__
    print(json.dumps({{"ppid": os.getppid(), "proc": os.path.exists("/proc/{me}"), "kill": kill,
                      "init_env": init_env, "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit())}}))
    """
    found = report(run(sandbox.Policy(tmp_path), code))
    assert found["ppid"] == 1 and not found["proc"] and found["kill"] == "ProcessLookupError", found
    assert found["init_env"] == "PermissionError", found  # the init is not dumpable: no reading it
    assert found["pids"] == [1, 2], found  # the init and the command: nothing else is visible


def test_dev_holds_harmless_devices_alone(tmp_path):
    code = """
    import json, os
    print(json.dumps({"dev": sorted(os.listdir("/dev")), "null": open("/dev/null", "w").write("x"),
                      "urandom": len(open("/dev/urandom", "rb").read(8))}))
    """
    found = report(run(sandbox.Policy(tmp_path), code))
    assert found == {"dev": ["fd", "full", "null", "random", "shm", "stderr", "stdin", "stdout", "tty", "urandom",
                             "zero"], "null": 1, "urandom": 8}


def marked_processes(marker: str) -> list[int]:
    """The processes whose command line carries `marker`, seen from outside."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


# Starts a process that outlives its parent in a new session (a daemon: double fork, setsid) and one that does
# not, both sleeping 60 s with a marker on their command line; then says so in scratch/ready and waits for
# scratch/go (written from outside) before it exits.
DAEMON = """
import os, subprocess, sys, time
marker, scratch = "sandbox-sleeper-" + sys.argv[1], sys.argv[2]
sleeper = [sys.executable, "-c", "import time; time.sleep(60)", marker]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv(sys.executable, sleeper)
    os._exit(0)
os.wait()
subprocess.Popen(sleeper)
while sum(1 for p in os.listdir("/proc") if p.isdigit()) < 4:  # init, this, the daemon, the sleeper
    time.sleep(0.01)
time.sleep(0.2)  # both have exec'd
open(os.path.join(scratch, "ready"), "w").close()
while not os.path.exists(os.path.join(scratch, "go")):
    time.sleep(0.01)
"""


@pytest.fixture
def daemons(tmp_path: Path):
    """A sandboxed child that has started its daemon and its sleeper, and the marker they carry."""
    tag = uuid.uuid4().hex
    argv = [sys.executable, "-c", DAEMON, tag, str(tmp_path)]
    marker = f"sandbox-sleeper-{tag}"  # on the sleepers' command lines alone
    proc = subprocess.Popen(sandbox.command(sandbox.Policy(tmp_path), argv), env=child_env(), start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not (tmp_path / "ready").exists():
            assert proc.poll() is None and time.monotonic() < deadline, "the sandboxed child started no daemon"
            time.sleep(0.01)
        assert len(marked_processes(marker)) == 2  # seen from outside: the checks below can see them
        yield proc, marker
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_everything_inside_ends_with_the_child(tmp_path, daemons):
    proc, marker = daemons
    (tmp_path / "go").touch()
    assert proc.wait(timeout=30) == 0
    assert marked_processes(marker) == []


def test_killing_the_launcher_alone_kills_everything_inside(daemons):
    proc, marker = daemons
    os.kill(proc.pid, signal.SIGKILL)  # not the group: the daemon left it anyway
    assert proc.wait(timeout=30) == -signal.SIGKILL
    deadline = time.monotonic() + 5  # the init dies of its parent's death, a moment later
    while marked_processes(marker) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marked_processes(marker) == []


def test_limits_and_no_new_privileges(tmp_path):
    policy = sandbox.Policy(tmp_path, max_processes=300, max_file_bytes=1 << 20, max_open_files=100, cpu_seconds=50)
    code = """
    import json, os, resource
    names = ("NPROC", "FSIZE", "NOFILE", "CPU")
    limits = {name: resource.getrlimit(getattr(resource, "RLIMIT_" + name)) for name in names}
    try:
        with open("big", "wb") as f:
            f.write(b"x" * (2 << 20))
        big = "written"
    except OSError as exc:
        big = exc.errno
    status = dict(line.split(":\\t") for line in open("/proc/self/status").read().splitlines() if ":\\t" in line)
    print(json.dumps({"limits": limits, "big": big, "nnp": status["NoNewPrivs"].strip(),
                      "caps": [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]}))
    """
    found = report(run(policy, code, cwd=tmp_path))
    assert found["limits"] == {"NPROC": [300, 300], "FSIZE": [1 << 20, 1 << 20], "NOFILE": [100, 100],
                               "CPU": [50, 55]}
    assert found["big"] == errno.EFBIG and (tmp_path / "big").stat().st_size == 1 << 20
    assert found["nnp"] == "1" and found["caps"] == ["0000000000000000"] * 5


def test_exit_status_output_and_signals_pass_through(tmp_path):
    code = """
    import os, signal, sys
    print("to stdout")
    print("to stderr", file=sys.stderr)
    if sys.argv[1:] == ["signal"]:
        sys.stdout.flush()
        os.kill(os.getpid(), signal.SIGTERM)
    sys.exit(3)
    """
    done = run(sandbox.Policy(tmp_path), code)
    assert (done.returncode, done.stdout, done.stderr) == (3, "to stdout\n", "to stderr\n")
    killed = subprocess.run(sandbox.command(sandbox.Policy(tmp_path), [sys.executable, "-c", textwrap.dedent(code),
                                                                       "signal"]), capture_output=True, text=True)
    assert killed.returncode == -signal.SIGTERM and killed.stdout == "to stdout\n"


def test_environment_cwd_and_harness_import_work_inside(tmp_path):
    code = """
    import json, os, tempfile
    import harness.process
    with tempfile.NamedTemporaryFile() as f:
        made = f.name
    print(json.dumps({"cwd": os.getcwd(), "var": os.environ.get("SANDBOX_TEST"), "tmp": tempfile.gettempdir(),
                      "made": made, "harness": harness.process.__file__}))
    """
    found = report(run(sandbox.Policy(tmp_path), code, cwd=tmp_path, env={"SANDBOX_TEST": "kept"}))
    assert found["cwd"] == str(tmp_path.resolve()) and found["var"] == "kept"
    assert found["tmp"] == str(tmp_path.resolve() / ".tmp") and found["made"].startswith(found["tmp"])
    assert found["harness"] == str(REPO.resolve() / "harness" / "process.py")


def test_a_refusing_kernel_is_named(tmp_path):
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux's unshare")
    code = "from harness import sandbox; print(sandbox.probe())"
    script = f"echo 0 > /proc/sys/user/max_user_namespaces && exec {sys.executable} -c '{code}'"
    done = subprocess.run(["unshare", "-r", "sh", "-c", script], capture_output=True, text=True, timeout=60,
                          env=child_env())
    assert done.stdout.startswith("the kernel refused new user, mount, PID") and done.returncode == 0, done
    assert "(user.max_user_namespaces=0)" in done.stdout


def test_unavailable_sandbox_says_why_and_how_to_turn_it_off(monkeypatch):
    from harness.eval import confine

    assert confine.enabled("off") is False and confine.enabled("on") is True and confine.enabled("auto") is True
    monkeypatch.setattr(sandbox, "probe", lambda: "the kernel refused new user namespaces")
    with pytest.raises(confine.SandboxUnavailable, match="refused new user namespaces.*--sandbox off"):
        confine.enabled("on")
    assert confine.enabled("auto") is False and confine.enabled("off") is False


# Slow (~30 s here): torch imported, and a C++ extension built with load_inline, inside the sandbox.
def test_torch_and_a_cpp_extension_build_inside(tmp_path):
    code = """
    import json, os, torch
    from torch.utils.cpp_extension import load_inline
    source = "#include <torch/extension.h>\\ntorch::Tensor twice(torch::Tensor x) { return x * 2; }"
    os.makedirs("ext")
    module = load_inline("sandbox_twice", cpp_sources=source, functions=["twice"], build_directory="ext")
    print(json.dumps({"ones": (torch.ones(2) + 1).tolist(), "twice": module.twice(torch.ones(2)).tolist()}))
    """
    found = report(run(sandbox.Policy(tmp_path), code, timeout=600, cwd=tmp_path))
    assert found == {"ones": [2.0, 2.0], "twice": [2.0, 2.0]}
    assert any((tmp_path / "ext").glob("*.so"))


@pytest.mark.gpu
def test_gpu_only_where_the_policy_gives_it(tmp_path):
    if not os.path.exists("/dev/nvidiactl"):
        pytest.skip("needs an NVIDIA GPU")
    code = """
    import json, os, torch
    cuda = torch.cuda.is_available() and (torch.ones(2, device="cuda") + 1).tolist()
    print(json.dumps({"cuda": cuda, "nvidia": sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))}))
    """
    with_gpu = report(run(sandbox.Policy(tmp_path, gpu=True), code))
    assert with_gpu["cuda"] == [2.0, 2.0] and "nvidiactl" in with_gpu["nvidia"]
    assert report(run(sandbox.Policy(tmp_path, gpu=False), code)) == {"cuda": False, "nvidia": []}
