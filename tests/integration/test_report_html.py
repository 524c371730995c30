"""The HTML report in a real browser: headless Chromium loads it, runs its script and screenshots it.

Chromium is driven by its command line only (--dump-dom, --screenshot): no playwright, no selenium.
The screenshot is kept as a test artifact for a person to look at.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.figures import FLAT_NAMES
from harness.report.html import fmt_pct, fmt_x, render_html
from tests.conftest import REPO
from tests.unit.test_report_html import (
    BROKEN_RUN,
    CPU,
    GPU,
    MODEL_RUN,
    ODD_PROBLEM,
    REF_RUN,
    Page,
    sample_boards,
)

# Required on a machine without a network, a GPU or a user session; each run gets a fresh profile
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0")


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed, and CI installs it")
        pytest.skip("chromium is not installed")
    return found


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, str]:
    boards = sample_boards()
    path = tmp_path_factory.mktemp("report") / "report.html"
    source = render_html(boards, title="kernel-harness <nightly> & co", generated_at="2025-01-02 03:04 UTC")
    path.write_text(source, encoding="utf-8")
    return path, source


def browse(chromium: str, page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
                          capture_output=True, text=True, timeout=60, check=False)


def page_console(stderr: str, page: Path) -> list[str]:
    """The console messages of this page (errors, uncaught exceptions, blocked fetches), not Chromium's own noise.

    Chromium logs them as `...:CONSOLE:LINE] "message", source: file:///... (LINE)`, whatever their level.
    """
    return [line for line in stderr.splitlines()
            if ("CONSOLE" in line and page.as_uri() in line) or "Uncaught" in line]


def artifact_dir() -> Path:
    where = Path(os.environ.get("HARNESS_TEST_ARTIFACTS") or REPO / "test-artifacts")
    where.mkdir(parents=True, exist_ok=True)
    return where


def test_page_loads_and_shows_every_run(chromium, report, tmp_path):
    path, source = report
    done = browse(chromium, path, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0, done.stderr[-3000:]
    assert page_console(done.stderr, path) == []
    dom = done.stdout
    assert re.search(r'<body[^>]*\bdata-ready="1"', dom), "the page's script did not run to its end"
    page = Page(dom)
    assert set(page.plots) == {"fastp", "speedups", "funnel"}
    for plot, runs in page.plots.items():
        assert runs == {MODEL_RUN, REF_RUN, BROKEN_RUN}, f"{plot} lacks a run"

    text = page.visible
    model, ref, _ = (b.summary for b in sample_boards())
    assert "kernel-harness <nightly> & co" in text and "2025-01-02 03:04 UTC" in text
    assert GPU in text and CPU in text
    assert fmt_x(model.geomean_speedup) == "1.52x" and "1.52x" in text and fmt_x(ref.geomean_speedup) in text
    for p, expected in (("0", "67%"), ("1", "50%"), ("1.5", "33%"), ("2", "17%")):
        assert fmt_pct(model.fast_p[p]) == expected and expected in text
    # % of speed of light: softmax SOL 0.4 ms, best 0.5 ms -> 80%; matmul's best (1.6 ms) beats its 2 ms: >100%, marked
    sol_cells = re.findall(r"best\s*(>?\d+%)", text)
    assert "80%" in sol_cells and ">100%" in sol_cells and "125%" not in text
    assert all(int(v.strip(">%")) <= 100 for v in re.findall(r">?\d+%", text) if not v.startswith(">"))
    # the funnel's counts, written on the bars
    funnel = {(a["data-run"], a["data-stage"]): a["data-count"] for tag, a in page.attrs
              if tag == "rect" and "data-stage" in a}
    assert funnel[(MODEL_RUN, "generated")] == "14" and funnel[(MODEL_RUN, "faster")] == "4"
    counts = re.findall(r'class="count">(\d+)<', dom)
    assert counts[:5] == ["14", "13", "11", "6", "4"]
    # names with <>&" came through as text, never as markup
    assert BROKEN_RUN in text and ODD_PROBLEM in text
    assert "<b>bold</b>" not in dom and "<nightly>" not in dom and "<bn>" not in dom
    assert not any(tag in ("bn", "nightly", "turn3") for tag, _ in page.attrs)  # no such elements
    assert "flagged" in text.lower() and "implausible_speedup" in text and "45.00x" in text

    # nothing is fetched: no URL in any src or href, in the source or the live DOM
    for html in (source, dom):
        assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.IGNORECASE)
        assert "http://" not in html and "https://" not in html


def test_screenshot_is_kept_as_an_artifact(chromium, report, tmp_path):
    path, _ = report
    shot = artifact_dir() / "report.png"
    shot.unlink(missing_ok=True)
    done = browse(chromium, path, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,3000",
                  "--hide-scrollbars")
    assert done.returncode == 0, done.stderr[-3000:]
    assert page_console(done.stderr, path) == []
    assert shot.is_file() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 10_000, "the screenshot looks blank"


def test_empty_report_loads(chromium, tmp_path):
    path = tmp_path / "empty.html"
    path.write_text(render_html([]), encoding="utf-8")
    done = browse(chromium, path, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0 and page_console(done.stderr, path) == []
    assert re.search(r'<body[^>]*\bdata-ready="1"', done.stdout) and "Nothing to show" in done.stdout


def test_clicking_a_header_sorts_its_table(chromium, report, tmp_path):
    """Clicks "best speedup" of the first run's problems twice (a script added to a copy of the page), reading
    the order after each: ascending, then descending, with the problems without a counted result last both times."""
    _, source = report
    clicks = """<script>
      var th = document.querySelector("#run-0 table.problems thead th:nth-child(3)");
      function order() {
        return Array.prototype.map.call(document.querySelectorAll("#run-0 table.problems tbody tr"),
                                        function (r) { return r.cells[0].textContent; }).join("|");
      }
      th.click(); document.body.dataset.ascending = order();
      th.click(); document.body.dataset.descending = order();
    </script></body>"""
    copy = tmp_path / "clicked.html"
    copy.write_text(source.replace("</body>", clicks), encoding="utf-8")
    done = browse(chromium, copy, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0 and page_console(done.stderr, copy) == []
    body = Page(done.stdout).attrs
    found = next(attrs for tag, attrs in body if tag == "body")
    assert found["data-ascending"].split("|") == [ODD_PROBLEM, "level3/attention", "level1/matmul",
                                                  "level1/softmax", "level1/layernorm", "level1/relu"]
    assert found["data-descending"].split("|") == ["level1/softmax", "level1/matmul", "level3/attention", ODD_PROBLEM,
                                                   "level1/layernorm", "level1/relu"]


# ---- the drill-down views, from a store as a real multi-turn run leaves it (tests/report_store.py) ----

VIEWS = {  # name: (fragment, window height for its screenshot)
    "run-filtered": ("view=run&run=0&status=correct", 1100),
    "problem": ("view=run&run=0&problem=level1%2Fsoftmax", 1300),
    "candidate": (None, 2600),  # the third turn of softmax's first sample: found in the data below
    "candidate-flagged": (None, 2200),  # the second turn of softmax's second sample: measured, not counted
    "candidate-compile-error": (None, 1800),
    "conversation": (None, 2400),
    "compare": ("view=compare&a=0&b=1", 900),
}


@pytest.fixture(scope="module")
def drill(tmp_path_factory) -> tuple[Path, dict, dict[str, str]]:
    from harness.report.details import report_details
    from harness.report.leaderboard import run_board
    from tests.report_store import sample_store

    where = tmp_path_factory.mktemp("drill")
    with sample_store(where) as store:
        runs = store.runs()
        boards = [run_board(store, r) for r in runs]
        details = report_details(store, runs, boards)
        path = where / "report.html"
        path.write_text(render_html(boards, details=details), encoding="utf-8")
    conv = next(i for i, c in enumerate(details["conversations"]) if c["run"] == 0 and len(c["turns"]) == 3)
    turns = [t["candidate"] for t in details["conversations"][conv]["turns"]]
    flagged = next(i for i, c in enumerate(details["candidates"]) if "hidden_work" in c["flags"])
    fragments = {name: fragment for name, (fragment, _) in VIEWS.items() if fragment}
    fragments.update({"candidate": f"view=candidate&id={turns[2]}", "conversation": f"view=conversation&id={conv}",
                      "candidate-compile-error": f"view=candidate&id={turns[0]}",
                      "candidate-flagged": f"view=candidate&id={flagged}"})
    return path, details, fragments


def view_dom(chromium: str, path: Path, fragment: str, profile: Path, *extra: str) -> str:
    """The page's DOM once its script has unpacked the details and drawn the view (virtual time runs it out)."""
    done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=10000", *extra,
                           "--dump-dom", f"{path.as_uri()}#{fragment}"], capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-3000:]
    assert page_console(done.stderr, path) == []
    assert re.search(r'<body[^>]*\bdata-ready="1"', done.stdout), "the page's script did not run to its end"
    return done.stdout


