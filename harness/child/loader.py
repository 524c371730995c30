"""The build child, and the extension loader both children install before importing a candidate.

The candidate calls `load_inline` (or `load`) at import. In the build child those functions are
wrapped so each call builds under `<build dir>/ext<i>_<name>/` (so two candidates that both name
their extension "reverse_cumsum" never collide) and is recorded in `manifest.json`; in the
evaluation child the same wrapper imports the recorded `.so` directly, without ninja or locks.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import json
import logging
import os
import re
import sys
import traceback
import types
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from harness.child.common import BUILD_FAILURE_MARK, candidate_starts, describe
from harness.compiler_lines import generated_sources, in_candidate_terms
from harness.fastbuild import hooks
from harness.fastbuild import names as fastbuild
from harness.markers import CANDIDATE_FILE, CAUGHT_BUILD, HARNESS_FAILED, MANIFEST_FILE, NO_GPU_HINT

loaded_modules: set[str] = set()  # names of the extension modules the candidate was given, in this process
failed_loads: list[tuple[str, Exception]] = []  # (name, what it raised): builds in __init__ or forward that failed


def build_main(directory: Path) -> int:
    """`build DIR`: import DIR/candidate.py once, building its extensions; 0 built, 1 the candidate failed,
    HARNESS_FAILED the harness did."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # torch logs the build steps at INFO
    manifest = install_extension_loader(directory, "build")
    candidate_starts()
    try:
        import_candidate(directory)
    except BaseException as exc:  # SystemExit too: the import did not complete
        traceback.print_exc()
        if os.environ.get("CUDA_VISIBLE_DEVICES") == "" and "cuda" in str(exc).lower():
            print(NO_GPU_HINT, file=sys.stderr)
        return 1
    caught = [f"{e['name']}: {e['error']}: {e['failed']}" for e in manifest if "failed" in e]
    if caught:  # the import completed anyway: quoted if its forward then runs no kernel (no_kernel_ran)
        print(CAUGHT_BUILD, *caught, sep="\n", file=sys.stderr)
    try:
        write_manifest(directory, manifest)
    except OSError as exc:  # a full disk, a directory gone: ours, not the candidate's
        print(f"harness error: writing the manifest failed: {describe(exc)}", file=sys.stderr)
        return HARNESS_FAILED
    return 0


def install_extension_loader(directory: Path, mode: Literal["build", "load"],
                             scratch: Path | None = None) -> list[dict]:
    """Wrap torch's load_inline / load for the candidate about to be imported from `directory`.

    Returns the manifest list; in build mode the caller writes it once the import has completed. A call
    that builds in load mode (one made in `__init__` or `forward`, which the build child never runs) builds
    in `scratch` (the evaluation's own directory: the build directory is read-only to it), and an exception it
    raises is marked as a build failure (`is_build_failure`).
    """
    import inspect

    import torch.utils.cpp_extension as cpp_ext

    accelerate = mode == "build" and fastbuild.enabled()  # off: torch's own call, given only its directory
    manifest_path = directory / MANIFEST_FILE
    manifest: list[dict] = json.loads(manifest_path.read_text()) if mode == "load" and manifest_path.is_file() else []
    counter = itertools.count()

    def wrap(real: Callable, with_pch: bool) -> Callable:
        signature = inspect.signature(real)

        def loader(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)  # a wrong keyword fails here, exactly as in torch
            index, name = next(counter), str(bound.arguments["name"])
            is_module = bound.arguments.get("is_python_module", True)
            if mode == "load" and index < len(manifest) and manifest[index]["name"] == name:
                recorded = _recorded(cpp_ext, manifest[index])
                if recorded is not None:
                    return recorded
            home = directory if mode == "build" else scratch or directory
            target = home / f"ext{index}_{re.sub(r'[^A-Za-z0-9_]', '_', name)[:64]}"
            target.mkdir(parents=True, exist_ok=True)
            given = bound.arguments.get("build_directory")
            bound.arguments["build_directory"] = str(target)
            bound.arguments["verbose"] = mode == "build"  # compiler output goes to the build log
            try:
                if given and not Path(given).is_dir():  # torch writes into it without creating it
                    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(given))
                with _nvcc_driver(cpp_ext, accelerate, with_pch), _answer_lines(mode, home, directory):
                    result = (hooks.build_extension(cpp_ext, real, bound, target, with_pch) if accelerate
                              else real(*bound.args, **bound.kwargs))
            except Exception as exc:
                _keep_failure(mode, manifest, name, exc)
                raise
            if mode == "build" and not bound.arguments.get("is_standalone", False):
                file = Path(result.__file__ if is_module else result)
                manifest.append({"name": name, "module": file.name.split(".")[0], "dir": str(target),
                                 "file": str(file), "is_python_module": bool(is_module)})
            return _loaded(result)

        loader.__wrapped__ = real  # type: ignore[attr-defined]  # a function's attributes: mypy has none
        loader.__signature__ = signature  # type: ignore[attr-defined]  # torch's own, for whoever inspects it
        return loader

    cpp_ext.load_inline = wrap(cpp_ext.load_inline, with_pch=accelerate)
    cpp_ext.load = wrap(cpp_ext.load, with_pch=False)  # `load` gets no implicit torch/extension.h
    return manifest


