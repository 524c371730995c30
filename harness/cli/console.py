"""What every command shares: the two consoles, the parser class, bad-input errors, JSON and number formatting.

JSON output (`--json`, every command) is JSON Lines on stdout: one JSON object per line, each a
self-contained record; never a bare list, never one object spread over several lines. A command whose
answer is one thing prints one line (`run` and `report --run NAME`: the run's leaderboard; `problems show`;
`doctor`: its verdict and checks; `bench`). A command whose answer is a list prints one record per item, in
order, and nothing for none: `eval` and `audit` a candidate each, `generate` a sample, `runs` a run,
`report` a run's summary, `problems list` a problem, `problems validate` a problem's verdict, `baseline` a
problem, `config show` a setting, `cache` a cache. What holds for every record (the device, target and
dtype; baseline's measured peaks) is repeated in each rather than printed once in a header line, so any one
line can be read, filtered or appended alone. The same thing has one name everywhere: `run` (a run's name),
`problem` (a problem's id), `candidate` (its path, or null), `device` (a device's name), `target`, `dtype`,
`status`, `speedup`, `cached` (a bool: served from the store or the response cache, which the text output
calls "cached" too), `created_at`; a duration ends in `_ms` or `_s`. Progress and messages go to stderr.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path

from rich.console import Console

from harness.config import load_settings
from harness.errors import InputError
from harness.problems import index as problem_index


def _width(stream) -> int | None:
    """Rich's own width on a terminal or with $COLUMNS; piped into a file or a log, prose gets 200 columns rather
    than rich's 80 (tables are printed whole there: report/tables.py)."""
    return None if stream.isatty() or os.environ.get("COLUMNS") else 200


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """Rich's own ends the process with status 1; a closed pipe is the reader's choice (`| head`), and the
        entry point (main.main) ends every command the same way on it: quietly, with 0."""
        self.quiet = True
        raise BrokenPipeError(errno.EPIPE, "the reader closed the output")


out = _Console(width=_width(sys.stdout))
err = _Console(stderr=True, width=_width(sys.stderr))


def wide_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wide", action="store_true", help="print tables whole, every column, however wide (piped "
                                                            "output always is, unless $COLUMNS is set)")


def table_width(args: argparse.Namespace) -> int | None:
    """The width tables are fitted to: the terminal's, or $COLUMNS where set; None (every column, whole) with
    --wide, or on a pipe, where nothing wraps and a reader greps or reads the whole."""
    if getattr(args, "wide", False) or not (out.is_terminal or os.environ.get("COLUMNS")):
        return None
    return out.width


class Parser(argparse.ArgumentParser):
    """Every command's parser: a flag error is one line naming the command and its --help, not argparse's
    usage block, whose several lines bury the one the reader needs."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_known_args(self, args=None, namespace=None):
        # A subcommand's leftovers are its own error: argparse would hand them up to `harness`, whose message
        # would name the wrong command.
        parsed, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return parsed, extras


class UsageError(InputError):
    """Bad input from the user: reported in one message, exit status 2."""


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def emit_json(record: dict) -> None:
    """One record of a command's --json output: one line (the rule in this module's docstring)."""
    if not isinstance(record, dict):  # a list would be a second shape for readers to handle
        raise TypeError(f"a --json record is an object, not {type(record).__name__}")
    sys.stdout.write(json.dumps(record, default=str) + "\n")


def problem_root(args) -> Path:
    """--problems-dir, else the settings' problems_dir (config file, $HARNESS_PROBLEMS_DIR), else the shipped set."""
    settings = load_settings(config_file=getattr(args, "config", None), problems_dir=args.problems_dir)
    return settings.problems_dir or problem_index.default_root()


def positive(kind: type):
    """An argparse type: a number of `kind` above zero."""
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            what = "a positive integer" if kind is int else "positive"
            raise argparse.ArgumentTypeError(f"must be {what}, got {text}")
        return value
    parse.__name__ = kind.__name__  # argparse names the type in "invalid int value" messages
    return parse
