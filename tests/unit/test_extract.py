from harness.llm.extract import extract, fenced_blocks, strip_thinking

FINAL = "import torch.nn as nn\n\nclass ModelNew(nn.Module):\n    pass\n"
DRAFT = "class ModelNew:  # draft\n    x = 1\n"


def test_last_block_defining_model_new_wins_over_drafts():
    text = f"Draft:\n```python\n{DRAFT}```\nBetter:\n```python\n{FINAL}```\nDone."
    assert extract(text).source == FINAL


def test_an_alias_counts_and_a_usage_snippet_after_the_answer_does_not_replace_it():
    alias = "import torch.nn as nn\n\nclass Impl(nn.Module):\n    pass\n\nModelNew = Impl\n"
    usage = "from solution import ModelNew\nmodel = ModelNew().cuda()\n"
    assert extract(f"```python\n{alias}```\nUse it:\n```python\n{usage}```\n").source == alias
    broken = "class ModelNew(nn.Module:\n    pass\n"  # the final answer, with a syntax error: still the answer
    assert extract(f"```python\n{FINAL}```\n```python\n{broken}```\n").source == broken


def test_a_trailing_comment_only_block_is_skipped():
    text = f"```python\n{FINAL}```\n\nNotes:\n```python\n# compile with -O3\n# and enjoy\n```\n"
    assert extract(text).source == FINAL


def test_think_sections_are_ignored():
    text = f"<think>\nmaybe this:\n```python\n{DRAFT}```\n</think>\nHere:\n```python\n{FINAL}```"
    assert extract(text).source == FINAL
    only_thinking = f"<think>\n```python\n{FINAL}```\n"  # never closed: cut off while thinking
    result = extract(only_thinking)
    assert result.source is None and "<think>" in result.reason


def test_closing_think_tag_alone_drops_what_precedes_it():
    # Some servers put <think> in the chat template and send only the closing tag.
    assert strip_thinking(f"reasoning ```python\n{DRAFT}```\n</think>answer") == "answer"


def test_no_code_reasons():
    assert extract("I cannot help with that.").reason == "the answer has no fenced code block"
    assert "none of the 1 fenced code blocks" in extract("```python\nprint(1)\n```").reason
    assert extract("").reason == "the answer is empty"
    cut = extract(f"```python\n{FINAL}", finish_reason="length")
    assert cut.source is None and "finish_reason=length" in cut.reason


def test_fences_follow_commonmark():
    text = "~~~py\na = 1\n~~~\n````python\nb = '```'\n```\nc = 2\n````\n"
    assert fenced_blocks(text) == ["a = 1\n", "b = '```'\n```\nc = 2\n"]
    # An indented class inside a fenced block still counts (the block is the file).
    assert extract("```\n" + FINAL + "```").source == FINAL
