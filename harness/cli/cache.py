"""`harness cache`: how much the build cache, the candidates' Triton caches and the precompiled headers hold, and
pruning them to a cap."""

from __future__ import annotations

import argparse

from rich.markup import escape

from harness.cli.console import emit_json, out, table_width, wide_option
from harness.config import store_settings
from harness.eval.cache import IN_USE_S, Entry, entries, prune
from harness.report.tables import Column, print_table

GB = 1e9
COLUMNS = (Column("cache", "name"), Column("entries", gives_way=1), Column("GB"), Column("where", "text", gives_way=2))
KINDS = (("build", "builds"), ("triton", "Triton kernels"), ("pch", "precompiled headers"))  # cache.Entry.kind


def add_parser(sub, store_opts: argparse.ArgumentParser) -> None:
    cache = sub.add_parser(
        "cache", parents=[store_opts], help="the build cache and the precompiled headers: sizes, pruning",
        description="Finished builds (RESULTS_DIR/cache/builds), the kernels Triton compiled for each candidate "
                    "(RESULTS_DIR/cache/triton) and precompiled headers (shared by every results "
                    "directory, ~0.8 GB per compiler-flag set) are kept for reuse, up to the cache_max_gb setting: "
                    "after each batch of evaluations the least recently used go. `harness cache` shows them; "
                    f"`prune` removes them now. Entries used in the last {IN_USE_S / 3600:g} hour and builds in "
                    "progress always stay (another harness may be using them).")
    cache.add_argument("action", nargs="?", choices=("show", "prune"), default="show",
                       help="show (the default) or prune")
    cache.add_argument("--max-gb", type=float, metavar="GB", help="prune down to this size (default: the "
                                                                   "cache_max_gb setting; 0: everything not in use)")
    cache.add_argument("--json", action="store_true", help="JSON Lines: one object per cache (cache: build, triton "
                                                           "or pch; entries, bytes, dirs, removed, max_gb)")
    wide_option(cache)
    cache.set_defaults(func=cmd_cache)


def totals(found: list[Entry]) -> dict[str, dict]:
    return {kind: {"entries": sum(e.kind == kind for e in found),
                   "bytes": sum(e.bytes for e in found if e.kind == kind),
                   "dirs": sorted({str(e.path.parent) for e in found if e.kind == kind})}
            for kind, _ in KINDS}


def cmd_cache(args) -> int:
    settings = store_settings(config_file=args.config, results_dir=args.results_dir, db_path=args.db)
    removed = []
    if args.action == "prune":
        cap = settings.cache_max_gb if args.max_gb is None else max(0.0, args.max_gb)
        removed = prune(settings.cache_dir, int(cap * GB))
    left = totals(entries(settings.cache_dir))
    if args.json:  # a line a cache: what it keeps, what prune removed from it, and the cap
        gone = totals(removed)
        for kind, _ in KINDS:
            emit_json({"cache": kind, **left[kind], "removed": gone[kind], "max_gb": settings.cache_max_gb})
        return 0
    if args.action == "prune":
        out.print(f"removed {len(removed)} entries, {sum(e.bytes for e in removed) / GB:.2f} GB")
    rows = [(label, str(left[kind]["entries"]), f"{left[kind]['bytes'] / GB:.2f}",
             escape(", ".join(left[kind]["dirs"]) or "-")) for kind, label in KINDS]
    print_table(out, COLUMNS, rows, width=table_width(args),
                title=f"caches (cap {settings.cache_max_gb:g} GB: cache_max_gb)")
    return 0
