"""Completion text -> candidate source: the last fenced code block that binds `ModelNew` (source_graph.entry:
the definition the precheck and the static rules use too)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from harness.eval.source_graph import binds_entry

# A fence is 3+ backticks or tildes at the start of a line; it closes with the same character, at
# least as many of them, alone on a line (CommonMark). Unclosed fences (a cut-off answer) never count.
_FENCE_OPEN = re.compile(r"^[ \t]{0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n`]*)$", re.MULTILINE)
_THINK = re.compile(r"<think>.*?(</think>|\Z)", re.DOTALL | re.IGNORECASE)


@dataclass(frozen=True)
class Extraction:
    source: str | None  # None: nothing usable in the answer
    reason: str | None  # why there is no source, for the store and the model's next turn


def strip_thinking(text: str) -> str:
    """The answer without <think>…</think> sections (an unclosed one runs to the end)."""
    # Some servers send the closing tag only, the opening one being part of the chat template.
    if "</think>" in text.lower() and "<think>" not in text.lower():
        text = text[text.lower().rindex("</think>") + len("</think>"):]
    return _THINK.sub("", text)


def fenced_blocks(text: str) -> list[str]:
    """Contents of the closed fenced code blocks, in order."""
    blocks, position = [], 0
    while match := _FENCE_OPEN.search(text, position):
        fence = match["fence"]
        closing = re.compile(rf"^[ \t]{{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.MULTILINE)
        end = closing.search(text, match.end())
        if end is None:
            break
        blocks.append(text[match.end() + 1:end.start()])
        position = end.end()
    return blocks


def extract(text: str, finish_reason: str | None = None) -> Extraction:
    answer = strip_thinking(text)
    blocks = fenced_blocks(answer)
    # A usage snippet (`from solution import ModelNew`) after the answer does not replace it.
    for to_a_class in (True, False):
        for block in reversed(blocks):
            if binds_entry(block, to_a_class):
                return Extraction(block.rstrip() + "\n", None)
    if finish_reason == "length":
        reason = "the answer was cut off at the token limit (finish_reason=length) before a complete code block"
    elif not answer.strip():
        reason = "the answer is empty" + (" (all of it was <think> reasoning)" if text.strip() else "")
    elif not blocks:
        reason = "the answer has no fenced code block"
    else:
        reason = f"none of the {len(blocks)} fenced code blocks defines ModelNew"
    return Extraction(None, reason)
