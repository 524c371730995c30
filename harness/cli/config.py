"""`harness config show`: every setting's effective value and where it came from (default, config file,
environment or flag)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from harness.cli.console import emit_json, out
from harness.config import CONFIG_FILE, SettingSource, explain_settings


def shown(value) -> str:
    """A value as it would be written in the TOML file (paths and strings bare; no value: -)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def cmd_show(args) -> int:
    sources: list[SettingSource] = explain_settings(getattr(args, "config", None))
    if args.json:
        for s in sources:
            emit_json(dataclasses.asdict(s))
        return 0
    table = Table(title_justify="left")
    for name in ("setting", "value", "source", "description"):
        table.add_column(name, overflow="fold")
    for s in sources:
        source = s.source if s.source == "default" else f"[bold]{escape(s.source)}[/]"
        table.add_row(escape(s.setting), escape(shown(s.value)), source, escape(s.description))
    out.print(table)
    return 0


def config_option(parser: argparse.ArgumentParser) -> None:
    """--config FILE, as every command that loads settings takes it."""
    parser.add_argument("--config", type=Path, metavar="FILE",
                        help=f"TOML file of settings (default: ./{CONFIG_FILE} if there is one); "
                             "environment variables (HARNESS_*) and flags override it")


def add_parser(sub, config_opts: argparse.ArgumentParser | None = None) -> None:
    """The `config` command and its subcommand `show`. config_opts: a parent parser that defines --config,
    if the main parser shares one among its commands; else `show` defines its own."""
    config = sub.add_parser("config", help="show the settings in effect and where each comes from")
    csub = config.add_subparsers(dest="config_command", required=True, metavar="SUBCOMMAND")
    show = csub.add_parser(
        "show", parents=[config_opts] if config_opts is not None else [],
        help="every setting's value and its source",
        description="Every setting's effective value and where it comes from, the later layer winning: the "
                    f"built-in default, the config file (./{CONFIG_FILE}, or --config FILE), an environment "
                    "variable (HARNESS_*), or a flag. The keys of the config file are the settings' names, "
                    "timing's in a [timing] table; relative paths in it are relative to the file.")
    if config_opts is None:
        config_option(show)
    show.add_argument("--json", action="store_true",
                      help="JSON Lines: one object per setting (setting, value, source, description, env, flag)")
    show.set_defaults(func=cmd_show)
