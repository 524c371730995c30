"""`harness problems ...`: list, show, validate (the quality gate) and new (a template)."""

from __future__ import annotations

import re
import time
from pathlib import Path

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)
from rich.syntax import Syntax

from harness.cli.console import (
    UsageError,
    emit_json,
    err,
    fmt,
    out,
    positive,
    problem_root,
    table_width,
    wide_option,
)
from harness.config import load_settings
from harness.device import visible_gpus
from harness.problems import gate
from harness.problems import index as problem_index
from harness.process import write_atomic
from harness.report.labels import ms
from harness.report.tables import Column, print_table
from harness.types import TARGETS, GateResult, Problem, Target


def cmd_problems_list(args) -> int:
    found, errors = problem_index.index(problem_root(args))
    if args.level is not None:
        found = [p for p in found if p.level == args.level]
    if args.target:
        found = [p for p in found if p.target == args.target]
    for message in errors:
        err.print(f"[yellow]warning:[/] {escape(message)}")
    if args.json:
        for p in found:
            emit_json({"problem": p.id, "level": p.level, "target": p.target, "path": p.path,
                       "description": p.description, "sha256": p.sha256, "tags": list(p.tags),
                       "memory_gb": p.memory_gb})
        return 0
    rows = [(escape(p.id), "-" if p.level is None else str(p.level), p.target, escape(", ".join(p.tags)),
             escape(p.description)) for p in found]
    print_table(out, LIST_COLUMNS, rows, width=table_width(args))
    out.print(f"{len(found)} problems in {problem_root(args)}")
    return 0


LIST_COLUMNS = (Column("id", "name"), Column("level", "name", gives_way=2), Column("target", "name", gives_way=3),
                Column("tags", "line", gives_way=5), Column("description", "line", gives_way=5))
GATE_COLUMNS = (Column("problem", "name"), Column("gate", "name", gives_way=5), Column("result", "name"),
                Column("eager ms", gives_way=2), Column("peak GB", gives_way=3), Column("output", "text", gives_way=1),
                Column("MB moved", gives_way=4, short="MB"), Column("GFLOP", gives_way=4))
WORKLOAD_COLUMNS = (Column("workload", "name"), Column("shown", "name", gives_way=3),
                    Column("timed", "name", gives_way=4), Column("weight", gives_way=4),
                    Column("constants", "text", gives_way=2), Column("about", "text", gives_way=1))


def memory_filter(problems: list, limit: float | None) -> list:
    """Drop problems whose declared MEMORY_GB exceeds --max-memory-gb, saying which."""
    if limit is None:
        return problems
    kept = [p for p in problems if p.memory_gb is None or p.memory_gb <= limit]
    for p in problems:
        if p not in kept:
            err.print(f"[yellow]skipped[/] {escape(p.id)}: needs {p.memory_gb:g} GB (--max-memory-gb {limit:g})")
    return kept


def cmd_problems_validate(args) -> int:
    root = problem_root(args)
    if args.all == bool(args.problems):
        raise UsageError("name the problems to validate (ids, sets such as level1, directories or .py paths), "
                         "or pass --all")
    malformed: list[str] = []
    if args.all:
        chosen, malformed = problem_index.index(root)
    else:
        chosen = problem_index.select(",".join(args.problems), root)
    chosen = memory_filter(chosen, args.max_memory_gb)
    gpus = visible_gpus()
    if args.target == "cuda" and not gpus and not args.static:
        raise UsageError("--target cuda needs a GPU, and nvidia-smi shows none here (use --static for the "
                         "checks that need no device)")
    plan: dict[tuple[gate.GateMode, Target], list[Problem]] = {}  # (mode, target) -> problems, one child a group
    for problem in chosen:
        target: Target = args.target or problem.target
        mode: gate.GateMode = "static" if args.static or (target == "cuda" and not gpus) else "full"
        plan.setdefault((mode, target), []).append(problem)
    settings = load_settings(config_file=args.config, results_dir=args.results_dir)
    results: list[GateResult] = []
    started = time.monotonic()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=err, transient=True, disable=not err.is_terminal)
    with progress:
        for (mode, target), group in plan.items():
            task = progress.add_task(f"{mode} gate, {target}", total=len(group))

            def on_result(problem, obs, duration_s, mode=mode, target=target, task=task):
                result = gate.assess(problem, mode, target, obs, duration_s)
                results.append(result)
                progress.advance(task)
                if not args.json:
                    mark = "[green]pass[/]" if result.passed else "[red]FAIL[/]"
                    progress.console.print(f"{mark} {mode:<6} {escape(problem.id)}"
                                           + "".join(f"\n       {escape(r)}" for r in result.reasons),
                                           highlight=False, soft_wrap=True)

            gate.run_child_over(group, mode, target, log_dir=settings.results_dir / "gate",
                                gpu_index=gpus[0].index if target == "cuda" and gpus else None,
                                timeout_s=args.timeout, on_result=on_result)
    elapsed = time.monotonic() - started
    failed = [r for r in results if not r.passed]
    if args.json:  # a verdict a problem; a file that is no problem at all has no id
        for r in results:
            emit_json(gate_record(r))
        for message in malformed:
            emit_json({"problem": None, "passed": False, "reasons": [message]})
    else:
        print_gate(results, malformed, table_width(args))
        static_only = sum(1 for r in results if r.mode == "static" and r.passed)
        out.print(f"{len(results) - len(failed)} passed ({static_only} of them static only"
                  + (", no GPU here" if not gpus and static_only else "") + f"), "
                  f"{len(failed) + len(malformed)} failed, in {elapsed:.0f} s", highlight=False)
    return 1 if failed or malformed else 0


