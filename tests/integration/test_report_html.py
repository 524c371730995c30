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
    # % of speed of light: softmax SOL 0.4 ms, best 0.5 ms -> 80%; matmul 2 ms / 1.6 ms -> 125%, printed as is
    sol_cells = re.findall(r"best\s*(\d+%)", text)
    assert "80%" in sol_cells and "125%" in sol_cells
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
