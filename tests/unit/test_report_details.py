"""The report's drill-down data (report/details.py, report/code.py) read from a store as a real run leaves it, and
the page that carries it (the browser test, tests/integration/test_report_html.py, draws it)."""

import re

import pytest

from harness.cli.main import main
from harness.figures import FLAT_NAMES
from harness.report.code import kernel_spans, log_tail, source_diff
from harness.report.details import report_details
from harness.report.explain import STATUS_MEANINGS
from harness.report.html import pack, render_html, unpack
from harness.report.leaderboard import run_board
from harness.types import STATUSES
from tests.report_store import (
    EVAL_RUN,
    FLAGGED_FIGURES,
    MODEL_RUN,
    OTHER_RUN,
    PROBLEMS,
    SYSTEM,
    TRITON_SOURCE,
    cuda_source,
    sample_store,
)


@pytest.fixture
def store(tmp_path):
    with sample_store(tmp_path) as s:
        yield s


def details_of(store):
    runs = store.runs()
    return report_details(store, runs, [run_board(store, r) for r in runs])


def test_every_status_is_explained():  # every flag: tests/unit/test_flags.py
    assert set(STATUS_MEANINGS) == set(STATUSES)
    assert all(len(text) > 20 for text in STATUS_MEANINGS.values())


def test_kernel_spans_mark_the_cpp_and_cuda_strings_and_triton_functions():
    source = cuda_source("relu", "fmaxf(x[i], 0.f)")
    lines = source.splitlines()
    spans = kernel_spans(source)
    assert [kind for *_, kind in spans] == ["cuda", "c++"]
    (start, end, _), (cpp, _, _) = spans
    assert lines[start - 1].startswith("cuda_source = r") and lines[end - 1] == '"""'
    assert any("__global__" in line for line in lines[start - 1:end])
    assert lines[cpp - 1].startswith("cpp_source =")
    (span,) = kernel_spans(TRITON_SOURCE)
    triton_lines = TRITON_SOURCE.splitlines()
    assert span[2] == "triton" and triton_lines[span[0] - 1] == "@triton.jit"
    assert "tl.store" in triton_lines[span[1] - 1]
    # a docstring, a message, and code that does not parse mark nothing
    assert kernel_spans('"""Relu: y = max(x, 0)."""\nclass ModelNew:\n    pass\n') == []
    assert kernel_spans("def broken(:\n") == []


def test_diff_and_log_tail():
    before, after = cuda_source("a", "x[i]"), cuda_source("a", "2 * x[i]")
    diff = source_diff(before, after, before_name="turn 1", after_name="turn 2")
    assert diff.startswith("--- turn 1\n+++ turn 2\n@@")
    assert "-    if (i < n) y[i] = x[i];" in diff and "+    if (i < n) y[i] = 2 * x[i];" in diff
    assert source_diff(before, before, before_name="a", after_name="b") == ""
    log = "\n".join(f"line {i}" for i in range(500))
    assert log_tail(log).splitlines()[-1] == "line 499" and len(log_tail(log).splitlines()) == 80
    assert log_tail(None) == log_tail("") == ""


def test_details_follow_each_conversation_turn_by_turn(store):
    d = details_of(store)
    assert [r["name"] for r in d["runs"]] == [MODEL_RUN, OTHER_RUN, EVAL_RUN]
    model = d["runs"][0]
    assert model["turns"] == 3 and len(model["candidates"]) == 7
    convs = [c for c in d["conversations"] if c["run"] == 0]
    assert [(c["problem"], c["sample"], len(c["turns"])) for c in convs] == [
        (PROBLEMS[1], 1, 2), (PROBLEMS[0], 1, 3), (PROBLEMS[0], 2, 2)]
    first = convs[1]
    assert d["texts"][first["system"]] == SYSTEM
    statuses = [d["candidates"][t["candidate"]]["status"] for t in first["turns"]]
    assert statuses == ["compile_error", "incorrect", "correct"]
    # each turn sends the last turn's feedback, and each candidate knows its turn and what changed since the last one
    asked = [d["texts"][t["asked"]] for t in first["turns"]]
    assert asked[0].startswith("Write a faster ModelNew") and "did not compile" in asked[1] and "wrong" in asked[2]
    turn1, turn2, turn3 = (d["candidates"][t["candidate"]] for t in first["turns"])
    assert (turn1["previous"], turn2["previous"], turn3["previous"]) == (None, first["turns"][0]["candidate"],
                                                                          first["turns"][1]["candidate"])
    assert "+    if (i < n) y[i] = __expf(x[i]);" in d["texts"][turn3["diff"]]
    assert turn3["conversation"] == d["conversations"].index(first) and (turn3["sample"], turn3["turn"]) == (1, 3)
    assert turn3["kernels"] and turn3["coverage"]["share"] == 0.94 and len(turn3["runtime"]["quantiles_ms"]) == 21
    assert "sum_undeclared" in d["texts"][turn1["build"]["log"]] and turn1["reason"].startswith("cuda.cu(7): error")
    assert turn2["check"]["mismatch_fraction"] == 0.998
    # a turn without code: its evaluation is linked, there is no source, and the next candidate has nothing to diff
    no_code, triton = (d["candidates"][t["candidate"]] for t in convs[2]["turns"])
    assert no_code["status"] == "no_code" and no_code["source"] is None and triton["diff"] is None
    assert triton["flags"] == ["implausible_speedup", "hidden_work"] and not triton["counted"]


