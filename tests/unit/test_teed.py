"""What a build printed, read back as it goes on to the log (harness/fastbuild/teed.py): in a real process whose
descriptors 1 and 2 are one log file, as a build child's are, with real child processes writing to them."""
import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SCRIPT = """
import json, subprocess, sys
from harness.fastbuild import teed

teed.LIMIT, teed.DRAIN_S = int(sys.argv[1]), 0.5
print("before", flush=True)
with teed.teed() as printed:
    print("python's own", flush=True)
    subprocess.run(["sh", "-c", sys.argv[2]])
    print("torch's logging", file=sys.stderr, flush=True)
print("after", flush=True)
print(json.dumps({"text": printed.text}), file=sys.stderr)
"""


def run_in_a_build_child_s_arrangement(tmp_path: Path, shell: str, limit: int = 1 << 20) -> tuple[str, str | None]:
    """The log the script's descriptors 1 and 2 went to (its last line, what teed read back, taken off). What the
    shell line left running is killed after (the script runs in a process group of its own)."""
    log = tmp_path / "build.log"
    with open(log, "wb") as handle:
        script = subprocess.Popen([sys.executable, "-c", SCRIPT, str(limit), shell], stdout=handle,
                                  stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)
        try:
            assert script.wait(timeout=60) == 0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(script.pid, signal.SIGKILL)
            script.wait()
    *lines, last = log.read_text().splitlines(keepends=True)
    return "".join(lines), json.loads(last)["text"]


def test_the_output_goes_on_to_the_log_in_order_and_is_read_back(tmp_path):
    log, text = run_in_a_build_child_s_arrangement(tmp_path, "echo a line of ninja; echo an error of the compiler >&2")
    inside = "python's own\na line of ninja\nan error of the compiler\ntorch's logging\n"
    assert log == "before\n" + inside + "after\n"
    assert text == inside


def test_more_than_the_limit_goes_on_but_is_not_read_back(tmp_path):
    log, text = run_in_a_build_child_s_arrangement(tmp_path, "seq 1 2000", limit=1000)
    assert "\n1999\n2000\n" in log
    assert text is None


def test_a_process_that_outlives_the_block_does_not_hold_it_up(tmp_path):
    """A compiler's helper left running with the pipe (the script would wait for it two minutes, past the minute
    it is given): the block ends, what was read so far is not taken as all of it."""
    log, text = run_in_a_build_child_s_arrangement(tmp_path, "echo started; (sleep 120; echo late) &")
    assert log == "before\npython's own\nstarted\ntorch's logging\nafter\n"
    assert text is None
