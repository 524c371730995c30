"""What the candidate's code said (eval/said.py) from the logs its processes write (child/caught.py's records, the
build child's CAUGHT_BUILD), and the runner's watch itself on a real C function that raises."""
import json
import math

import pytest

from harness.child import caught, loader
from harness.eval.said import said
from harness.markers import CANDIDATE_STARTS, CAUGHT_AT_RUN, CAUGHT_BUILD, FIRST_CALL_DONE

COMPILER = ("RuntimeError: Error building extension 'k': [1/2] c++ -MMD -MF main.o.d -O2 -c main.cpp -o main.o\n"
            "FAILED: [code=1] main.o\nc++ -MMD -MF main.o.d -c main.cpp -o main.o\n"
            "main.cpp:6:5: error: 'tile_undeclared' was not declared in this scope\n"
            "    6 |     tile_undeclared(x);\n      |     ^~~~\nninja: build stopped: subcommand failed.")


def record(**fields) -> str:
    return f"{CAUGHT_AT_RUN}\n{json.dumps(fields)}\n"


def test_a_build_caught_in_init_is_quoted_as_the_compiler_said_it_without_the_build_tools_lines():
    runner = (f"harness: warming up\n{CANDIDATE_STARTS}\nbuilding my kernel...\n"
              + record(what="build", where="in ModelNew.__init__", name="k", error=COMPILER, line=None)
              + "could not build it, using PyTorch\n" + FIRST_CALL_DONE + "\nprinted on every call\n")
    words = said("", runner, {})
    (failure,) = words.caught
    quoted = words.quote()
    assert "The build of extension 'k' in ModelNew.__init__ failed, and your code caught the exception" in quoted
    assert "main.cpp:6:5: error: 'tile_undeclared' was not declared in this scope" in quoted
    assert "c++ -MMD" not in quoted and "FAILED" not in quoted and "ninja" not in quoted
    # what it printed up to its first call returned, without the harness's lines or its records
    assert words.printed == "building my kernel...\ncould not build it, using PyTorch"


def test_an_exception_from_the_extension_names_the_function_and_the_answers_line():
    runner = CANDIDATE_STARTS + "\n" + record(what="exception", where="in forward", name="relu",
                                              error="RuntimeError: bad tile", line=24)
    assert said("", runner, {}).quote() == ("Your code caught an exception from its extension function 'relu' in "
                                            "forward (line 24 of your answer): RuntimeError: bad tile")


def test_a_build_caught_at_import_comes_from_the_build_log_and_the_printed_tail_is_bounded_and_cleaned():
    build = (f"harness: using a PCH\n{CANDIDATE_STARTS}\n[1/2] c++ -c main.cpp\n"
             f"main.cpp:3:1: error: expected ';'\nwriting to /tmp/results/cache/builds/ab12/x.txt\n"
             f"{CAUGHT_BUILD}\nk: RuntimeError: Error building extension 'k'\n")
    runner = CANDIDATE_STARTS + "\n" + "\n".join(f"line {i}" for i in range(100)) + f"\n{FIRST_CALL_DONE}\n"
    words = said(build, runner, {"/tmp/results/cache": "<cache>", "/tmp/results": "<results>"})
    assert [c.where for c in words.caught] == ["at import"] and "expected ';'" in words.quote()
    lines = words.printed.splitlines()
    assert len(lines) == 40 and lines[-1] == "line 99"  # the end of it
    short = said(build, "", {"/tmp/results/cache": "<cache>"}).printed
    assert "writing to <cache>/builds/ab12/x.txt" in short and "[1/2]" not in short and "harness" not in short


def test_a_record_the_candidate_forged_badly_is_ignored_and_before_the_candidate_starts_nothing_is_its():
    runner = f"harness: {CAUGHT_AT_RUN}\n{CANDIDATE_STARTS}\n{CAUGHT_AT_RUN}\nnot json\n{CAUGHT_AT_RUN}\n[1, 2]\n"
    assert said("", runner, {}).caught == ()
    assert said("", f"{CAUGHT_AT_RUN}\n" + json.dumps(dict(what="x", where="y", name="z", error="e")), {}) == \
        said("", "", {})


@pytest.fixture
def math_as_extension(monkeypatch):
    """math's C functions stand for an extension module's: the watch tells them by their __module__."""
    monkeypatch.setattr(loader, "loaded_modules", {"math"})
    monkeypatch.setattr(loader, "failed_loads", [])


def test_the_watch_reports_an_exception_from_an_extension_that_the_code_swallowed(math_as_extension, capsys):
    def forward():
        try:
            return math.sqrt(-1.0)
        except ValueError:
            return abs(-1.0)

    with caught.Watch("in forward", __file__):
        forward()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == CAUGHT_AT_RUN
    fields = json.loads(lines[1])
    line = forward.__code__.co_firstlineno + 2
    assert fields == {"what": "exception", "where": "in forward", "name": "sqrt", "error": "ValueError: math domain "
                      "error", "line": line}


def test_the_watch_says_nothing_of_a_failure_that_escaped_but_reports_a_caught_build(math_as_extension, capsys):
    with pytest.raises(ValueError), caught.Watch("in forward", __file__):
        math.sqrt(-1.0)  # not caught: the verdict's own error says it
    assert capsys.readouterr().err == ""
    with caught.Watch("in ModelNew.__init__", __file__):
        loader.failed_loads.append(("k", RuntimeError(COMPILER)))
    assert json.loads(capsys.readouterr().err.splitlines()[1])["what"] == "build"
    failed = RuntimeError(COMPILER)
    with pytest.raises(RuntimeError), caught.Watch("in forward", __file__):
        loader.failed_loads.append(("k", failed))
        raise failed  # a build that failed and was not caught: the verdict's own error
    assert capsys.readouterr().err == ""
