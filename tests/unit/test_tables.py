"""Tables fit the terminal (report/tables.py): at 80 and 100 columns no line is wider and no name is cut, what gave
way is said under the table, --wide and a pipe print every column whole; a flagged result's measured speedup reads
`(0.47x)` with its legend, and the summary counts the flagged results and says why."""

import io

import pytest
from rich.console import Console

from harness.cli import eval as cli_eval
from harness.eval.context import contexts_for
from harness.report.labels import LEGEND, significant
from harness.report.leaderboard import PROBLEM_COLUMNS, RUN_COLUMNS, render, run_board
from harness.report.tables import Column, fit, shorten_line, shorten_path
from harness.store import Store
from tests.conftest import run_cli
from tests.report_store import Writer, cuda_source, sample_store, timing

BUSY_RUN = "reference-cpu-2026-12-06-041500-on-a-busy-machine"
MODEL = "some-org/a-rather-long-model-name-v2"
LONG_PROBLEM = "level2/conv_transpose3d_groupnorm_mean_with_a_long_id"
PROBLEMS = (LONG_PROBLEM, "level1/softmax", "level1/relu")
NAMES = (BUSY_RUN, *PROBLEMS)


@pytest.fixture(scope="module")
def results_dir(tmp_path_factory):
    """tests/report_store.py's store, plus a run on a busy machine: every result correct, contended, not counted."""
    path = tmp_path_factory.mktemp("tables")
    with sample_store(path) as store:
        writer = Writer(store, path)
        store.ensure_run(BUSY_RUN, kind="run", target="cpu", device_name="cpu", model=MODEL, config="{}")
        for i, problem in enumerate(PROBLEMS):
            source = cuda_source(f"busy{i}", "x[i]")
            result = writer.result(problem, source, "correct", speedup=0.47 + i / 10, runtime=timing(11.997),
                                   ref_runtime=timing(5.6), flags=("contended",))
            writer.conversation(BUSY_RUN, MODEL, problem, 1, [(f"```python\n{source}```", source, result, "ok")])
    return path


def assert_fits(text: str, width: int, names: tuple[str, ...]) -> None:
    lines = text.splitlines()
    assert all(len(line.rstrip()) <= width for line in lines), "\n".join(line for line in lines if len(line) > width)
    for name in names:  # whole, on one line: never folded or cut
        assert any(name in line for line in lines), (name, text)


def cli_text(*args, columns: int | None) -> str:
    proc = run_cli(*args, env={"COLUMNS": str(columns)} if columns else {"COLUMNS": ""})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("width", [80, 100])
def test_report_and_runs_fit_the_terminal_with_long_names(results_dir, width):
    board = cli_text("report", "--run", BUSY_RUN, "--results-dir", results_dir, columns=width)
    assert_fits(board, width, NAMES)
    assert "--wide shows every column" in board if width == 80 else True
    side = cli_text("report", "--results-dir", results_dir, columns=width)
    assert_fits(side, width, (BUSY_RUN, "gpt-x <multi>", "small-model"))
    runs = cli_text("runs", "--results-dir", results_dir, columns=width)
    assert_fits(runs, width, (BUSY_RUN,))
    listed = cli_text("problems", "list", columns=width)
    assert_fits(listed, width, ("level2/convtranspose2d_global_avgpool_bias_logsumexp_sum_multiply",))


def test_what_gave_way_is_named_and_wide_or_piped_shows_every_column(results_dir):
    narrow = cli_text("report", "--results-dir", results_dir, columns=80)
    assert "left out" in narrow and "cost" in narrow.split("left out")[1]  # said under the table
    for text in (cli_text("report", "--results-dir", results_dir, "--wide", columns=80),
                 cli_text("report", "--results-dir", results_dir, columns=None)):  # piped, no $COLUMNS
        head = next(line for line in text.splitlines() if "geomean" in line)
        assert all(c.header in head for c in RUN_COLUMNS), head
        assert "left out" not in text and MODEL in text and "$" not in text.split("leaderboard")[0]
    piped = cli_text("problems", "list", columns=None)
    assert "description" in piped and "Index of the maximum along" in piped and "…" not in piped


@pytest.mark.parametrize("width", [80, 100, None])
def test_eval_table_fits_and_marks_a_flagged_speedup(results_dir, width, monkeypatch):
    with Store(results_dir / "harness.db") as store:
        results = store.results(BUSY_RUN)
        contexts = contexts_for(store, results)
    buffer = io.StringIO()
    monkeypatch.setattr(cli_eval, "out", Console(file=buffer, width=width or 120))
    cli_eval.print_results(results, contexts, width)
    text = buffer.getvalue()
    assert "(0.47x)" in text and LEGEND in text
    if width:
        assert_fits(text, width, ("contended",))
        assert "…/sample1_turn1.py" in text or "candidate" in text.split("left out")[-1]
    else:
        assert all(r.candidate_label in text for r in results) and "12.0" in text and "11.997" not in text


def test_a_busy_machine_board_shows_what_was_measured_and_why_it_is_not_counted(results_dir):
    with Store(results_dir / "harness.db") as store:
        board = run_board(store, next(r for r in store.runs() if r.name == BUSY_RUN))
    console = Console(record=True, width=200)
    render(board, console)  # whole
    text = console.export_text()
    assert "3 of 3 correct results flagged, not counted: contended 3 (other work on the cores" in text
    assert "`harness doctor` says why" in text and LEGEND in text
    row = next(line for line in text.splitlines() if line.startswith("│ level1/softmax") and "(0.57x)" in line)
    assert "(12.0)" in row and "contended" in row  # its time, in the same notation, and its flag
    assert "claimed" not in text and "measured speedup" in text and "11.997" not in text
    head = next(line for line in text.splitlines() if "problem" in line and "flags" in line)
    assert all(c.header in head for c in PROBLEM_COLUMNS)


def test_columns_give_way_in_their_declared_order():
    columns = (Column("name", "name"), Column("path", "path", gives_way=3), Column("a", gives_way=1),
               Column("b", gives_way=2), Column("note", "line", gives_way=4))
    rows = [("x" * 30, "solutions/run/level1/relu/sample1_turn1.py", "1.00x", "2.00x", "a long note " * 5)]
    whole = fit(columns, rows, None)
    assert whole.headers == ("name", "path", "a", "b", "note") and not whole.left_out
    cut = fit(columns, rows, 80)
    assert cut.width <= 80 and cut.left_out == ("note",) and cut.shortened == ("path",)
    assert cut.rows[0][1].startswith("…/") and cut.rows[0][1].endswith("/sample1_turn1.py")
    narrow = fit(columns, rows, 50)
    assert narrow.width <= 50 and narrow.headers == ("name", "a", "b") and narrow.left_out == ("path", "note")
    assert narrow.rows[0][0] == "x" * 30  # a name stays whole


def test_paths_lose_folders_texts_lose_words_times_keep_three_digits():
    assert shorten_path("solutions/run/level1/relu/sample1_turn1.py", 30) == "…/level1/relu/sample1_turn1.py"
    assert shorten_path("solutions/run/level1/relu/sample1_turn1.py", 10) == "…/sample1_turn1.py"  # never mid-part
    assert shorten_line("Index of the maximum along a dimension", 20) == "Index of the…"
    assert [significant(x) for x in (11.997, 0.01664, 0.795, 100.0, 1234.5, 9.996)] == \
        ["12.0", "0.0166", "0.795", "100", "1,234", "10.0"]
