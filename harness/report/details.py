"""What the HTML report's drill-down views show, gathered from the store: every candidate of each run (its
verdict and the reason, check numbers, timings, flags, coverage, its figures labelled and in their units, the
compiler's tail, its source with the kernel's lines) and every conversation turn by turn (the messages sent, the
answers, the diff between candidates).

The result is one JSON-able dict. Every long text (sources, messages, answers, logs) is kept once in `texts` and
referred to by index: a multi-turn conversation repeats its whole history in each request, and samples of one
problem share their first prompt. Never imports torch.
"""

from __future__ import annotations

from harness.eval.audit import verdict_reason
from harness.flags import EXCLUDING, MEANINGS
from harness.report.code import kernel_spans, log_tail, source_diff
from harness.report.explain import STATUS_MEANINGS
from harness.report.html import fmt_figure
from harness.report.leaderboard import Leaderboard
from harness.store import RunInfo, Store, TurnRecord
from harness.types import EvalResult

ERROR_CHARS = 20_000  # of a result's error shown on its page (a compiler's whole output can be megabytes)


class Texts:
    """Long strings kept once each, referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, text: str | None) -> int | None:
        if text is None:
            return None
        if text not in self._index:
            self._index[text] = len(self.items)
            self.items.append(text)
        return self._index[text]


def report_details(store: Store, runs: list[RunInfo], boards: list[Leaderboard]) -> dict:
    """Everything the drill-down views need for these runs (in the order of `boards`, which they match)."""
    texts = Texts()
    candidates: list[dict] = []
    conversations: list[dict] = []
    run_views = []
    for index, (info, board) in enumerate(zip(runs, boards)):
        rows = store.evaluations(info.name)
        if info.kind != "run":  # as the board: a file evaluated again replaces its earlier result
            rows = list({(r.problem_id, r.candidate_sha256): (i, r) for i, r in rows}.values())
        first = len(candidates)
        by_row = {}
        for row_id, result in rows:
            by_row[row_id] = len(candidates)
            candidates.append(_candidate(result, index, store, texts))
        convs = _conversations(store.turns(info.name), index, by_row, rows, candidates, texts)
        conversations += convs
        run_views.append({
            "name": info.name, "kind": info.kind, "model": info.model, "backend": info.backend,
            "target": info.target, "device": info.device_name, "created_at": info.created_at,
            "candidates": list(range(first, len(candidates))), "summary": board.summary.model_dump(),
            "problems": [row.model_dump() for row in board.problems],
            "turns": max((t["turn"] for c in convs for t in c["turns"]), default=0),
        })
    base = 0
    for conv in conversations:  # conversation ids are global; each candidate points back to its turn
        for turn in conv["turns"]:
            if turn["candidate"] is not None:
                candidates[turn["candidate"]]["conversation"] = base
        base += 1
    return {"runs": run_views, "candidates": candidates, "conversations": conversations, "texts": texts.items,
            "flags": MEANINGS, "excluding": sorted(EXCLUDING), "statuses": STATUS_MEANINGS}


def _candidate(r: EvalResult, run: int, store: Store, texts: Texts) -> dict:
    source = store.source(r.candidate_sha256) or ""
    build = r.build
    return {
        "run": run, "problem": r.problem_id, "label": r.candidate_label if source else "(no code)",
        "sha256": r.candidate_sha256,
        "status": r.status, "speedup": r.speedup, "counted": r.counted, "flags": list(r.flags),
        "reason": verdict_reason(r.status, r.error, r.flags, r.uninformative),
        "error": (r.error or "")[:ERROR_CHARS] or None, "uninformative": r.uninformative,
        "output": texts.ref(r.output) if r.output else None,
        "check": r.check.model_dump() if r.check else None, "check_spec": r.check_spec.name,
        "workloads": [w.record() for w in r.workloads],
        "runtime": r.runtime.model_dump() if r.runtime else None,
        "ref_runtime": r.ref_runtime.model_dump() if r.ref_runtime else None,
        "coverage": r.coverage.model_dump() if r.coverage else None,
        "figures": [{"group": f.group, "label": f.label, "text": fmt_figure(f), "about": f.about}
                    for f in r.figures.labelled()],
        "build": {"status": build.status, "duration_s": build.duration_s, "cached": build.cached,
                  "log": texts.ref(log_tail(build.log) or None)} if build else None,
        "source": texts.ref(source) if source else None, "kernels": kernel_spans(source),
        "device": r.device_name, "target": r.target, "dtype": r.dtype, "cached": r.cached,
        "sample": None, "turn": None, "conversation": None, "previous": None, "diff": None,
    }


def _conversations(turns: dict[tuple[str, int, int], TurnRecord], run: int, by_row: dict[int, int],
                   rows: list[tuple[int, EvalResult]], candidates: list[dict], texts: Texts) -> list[dict]:
    """The run's (problem, sample) conversations, turn by turn, each turn linked to its candidate's record."""
    by_source = {(r.problem_id, r.candidate_sha256): by_row[i] for i, r in rows}  # turns a harness error left unlinked
    grouped: dict[tuple[str, int], list[TurnRecord]] = {}
    for key in sorted(turns):
        grouped.setdefault(key[:2], []).append(turns[key])
    found = []
    for (problem, sample), records in grouped.items():
        system = next((m.get("content") for m in records[0].messages if m.get("role") == "system"), None)
        views, previous = [], None
        for t in records:
            cid = by_row.get(t.evaluation_id) if t.evaluation_id is not None else None
            if cid is None and t.candidate_sha256:
                cid = by_source.get((problem, t.candidate_sha256))
            asked = t.messages[-1].get("content") if t.messages else None
            views.append({"turn": t.turn, "asked": texts.ref(asked), "answer": texts.ref(t.completion.text),
                          "finish_reason": t.completion.finish_reason, "cached": t.cached,
                          "tokens": t.completion.usage.prompt_tokens + t.completion.usage.completion_tokens,
                          "duration_s": t.completion.duration_s, "refused": t.completion.error,
                          "reason": t.reason, "candidate": cid,
                          "tools": [{"name": step.name, "arguments": texts.ref(step.arguments),
                                     "result": texts.ref(step.result), "error": step.error, "seconds": step.seconds}
                                    for step in t.completion.tool_steps]})
            if cid is not None:
                _link_turn(candidates, cid, previous, sample, t, texts)
                previous = cid if candidates[cid]["source"] is not None else previous  # no_code: nothing to diff
        found.append({"run": run, "problem": problem, "sample": sample, "system": texts.ref(system), "turns": views})
    return found


def _link_turn(candidates: list[dict], cid: int, previous: int | None, sample: int, turn: TurnRecord,
               texts: Texts) -> None:
    """The candidate's turn, and what changed since the conversation's previous candidate."""
    record = candidates[cid]
    record.update(sample=sample, turn=turn.turn)
    if previous is None or record["source"] is None or candidates[previous]["source"] is None:
        return
    before, after = texts.items[candidates[previous]["source"]], texts.items[record["source"]]
    record["previous"] = previous
    record["diff"] = texts.ref(source_diff(before, after, before_name=f"turn {candidates[previous]['turn']}",
                                           after_name=f"turn {turn.turn}") or None)
