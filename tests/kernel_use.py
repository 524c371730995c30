"""Runtime verdicts from coverage through `harness eval` (eval/kernel_use.py): defensive answers written the way
models write them (tests/fixtures/solutions/kernel_use/), each with the verdict its header names:

  # problem: cpu/relu                  the problem it answers (id or path)
  # verdict: rejected+no_kernel_ran    its status, +flags that must be raised
"""
from __future__ import annotations

import re

from tests.conftest import SOLUTIONS, json_lines, run_cli

FOLDER = SOLUTIONS / "kernel_use"
HEADER = re.compile(r"^# (problem|verdict): (.+)$", re.MULTILINE)
COVERAGE_FLAGS = {"no_kernel_ran", "low_coverage", "interpreted"}  # raised only where a header names them
UNTRUSTED_TIMING = {"noisy_timing", "contended"}  # other work on the machine: shown, not the candidate's doing


def header(path) -> dict[str, str]:
    return dict(HEADER.findall(path.read_text()))


def kernel_use_tests(target: str) -> dict:
    """The tests for one target; a test module takes them into its globals."""
    import pytest

    answers = sorted(FOLDER.glob(f"{target}_*.py"))
    aliased = SOLUTIONS / "exploit" / f"{target}_aliased_entry.py"
    named = {path.stem.removeprefix(f"{target}_"): str(path) for path in answers}

    @pytest.fixture(scope="module")
    def rows(tmp_path_factory):
        """Every answer through `harness eval --json`, one call per problem, one results directory."""
        results = tmp_path_factory.mktemp("results")
        by_problem: dict[str, list] = {}
        for path in [*answers, aliased]:
            by_problem.setdefault(header(path)["problem"], []).append(path)
        out = {}
        for problem, paths in by_problem.items():
            proc = run_cli("eval", "--json", "--target", target, "--problem", problem, "--results-dir", results,
                           "--timing-budget", "1", "--trials", "2", *paths)
            assert proc.returncode == 0, proc.stderr
            out.update({row["candidate"]: row for row in json_lines(proc.stdout)})
        return out

    @pytest.mark.parametrize("path", answers, ids=lambda p: p.stem)
    def test_what_ran_decides_the_verdict(path, rows):
        row = rows[str(path)]
        status, *flags = header(path)["verdict"].split("+")
        assert row["status"] == status, row["error"]
        assert set(flags) <= set(row["flags"]), row["flags"]
        assert not (COVERAGE_FLAGS - set(flags)) & set(row["flags"]), row["flags"]

    def test_a_rejection_says_what_did_the_work_and_quotes_a_caught_build_failure(rows):
        branch = rows[named["never_taken_branch"]]
        assert "[no_kernel_ran]" in branch["error"] and "aten::relu" in branch["error"]
        assert branch["speedup"] is None and branch["coverage"] == 0.0
        broken = rows[named["guarded_build_fails"]]
        assert "caught" in broken["error"] and "error" in broken["error"].split("caught", 1)[1], broken["error"]

    def test_a_failure_the_answer_caught_is_quoted_with_what_it_printed(rows):
        built = rows[named["init_build_fails"]]  # a build in __init__: the compiler's error, not just "it failed"
        assert "in ModelNew.__init__ failed, and your code caught the exception" in built["error"], built["error"]
        assert "error" in built["error"].split("the compiler said:", 1)[1] and "undeclared" in built["error"]
        (line,) = [i for i, text in enumerate(open(named["init_build_fails"]).read().splitlines(), 1)
                   if "undeclared" in text]  # the compiler's line in the answer's terms (compiler_lines.py)
        assert f"(answer line {line}): error" in built["error"], built["error"]
        assert "could not build the extension, using PyTorch: RuntimeError" in built["output"], built["output"]
        path = named["caught_kernel_exception"]  # an exception from the extension: its type, message and the line
        line = 1 + open(path).read().splitlines().index("            return relu_ext.relu(x)")
        caught = rows[path]
        assert (f"caught an exception from its extension function 'relu' in forward (line {line} of your answer): "
                "RuntimeError: relu: expected a multiple of the tile") in caught["error"], caught["error"]
        assert "kernel refused the input: relu: expected a multiple of the tile" in caught["output"], caught["output"]
        assert "harness" not in caught["output"] and "harness" not in built["output"]
        assert rows[named["never_taken_branch"]]["output"] is None  # it printed nothing

    def test_a_guarded_kernel_that_does_the_work_is_judged_like_any_other(rows):
        row = rows[named["guarded_build_works"]]
        assert row["coverage"] > 0.9 and row["speedup"] > 0
        # counted unless other work on the machine made its timing untrustworthy
        assert set(row["flags"]) - UNTRUSTED_TIMING == {"torch_fallback", "torch_ops"}, row["flags"]

    def test_a_kernel_beside_pytorchs_work_is_not_counted(rows):
        low = [rows[path] for name, path in named.items()
               if header(FOLDER / f"{target}_{name}.py")["verdict"].startswith("correct+low_coverage")]
        assert low and all(row["coverage"] < 0.5 and row["counted"] is False for row in low), low

    def test_a_triton_kernel_is_the_candidates_own(rows):
        row = rows[named["triton_relu"]]
        assert row["status"] == "correct" and row["coverage"] > 0.9, row
        # on the cpu target Triton's interpreter ran it: correct, but its time is no kernel's speed
        assert set(row["flags"]) - UNTRUSTED_TIMING == ({"interpreted"} if target == "cpu" else set()), row["flags"]
        assert row["counted"] is (target == "cuda" and not set(row["flags"]) & UNTRUSTED_TIMING), row

    def test_triton_compiling_and_autotuning_are_reported_apart_from_the_checks(rows):
        row = rows[named["triton_autotuned"]]
        assert row["status"] == "correct" and row["coverage"] > 0.9, row
        stages = row["stages"]
        assert stages["autotune"] > 0, stages  # three configs benchmarked at the first checked call
        # the interpreter compiles nothing; on a GPU every config is compiled, and that is compile time
        assert (stages["compile"] > 0) is (target == "cuda"), stages
        plain = rows[named["triton_relu"]]["stages"]
        assert plain["autotune"] == 0 and (plain["compile"] > 0) is (target == "cuda"), plain

    def test_the_aliased_entry_is_still_rejected_before_it_runs(rows):
        row = rows[str(aliased)]
        assert row["status"] == "rejected" and "[kernel-unused]" in row["error"]

    return {name: value for name, value in locals().items() if name.startswith("test_") or name == "rows"}
