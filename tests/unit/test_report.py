import math

import pytest
from rich.console import Console

from harness.report.leaderboard import leaderboard, render
from harness.types import BuildResult, EvalResult, Timing


def ev(problem, status, speedup=None, built=True):
    t = Timing(median_ms=1.0, mean_ms=1.0, std_ms=0.0, min_ms=1.0, n=3, rse=0.0)
    build = BuildResult(status="ok" if built else "compile_error", build_sha256="b", directory="/d", duration_s=1,
                        log="")
    return EvalResult(problem_id=problem, problem_sha256="p", candidate_path=f"{problem}-{status}-{speedup}.py",
                      candidate_sha256="c", target="cpu", device_name="cpu", torch_version="t", status=status,
                      speedup=speedup, runtime=t if speedup else None, ref_runtime=t if speedup else None,
                      build=build if status != "no_code" else None)


RESULTS = [
    ev("a", "correct", 3.0), ev("a", "correct", 1.2), ev("a", "incorrect"),
    ev("b", "correct", 0.5), ev("b", "compile_error", built=False),
    ev("c", "runtime_error"), ev("c", "no_code"),
    ev("d", "correct", 1.6),
]


def test_summary_numbers():
    s = leaderboard("r", RESULTS).summary
    assert (s.problems, s.candidates) == (4, 8)
    assert s.compile_rate == pytest.approx(6 / 7)  # no_code has no build to count
    assert s.correct_rate == pytest.approx(4 / 8)
    # best per problem: a 3.0, b 0.5, c none, d 1.6
    assert s.fast_p == {"0": 0.75, "1": 0.5, "1.5": 0.5, "2": 0.25}
    # geometric mean over problems of the best counted speedup
    assert s.geomean_speedup == pytest.approx(math.exp((math.log(3) + math.log(0.5) + math.log(1.6)) / 3))
    assert s.funnel.model_dump() == {"generated": 8, "with_code": 7, "compiled": 6, "correct": 4, "faster": 3}
    assert s.statuses == {"correct": 4, "incorrect": 1, "compile_error": 1, "runtime_error": 1, "no_code": 1}


def test_problem_rows_pick_the_best_correct_candidate():
    rows = {r.problem: r for r in leaderboard("r", RESULTS).problems}
    assert rows["a"].best_speedup == 3.0 and rows["a"].best_candidate == "a-correct-3.0.py"
    assert rows["a"].statuses == {"correct": 2, "incorrect": 1}
    assert rows["c"].best_speedup is None


def test_empty_run():
    s = leaderboard("r", []).summary
    assert s.problems == 0 and s.correct_rate is None and s.geomean_speedup is None


def test_render_prints_every_problem():
    console = Console(record=True, width=200)
    render(leaderboard("r", RESULTS), console)
    text = console.export_text()
    assert "3.00x" in text and "fast_1.5=50%" in text and "geomean speedup" in text


def test_flagged_results_never_count_and_are_listed_apart():
    fake = ev("a", "correct", 40.0).model_copy(update={"flags": ("implausible_speedup", "hidden_work")})
    noisy = ev("b", "correct", 2.0).model_copy(update={"flags": ("noisy_timing", "torch_ops")})
    board = leaderboard("r", [fake, ev("a", "correct", 1.2), noisy])
    rows = {r.problem: r for r in board.problems}
    assert rows["a"].best_speedup == 1.2 and rows["b"].best_speedup == 2.0  # informative flags still count
    assert board.summary.geomean_speedup == pytest.approx(math.sqrt(1.2 * 2.0))
    assert board.speedups == [1.2, 2.0]  # the flagged 40x is in no number
    assert board.summary.fast_p["2"] == 0.0 and board.summary.flagged == 1
    flagged = [(f.problem, f.speedup, f.flags) for f in board.flagged]
    assert flagged == [("a", 40.0, ("implausible_speedup", "hidden_work"))]
    console = Console(width=200, record=True)
    render(board, console)
    text = console.export_text()
    assert "flagged: correct, but not counted" in text and "implausible_speedup, hidden_work" in text
    assert "1 of 3 correct results flagged, not counted: implausible_speedup 1, hidden_work 1" in text
    assert "(40.00x)" in text and "claimed" not in text  # measured, in the not-counted notation


def timing(ms):
    return Timing(median_ms=ms, mean_ms=ms, std_ms=0.0, min_ms=ms, n=10, rse=0.0)


