"""`harness baseline`, `harness report` and `harness runs`: what results are measured against, and how
they compare."""

from __future__ import annotations

import difflib
from datetime import datetime
from pathlib import Path

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
)

from harness.api import DEFAULT_SET
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
from harness.cli.options import problems_selector, selector
from harness.cli.problems import memory_filter
from harness.config import DTYPE_CHOICES, load_settings, store_settings
from harness.device import discover
from harness.eval import cpu_ceiling
from harness.eval.baseline import Listeners, device_peaks, measure_baselines, trusted
from harness.problems import index as problem_index
from harness.process import write_atomic
from harness.report.details import report_details
from harness.report.labels import ms, pct
from harness.report.leaderboard import (
    Leaderboard,
    ProblemContext,
    problem_record,
    render,
    render_runs,
    run_board,
    summary_record,
    to_csv,
)
from harness.report.tables import Column, print_table
from harness.store import RunInfo, Store
from harness.types import BASELINE_KINDS, TARGETS, Baseline, DeviceInfo, Peaks, Problem

KIND_LABEL = {"eager": "eager", "compile": "compile", "compile-max-autotune": "max-autotune"}


# ---- harness baseline ----

def _kinds(text: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    unknown = [k for k in kinds if k not in BASELINE_KINDS]
    if unknown or not kinds:
        raise UsageError(f"unknown baseline kind {', '.join(unknown) or repr(text)}; "
                         f"choose from {', '.join(BASELINE_KINDS)}")
    return ("eager", *(k for k in kinds if k != "eager"))  # eager is the anchor of every ratio


def peaks_line(device: str, peaks: Peaks | None) -> str:
    if peaks is None:
        return f"{device}: peaks could not be measured (see results/cache/baselines/peaks-*.log)"
    gemm = ", ".join(f"{k} {v:,.3g}" for k, v in peaks.tflops.items())
    line = f"{device}: memory {peaks.bandwidth_gbs:,.1f} GB/s (large copy, read + write); GEMM TFLOP/s: {gemm}"
    if cpu_ceiling.contended(peaks):
        line += (f" (measured while other processes used {peaks.foreign_cpu:.0%} of the cores: too low, and no "
                 "memory ceiling for faster_than_light until a measurement runs uncontended)")
    return line


def baseline_record(problem: Problem, found: dict[str, Baseline], error: str | None, peaks: Peaks | None,
                    dtype: str, device: DeviceInfo) -> dict:
    eager = found.get("eager")
    context = ProblemContext(eager=eager, peaks=peaks, dtype=dtype, device=device)
    kinds = {}
    for kind, b in found.items():
        ms = b.timing.median_ms if b.timing else None
        kinds[kind] = {"median_ms": ms, "rse": b.timing.rse if b.timing else None,
                       "n": b.timing.n if b.timing else None,
                       "sol_fraction": context.sol_fraction(ms),
                       "speedup_vs_eager": b.eager_ms / ms if b.eager_ms and ms else None, "error": b.error,
                       "foreign_cpu": b.foreign_cpu, "trusted": trusted(kind, b)}
    return {"problem": problem.id, "error": error, "sol_ms": context.sol_ms,
            "bytes_moved": eager.bytes_moved if eager else None, "flops": eager.flops if eager else None,
            "baselines": kinds}


def cmd_baseline(args) -> int:
    kinds = _kinds(args.kinds)
    device = discover(args.target)
    settings = load_settings(config_file=args.config, results_dir=args.results_dir, db_path=args.db,
                             timing={"budget_s": args.timing_budget}, dtype=args.dtype)
    chosen = selector(args) or DEFAULT_SET[device.target]
    problems = memory_filter(problem_index.select(chosen, problem_root(args)), args.max_memory_gb)
    wrong = [p.id for p in problems if p.target != device.target]
    if wrong:
        err.print(f"[yellow]note:[/] {len(wrong)} problems are meant for the other target, measured on "
                  f"{device.target} anyway: {escape(', '.join(wrong[:5]))}", soft_wrap=True)
    err.print(f"[dim]baselines {', '.join(kinds)} of {len(problems)} problems on {escape(device.name)} "
              f"({device.target}); results in {settings.db}[/]", soft_wrap=True)
    records = []
    with Store(settings.db) as store:
        peaks = device_peaks(device, settings, store, force=args.force)
        err.print(peaks_line(device.name, peaks), highlight=False, soft_wrap=True)
        progress = Progress(TextColumn("baselines"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=err, transient=True, disable=not err.is_terminal)

        def done(problem: Problem, found: dict[str, Baseline], error: str | None) -> None:
            records.append(baseline_record(problem, found, error, peaks, settings.dtype, device))
            progress.advance(task)
            if error:
                progress.console.print(f"[red]failed[/] {escape(problem.id)}: {escape(error)}", soft_wrap=True)

        with progress:
            task = progress.add_task("baselines", total=len(problems))
            measure_baselines(problems, device, settings, store, kinds, force=args.force,
                              listeners=Listeners(on_problem=done))
    order = {p.id: i for i, p in enumerate(problems)}
    records.sort(key=lambda r: order[r["problem"]])
    if args.json:  # one record a problem, each with the device and its peaks (console.py's rule)
        for r in records:
            emit_json({"problem": r["problem"], "device": device.name, "target": device.target,
                       "dtype": settings.dtype, "peaks": peaks.model_dump() if peaks else None, **r})
        return 0
    columns = [Column("problem", "name")]
    for n, kind in enumerate(kinds):
        columns += [Column(f"{KIND_LABEL[kind]} ms", gives_way=3 if n else 0),
                    Column(f"{KIND_LABEL[kind]} % SOL", gives_way=4, short="% SOL")]
    columns += [Column("SOL ms", gives_way=5), Column("MB moved", gives_way=6, short="MB"),
                Column("GFLOP", gives_way=6), Column("notes", "text", gives_way=2)]
    rows = []
    for r in records:
        cells, notes = [], [r["error"]] if r["error"] else []
        for kind in kinds:
            b = r["baselines"].get(kind, {})
            cells += [ms(b.get("median_ms")), pct(b.get("sol_fraction"))]
            if b.get("error"):
                notes.append(f"{KIND_LABEL[kind]}: {b['error'][:300]}")
        rows.append((escape(r["problem"]), *cells, ms(r["sol_ms"]),
                     fmt(r["bytes_moved"] and r["bytes_moved"] / 1e6, ",.1f"),
                     fmt(r["flops"] and r["flops"] / 1e9, ",.2f"), escape("; ".join(notes))))
    print_table(out, columns, rows, width=table_width(args),
                title=f"baselines on {escape(device.name)} ({settings.dtype}); % SOL = lower bound / time")
    return 0


# ---- harness report / runs ----

def _open_store(args) -> Store:
    settings = store_settings(config_file=args.config, results_dir=args.results_dir, db_path=args.db)
    if not settings.db.is_file():
        raise UsageError(f"no results yet: {settings.db} does not exist (run `harness run` or `harness eval` first)")
    return Store(settings.db)


def _delete_runs(args) -> int:
    with _open_store(args) as store:
        names = [r.name for r in store.runs()]
        wanted = [_pick(names, name) for name in dict.fromkeys(args.delete)]  # every name checked before any delete
        deleted = [(name, *store.delete_run(name)) for name in wanted]
    for name, evaluations, turns in deleted:
        if args.json:
            emit_json({"run": name, "evaluations": evaluations, "turns": turns})
        else:
            out.print(f"deleted run {escape(name)}: {evaluations} evaluations, {turns} turns")
    return 0


def _hide_runs(args) -> int:
    hide = bool(args.hide)
    with _open_store(args) as store:
        names = [r.name for r in store.runs()]
        wanted = [_pick(names, name) for name in dict.fromkeys(args.hide or args.unhide)]  # all checked first
        for name in wanted:
            store.set_hidden(name, hide)
    for name in wanted:
        if args.json:
            emit_json({"run": name, "hidden": hide})
        else:
            out.print(f"{'hid' if hide else 'unhid'} run {escape(name)}: "
                      + ("`harness report` leaves it out unless named (--run, --runs)" if hide
                         else "`harness report` shows it again"))
    return 0


def _pick(names: list[str], wanted: str) -> str:
    if wanted in names:
        return wanted
    close = difflib.get_close_matches(wanted, names, n=3)
    raise UsageError(f"unknown run {wanted!r}" + (f"; did you mean {', '.join(close)}?" if close
                                                  else "; `harness runs` lists them"))


def _chosen(args, runs: list[RunInfo], names: list[str], where: Path) -> list[str]:
    """The runs a report shows: those named, else every run not hidden (a hidden one is shown only when named)."""
    if args.run:
        return [_pick(names, args.run)]
    if args.runs:
        return [_pick(names, name.strip()) for name in args.runs.split(",") if name.strip()]
    chosen = [r.name for r in runs if not r.hidden]
    if not chosen:
        raise UsageError(f"every run in {where} is hidden: name one (--run, --runs), or show it again "
                         "with `harness runs --unhide NAME`")
    return chosen


def _write_html(path: Path, boards: list[Leaderboard], details: dict | None) -> None:
    from harness.report.html import render_html

    try:
        write_atomic(path, render_html(boards, generated_at=datetime.now().isoformat(timespec="seconds"),
                                       details=details))
    except OSError as exc:
        raise UsageError(f"cannot write the HTML report to {path}: {exc.strerror}") from None
    err.print(f"wrote {escape(str(path))} ({len(boards)} run{'' if len(boards) == 1 else 's'})")


def cmd_report(args) -> int:
    if (args.price_in is None) != (args.price_out is None):
        raise UsageError("give both --price-in and --price-out (USD per million prompt / completion tokens)")
    prices = (args.price_in, args.price_out) if args.price_in is not None else None
    with _open_store(args) as store:
        runs = store.runs()
        if not runs:
            raise UsageError(f"{store.path} holds no runs yet")
        by_name = {r.name: r for r in runs}
        chosen = _chosen(args, runs, list(by_name), store.path)
        boards = [run_board(store, by_name[name], prices) for name in chosen]
        details = report_details(store, [by_name[name] for name in chosen], boards) if args.html else None
    if args.html:
        _write_html(Path(args.html), boards, details)
    single = args.run is not None
    if args.json and single:
        emit_json(boards[0].model_dump())
    elif args.json:  # a line a run
        for board in boards:
            emit_json(board.summary.model_dump())
    elif args.csv:
        records = ([problem_record(boards[0].summary.run, row) for row in boards[0].problems] if single
                   else [summary_record(b.summary) for b in boards])
        out.file.write(to_csv(records))
    elif single:
        render(boards[0], out, table_width(args))
    elif not args.html:
        render_runs([b.summary for b in boards], out, table_width(args))
    return 0


def run_record(r: RunInfo) -> dict:
    """What `harness runs --json` prints per run, in the commands' shared vocabulary (console.py)."""
    return {"run": r.name, "created_at": r.created_at, "kind": r.kind, "model": r.model, "backend": r.backend,
            "target": r.target, "device": r.device_name, "evaluations": r.evaluations, "answers": r.requests,
            "tokens": r.tokens, "hidden": r.hidden,
            "finished": r.finished if r.backend is not None else None}  # only a model's runs have turns to finish


def cmd_runs(args) -> int:
    if args.delete:
        return _delete_runs(args)
    if args.hide or args.unhide:
        return _hide_runs(args)
    with _open_store(args) as store:
        runs = store.runs()
    if args.json:
        for r in runs:
            emit_json(run_record(r))
        return 0
    rows = [(escape(r.name), r.created_at, r.kind, escape(r.model or "-"), r.backend or "-", r.target,
             escape(r.device_name), str(r.evaluations), str(r.requests), f"{r.tokens:,}",
             "[dim]hidden[/]" if r.hidden else "yes") for r in runs]
    print_table(out, RUNS_COLUMNS, rows, width=table_width(args))
    return 0


RUNS_COLUMNS = (
    Column("run", "name"), Column("created", "name", gives_way=3), Column("kind", "name", gives_way=4),
    Column("model", "name", gives_way=2), Column("backend", "name", gives_way=6), Column("target", "name", gives_way=6),
    Column("device", "name", gives_way=7), Column("evaluations", short="evals"),
    Column("answers", gives_way=5), Column("tokens", gives_way=5), Column("shown", "name", gives_way=1))


def add_parsers(sub, problems_opts, store_opts, store_only) -> None:
    """store_only: store_opts without --config, for a command that has problems_opts (which brings it)."""
    base = sub.add_parser(
        "baseline", parents=[problems_opts, store_only],
        help="measure the eager and torch.compile baselines and the device's peaks",
        description="For each problem, time the eager reference and torch.compile (default mode and "
                    "max-autotune-no-cudagraphs) with the evaluation protocol, in a clean child process; measure the "
                    "device's memory bandwidth (a large copy) and GEMM FLOP/s per dtype. Everything is cached per "
                    "problem hash, device, torch version and dtype (--force measures again); a torch.compile that "
                    "fails is recorded, not fatal. Prints each baseline's time and its share of the speed of light "
                    "(the problem's minimal bytes and FLOPs at the ceiling faster_than_light uses: at most 100 "
                    "percent). Reports then show every result's speedup over the best torch.compile mode too.")
    problems_selector(base, " (default: level1 on cuda, cpu on cpu)")
    base.add_argument("--target", choices=TARGETS, help="cuda or cpu (default: cuda if a GPU is visible)")
    base.add_argument("--kinds", default=",".join(BASELINE_KINDS), metavar="K1,K2",
                      help=f"which baselines: {', '.join(BASELINE_KINDS)} (default: all; eager is always measured)")
    base.add_argument("--force", action="store_true", help="measure again even if stored")
    base.add_argument("--dtype", choices=DTYPE_CHOICES,
                      help="precision of the inputs and parameters (default fp32; stored per dtype)")
    base.add_argument("--timing-budget", type=positive(float), metavar="S",
                      help="seconds of timing per baseline before stopping unconverged (default 5)")
    base.add_argument("--max-memory-gb", type=positive(float), metavar="GB",
                      help="skip problems that declare needing more GPU memory than this (MEMORY_GB)")
    base.add_argument("--json", action="store_true", help="JSON Lines: one object per problem, with the device, "
                                                          "its peaks, and each baseline's median, share of SOL and "
                                                          "error")
    wide_option(base)
    base.set_defaults(func=cmd_baseline)

    rep = sub.add_parser(
        "report", parents=[store_opts], help="leaderboard: runs side by side, or one run's problems",
        description="Without --run: every stored run but the hidden ones (`harness runs --hide`), or --runs, side "
                    "by side: correctness, fast_p, geometric mean speedup over eager and over the best torch.compile "
                    "mode, median share of the speed of light, tokens and cost. With --run NAME: that run's problems "
                    "(best speedup, statuses, % SOL, flags). "
                    "--html PATH writes one self-contained page with plots (fast_p curves, speedup distribution, "
                    "per-problem speed-of-light bars, the generated -> compiled -> correct -> faster funnel).")
    rep.add_argument("--run", metavar="NAME", help="one run's per-problem table")
    rep.add_argument("--runs", metavar="A,B", help="only these runs, side by side")
    formats = rep.add_mutually_exclusive_group()
    formats.add_argument("--json", action="store_true", help="JSON Lines: with --run, the run's leaderboard on one "
                                                             "line; else one summary object per run")
    formats.add_argument("--csv", action="store_true", help="CSV: one row per problem with --run, else per run")
    rep.add_argument("--html", metavar="PATH", help="also write a self-contained HTML report with plots")
    rep.add_argument("--price-in", type=float, metavar="USD", help="price per million prompt tokens (default: the "
                                                                    "run's own, if it was given)")
    rep.add_argument("--price-out", type=float, metavar="USD", help="price per million completion tokens")
    wide_option(rep)
    rep.set_defaults(func=cmd_report)
    _runs_parser(sub, store_opts)


def _runs_parser(sub, store_opts) -> None:
    runs = sub.add_parser("runs", parents=[store_opts], help="list stored runs; hide or delete some",
                          description="The stored runs, with their model, evaluations, answers and tokens, and "
                                      "whether `harness report` shows them. --hide leaves runs out of its side "
                                      "by side (and --html) unless named with --run or --runs; nothing is "
                                      "deleted, and --unhide shows them again. --delete forgets whole runs "
                                      "(their evaluations and turns); what they share with other runs (sources, "
                                      "builds, baselines, paid answers) stays, so a deleted run made again is "
                                      "served from it.")
    change = runs.add_mutually_exclusive_group()
    change.add_argument("--hide", metavar="NAME", nargs="+", help="leave these runs out of `harness report`")
    change.add_argument("--unhide", metavar="NAME", nargs="+", help="show these hidden runs in it again")
    change.add_argument("--delete", metavar="NAME", nargs="+", help="delete these runs (exact names; see the list)")
    runs.add_argument("--json", action="store_true", help="JSON Lines: one object per run (run, created_at, kind, "
                                                          "model, backend, target, device, evaluations, answers, "
                                                          "tokens, hidden)")
    wide_option(runs)
    runs.set_defaults(func=cmd_runs)
