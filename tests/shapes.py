"""The build-fidelity matrix (tests/fixtures/solutions/shapes/): every way an answer calls load_inline or
load, built by plain torch (tests/plain_torch.py) and by the harness, cold and with a warm precompiled
header, and with build acceleration off (torch's own builds: no precompiled header, no nvcc driver), must end the
same way. Shared by tests/integration/test_shapes.py (cpu_*) and
tests/gpu/test_shapes_gpu.py (cuda_*).

Each fixture's header says what it is and what must happen to it:

  # shape: torch/extension.h included in cpp_sources    the way it calls load_inline / load
  # problem: problems/cpu/relu.py                       the problem it answers (a path in this checkout)
  # expect: correct                                     correct | incorrect | compile_error, both ways
  # pch: used                                           (torch-header shapes) a warm build uses the PCH
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from harness.eval.build import final_attempt
from harness.fastbuild.names import PCH_REQUESTS, PCH_RETRY
from harness.fastbuild.pch import PCH_FAILED
from harness.markers import CANDIDATE_FILE, LOG_FILE, RESULT_FILE
from tests.conftest import SOLUTIONS, json_lines, run_cli
from tests.plain_torch import header, normalized_errors, truth

SHAPES = SOLUTIONS / "shapes"
PCH_USED = "harness: using the precompiled torch/extension.h"


@dataclass(frozen=True)
class Shape:
    path: Path
    shape: str
    problem: str
    expect: str
    pch: bool  # its build can use the precompiled header: the warm run must show it did

    @property
    def name(self) -> str:
        return self.path.stem


def shapes(target: str) -> list[Shape]:
    found = []
    for path in sorted(SHAPES.glob(f"{target}_*.py")):
        fields = header(path)
        found.append(Shape(path, fields["shape"], fields["problem"], fields["expect"], fields.get("pch") == "used"))
    return found


def plain_torch(shapes_: list[Shape], parallel: int = 2) -> dict[str, dict]:
    """tests/plain_torch.py on each shape; `parallel` at once (a C++ extension compiles on one core)."""
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return dict(zip([s.name for s in shapes_], pool.map(lambda s: truth(s.path), shapes_), strict=True))


@dataclass(frozen=True)
class Outcome:
    status: str
    error: str
    log: str  # the build child's build.log ("" if it has none)
    error_lines: list[str]
    build_s: float | None  # the build child's wall time
    directory: Path | None  # its build directory (None if it has none)


def harness_eval(shapes_: list[Shape], target: str, results: Path, pch_dir: Path, build_workers: int = 2,
                 timeout: float = 2400, acceleration: bool = True) -> dict[str, Outcome]:
    """`harness eval --json` over the shapes (one invocation per problem) into `results`, with
    HARNESS_PCH_DIR=`pch_dir` and --build-acceleration as `acceleration` says; each shape's verdict, build log and
    normalized compiler errors."""
    by_problem: dict[str, list[Shape]] = {}
    for s in shapes_:
        by_problem.setdefault(s.problem, []).append(s)
    outcomes: dict[str, Outcome] = {}
    scratch = results / "tmp"  # the candidates' tempfile.mkdtemp() directories, kept out of /tmp
    scratch.mkdir(parents=True, exist_ok=True)
    for problem, group in by_problem.items():
        proc = run_cli("eval", "--problem", problem, "--target", target, "--results-dir", results, "--json",
                       "--trials", "2", "--timing-budget", "0.2", "--build-workers", str(build_workers),
                       "--build-acceleration", "on" if acceleration else "off",
                       *[s.path for s in group], env={"HARNESS_PCH_DIR": str(pch_dir), "TMPDIR": str(scratch)},
                       timeout=timeout)
        assert proc.returncode == 0, proc.stderr[-5000:]
        rows = {Path(row["candidate"]).stem: row for row in json_lines(proc.stdout)}
        assert set(rows) == {s.name for s in group}, proc.stdout
        builds = build_directories(results)
        for s in group:
            row = rows[s.name]
            directory = builds.get(s.path.read_text())
            log = (directory / LOG_FILE).read_text(errors="replace") if directory else ""
            done = directory / RESULT_FILE if directory else None
            build_s = json.loads(done.read_text())["duration_s"] if done and done.is_file() else None
            # A build that failed in the build child: its log has every line; one that failed in the
            # evaluation child (built in __init__ or forward): the verdict's error has them.
            errors = normalized_errors(final_attempt(log)) or normalized_errors(row.get("error") or "")
            outcomes[s.name] = Outcome(row["status"], row.get("error") or "", log, errors, build_s, directory)
    return outcomes


def build_directories(results: Path) -> dict[str, Path]:
    """Every build directory (with its build.log) by the candidate source it built."""
    found = {}
    for directory in (results / "cache" / "builds").iterdir():
        source = directory / CANDIDATE_FILE
        if source.is_file() and (directory / LOG_FILE).is_file():
            found[source.read_text()] = directory
    return found


def describe(plain: dict, outcome: Outcome) -> str:
    return (f"plain torch: {plain['status']} {plain.get('error')} {plain['error_lines']}\n"
            f"harness: {outcome.status} {outcome.error[:2000]}\n{outcome.error_lines}\n"
            f"build log tail:\n{outcome.log[-3000:]}")


def assert_plain_torch_gives_the_expected_verdict(shape: Shape, plain: dict) -> None:
    assert plain["status"] == shape.expect, f"{shape.name}: {plain}"
    assert plain["built"] == (shape.expect != "compile_error") or plain["status"] == "compile_error", plain
    if shape.expect == "compile_error":
        assert plain["error_lines"] or plain["error"], plain  # something says why


def assert_same_outcome(shape: Shape, plain: dict | None, outcome: Outcome) -> None:
    """Built by the harness iff built by plain torch; a failure with the same compiler lines; a build
    with the fixture's verdict. Without `plain` (a shape that builds, outside the slow tier): its header's verdict,
    which the slow tier holds to plain torch's."""
    if plain is None:
        assert shape.expect != "compile_error", f"{shape.name}: a compile error is compared with plain torch's lines"
        assert outcome.status == shape.expect, f"{shape.name} ({shape.shape}): harness: {outcome.status} " \
                                               f"{outcome.error[:2000]}\nbuild log tail:\n{outcome.log[-3000:]}"
        return
    why = f"{shape.name} ({shape.shape})\n" + describe(plain, outcome)
    assert (outcome.status == "compile_error") == (plain["status"] == "compile_error"), why
    if plain["status"] == "compile_error":
        assert outcome.error_lines == plain["error_lines"], why
    else:
        assert outcome.status == shape.expect == plain["status"], why