def test_each_view_draws_what_it_is_for(chromium, drill, tmp_path):
    path, details, fragments = drill
    run = Page(view_dom(chromium, path, fragments["run-filtered"], tmp_path / "p1")).visible
    assert "showing 4 of 7" in run and "compile_error" in run  # the filter's boxes keep every status
    problem = view_dom(chromium, path, fragments["problem"], tmp_path / "p2")
    assert "Problem level1/softmax" in Page(problem).visible and "sample 1" in problem and "sample 2" in problem
    # its line of facts: how many candidates, and no backend named for load_inline (C++ on the cpu target)
    assert re.search(r"\u00b7 run \u00b7 \d+ candidates", Page(problem).visible), Page(problem).visible[:600]

    candidate = view_dom(chromium, path, fragments["candidate"], tmp_path / "p3")
    text = Page(candidate).visible
    for expected in ("Verdict", "counted", "Correctness", "max abs error", "2.00e-7", "Coverage", "softmax_v3_kernel",
                     "Timing", "0.795", "0.330", "Changed since turn 2", "Source",
                     "forward", "backward", "0.125", "0.205", "0.285", "0.510"):  # its halves, forward and backward
        assert expected in text, expected
    assert 'data-plot="timing"' in candidate
    c = details["candidates"][int(fragments["candidate"].rsplit("=", 1)[1])]
    marked = sum(end - start + 1 for start, end, _ in c["kernels"])
    assert candidate.count('class="line kern"') == marked > 10

    flagged = view_dom(chromium, path, fragments["candidate-flagged"], tmp_path / "p7")
    text = Page(flagged).visible
    assert "(48.00x) \u2014 measured, not counted" in text and 'title="measured, not counted (flagged)"' in flagged
    # its figures, labelled and in their units; none of their stored names
    for expected in ("Where the time went", "stages build 18.2 s", "flagged evaluation, redone 2.87 s",
                     "runner's first reply 0.412 ms", "the judge's start ready 1.93 s context attempts 1"):
        assert expected in text, expected
    assert not [name for name in FLAT_NAMES if "_" in name and name in text]
    # a name wraps after a /, _ or space only, never inside a word: each part between is white-space nowrap
    run = view_dom(chromium, path, fragments["run-filtered"], tmp_path / "p8")
    assert '<span class="nb">level1/</span><wbr><span class="nb">softmax</span>' in run
    assert '<span class="nb">sample2_turn2.py</span>' in run  # a turn's file name, short: on one line

    broken = Page(view_dom(chromium, path, fragments["candidate-compile-error"], tmp_path / "p4")).visible
    assert "compile_error" in broken and "Compiler output" in broken
    assert 'identifier "sum_undeclared" is undefined' in broken

    conversation = view_dom(chromium, path, fragments["conversation"], tmp_path / "p5")
    assert conversation.count('class="card turn"') == 3
    assert "feedback on turn 1" in conversation and "Your kernel did not compile" in Page(conversation).visible

    compare = Page(view_dom(chromium, path, fragments["compare"], tmp_path / "p6")).visible
    assert "B better on 1, A better on 1, within 2% on 0" in compare


