"""`harness audit`: evaluate a released answer set and set what was measured beside what was claimed."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from harness.checks import CHECK_NAMES, check_spec
from harness.cli.console import UsageError, emit_json, err, out, problem_root, table_width
from harness.cli.options import settings_from
from harness.cli.progress import ConsoleEvents
from harness.device import discover
from harness.errors import HarnessFailed
from harness.eval import sanitize
from harness.eval.audit import Answer, read_answer_dir, read_answers, verdict_reason
from harness.eval.candidate import candidate_from_source
from harness.eval.evaluation import Job
from harness.eval.pipeline import RunLabel, evaluate
from harness.problems.screen import screen
from harness.report.labels import not_counted, times
from harness.report.leaderboard import STATUS_STYLE
from harness.report.tables import Column, print_table
from harness.store import Store
from harness.types import HARNESS_ERROR, EvalResult

AUDIT_RUN = "audit"


def add_parser(sub, eval_opts: argparse.ArgumentParser) -> None:
    audit = sub.add_parser(
        "audit", parents=[eval_opts], help="re-check a released answer set against its claimed speedups",
        description="Evaluate every answer of ANSWERS.jsonl (one JSON object per line: \"problem\" as an id, a path "
                    "or a problem's source; \"source\", the answer's code defining ModelNew; optional "
                    "\"claimed_speedup\" and \"label\") exactly as `harness eval` would, and show each measured "
                    "result beside its claim, with the reason for every verdict. A malformed file is exit 2, "
                    "before anything is built; 3 when the harness itself failed on an answer. Results go to the "
                    "run `audit` unless --run names another. ANSWERS may also be a directory of answer files "
                    "(each defining ModelNew): KernelBench's sample dumps (level_1_problem_19_sample_0_kernel.py, "
                    "with --problems-dir at its KernelBench/ folder), a LEVEL/PROBLEM/SAMPLE.py tree, answers "
                    "beside their problem files (relu.py, relu_answer.py), or files with a `# problem: ID` line.")
    audit.add_argument("answers", metavar="ANSWERS.jsonl|DIR", type=Path)
    audit.add_argument("--claim-check", choices=CHECK_NAMES, default="kernelbench",
                       help="the check the claims were made with, whose verdict is shown beside ours (default "
                            "kernelbench: allclose at fp32 1e-4, half 1e-2; kernelbench-v0: 1e-2, as KernelBench "
                            "v0/v0.1 and the RL results measured with it); an answer's own \"check\" field wins")
    audit.set_defaults(func=cmd_audit)


def cmd_audit(args) -> int:
    settings = settings_from(args)
    answers = (read_answer_dir(args.answers, problem_root(args)) if args.answers.is_dir() else  # AnswersError: exit 2
               read_answers(args.answers, problem_root(args), settings.results_dir / "audit-problems"))
    device = discover(args.target)
    sanitize.require(settings.sanitize, device.target)  # before anything is stored
    unusable = screen([a.problem for a in answers], device.target, settings.results_dir / "gate")
    for pid, why in unusable.items():
        err.print(f"[yellow]excluded[/] the answers to {escape(pid)}: {escape(' '.join(why))}", soft_wrap=True)
    answers = [a for a in answers if a.problem.id not in unusable]
    if not answers:
        raise UsageError("no answer is left to audit: every problem they answer was excluded (above)")
    err.print(f"[dim]{len(answers)} answers; target {device.target} on {escape(device.name)}; results in "
              f"{settings.db}[/]")
    jobs = [Job(a.problem, candidate_from_source(a.source),
                also=check_spec(a.check or args.claim_check, settings.dtype)) for a in answers]
    with Store(settings.db) as store, ConsoleEvents() as events:
        recorded = evaluate(jobs, device=device, settings=settings, store=store,
                            run=RunLabel(args.run or AUDIT_RUN, "eval"), events=events)
    results = [result for _, result in recorded]
    rows = [audit_record(a, r) for a, r in zip(answers, results, strict=True)]
    if args.json:
        for row in rows:
            emit_json(row)
    else:
        print_audit(rows, results[0].device_name if results else device.name, table_width(args))
    faults = sum(r.status == HARNESS_ERROR for r in results)
    if faults:
        raise HarnessFailed(faults, "the harness or the machine failed, not the answer; run the same command again")
    return 0


def audit_record(answer: Answer, result: EvalResult) -> dict:
    """What `--json` prints per answer: `harness eval`'s fields, the claim, and the measured share of it."""
    measured = result.speedup if result.counted else None
    claimed = answer.claimed_speedup
    other = result.check.other if result.check else None
    return {"label": answer.label, **result.summary(), "claimed_speedup": claimed,
            "measured_vs_claimed": measured / claimed if measured and claimed else None,
            "reason": verdict_reason(result.status, result.error, result.flags, result.uninformative),
            "claim_check": other.name if other else None, "claim_check_passed": other.ok if other else None,
            "claim_check_compared": other.compared if other else 0,
            "claim_check_message": other.message if other else None}


def claim_cell(row: dict) -> str:
    """The claim's own check beside ours: passed, failed, or (ours stopped first) passed as far as it went."""
    if row["claim_check_passed"] is None:
        return "-"
    if not row["claim_check_passed"]:
        return "[red]incorrect[/]"
    stopped = row["status"] != "correct"
    return "correct" + (f" [dim]({row['claim_check_compared']} outputs, then ours stopped)[/]" if stopped else "")


AUDIT_COLUMNS = (
    Column("answer", "name"), Column("problem", "name", gives_way=3), Column("status", "name"),
    Column("claim's check", "text", gives_way=2, short="theirs"), Column("claimed"), Column("measured"),
    Column("measured/claimed", gives_way=1, short="ratio"), Column("reason", "text", gives_way=4))


def print_audit(rows: list[dict], device: str, width: int | None) -> None:
    claims = ", ".join(sorted({r["claim_check"] for r in rows if r["claim_check"]})) or "-"
    ours = ", ".join(sorted({r["check"] for r in rows}))
    cells = [(escape(row["label"]), escape(row["problem"]), f"[{STATUS_STYLE[row['status']]}]{row['status']}[/]",
              claim_cell(row), times(row["claimed_speedup"]),
              times(row["speedup"]) if row["counted"] else not_counted(row["speedup"]),
              times(row["measured_vs_claimed"]), escape(row["reason"])) for row in rows]
    print_table(out, AUDIT_COLUMNS, cells, width=width,
                title=escape(f"audit on {device}: measured against claimed; status by our check ({ours}), beside "
                             f"the claim's own ({claims})"))
    claimed = [r for r in rows if r["claimed_speedup"]]
    held = sum(1 for r in claimed if r["measured_vs_claimed"] and r["measured_vs_claimed"] >= 0.9)
    out.print(f"{len(rows)} answers: {sum(r['counted'] for r in rows)} correct and counted; "
              f"{held} of {len(claimed)} claims hold to within 10 %"
              + ("; a speedup in parentheses is measured but not counted (see its reason)"
                 if any(r["speedup"] and not r["counted"] for r in rows) else ""))

