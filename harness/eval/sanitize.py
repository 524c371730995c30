"""`--sanitize`: NVIDIA's compute-sanitizer over one checked call, as evidence beside the check. A candidate whose
outputs were judged (correct or incorrect) is run once more in new children, its runner under `compute-sanitizer
--tool memcheck` (or racecheck) inside its own sandbox (the tool reaches its target over a local port, which a
sandbox's network namespace would cut between them), without PyTorch's caching allocator (an access past a tensor's
end is then past its allocation, not inside a cached block): set-up and trial 0 on the problem as written, no
poisoning, no coverage, no timing. Any error the tool reports makes the verdict a runtime_error that quotes its
lines, even where the outputs matched.

What decides is the tool's exit status, which the runner's sandbox hands the parent: ERROR_EXIT where it found
errors, else the runner's own 0. A candidate can print lines like the tool's (they only add errors) or cut its log
(it loses only the quotes); it cannot give the tool another status, and one that kills the tool gets a signal's
status, which is no pass."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.errors import InputError
from harness.eval import cuda_tools
from harness.eval.children import RunnerTool, observe_under
from harness.eval.job import JobContext
from harness.evidence import Sanitized
from harness.types import HARNESS_ERROR, RAN, EvalResult

TOOLS = ("memcheck", "racecheck")
ERROR_EXIT = 86  # the tool's exit status where it found errors (--error-exitcode)
PATH_ENV = "HARNESS_COMPUTE_SANITIZER"  # the compute-sanitizer to run (default: PATH's, else CUDA_HOME's)
# the runner's environment under the tool: every tensor its own allocation, so its bounds are the allocation's
RUNNER_ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}
PREFIX = "========= "  # every line the tool prints starts so
QUOTED_LINES = 24  # of the tool's report, in the verdict's message
# memcheck's summary counts its errors; racecheck's counts hazards, of which those it is sure of are errors
_SUMMARY = re.compile(r"^=+ (?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: \d+ hazards? displayed "
                      r"\((\d+) errors?, \d+ warnings?\))", re.MULTILINE)
_SUMMARY_LINES = ("COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "Target application returned")


def sanitized(ctx: JobContext, result: EvalResult) -> EvalResult:
    """`result` (correct or incorrect: its candidate ran) with the tool's evidence from a run of its own."""
    settings = ctx.batch.settings
    tool = settings.sanitize
    assert tool is not None  # asked for
    observed, seconds = observe_under(ctx, runner_tool(tool))
    if isinstance(observed, EvalResult):  # it timed out, or the judge failed: no run to read
        if observed.status == HARNESS_ERROR:
            return observed
        return result.model_copy(update={
            "status": observed.status, "speedup": None, "sanitizer": Sanitized(tool=tool, seconds=round(seconds, 3)),
            "error": f"the run under compute-sanitizer {tool}: {observed.error}"})
    run = ToolRun(observed.runner_code, observed.runner_log, observed.report.status, observed.report.error)
    return judged(result, tool, run, observed.renames, seconds)


def executable() -> list[str] | None:
    """The compute-sanitizer to run: $HARNESS_COMPUTE_SANITIZER (a command line), else PATH's, else the CUDA
    toolkit's."""
    return cuda_tools.command("compute-sanitizer", PATH_ENV)


def require(tool: str | None, target: str) -> None:
    """A clear error before anything runs, where --sanitize cannot be served."""
    if tool is None:
        return
    if tool not in TOOLS:
        raise InputError(f"--sanitize {tool}: the tools are {', '.join(TOOLS)}")
    if target != "cuda":
        raise InputError("--sanitize checks CUDA kernels: it needs the cuda target (a GPU); leave it off on the cpu "
                         "target")
    if executable() is None:
        raise InputError("--sanitize needs NVIDIA's compute-sanitizer (part of the CUDA toolkit): put it on PATH, "
                         f"set CUDA_HOME, or name it in {PATH_ENV}")


def runner_tool(tool: str) -> RunnerTool:
    """compute-sanitizer's `tool`, as the runner runs under it inside its sandbox."""
    exe = executable()
    if exe is None:
        raise InputError(f"compute-sanitizer not found (PATH, CUDA_HOME, {PATH_ENV})")
    return RunnerTool((*exe, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--print-limit", "10"), RUNNER_ENV)


def findings(log: str, renames: dict[str, str]) -> tuple[int | None, tuple[str, ...]]:
    """From the runner's log: the error count of the tool's last summary (None: no summary, the tool did not
    finish) and the lines of its reports worth quoting (without its banner, summary and host backtraces), paths of
    the build and scratch directories renamed."""
    summaries = _SUMMARY.findall(log)
    errors = int("".join(summaries[-1])) if summaries else None
    lines: list[str] = []
    in_backtrace = False
    for raw in log.splitlines():
        if not raw.startswith(PREFIX.rstrip()):
            continue
        line = raw[len(PREFIX):].rstrip() if raw.startswith(PREFIX) else ""
        if not line.strip() or line.startswith(_SUMMARY_LINES):
            in_backtrace = False
            continue
        if "Saved host backtrace" in line:
            in_backtrace = True
            continue
        if in_backtrace and line.lstrip().startswith("Host Frame"):
            continue
        in_backtrace = False
        for path, name in renames.items():
            line = line.replace(path, name)
        lines.append(line)
    return errors, tuple(lines[:QUOTED_LINES])


@dataclass(frozen=True)
class ToolRun:
    """What the parent read of one run under the tool."""

    code: int | None  # the runner's exit status under the tool (None: it had not ended when the judge was done)
    log: str  # the runner's log, the tool's lines among the candidate's
    status: str  # what the judge reported of the run
    error: str | None


def judged(result: EvalResult, tool: str, run: ToolRun, renames: dict[str, str], seconds: float) -> EvalResult:
    """The verdict with the tool's evidence."""
    code, sanitized_status, sanitized_error = run.code, run.status, run.error
    errors, lines = findings(run.log, renames)
    record = Sanitized(tool=tool, errors=errors, exit_status=code, lines=lines, seconds=round(seconds, 3))
    update: dict = {"sanitizer": record}
    quoted = "\n".join(lines)
    if code == ERROR_EXIT or (errors or 0) > 0:
        count = f"{errors} error{'s' * (errors != 1)}" if errors else "errors"
        matched = " (its outputs matched)" if result.status == "correct" else ""
        update |= {"status": "runtime_error", "speedup": None,
                   "error": f"compute-sanitizer {tool} found {count} in one checked call of the problem as written"
                            f"{matched}:\n{quoted}" + (f"\n(the check: {result.error})" if result.error else "")}
    elif sanitized_status == HARNESS_ERROR:
        update |= {"status": HARNESS_ERROR, "speedup": None,
                   "error": f"harness error: the sanitized run failed before the candidate's code ran: "
                            f"{sanitized_error}"}
    elif code != 0 or errors is None or sanitized_status not in RAN:
        ended = "did not end" if code is None else f"ended with status {code}"
        update |= {"status": "runtime_error", "speedup": None,
                   "error": f"the candidate's run under compute-sanitizer {tool} {ended} without the tool's summary "
                            f"or with a failure: {sanitized_error or 'no error reported'}"
                            + (f"\n{quoted}" if quoted else "")}
    return result.model_copy(update=update)
