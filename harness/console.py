"""What every command shares: the two consoles, bad-input errors, JSON and number formatting."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.console import Console

from . import problems as problem_index

out = Console()
err = Console(stderr=True)


class UsageError(Exception):
    """Bad input from the user: reported in one message, exit status 2."""


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")


def problem_root(args) -> Path:
    return Path(args.problems_dir).resolve() if args.problems_dir else problem_index.default_root()


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