def assert_pch_used(shape: Shape, outcome: Outcome) -> None:
    """A warm build read the precompiled header and did not build again without it: not where it built, nor where
    the compiler's errors are at the answer's own lines (fastbuild/blame.py), as every compile_error shape's are."""
    why = f"{shape.name}: build log tail:\n{outcome.log[-3000:]}"
    assert PCH_USED in outcome.log, why
    assert PCH_RETRY not in outcome.log, why


ACCELERATED = ("precompiled", "-m harness.child nvcc", "side by side")  # what only an accelerated build log says


def assert_built_as_torch_does(shape: Shape, outcome: Outcome, pch_dir: Path) -> None:
    """Acceleration off: nothing of it in the build's log, its directory or the ninja files torch wrote (an
    accelerated build puts `-I<its PCH directory>` there), and no precompiled header made or asked for."""
    why = f"{shape.name}: build log tail:\n{outcome.log[-3000:]}"
    assert outcome.directory is not None and outcome.log, why
    assert not [line for line in outcome.log.splitlines() if any(word in line for word in ACCELERATED)], why
    assert not (outcome.directory / PCH_REQUESTS).exists(), why
    for ninja in outcome.directory.glob("ext*/build.ninja"):
        assert str(pch_dir) not in ninja.read_text(), ninja
    assert not pch_dir.exists() or not any(pch_dir.iterdir()), sorted(pch_dir.iterdir())


def pch_files(pch_dir: Path) -> list[Path]:
    return sorted(pch_dir.glob("*/torch/extension.h.gch")) if pch_dir.is_dir() else []