def test_speedup_over_compile_and_share_of_the_speed_of_light_come_from_the_stored_context():
    from harness.eval.context import ProblemContext
    from harness.types import Baseline, DeviceInfo, Peaks
    result = ev("a", "correct", 3.0).model_copy(update={"runtime": timing(2.0)})
    ctx = ProblemContext(
        device=DeviceInfo(target="cuda", name="Some Future GPU"),  # no datasheet: what was measured is the ceiling
        eager=Baseline(timing=timing(6.0), bytes_moved=10**9),
        compiled={"compile": Baseline(timing=timing(4.0), eager_ms=6.2),
                  "compile-max-autotune": Baseline(timing=timing(3.0), eager_ms=6.0),
                  "broken": Baseline(error="inductor failed")},
        peaks=Peaks(bandwidth_gbs=1000.0))
    board = leaderboard("r", [result], {"p": ctx})
    (row,) = board.problems
    assert row.compile_kind == "compile-max-autotune" and row.compile_ms == 3.0
    assert row.best_vs_compile == pytest.approx(1.5)  # 3x over eager, and max-autotune is 2x over eager
    assert row.sol_ms == pytest.approx(1.0) and row.sol_fraction == pytest.approx(0.5)
    assert row.eager_sol_fraction == pytest.approx(1 / 6) and row.compile_sol_fraction == pytest.approx(1 / 3)
    assert board.summary.geomean_vs_compile == pytest.approx(1.5) and board.summary.median_sol == pytest.approx(0.5)


def test_runs_side_by_side_with_tokens_cost_and_csv():
    from harness.report.leaderboard import render_runs, summary_record, to_csv
    from harness.store import RunUsage
    usage = RunUsage(requests=2, prompt_tokens=1_000_000, completion_tokens=500_000)
    a = leaderboard("gpt", RESULTS, model="gpt-x", usage=usage, prices=(1.0, 4.0)).summary
    b = leaderboard("refs", [ev("a", "correct", 1.2)]).summary
    assert a.tokens == 1_500_000 and a.cost_usd == pytest.approx(3.0) and b.tokens is None
    console = Console(record=True, width=250)
    render_runs([a, b], console)
    text = console.export_text()
    assert "gpt-x" in text and "$3.0000" in text and "1,500,000" in text and "1.20x" in text
    lines = to_csv([summary_record(a), summary_record(b)]).splitlines()
    assert lines[0].startswith("run,model,") and "fast_1.5" in lines[0] and len(lines) == 3
    assert lines[2].startswith("refs,,")


def test_harness_errors_count_in_no_rate_and_are_listed_apart():
    fault = ev("e", "harness_error").model_copy(update={"candidate_sha256": "f", "error": "harness error: disk full"})
    board = leaderboard("r", [*RESULTS, fault])
    plain = leaderboard("r", RESULTS).summary
    s = board.summary
    assert (s.problems, s.candidates, s.compile_rate, s.correct_rate, s.fast_p, s.funnel) == \
        (plain.problems, plain.candidates, plain.compile_rate, plain.correct_rate, plain.fast_p, plain.funnel)
    assert s.harness_errors == 1 and "harness_error" not in s.statuses
    assert [(h.problem, h.error) for h in board.harness_errors] == [("e", "harness error: disk full")]
    console = Console(record=True, width=200)
    render(board, console)
    text = console.export_text()
    assert "harness errors: no verdict" in text and "disk full" in text and "1 harness errors" in text
    # once the same candidate is judged later in the run, the fault is gone from the board
    judged = fault.model_copy(update={"status": "incorrect", "error": "mismatch"})
    assert leaderboard("r", [*RESULTS, fault, judged]).summary.harness_errors == 0


def test_names_are_never_cut_in_a_narrow_terminal():
    """A run name, a problem id or a candidate path is typed again (`--run NAME`): at 80 columns it stays whole,
    free text wraps at words, and a table too wide for the terminal is printed wider rather than cut."""
    from harness.report.leaderboard import render_runs

    run = "reference-cpu-2026-11-27-041500-a-long-name"
    problem = "level2/conv_transpose3d_groupnorm_mean_with_a_long_id"
    results = [ev(problem, "correct", 2.0), ev(problem, "correct", 1.5)]
    results[1] = results[1].model_copy(update={"flags": ("noisy_timing", "contended")})
    for draw, names in ((lambda c: render_runs([leaderboard(run, results, model="some/model").summary], c),
                         (run, "some/model")),
                        (lambda c: render(leaderboard(run, results), c), (problem, results[1].candidate_path))):
        console = Console(record=True, width=80)
        draw(console)
        text = console.export_text()
        assert "…" not in text and all(name in text for name in names), text
