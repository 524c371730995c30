"""The child's side of harness/eval/versus.py: KernelBench's own functions, called in a process of their own.

Started as `python -c "from harness.eval.versus_child import serve; serve()" ROOT MODULE SHIM`: it imports the
checkout's eval module (MODULE, with ROOT first on sys.path and SHIM last), then answers each JSON request line on
stdin with one JSON line on stdout, which only the protocol writes to: whatever KernelBench, the compiler or the
candidate prints goes to stderr, the parent's log. Keywords a checkout's functions do not take are left out.
"""

from __future__ import annotations

import importlib
import inspect
import json
import os
import sys

from harness.process import die_with_parent

COMPILE, EVALUATE = "build_compile_cache", "eval_kernel_against_ref"
# eval_from_generations.py's settings (eval_kernel_against_ref's own defaults are 1 and 10 trials, untimed)
EVAL_KEYWORDS = {"num_correct_trials": 5, "num_perf_trials": 100, "measure_performance": True, "verbose": False}
WHY = ("compilation_error", "runtime_error", "correctness_issue", "other_error", "cuda_error")  # its metadata keys
LIMIT = 2000  # characters kept of an error


def serve() -> None:
    die_with_parent()  # KernelBench's compiles end with the parent, however it ends
    answers = os.fdopen(os.dup(1), "w")  # the protocol's own descriptor; fd 1 becomes stderr
    os.dup2(2, 1)
    root, name, shim = sys.argv[1:4]
    sys.path.insert(0, root)
    sys.path.append(shim)
    module, fatal = None, None
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # a missing dependency, a syntax error: every answer says which
        fatal = f"KernelBench's {name} (from {root}) does not import: {type(exc).__name__}: {exc}"
    for line in sys.stdin:
        answer = {"error": fatal} if module is None else answer_to(module, json.loads(line))
        answers.write(json.dumps(answer, default=str) + "\n")
        answers.flush()


def answer_to(module, request: dict) -> dict:
    if request["op"] == "probe":
        return {"functions": {name: list(inspect.signature(getattr(module, name)).parameters)
                              for name in (COMPILE, EVALUATE) if callable(getattr(module, name, None))}}
    try:
        if request["op"] == "compile":
            out = call(getattr(module, COMPILE), custom_model_src=request["source"], verbose=False,
                       build_dir=request["build_dir"])
            ok = out[0] if isinstance(out, tuple) else out  # (compiled, its output, its error)
            return {"built": bool(ok), "error": None if ok or not isinstance(out, tuple) else str(out[-1])[:LIMIT]}
        torch = sys.modules.get("torch")  # imported by KernelBench's module
        device = {"device": torch.device("cuda", 0)} if torch is not None and torch.cuda.is_available() else {}
        result = call(getattr(module, EVALUATE), original_model_src=request["reference"],
                      custom_model_src=request["source"], build_dir=request["build_dir"], backend=request["backend"],
                      **device, **EVAL_KEYWORDS)
    except Exception as exc:  # its script records these as a failed evaluation too
        return {"error": f"{type(exc).__name__}: {exc}"[:LIMIT]}
    if result is None:  # its answer to a lock file or a missing file in the build directory: try again
        return {"error": f"{EVALUATE} returned no result"}
    meta = getattr(result, "metadata", None) or {}
    times = {key: value if isinstance(value := getattr(result, key, None), (int, float)) and value >= 0 else None
             for key in ("runtime", "ref_runtime")}
    return {"judged": True, "compiled": bool(result.compiled), "correct": bool(result.correctness), **times,
            "error": next((str(meta[key])[:LIMIT] for key in WHY if key in meta), None)}


def call(function, **keywords):
    """Call with the keywords `function` takes (a checkout's version may lack some), no others."""
    parameters = inspect.signature(function).parameters
    if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        keywords = {key: value for key, value in keywords.items() if key in parameters}
    return function(**keywords)
