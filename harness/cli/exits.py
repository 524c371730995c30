"""How a command ends when it raises: one table from exception to exit status, and the message each prints.

0 is success. 1: the model's server failed (what was finished is stored) or a check a command runs failed (doctor,
problems validate: they return it). 2: bad input (errors.InputError, a setting pydantic refuses, argparse's own).
3: the harness or the machine failed some evaluations (errors.HarnessFailed). 128 + N: stopped by signal N.
Any other exception is a bug of the harness's, and ends with its traceback.
"""

from __future__ import annotations

import signal

from pydantic import ValidationError
from rich.markup import escape

from harness.api import RunStopped
from harness.cli.console import err
from harness.errors import HarnessFailed, InputError
from harness.llm.providers import ProviderError

# The first class that matches decides: a ProviderConfigError (a refused key, model or URL) is bad input before it
# is the provider's failure.
STATUSES: tuple[tuple[type[Exception], int], ...] = (
    (InputError, 2),
    (ValidationError, 2),
    (ProviderError, 1),
    (HarnessFailed, 3),
)
HANDLED = tuple(kind for kind, _ in STATUSES)


def status_of(exc: BaseException) -> int | None:
    """The exit status `exc` ends a command with, or None: not an error the command line reports."""
    if isinstance(exc, KeyboardInterrupt):
        return 128 + getattr(exc, "signum", signal.SIGINT)  # main.Terminated carries the signal that stopped it
    return next((status for kind, status in STATUSES if isinstance(exc, kind)), None)


def end(exc: Exception | KeyboardInterrupt, *, resumable: bool, stored: bool) -> int:
    """Say why the command stopped and return its exit status; `resumable`: a run that can go on where it stopped,
    `stored`: its finished results are kept."""
    status = status_of(exc)
    if status is None:
        raise exc
    if isinstance(exc, KeyboardInterrupt):
        signum = status - 128
        err.print(
            ("[red]interrupted[/]" if signum == signal.SIGINT else f"[red]stopped by {signal.Signals(signum).name}[/]")
            + (": results finished so far are in the store" if stored else "")
            + ("; continue with --resume" if resumable else "")
        )
    elif isinstance(exc, ValidationError):
        first = exc.errors()[0]
        err.print(f"[red]error:[/] bad setting {'.'.join(map(str, first['loc']))}: {escape(first['msg'])}")
    elif isinstance(exc, HarnessFailed):
        err.print(f"[bold red]{exc.faults} harness error(s)[/]: {exc.advice}", soft_wrap=True)
    else:
        err.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        if isinstance(exc, RunStopped):  # the model's server failed; the run is stored, unfinished
            err.print(f"what was finished is stored; continue this run with: harness {exc.mode} --resume --run "
                      f"{escape(exc.run)}", highlight=False, soft_wrap=True)
    return status