def matrix_tests(target: str, flag_sets: int, build_workers: int = 2, off_in_ci: tuple[str, ...] = (),
                 warm_only_in_ci: tuple[str, ...] = ()) -> dict:
    """The matrix's fixtures and tests for one target; a test module takes them into its globals.
    `flag_sets`: how many distinct C++ flag sets (so PCHs) the target's shapes use. `off_in_ci`: the shapes also
    built with acceleration off outside the slow tier (the slow tier builds every shape so). `warm_only_in_ci`:
    shapes that can use a PCH whose cold build (the header's full parse, as torch's own build does it) is left to the
    slow tier; outside it they are built warm only."""
    import pytest

    from harness.eval.rules import check

    all_shapes = shapes(target)
    with_pch = [s for s in all_shapes if s.pch]

    @pytest.fixture(scope="module")
    def pch_dir(tmp_path_factory):
        return tmp_path_factory.mktemp("pch")  # fresh: the cold run makes every PCH

    # Plain torch on every shape is the truth each header's `expect:` is held to: the slow tier (`pytest -m slow`,
    # due when a shape, torch or the build changes). CI runs it on the shapes that fail to build, whose compiler lines
    # the harness must reproduce, and holds the harness to the headers of the others (15 plain builds fewer).
    def needs_plain(s: Shape) -> bool:
        return s.expect == "compile_error"

    def selected(request, test: str) -> set[str]:
        """The shapes whose `test` was selected in this session (every shape in the slow tier)."""
        return {item.callspec.params["shape"].name for item in request.session.items
                if item.path == request.path and item.originalname == test}

    @pytest.fixture(scope="module")
    def plain(request):
        """Plain torch on each shape whose plain-torch test was selected (all of them in the slow tier)."""
        wanted = selected(request, "test_plain_torch_gives_the_expected_verdict")
        return plain_torch([s for s in all_shapes if s.name in wanted or needs_plain(s)])

    @pytest.fixture(scope="module")
    def cold(request, tmp_path_factory, pch_dir):
        """Each shape whose cold test was selected, and those that make the PCHs the warm builds read, built with no
        PCH made yet."""
        wanted = selected(request, "test_cold_harness_matches_plain_torch") | {
            s.name for s in with_pch if s.name not in warm_only_in_ci}
        return harness_eval([s for s in all_shapes if s.name in wanted], target, tmp_path_factory.mktemp("cold"),
                            pch_dir, build_workers)

    @pytest.fixture(scope="module")
    def off(request, tmp_path_factory):
        """With build acceleration off, each shape whose off-mode test was selected (every one in the slow tier)."""
        wanted = selected(request, "test_harness_without_acceleration")
        root = tmp_path_factory.mktemp("off")
        return root / "pch", harness_eval([s for s in all_shapes if s.name in wanted], target, root / "results",
                                          root / "pch", build_workers, acceleration=False)

    @pytest.fixture(scope="module")
    def cold_pchs(pch_dir, cold):
        return {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in pch_files(pch_dir)}

    @pytest.fixture(scope="module")
    def warm(tmp_path_factory, pch_dir, cold, cold_pchs):
        # Each shape that can use a PCH, built with one the cold run made. A build after the PCH of its flags was
        # made reads it (on a GPU the cold run makes each beside its evaluations; on the cpu target it makes them
        # after them, so none of its builds can): those were warm builds already. The others build again in a new
        # results directory (so they are not served from the cold one). Shapes whose builds cannot use a PCH would
        # only repeat the cold run.
        again = [s for s in with_pch if s.name not in cold or PCH_USED not in cold[s.name].log]
        rebuilt = harness_eval(again, target, tmp_path_factory.mktemp("warm"), pch_dir, build_workers)
        return {s.name: rebuilt.get(s.name) or cold[s.name] for s in with_pch}

    def test_the_matrix_has_every_verdict_and_passes_the_static_rules():
        assert {"correct", "compile_error"} <= {s.expect for s in all_shapes}
        for s in all_shapes:
            assert check(s.path.read_text()).findings == (), s.name

    @pytest.mark.parametrize("shape", [pytest.param(s, id=s.name, marks=() if needs_plain(s) else pytest.mark.slow)
                                       for s in all_shapes])
    def test_plain_torch_gives_the_expected_verdict(shape, plain):
        assert_plain_torch_gives_the_expected_verdict(shape, plain[shape.name])

    @pytest.mark.parametrize("shape", [pytest.param(s, id=s.name, marks=pytest.mark.slow if s.name in warm_only_in_ci
                                                    else ()) for s in all_shapes])
    def test_cold_harness_matches_plain_torch(shape, plain, cold):
        assert_same_outcome(shape, plain.get(shape.name), cold[shape.name])

    def test_the_cold_run_made_one_pch_per_flag_set(cold_pchs):
        assert len(cold_pchs) == flag_sets, [p.parent.parent.name for p in cold_pchs]

    def test_the_warm_run_made_none(pch_dir, cold_pchs, warm):
        assert {path: (path.stat().st_ino, path.stat().st_mtime_ns) for path in pch_files(pch_dir)} == cold_pchs
        assert not list(pch_dir.glob(f"*/{PCH_FAILED}"))  # and retired none

    @pytest.mark.parametrize("shape", with_pch, ids=lambda s: s.name)
    def test_warm_harness_matches_plain_torch_and_uses_the_pch(shape, plain, warm):
        assert_same_outcome(shape, plain.get(shape.name), warm[shape.name])
        assert_pch_used(shape, warm[shape.name])

    @pytest.mark.parametrize("shape", [pytest.param(s, id=s.name, marks=() if s.name in off_in_ci else pytest.mark.slow)
                                       for s in all_shapes])
    def test_harness_without_acceleration(shape, plain, off):
        """Off, the harness builds as torch does (nothing of the acceleration anywhere) and ends as plain torch."""
        pch_root, outcomes = off
        assert_same_outcome(shape, plain.get(shape.name), outcomes[shape.name])
        assert_built_as_torch_does(shape, outcomes[shape.name], pch_root)

    assert set(off_in_ci) <= {s.name for s in all_shapes}, off_in_ci
    assert set(warm_only_in_ci) <= {s.name for s in with_pch}, warm_only_in_ci
    return {name: value for name, value in locals().items()
            if name in ("pch_dir", "plain", "cold", "cold_pchs", "warm", "off") or name.startswith("test_")}