def test_candidate_text_stays_text(chromium, drill, tmp_path):
    """A source holding </script> and an <img onerror> is shown as it is, and never becomes markup."""
    path, details, _ = drill
    cid = next(i for i, c in enumerate(details["candidates"])
               if c["source"] is not None and "pwned" in details["texts"][c["source"]])
    dom = view_dom(chromium, path, f"view=candidate&id={cid}", tmp_path / "p")
    assert "data-pwned" not in dom and "<img" not in dom
    assert '</script><img src=x onerror="document.body.dataset.pwned = 1">' in Page(dom).visible


def test_a_filter_box_filters_the_table(chromium, drill, tmp_path):
    """Ticks the compile_error box of the run's candidates (a script added to a copy of the page) and reads the
    table the new address draws."""
    path, _, _ = drill
    copy = tmp_path / "clicked.html"
    click = """<script>
      window.addEventListener("hashchange", function () {
        setTimeout(function () {
          document.body.dataset.shown = document.getElementById("shown").textContent;
          document.body.dataset.rows = document.querySelectorAll("table.candidates tbody tr").length;
        }, 0);
      });
      var wait = setInterval(function () {
        var box = document.querySelector('input[data-filter="status"][value="compile_error"]');
        if (box && !document.body.dataset.clicked) {
          document.body.dataset.clicked = "1"; box.click(); clearInterval(wait);
        }
      }, 10);
    </script></body>"""
    copy.write_text(path.read_text(encoding="utf-8").replace("</body>", click), encoding="utf-8")
    dom = view_dom(chromium, copy, "view=run&run=0", tmp_path / "p")
    body = next(attrs for tag, attrs in Page(dom).attrs if tag == "body")
    assert body["data-shown"] == "showing 1 of 7" and body["data-rows"] == "1"


def test_screenshots_of_every_view_are_kept(chromium, drill, tmp_path):
    path, _, fragments = drill
    for name, (_, height) in VIEWS.items():
        shot = artifact_dir() / f"report-{name}.png"
        shot.unlink(missing_ok=True)
        view_dom(chromium, path, fragments[name], tmp_path / name, f"--screenshot={shot}",
                 f"--window-size=1400,{height}", "--hide-scrollbars")
        assert shot.is_file() and shot.stat().st_size > 10_000, f"the {name} screenshot looks blank"