def _recorded(cpp_ext, entry: dict):
    """What the build child recorded for this call: its module, imported directly (None: its file is gone, so build
    again); a failure it recorded raises the same failure, without compiling again."""
    if "failed" in entry:
        raise _build_failure(RuntimeError(entry["failed"]))
    if not Path(entry["file"]).is_file():
        return None
    return _loaded(cpp_ext._import_module_from_library(entry["module"], entry["dir"], entry["is_python_module"]))


def _nvcc_driver(cpp_ext, accelerate: bool, sole_cu: bool):
    """Off, torch runs its own nvcc."""
    return hooks.nvcc_driver(cpp_ext, True, sole_cu) if accelerate else contextlib.nullcontext()


@contextlib.contextmanager
def _answer_lines(mode: str, scratch: Path, directory: Path):
    """In load mode, what a build raises goes on with each compiler diagnostic in its message given the answer's line
    too, before anything quotes it: the same exception, raised on. (The build child's compiler output is in its
    log, which the parent marks: eval/build.py.)"""
    try:
        yield
    except Exception as exc:
        if mode == "load":
            _in_answer_lines(exc, scratch, directory / CANDIDATE_FILE)
        raise


def _in_answer_lines(exc: Exception, scratch: Path, answer: Path) -> None:
    """Give each compiler diagnostic in the message of `exc` (torch's RuntimeError, with the compiler's output: not
    verbose) the answer's line too (compiler_lines.py). The exception stays the one raised, its message as it was
    where this fails."""
    try:
        if len(exc.args) == 1 and isinstance(exc.args[0], str) and str(exc) == exc.args[0]:
            exc.args = (in_candidate_terms(exc.args[0], generated_sources(scratch), answer.read_text()),)
    except Exception as error:  # noqa: BLE001 - never in the way of the build's own exception
        print(f"harness: the build's errors keep the generated files' line numbers ({describe(error)})",
              file=sys.stderr)


def _keep_failure(mode: str, manifest: list[dict], name: str, exc: Exception) -> None:
    """What a build raised, marked as a build's failure: kept in the build child's manifest, or, in load mode, for the
    watch over the candidate's set-up and first call (caught.py), which quotes it where the candidate's code catches
    it."""
    if mode == "build":
        manifest.append({"name": name, "failed": str(exc)[-2000:], "error": type(exc).__name__})
    else:
        failed_loads.append((name, exc))
    _build_failure(exc)


def _build_failure(exc: Exception) -> Exception:
    setattr(exc, BUILD_FAILURE_MARK, True)  # what a build raised (is_build_failure), not what the candidate did
    return exc


def _loaded(result):
    """Note an extension module handed to the candidate (its functions are the candidate's own: coverage.py)."""
    if isinstance(result, types.ModuleType):
        loaded_modules.add(result.__name__)
    return result


def write_manifest(directory: Path, manifest: list[dict]) -> None:
    (directory / MANIFEST_FILE).write_text(json.dumps(manifest, indent=1))


def import_candidate(directory: Path):
    """Import candidate.py from its build directory as module `candidate`."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("candidate", directory / CANDIDATE_FILE)
    if spec is None or spec.loader is None:  # never for a .py file
        raise ImportError(f"no loader for {directory / CANDIDATE_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["candidate"] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    code = build_main(Path(argv[1]))
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)  # threads the candidate started at import must not keep the builder alive