def gate_record(r: GateResult) -> dict:
    record = r.model_dump()
    return {"problem": record.pop("problem_id"), **record}


def print_gate(results: list[GateResult], malformed: list[str], width: int | None) -> None:
    rows = [(escape(r.problem_id), f"{r.mode} {r.target}", "[green]pass[/]" if r.passed else "[red]FAIL[/]",
             ms(r.eager_ms), fmt(r.peak_memory_gb, ".2f"), escape(", ".join(r.outputs)),
             fmt(r.bytes_moved / 1e6 if r.bytes_moved else None, ",.1f"),
             fmt(r.flops / 1e9 if r.flops else None, ",.2f"))
            for r in sorted(results, key=lambda r: r.problem_id)]
    print_table(out, GATE_COLUMNS, rows, width=width)
    for r in results:
        for reason in r.reasons:
            out.print(f"[red]FAIL[/] {escape(r.problem_id)}: {escape(reason)}", highlight=False, soft_wrap=True)
        for warning in r.warnings:
            out.print(f"[yellow]warning[/] {escape(r.problem_id)}: {escape(warning)}", highlight=False,
                      soft_wrap=True)
    for message in malformed:
        out.print(f"[red]FAIL[/] {escape(message)}", highlight=False, soft_wrap=True)


PROBLEM_NAME = re.compile(r"[a-z][a-z0-9_]*")


def cmd_problems_new(args) -> int:
    if not PROBLEM_NAME.fullmatch(args.name):
        raise UsageError(f"bad problem name {args.name!r}: use lower-case letters, digits and '_' "
                         "(it names the file and the module), e.g. fused_gelu_bias")
    target = "cpu" if args.level == "cpu" else "cuda"
    folder = problem_root(args) / ("cpu" if target == "cpu" else f"level{args.level}")
    path = folder / f"{args.name}.py"
    if path.exists():
        raise UsageError(f"{path} already exists; pick another name or edit that file")
    sizes = ({"batch": 1024, "dim": 4096, "odd_batch": 257, "odd_dim": 1001, "draw_batch": 300, "draw_dim": 3000}
             if target == "cpu" else
             {"batch": 16384, "dim": 49152, "odd_batch": 999, "odd_dim": 4099, "draw_batch": 2000, "draw_dim": 20000})
    template = (Path(__file__).parents[1] / "templates" / "problem.py.tmpl").read_text()
    text = template.format(title=args.name.replace("_", " ").capitalize(), problem_id=f"{folder.name}/{args.name}",
                           target_line="", **sizes)
    folder.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)
    out.print(f"wrote {path}\nedit it, then check it with: harness problems validate {folder.name}/{args.name}",
              highlight=False)
    return 0


def cmd_problems_show(args) -> int:
    problem = problem_index.resolve(args.problem, problem_root(args))
    source = problem.source
    if args.json:
        record = problem.model_dump()
        record["workloads"] = [w.record() for w in problem.workloads]
        emit_json({"problem": record.pop("id"), **record, "source": source})
        return 0
    out.print(f"[bold]{escape(problem.id)}[/]  level {problem.level if problem.level is not None else '-'}  "
              f"target {problem.target}  {escape(problem.path)}")
    if problem.tags:
        out.print(f"tags: {escape(', '.join(problem.tags))}")
    for name, value in (("FLOPS", problem.flops), ("BYTES", problem.bytes), ("MEMORY_GB", problem.memory_gb),
                        ("MAX_SPEEDUP", problem.max_speedup), ("MIN_COVERAGE", problem.min_coverage)):
        if value is not None:
            out.print(f"{name} = {value:,}")
    if problem.atol is not None or problem.rtol is not None:
        out.print(f"tolerance: atol={problem.atol} rtol={problem.rtol}")
    if len(problem.workloads) > 1:
        print_workloads(problem, table_width(args))
    out.print(Syntax(source, "python", line_numbers=False))
    return 0