def pch_note(outcome: Outcome) -> str:
    if PCH_RETRY in outcome.log:
        return "pch+retry"
    return "pch" if PCH_USED in outcome.log else "-"


def main(argv: list[str] | None = None) -> int:
    """`python -m tests.shapes cpu|cuda`: the matrix as a table (plain torch, harness cold, harness warm)."""
    import sys
    import tempfile
    import time

    target = (argv or sys.argv[1:] or ["cpu"])[0]
    todo = shapes(target)
    with tempfile.TemporaryDirectory(prefix="shapes-") as tmp:
        root = Path(tmp)
        started = time.monotonic()
        plain = plain_torch(todo)
        marks = [time.monotonic()]
        cold = harness_eval(todo, target, root / "cold", root / "pch")
        marks.append(time.monotonic())
        warm = harness_eval([s for s in todo if s.pch], target, root / "warm", root / "pch")
        marks.append(time.monotonic())
    print(f"plain torch {marks[0] - started:.0f} s, harness cold {marks[1] - marks[0]:.0f} s, "
          f"warm {marks[2] - marks[1]:.0f} s")
    print("| shape | expect | plain torch | harness cold (build s) | harness warm (build s) |")
    print("| --- | --- | --- | --- | --- |")
    for s in todo:
        cells = []
        for outcome in (cold.get(s.name), warm.get(s.name)):
            if outcome is None:
                cells.append("(no PCH: not run)")
                continue
            seconds = f"{outcome.build_s:.0f} s" if outcome.build_s is not None else "?"
            cells.append(f"{outcome.status} ({seconds}, {pch_note(outcome)})")
        print(f"| {s.name} | {s.expect} | {plain[s.name]['status']} | {cells[0]} | {cells[1]} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
