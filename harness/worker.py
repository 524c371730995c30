"""The child process. Two jobs, each in a fresh interpreter started by the parent:

  python -m harness.worker build DIR        import DIR/candidate.py once, building its extensions
  python -m harness.worker eval SPEC.json   check the built candidate against the reference, time both

Whatever the candidate does (segfault, os._exit, exceptions, endless loops), the parent sees it
from the outside; this process only reports what it could observe, as WorkerReport JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import traceback
from pathlib import Path

from .build import NO_GPU_HINT, import_candidate, install_extension_loader, write_manifest
from .isolation import write_atomic
from .types import CheckResult, WorkerReport, WorkerSpec


def build_main(directory: Path) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")  # torch logs the build steps at INFO
    manifest = install_extension_loader(directory, "build")
    try:
        import_candidate(directory)
    except BaseException as exc:  # SystemExit too: the import did not complete
        traceback.print_exc()
        if os.environ.get("CUDA_VISIBLE_DEVICES") == "" and "cuda" in str(exc).lower():
            print(NO_GPU_HINT, file=sys.stderr)
        return 1
    write_manifest(directory, manifest)
    return 0


class EvalFailure(Exception):
    """Ends an evaluation with a verdict (incorrect / runtime_error) and a message."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status


@contextlib.contextmanager
def failing_as(what: str):
    """Turn anything raised inside (SystemExit too) into a runtime_error that says what failed."""
    try:
        yield
    except BaseException as exc:
        traceback.print_exc()
        raise EvalFailure("runtime_error", f"{what}: {describe(exc)}") from None


def trial_seed(seed: int, label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{label}".encode()).digest()[:8], "little") >> 1


def import_problem(path: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location("reference_problem", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def forward_inputs(problem, device, dtype) -> list:
    """get_inputs() as evaluations run it: generated on the device (same distribution, far faster for
    large inputs), floating tensors cast to `dtype`, integer and bool ones only moved."""
    import torch

    with torch.device(device):
        raw = problem.get_inputs()
    if not isinstance(raw, (list, tuple)):
        raise TypeError(f"get_inputs() returned {type(raw).__name__}, not a list")
    return [x.to(device=device, dtype=dtype) if isinstance(x, torch.Tensor) and x.is_floating_point()
            else x.to(device) if isinstance(x, torch.Tensor) else x for x in raw]


def construct(cls, init_inputs, device, dtype, seed: int):
    """A module as evaluations build it: seeded, constructed on the CPU, then moved and cast."""
    import torch

    torch.manual_seed(seed)
    return cls(*init_inputs).to(device=device, dtype=dtype)


def describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    return text if len(text) < 2000 else text[:2000] + " ..."


def exact_fp32(torch) -> None:
    """fp32 means IEEE fp32: cuDNN would otherwise run convolutions in TF32 (10-bit mantissa), leaving the
    reference ~1e-3 off and failing exact kernels at the 1e-4 tolerance."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False


def eval_main(spec: WorkerSpec) -> WorkerReport:
    import torch

    from .check import compare, same_values, tolerances
    from .timing import CpuTimer, CudaTimer, time_interleaved

    if spec.target == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("target cuda, but torch in the evaluation process sees no GPU "
                               f"(torch {torch.__version__}, CUDA build {torch.version.cuda})")
        device = torch.device("cuda", 0)
        torch.cuda.set_device(device)
        exact_fp32(torch)
        device_name = torch.cuda.get_device_name(device)
        timer = CudaTimer(device)
        sync = torch.cuda.synchronize
    else:
        device = torch.device("cpu")
        device_name = "cpu"
        timer = CpuTimer()
        sync = lambda: None  # noqa: E731
    dtype = getattr(torch, spec.dtype)
    atol, rtol = tolerances(dtype, spec.atol, spec.rtol)
    report = dict(device_name=device_name, torch_version=torch.__version__)

    with failing_as("problem error: importing the problem failed"):
        problem = import_problem(spec.problem_path)
        init_inputs = problem.get_init_inputs()
    if not isinstance(init_inputs, (list, tuple)):
        raise EvalFailure("runtime_error",
                          f"problem error: get_init_inputs() returned {type(init_inputs).__name__}, not a list")

    def make_inputs(label: str) -> list:
        torch.manual_seed(trial_seed(spec.seed, label))
        return forward_inputs(problem, device, dtype)

    def clone(inputs: list) -> list:
        return [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

    init_seed = trial_seed(spec.seed, "init")
    with torch.no_grad():
        with failing_as("problem error: constructing Model failed"):
            reference = construct(problem.Model, init_inputs, device, dtype, init_seed)

        install_extension_loader(Path(spec.build_dir), "load")
        with failing_as("constructing ModelNew failed"):
            module = import_candidate(Path(spec.build_dir))
            # same seed: same initial parameters as the reference
            candidate = construct(module.ModelNew, init_inputs, device, dtype, init_seed)

        worst_abs = worst_rel = 0.0
        for trial in range(spec.trials):
            inputs = make_inputs(f"trial{trial}")
            mine = clone(inputs)
            with failing_as(f"ModelNew.forward failed (trial {trial})"):
                out = candidate(*mine)  # the candidate runs first, on its own copy
                sync()
            changed = [i for i, (a, b) in enumerate(zip(mine, inputs, strict=True))
                       if isinstance(a, torch.Tensor) and not same_values(a, b)]
            with failing_as("reference Model failed (problem error)"):
                expected = reference(*inputs)
                sync()
            result = compare(out, expected, atol, rtol)
            if changed:
                result.ok, result.message = False, f"ModelNew.forward modified its input(s) {changed} (trial {trial})"
            if not result.ok:
                check = CheckResult(status="incorrect", trials=trial + 1, max_abs_err=result.max_abs_err,
                                    max_rel_err=result.max_rel_err, mismatch_fraction=result.mismatch_fraction,
                                    atol=atol, rtol=rtol, message=f"trial {trial}: {result.message}")
                return WorkerReport(status="incorrect", check=check, error=check.message, **report)
            worst_abs = max(worst_abs, result.max_abs_err or 0.0)
            worst_rel = max(worst_rel, result.max_rel_err or 0.0)
            del out, expected, mine, inputs
        check = CheckResult(status="correct", trials=spec.trials, max_abs_err=worst_abs, max_rel_err=worst_rel,
                            mismatch_fraction=0.0, atol=atol, rtol=rtol)

        ref_inputs = make_inputs("timing")
        cand_inputs = clone(ref_inputs)
        with failing_as("failed while timing"):
            timings, converged = time_interleaved(
                {"reference": lambda: reference(*ref_inputs), "candidate": lambda: candidate(*cand_inputs)},
                timer, spec.timing)
    flags = () if converged else ("noisy_timing",)
    return WorkerReport(status="correct", check=check, runtime=timings["candidate"],
                        ref_runtime=timings["reference"], flags=flags, **report)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("build", "eval"):
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "build":
        code = build_main(Path(argv[1]))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # threads the candidate started at import must not keep the builder alive
    spec = WorkerSpec.model_validate_json(Path(argv[1]).read_text())
    try:
        report = eval_main(spec)
    except EvalFailure as failure:
        report = WorkerReport(status=failure.status, error=str(failure), device_name="", torch_version="")
    except BaseException as exc:
        traceback.print_exc()
        report = WorkerReport(status="runtime_error", error=describe(exc), device_name="", torch_version="")
    write_atomic(Path(spec.result_path), report.model_dump_json())
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's destructors or threads must not change the verdict now.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