def print_workloads(problem, width: int | None) -> None:
    rows = []
    for w in problem.workloads:
        constants = ", ".join(f"{c}={v}" for c, v in w.shown().items()) or "as written"
        if w.distribution != (1.0, 0.0):
            constants += f"; inputs x{w.scale:g} + {w.shift:g}"
        rows.append((escape(w.name), "public" if w.public else "held out", "yes" if w.timed else "",
                     f"{w.weight:g}" if w.timed else "", escape(constants), escape(w.about)))
    print_table(out, WORKLOAD_COLUMNS, rows, width=width, title="workloads")


def add_parser(sub, problems_opts) -> None:
    """The `problems` command and its subcommands."""
    problems = sub.add_parser("problems", help="list, show, validate (the quality gate) and create problems")
    psub = problems.add_subparsers(dest="problems_command", required=True, metavar="SUBCOMMAND")
    plist = psub.add_parser("list", parents=[problems_opts], help="list problems",
                            description="List the problems under the problem root (parsed, not imported).")
    plist.add_argument("--level", type=int, metavar="N", help="only this level")
    plist.add_argument("--target", choices=TARGETS, help="only problems meant for this target")
    plist.add_argument("--json", action="store_true", help="JSON Lines: one object per problem (problem, level, "
                                                           "target, path, ...)")
    wide_option(plist)
    plist.set_defaults(func=cmd_problems_list)
    pshow = psub.add_parser("show", parents=[problems_opts], help="show one problem",
                            description="Show a problem's metadata and source. ID or path to a .py file.")
    pshow.add_argument("problem", metavar="ID_OR_PATH")
    pshow.add_argument("--json", action="store_true", help="metadata and source as JSON")
    wide_option(pshow)
    pshow.set_defaults(func=cmd_problems_show)
    pval = psub.add_parser(
        "validate", parents=[problems_opts], help="the quality gate: is each problem loadable, deterministic, "
                                                  "informative and sensibly sized?",
        description="Static checks (no device: metadata, signatures, output shapes, bytes and FLOPs on the meta "
                    "device) and, on the problem's target, the full gate: the reference is deterministic for a seed, "
                    "its output differs across seeds and is not degenerate (mostly zeros, constant, passable by a "
                    "constant, swallowed by the tolerance), fp32 can meet its tolerance (a float64 check), its eager "
                    "time and peak memory are in range. Without a "
                    "GPU, cuda problems get the static checks only. Exit status 1 if any problem fails.")
    pval.add_argument("problems", nargs="*", metavar="ID", help="problem ids, sets (level1, cpu), directories or "
                                                               ".py paths")
    pval.add_argument("--all", action="store_true", help="every problem under the problem root")
    pval.add_argument("--target", choices=TARGETS, help="run the full gate on this target for every problem "
                                                       "(default: each problem's own target)")
    pval.add_argument("--static", action="store_true", help="only the checks that need no device")
    pval.add_argument("--max-memory-gb", type=positive(float), metavar="GB",
                      help="skip problems that declare MEMORY_GB above this")
    pval.add_argument("--timeout", type=positive(float), metavar="S",
                      help="seconds per problem before it fails as hung (static 120, full 600)")
    pval.add_argument("--results-dir", type=Path, metavar="DIR", help="where the gate's logs go (RESULTS_DIR/gate)")
    pval.add_argument("--json", action="store_true", help="JSON Lines: one verdict per problem (problem, passed, "
                                                          "reasons, ...; problem null for a file that is none)")
    wide_option(pval)
    pval.set_defaults(func=cmd_problems_validate)
    pnew = psub.add_parser("new", parents=[problems_opts], help="write a documented template for a new problem",
                           description="Write problems/levelN/NAME.py (or problems/cpu/NAME.py with --level cpu) "
                                       "from a template that explains every part, then validate it.")
    pnew.add_argument("name", metavar="NAME", help="file name without .py, e.g. fused_gelu_bias")
    pnew.add_argument("--level", required=True, choices=("1", "2", "3", "cpu"),
                      help="1 single operators, 2 fusions, 3 architectures, cpu for the CPU target")
    pnew.set_defaults(func=cmd_problems_new)
