"""The truth for a candidate file: what plain PyTorch does with it, outside the harness.

    python tests/plain_torch.py CANDIDATE.py [--problem PROBLEM.py] [--device cpu|cuda]

runs the candidate in a fresh interpreter, in a fresh temporary working directory and with a fresh
TORCH_EXTENSIONS_DIR, as a user of torch would: import it (its load_inline / load calls build there),
construct ModelNew(*get_init_inputs()) and Model likewise from the same seed, run ModelNew then Model
once on get_inputs(), and compare with torch.allclose at the problem's tolerances (fp32 1e-4 by default,
as harness/child/check.py). It prints one JSON object:

  built        no load_inline / load call raised (at import, in __init__ or in forward)
  status       correct | incorrect | compile_error (a build, or the import, failed) | runtime_error
  error_lines  the compiler's `error:` lines, each with build directories stripped (normalized_errors)
  error        the exception, if any, in one line

Nothing of the harness is imported in the child: only torch and the two files.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_TOLERANCE = 1e-4  # fp32, as harness/child/check.py's DEFAULT_TOLERANCE
HEADER = re.compile(r"^# (shape|problem|expect|pch): (.+)$", re.MULTILINE)
_ERROR = re.compile(r"(?<![\w-])error:")
_PATH = re.compile(r"(?:/[^\s:/'\"]+)+/(?=[^\s:/'\"]+)")
_QUOTES = str.maketrans("\u2018\u2019\u201c\u201d", "''\"\"")  # GCC quotes by locale


def header(path: Path) -> dict[str, str]:
    """The `# shape:`, `# problem:`, `# expect:` (and `# pch:`) lines of a shape fixture."""
    return {key: value.strip() for key, value in HEADER.findall(Path(path).read_text())}


# what the harness adds to a diagnostic in a generated file (harness/compiler_lines.py); plain torch has no such line
_ANSWER_LINE = re.compile(r" \(answer line \d+\)")


def normalized_errors(text: str) -> list[str]:
    """The compiler's error lines, each directory part of a path removed (main.cpp:5:12: error: ...), in
    order, each once: the same message whether the build ran under the harness or in torch's own cache."""
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if _ERROR.search(line) and not line.startswith(("FAILED:", "ninja:")):
            lines.append(_ANSWER_LINE.sub("", _PATH.sub("", line)).translate(_QUOTES))
    return list(dict.fromkeys(lines))


def truth(candidate: Path, problem: Path | None = None, device: str | None = None,
          timeout: float = 900) -> dict:
    """Run `candidate` under plain torch in a fresh process; the JSON object described above."""
    candidate = Path(candidate).resolve()
    if problem is None:
        problem = REPO / header(candidate)["problem"]
    device = device or ("cuda" if candidate.name.startswith("cuda_") else "cpu")
    with tempfile.TemporaryDirectory(prefix="plain-torch-") as work:
        out = Path(work) / "result.json"
        cwd = Path(work) / "cwd"
        cwd.mkdir()
        (Path(work) / "tmp").mkdir()  # the candidate's tempfile.mkdtemp() directories go with this one
        env = {**os.environ, "TORCH_EXTENSIONS_DIR": str(Path(work) / "torch_extensions"),
               "TMPDIR": str(Path(work) / "tmp")}
        env.pop("PYTHONPATH", None)  # nothing of this checkout: a user's interpreter
        proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", str(candidate),
                               str(Path(problem).resolve()), device, str(out)],
                              cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        result = json.loads(out.read_text()) if out.is_file() else {
            "built": False, "status": "runtime_error", "error": f"the child exited with {proc.returncode}"}
    # With verbose=False torch puts the compiler's output into its exception, else on stdout/stderr.
    result["error_lines"] = normalized_errors("\n".join([proc.stdout, proc.stderr, result.pop("message", "")]))
    result["output"] = (proc.stdout + proc.stderr)[-4000:]
    return result


def _child(candidate: str, problem_path: str, device: str, out: str) -> None:
    import importlib.util

    import torch
    import torch.utils.cpp_extension as cpp_ext

    failed: list[BaseException] = []

    def noting_failures(real):
        def call(*args, **kwargs):  # torch's own function, unchanged; only whether it raised is noted
            try:
                return real(*args, **kwargs)
            except BaseException as exc:
                failed.append(exc)
                raise
        call.__wrapped__ = real
        return call

    cpp_ext.load_inline = noting_failures(cpp_ext.load_inline)
    cpp_ext.load = noting_failures(cpp_ext.load)

    def load(name: str, path: str):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module

    def write(status: str, exc: BaseException | None = None, **extra) -> None:
        message = f"{exc}" if exc is not None else ""
        error = f"{type(exc).__name__}: {message}".splitlines()[0] if exc is not None else None
        Path(out).write_text(json.dumps({"built": not failed, "status": status, "error": error,
                                         "message": message, **extra}))

    reference = load("reference_problem", problem_path)
    constants = vars(reference)
    tolerance = constants.get("TOLERANCE", DEFAULT_TOLERANCE)
    atol, rtol = constants.get("ATOL", tolerance), constants.get("RTOL", tolerance)
    init_inputs = list(reference.get_init_inputs())
    try:
        module = load("candidate", candidate)
    except BaseException as exc:  # noqa: BLE001 - the import did not complete: the harness's compile_error
        write("compile_error", exc)
        return
    try:
        with torch.no_grad():
            torch.manual_seed(0)
            model = reference.Model(*init_inputs).to(device)
            torch.manual_seed(0)
            model_new = module.ModelNew(*init_inputs).to(device)
            torch.manual_seed(1)
            inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in reference.get_inputs()]
            out_new = model_new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            expected = model(*inputs)
            if device == "cuda":
                torch.cuda.synchronize()
    except BaseException as exc:  # noqa: BLE001 - anything the candidate raises is its verdict
        write("compile_error" if failed else "runtime_error", exc)
        return
    correct = (type(out_new) is torch.Tensor and out_new.shape == expected.shape
               and out_new.dtype == expected.dtype and out_new.device == expected.device
               and torch.allclose(out_new, expected, atol=atol, rtol=rtol))
    write("correct" if correct else "incorrect")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        _child(*argv[1:])
        return 0
    parser = argparse.ArgumentParser(description="What plain PyTorch does with a candidate file (JSON)")
    parser.add_argument("candidate", type=Path)
    parser.add_argument("--problem", type=Path, help="default: the candidate's `# problem:` header")
    parser.add_argument("--device", choices=("cpu", "cuda"), help="default: cuda for cuda_*.py, else cpu")
    args = parser.parse_args(argv)
    result = truth(args.candidate, args.problem, args.device)
    result.pop("output")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
