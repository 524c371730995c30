"""What the candidate's code caught of its own failures in its set-up and its first checked call: a kernel build in
`__init__` or `forward` that failed (loader.py keeps it), and an exception that a function of its extension raised
and the code around it swallowed. A model told only *that* its kernel did not run cannot fix it; told the compiler's
error or the exception, it can. Each is printed to the runner's log as one JSON line after CAUGHT_AT_RUN, and the
parent quotes it where the verdict is not `correct` (eval/said.py).

How a swallowed exception is seen: a profile function (sys.setprofile, on only while watching) sees the
`c_exception` of a call into one of the candidate's extension modules. The exception itself is not visible there,
but from the next event on, while the candidate's `except` block runs, sys.exc_info() names it.
"""

from __future__ import annotations

import ctypes
import json
import sys
from dataclasses import asdict, dataclass

from harness.child import loader
from harness.child.common import describe, exception_chain
from harness.markers import CAUGHT_AT_RUN, FIRST_CALL_DONE

ERROR_CHARS = 4000  # of a build's compiler output; an exception's message gets a tenth of it


@dataclass(frozen=True)
class Caught:
    what: str  # "build" (a load_inline that failed) or "exception" (raised by a function of the extension)
    where: str  # "at import", "in ModelNew.__init__", "in forward"
    name: str  # the extension's name, or the function's
    error: str  # "Type: message"; a build's carries the compiler's output
    line: int | None = None  # the answer's line that made the call, where it was the answer's own code


class Watch:
    """Watches one stretch of the candidate's code; on leaving, prints what it caught (not what escaped: a failure
    that ends the stretch is reported as the verdict's own error)."""

    def __init__(self, where: str, answer: str):
        self.where, self.answer = where, answer  # answer: the candidate file's path, as its frames name it
        self.seen: list[Caught] = []
        self.pending: tuple[str, int | None] | None = None  # a call that raised, its exception not yet seen

    def __enter__(self) -> Watch:
        self.builds, self.previous = len(loader.failed_loads), sys.getprofile()
        sys.setprofile(self._event)
        return self

    def __exit__(self, kind, value, tb) -> None:
        sys.setprofile(self.previous)
        if self.pending is not None:  # caught by code that called nothing more before leaving its `except`
            name, line = self.pending
            self.seen.append(Caught("exception", self.where, name, "(its exception was not seen)", line))
        escaped = list(exception_chain(value))  # the failure that escaped speaks for itself
        caught = [Caught("build", self.where, name, f"{type(exc).__name__}: {exc}"[-ERROR_CHARS:])
                  for name, exc in loader.failed_loads[self.builds:] if not any(exc is e for e in escaped)]
        said = {describe(e) for e in escaped}
        for item in [*caught, *(item for item in self.seen if item.error not in said)]:
            print(CAUGHT_AT_RUN, json.dumps(asdict(item)), sep="\n", file=sys.stderr, flush=True)

    def _event(self, frame, event: str, arg) -> None:
        if self.pending is not None and (value := sys.exc_info()[1]) is not None:
            name, line = self.pending
            self.pending = None
            self.seen.append(Caught("exception", self.where, name, describe(value)[:ERROR_CHARS // 10], line))
        if event == "c_exception" and getattr(arg, "__module__", None) in loader.loaded_modules:
            own = frame.f_code.co_filename == self.answer
            self.pending = (getattr(arg, "__name__", "?"), frame.f_lineno if own else None)


def first_call_done() -> None:
    """Mark the end of what feedback shows of the candidate's output, after what its C code printed: C's stdio
    buffers are flushed first (a kernel's printf reaches the log when the stream's buffer is)."""
    try:
        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library to ask: what it buffered comes later, after the mark
        pass
    print(FIRST_CALL_DONE, file=sys.stderr, flush=True)
