"""What every command shares: the two consoles, bad-input errors, JSON and number formatting."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from rich.console import Console

from harness.config import load_settings
from harness.problems import index as problem_index


def _width(stream) -> int | None:
    """Rich's own width on a terminal or with $COLUMNS; piped into a file or a log, tables get room for every
    column instead of rich's 80, where the leaderboard's cells would be cut to a letter."""
    return None if stream.isatty() or os.environ.get("COLUMNS") else 200


out = Console(width=_width(sys.stdout))
err = Console(stderr=True, width=_width(sys.stderr))


class UsageError(Exception):
    """Bad input from the user: reported in one message, exit status 2."""


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def emit_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, default=str) + "\n")


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