def test_texts_are_kept_once(store):
    d = details_of(store)
    assert len(d["texts"]) == len(set(d["texts"]))
    assert d["texts"].count(SYSTEM) == 1


def test_an_evaluated_again_file_is_one_candidate_as_on_the_board(store):
    d = details_of(store)
    (cid,) = d["runs"][2]["candidates"]
    c = d["candidates"][cid]
    assert c["label"] == "kernels/relu_cheat.py" and c["status"] == "rejected" and c["conversation"] is None
    assert c["reason"].startswith("rejected by static rules: line 3 [patching]")


def test_the_page_carries_the_details_and_links_into_them(store):
    runs = store.runs()
    boards = [run_board(store, r) for r in runs]
    d = report_details(store, runs, boards)
    page = render_html(boards, details=d)
    packed = re.search(r'<script type="application/octet-stream" id="report-data">([^<]*)</script>', page).group(1)
    assert unpack(packed) == unpack(pack(d)) and len(unpack(packed)["candidates"]) == 10
    assert pack(d) == pack(d)  # the same store gives the same page
    assert "view=run&amp;run=0&amp;problem=level1%2Fsoftmax" in page and "view=compare" in page
    plain = render_html(boards)
    assert "view=run" not in plain and re.search(r'id="report-data"></script>', plain)


def test_report_html_command_writes_the_details(tmp_path, capsys):
    sample_store(tmp_path).close()
    out = tmp_path / "report.html"
    assert main(["report", "--results-dir", str(tmp_path), "--html", str(out)]) == 0
    packed = re.search(r'id="report-data">([^<]*)<', out.read_text()).group(1)
    assert [r["name"] for r in unpack(packed)["runs"]] == [MODEL_RUN, OTHER_RUN, EVAL_RUN]
    assert main(["report", "--results-dir", str(tmp_path), "--html", str(out), "--run", OTHER_RUN]) == 0
    one = unpack(re.search(r'id="report-data">([^<]*)<', out.read_text()).group(1))
    assert [r["name"] for r in one["runs"]] == [OTHER_RUN] and len(one["candidates"]) == 2


def test_a_candidate_s_figures_are_labelled_in_their_units_never_by_their_stored_names(store):
    """The stored names (judge_device_attempts, cpu_foreign...) stay the JSON's; the page shows each figure's label
    and its value in its unit: counts as counts, seconds as s, ms as ms, to three figures."""
    d = details_of(store)
    (flagged,) = [c for c in d["candidates"] if c["flags"] == ["implausible_speedup", "hidden_work"]]
    shown = {(f["group"], f["label"]): f["text"] for f in flagged["figures"]}
    assert len(shown) == len(FLAGGED_FIGURES)
    assert shown[("stages", "build")] == "18.2 s" and shown[("stages", "flagged evaluation, redone")] == "2.87 s"
    assert shown[("the judge's start", "context attempts")] == "1"
    assert shown[("the runner's start", "context attempts")] == "2"
    assert shown[("the processes", "runner's first reply")] == "0.412 ms"
    assert shown[("what the flags were decided from", "hand-over beyond a copy")] == "0.312 ms"
    assert shown[("what the flags were decided from", "reference calls, runner stopped")] == "64"
    words = [w for c in d["candidates"] for f in c["figures"] for w in (f["group"], f["label"], f["text"])]
    snake = {name for name in FLAT_NAMES if "_" in name}
    assert words and not set(words) & snake and not any(re.search(r"\w_\w", w) for w in words)
