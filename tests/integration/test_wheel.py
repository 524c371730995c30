"""The wheel works installed non-editable: it carries the problem set, the prompts and the reference solutions.

Built from a copy of this checkout, installed into a fresh venv whose dependencies (torch...) come from the
system, and run by the venv's interpreter from a directory outside the repository, so the installed copy of
harness is the one imported, never the checkout.
"""
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, json_lines

DATA = {"problems": "problems", "prompts": "prompts", "solutions/reference": "solutions/reference"}


def source_copy(dest: Path) -> Path:
    """What a clean clone plus the new, not ignored files holds. Building in the checkout itself would write
    build/ there, and a stale build/lib (a deleted problem, another test run's files) would end up in the wheel."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                                capture_output=True, check=True).stdout.decode()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(
            ".git", "build", "dist", "*.egg-info", "__pycache__", "results", ".venv", "scratch"))
        return dest
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # tracked files deleted in the working tree are listed too
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, dest / name)
    return dest


def build_isolation_needed() -> bool:
    """The installed setuptools builds the wheel offline if it is new enough (>= 70.1 has bdist_wheel built in);
    otherwise pip builds in an isolated environment, fetching setuptools as `pip install -e .` does in CI."""
    try:
        major, minor = (int(x) for x in importlib.metadata.version("setuptools").split(".")[:2])
    except (importlib.metadata.PackageNotFoundError, ValueError):
        return True
    return (major, minor) < (70, 1)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(wheel, venv python, venv bin, environment, a working directory outside the repository)."""
    base = tmp_path_factory.mktemp("wheel")
    src = source_copy(base / "src")
    dist = base / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--wheel-dir", str(dist), str(src)]
    if not build_isolation_needed():
        build.insert(4, "--no-build-isolation")
    proc = subprocess.run(build, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = dist.glob("kernel_harness-*.whl")

    venv = base / "venv"
    # No pip of its own (ensurepip is slow): the system's pip, seen through --system-site-packages, installs
    # into the venv when the venv's interpreter runs it. --ignore-installed: the checkout's editable install
    # is visible from the system site-packages and must not count as installed.
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH" and not k.startswith("HARNESS_")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    proc = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           "--ignore-installed", "--disable-pip-version-check", str(wheel)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    work = base / "work"
    work.mkdir()
    return wheel, python, venv / "bin", env, work


def test_the_wheel_holds_every_module_and_the_data(installed):
    wheel, *_ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    # pyproject.toml lists the packages (the data mapping needs an explicit list): a new subpackage must be there
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "harness").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules - names == set()
    for inside, there in DATA.items():
        files = {p.relative_to(REPO / there).as_posix() for p in (REPO / there).rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
        packaged = {n.removeprefix(f"harness/_data/{inside}/") for n in names
                    if n.startswith(f"harness/_data/{inside}/")}
        assert files and files <= packaged, (inside, sorted(files - packaged)[:5])
        assert not any(n.endswith(".pyc") for n in packaged)


def test_the_installed_package_finds_its_data_and_renders_prompts(installed):
    _, python, _, env, work = installed
    code = """if True:
        import json, harness
        from harness import data
        from harness.llm.prompts import Prompts
        from harness.problems.index import default_root, resolve
        from harness.types import TargetFacts
        facts = TargetFacts(target="cpu", name="a CPU", cores=2, vector_isa="AVX2 + FMA (256-bit)", memory_gb=8.0)
        system, user = Prompts("cpu").first_messages(resolve("cpu/relu"), facts)
        print(json.dumps({"harness": harness.__file__, "problems": str(default_root()),
                          "prompts": str(data.prompts_root()), "solutions": str(data.reference_solutions()),
                          "system": system["content"], "user": user["content"]}))
    """
    proc = subprocess.run([str(python), "-c", code], capture_output=True, text=True, env=env, cwd=work, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    package = Path(found["harness"]).resolve().parent
    assert package.is_relative_to(python.parent.parent.resolve()), found["harness"]
    for key, inside in (("problems", "problems"), ("prompts", "prompts"), ("solutions", "solutions/reference")):
        assert Path(found[key]) == package / "_data" / inside, found[key]
    assert "2 cores" in found["user"] and "AVX2" in found["user"] and "class ModelNew" in found["user"]
    shipped = (package / "_data" / "problems" / "cpu" / "relu.py").read_text()  # the prompt shows it without WORKLOADS
    assert shipped.split("WORKLOADS")[0] in found["user"] and "held-out workloads" in found["user"]
    assert found["system"].strip()


def test_the_installed_command_lists_problems(installed):
    _, _, bin_dir, env, work = installed
    proc = subprocess.run([str(bin_dir / "harness"), "problems", "list", "--json"], capture_output=True, text=True,
                          env=env, cwd=work, timeout=120)
    assert proc.returncode == 0, proc.stderr
    listed = {p["problem"]: p for p in json_lines(proc.stdout)}  # a line a problem
    assert len([i for i in listed if i.startswith("cpu/")]) >= 5
    assert Path(listed["cpu/relu"]["path"]).is_relative_to(bin_dir.parent.resolve()), listed["cpu/relu"]["path"]


def test_the_installed_command_runs_the_reference_solution(installed, tmp_path):
    """Offline (no model): the packaged solutions/reference/ answers, and the answer is built and correct."""
    _, _, bin_dir, env, work = installed
    proc = subprocess.run([str(bin_dir / "harness"), "run", "--target", "cpu", "--problem", "cpu/relu", "--json",
                           "--results-dir", str(tmp_path / "results"), "--timing-budget", "1"],
                          capture_output=True, text=True, env=env, cwd=work, timeout=1200)
    assert proc.returncode == 0, proc.stderr
    board = json.loads(proc.stdout)
    (row,) = board["problems"]
    assert row["problem"] == "cpu/relu" and row["statuses"] == {"correct": 1}, row
