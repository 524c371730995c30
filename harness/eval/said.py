"""What the candidate's own code said, read from its processes' logs: the failures it caught, and the end of what it
printed. A verdict that is not `correct` quotes both, so the next turn knows *why* (a build that failed in
`__init__` inside `try/except`, quoted nowhere else, is the most common first answer of RL-trained models).

  caught   a build at import that failed and was caught (the build child's CAUGHT_BUILD), a build in `__init__` or
           `forward`, an exception from a function of its extension (the runner's CAUGHT_AT_RUN: child/caught.py)
  printed  its stdout and stderr in its build, its set-up and its first checked call (up to the runner's
           FIRST_CALL_DONE), without the harness's own lines, the build tool's progress or the harness's paths

The candidate can print these markers itself; that only changes what its own feedback quotes.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from harness.eval.build import error_lines
from harness.markers import CANDIDATE_STARTS, CAUGHT_AT_RUN, CAUGHT_BUILD, FIRST_CALL_DONE
from harness.process import tail

PRINTED_LINES = 40
PRINTED_CHARS = 4000
COMPILER_LINES = 30
# The build tool's own lines in a build log: ninja's steps (their compiler commands), torch's notes on them
_BUILD_TOOL = re.compile(r"^(\[\d+/\d+\] |ninja: |Emitting ninja build file|Building extension module|Allowing ninja|"
                         r"Loading extension module|Using .* as PyTorch extensions root|Detected CUDA files)")

_COMMAND = re.compile(r"^\S*(c\+\+|g\+\+|gcc|clang\+\+|nvcc|cc)\s+-")


@dataclass(frozen=True)
class CaughtFailure:
    what: str  # "build" or "exception"
    where: str  # "at import", "in ModelNew.__init__", "in forward"
    name: str  # the extension, or its function
    error: str
    line: int | None = None  # the answer's line that made the call

    def quote(self) -> str:
        if self.what == "build":
            return (f"The build of extension '{self.name}' {self.where} failed, and your code caught the exception; "
                    f"the compiler said:\n{error_lines(_compiler_output(self.error), limit=COMPILER_LINES)}")
        at = f" (line {self.line} of your answer)" if self.line else ""
        return f"Your code caught an exception from its extension function '{self.name}' {self.where}{at}: {self.error}"


@dataclass(frozen=True)
class Said:
    caught: tuple[CaughtFailure, ...] = ()
    printed: str = ""

    def quote(self) -> str:
        """The caught failures, for a verdict's message."""
        return "\n".join(c.quote() for c in self.caught)


def said(build_log: str, runner_log: str, paths: dict[str, str]) -> Said:
    """What the logs of the candidate's build and of its runner say of it; `paths`: each of the harness's directories
    that may appear in them, with the name that replaces it."""
    build = _after(build_log, CANDIDATE_STARTS)
    run = _after(runner_log, CANDIDATE_STARTS)
    first = run.split(FIRST_CALL_DONE, 1)[0]
    caught = _caught_at_import(build) + _caught_at_run(first)
    printed = "\n".join(_own_lines([*build.splitlines(), *first.splitlines()]))
    for path, name in sorted(paths.items(), key=lambda item: -len(item[0])):
        if path:
            printed = printed.replace(path, name)
    printed = tail(printed.strip(), PRINTED_LINES)
    return Said(caught, printed[-PRINTED_CHARS:])


def _compiler_output(error: str) -> str:
    """torch's exception text without what the build tool ran: its steps, its FAILED line and the commands, which
    only repeat the flags (torch puts the whole output after "Error building extension 'NAME': ")."""
    error = re.sub(r"(Error building extension '[^']*'): ", "\\1\n", error, count=1)
    return "\n".join(line for line in error.splitlines()
                     if not _BUILD_TOOL.match(line) and not _COMMAND.match(line) and not line.startswith("FAILED: "))


def _after(log: str, marker: str) -> str:
    return log.split(marker, 1)[1] if marker in log else ""


def _caught_at_import(build: str) -> tuple[CaughtFailure, ...]:
    if CAUGHT_BUILD not in build:
        return ()
    compiler, caught = build.rsplit(CAUGHT_BUILD, 1)
    name = caught.strip().split(":", 1)[0] or "?"
    return (CaughtFailure("build", "at import", name, compiler),)


def _caught_at_run(log: str) -> tuple[CaughtFailure, ...]:
    found = []
    lines = log.splitlines()
    for marker, record in zip(lines, lines[1:]):
        if marker != CAUGHT_AT_RUN:
            continue
        try:
            fields = json.loads(record)
            found.append(CaughtFailure(str(fields["what"]), str(fields["where"]), str(fields["name"]),
                                       str(fields["error"]), fields.get("line") if type(fields.get("line")) is int
                                       else None))
        except (ValueError, KeyError, TypeError):  # printed by the candidate itself, malformed: not ours to quote
            continue
    return tuple(found)


def _own_lines(lines: list[str]) -> list[str]:
    """The lines the candidate's code (or its compiler) printed: not the harness's, its records or the build tool's."""
    kept, record = [], False
    for line in lines:
        if not record and not line.startswith("harness:") and not _BUILD_TOOL.match(line):
            kept.append(line)
        record = line == CAUGHT_AT_RUN  # the line after it is the record
    return kept
