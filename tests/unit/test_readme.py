"""README is the manual (issue 58): at most 400 lines, its sections in order, every `harness` command it or docs/
shows one the CLI has (its options included), every relative link resolving, and no dated figure (those live in
docs/). The minimal candidate's own correctness is tests/integration/test_readme_example_cpu.py's."""
import argparse
import re
from pathlib import Path

import pytest

from harness.cli.main import build_parser

ROOT = Path(__file__).parent.parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
SECTIONS = ["Quickstart", "Concepts and verdicts", "Command line", "Adding a problem", "Writing a candidate",
            "Pointing it at a model server", "Results and reports", "Tests"]
MAX_LINES = 400


def sections(text: str) -> dict[str, str]:
    """README's `## ` sections by title, each with its body."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2])}


def code(text: str) -> list[str]:
    """The lines of every fenced block (comments cut) and every inline code span, outside the blocks."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    lines = [line.split(" #")[0] for block in blocks for line in block.splitlines()]
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.M | re.S)
    return lines + re.findall(r"`([^`\n]+)`", prose)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def command_errors(snippet: str, top: argparse.ArgumentParser) -> list[str]:
    """What in each `harness ...` of one code snippet the CLI does not have: a command, a subcommand, an option."""
    errors = []
    for match in re.finditer(r"(?:^|[\s(&;|])harness((?: +[^\s`]+)+)", snippet):
        if re.search(r"\b(from|import) +$", snippet[:match.start() + 1]):
            continue  # Python's `from harness import ...`, not the command
        words = match.group(1).replace("\\|", "|").split()
        if words[0].isupper():
            continue  # a placeholder: `harness COMMAND --help`
        parser, named = top, "harness"
        for word in words:
            if word.startswith(("-", "[-")):
                break
            choices = subcommands(parser)
            if not choices:
                break
            names = word.split("|")
            unknown = [n for n in names if n not in choices]
            if unknown:
                errors.append(f"`{named} {word}`: no such command (has {', '.join(choices)})")
                break
            parser, named = choices[names[0]], f"{named} {names[0]}"
        rest = " ".join(words)
        for flag in re.findall(r"(?<![\w-])(--?[a-z][a-z0-9-]*)", rest):
            if flag not in options(parser) and not (flag == "-e" and named == "harness"):
                errors.append(f"`{named}` has no option {flag} (in `harness{match.group(1)}`)")
    return errors


def test_readme_is_at_most_400_lines():
    lines = README.read_text().count("\n")
    assert lines <= MAX_LINES, f"README.md has {lines} lines, over {MAX_LINES}: move deep material into docs/"


def test_readme_opens_with_what_it_is_then_the_manuals_sections_in_order():
    text = README.read_text()
    intro = text.split("\n## ", 1)[0]
    assert intro.startswith("# kernel-harness\n") and len(intro.split()) > 50, "README opens with what it is"
    titles = list(sections(text))
    missing = [s for s in SECTIONS if s not in titles]
    assert not missing, f"README lacks the sections {missing}"
    order = [t for t in titles if t in SECTIONS]
    assert order == SECTIONS, f"README's sections are out of order: {order}, want {SECTIONS}"


def test_quickstart_has_a_venv_cpu_torch_the_two_commands_and_no_protocol():
    quickstart = sections(README.read_text())["Quickstart"]
    assert "python3 -m venv" in quickstart
    assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in quickstart
    assert "pip install -e . && harness run" in quickstart
    # CI runs the README's test command as written (.ci/run's last line).
    ci_test_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_test_command in quickstart, f".ci/run runs `{ci_test_command}`, which the quickstart does not show"
    assert "contended" in quickstart and "harness doctor" in quickstart, "the quickstart says what a busy machine does"
    assert "protocol" not in quickstart.lower(), "no protocol numbers in the quickstart"


def test_readme_holds_no_dated_figure():
    dates = re.findall(r"20\d\d-\d\d-\d\d", README.read_text())
    assert not dates, f"README cites dates {dates}: dated figures go to docs/ (docs/timing.md, docs/boards.md)"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_harness_command_shown_exists_with_its_options(page):
    top = build_parser()
    errors = [e for snippet in code(page.read_text()) for e in command_errors(snippet, top)]
    assert not errors, f"{page.relative_to(ROOT)} shows commands the CLI lacks:\n" + "\n".join(errors)


def test_the_command_check_finds_what_is_wrong():
    top = build_parser()
    assert command_errors("harness eval --problem cpu/relu x.py", top) == []
    assert command_errors("harness problems list|show|validate|new", top) == []
    assert command_errors("harness --version", top) == []
    assert command_errors("harness evaluate x.py", top), "an unknown command"
    assert command_errors("harness problems remove x", top), "an unknown subcommand"
    assert command_errors("harness report --run A --wider", top), "an unknown option"


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation but - and _ dropped, spaces as -."""
    titles = re.findall(r"^#+ (.+)$", re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", t.strip().lower()).replace(" ", "-") for t in titles}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_resolves(page):
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not ours to check offline
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif anchor and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not broken, f"{page.relative_to(ROOT)} has broken links:\n" + "\n".join(broken)


def test_readme_links_every_docs_page():
    text = README.read_text()
    unlinked = [p.name for p in PAGES[1:] if f"](docs/{p.name})" not in text]
    assert not unlinked, f"README links no docs page {unlinked}: add a line for each under Documentation"
