"""What an agent may spend on the tools that evaluate: calls and seconds, set when the server starts and reported in
every answer, so the agent can plan its next call."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from harness.errors import InputError


class ToolError(InputError):
    """A tool call that cannot be served: the message is for the agent, which can act on it (a problem id to correct,
    a source to fix, a tool that needs another machine); the server goes on serving."""


class BudgetSpent(ToolError):
    """No calls or seconds are left for the tools that evaluate."""


@dataclass
class Budget:
    """None: no limit. A call is taken when it starts (two calls at once cannot both take the last one); its seconds
    are counted when it ends, and a call may start while any second is left."""

    calls: int | None = None
    seconds: float | None = None
    used_calls: int = 0
    used_s: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @contextlib.contextmanager
    def spending(self) -> Iterator[None]:
        with self._lock:
            if self.calls is not None and self.used_calls >= self.calls:
                raise BudgetSpent(f"the budget's {self.calls} calls are spent; nothing more is evaluated in this "
                                  "session (start the server again with a larger --budget-calls)")
            if self.seconds is not None and self.used_s >= self.seconds:
                raise BudgetSpent(f"the budget's {self.seconds:g} s are spent ({self.used_s:.1f} s used); nothing "
                                  "more is evaluated in this session (start the server with a larger --budget-s)")
            self.used_calls += 1
        started = time.monotonic()
        try:
            yield
        finally:
            with self._lock:
                self.used_s += time.monotonic() - started

    def calls_left(self) -> int | None:
        with self._lock:
            return None if self.calls is None else max(0, self.calls - self.used_calls)

    def record(self) -> dict:
        """What every answer reports."""
        with self._lock:
            return {"calls_used": self.used_calls, "calls_left": None if self.calls is None
                    else max(0, self.calls - self.used_calls),
                    "seconds_used": round(self.used_s, 1),
                    "seconds_left": None if self.seconds is None else round(max(0.0, self.seconds - self.used_s), 1)}
