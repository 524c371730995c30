"""What every child shares: the failure that carries a verdict, how problems are imported and their
inputs and modules made (seeded, on the device), the device's timer, and the marker printed just before
the candidate's code first runs (a failure before it is the harness's, never the candidate's)."""

from __future__ import annotations

import contextlib
import hashlib
import sys
import traceback
from collections.abc import Iterator
from typing import TYPE_CHECKING

from harness.markers import CANDIDATE_STARTS

if TYPE_CHECKING:  # only its name: the runner imports this module before anything else it needs
    from harness.types import Status


def candidate_starts() -> None:
    print(CANDIDATE_STARTS, file=sys.stderr, flush=True)


def exception_chain(exc: BaseException | None) -> Iterator[BaseException]:
    """`exc`, then what it was raised from or while handling, and so on (each once)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        yield exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__


# The attribute the loader (loader.py) sets on what a build raised: not what the candidate did.
BUILD_FAILURE_MARK = "harness_build_failure"


def is_build_failure(exc: BaseException | None) -> bool:
    """Whether `exc`, or an exception it was raised from or while handling, came from building an extension."""
    return any(getattr(e, BUILD_FAILURE_MARK, False) for e in exception_chain(exc))


# Triton refusing a kernel: its compiler's errors on the GPU, raised at the kernel's first launch.
TRITON_COMPILE_ERRORS = {"CompilationError", "CompileTimeAssertionFailure", "UnsupportedLanguageConstruct"}
# What Triton's interpreter (the cpu target) wraps where a GPU's compiler would have refused the kernel.
INTERPRETED_COMPILE_ERRORS = (AttributeError, NameError, TypeError, SyntaxError)


def triton_compile_error(exc: BaseException | None) -> BaseException | None:
    """Triton failing to compile a kernel: `exc`, or an exception it was raised from or while handling; or None."""
    for e in exception_chain(exc):
        kind = type(e)
        if not kind.__module__.startswith("triton."):
            continue
        if kind.__name__ in TRITON_COMPILE_ERRORS or (
                kind.__name__ == "InterpreterError"
                and isinstance(e.__cause__ or e.__context__, INTERPRETED_COMPILE_ERRORS)):
            return e
    return None


def describe_compile_error(exc: BaseException, tail: int = 12, limit: int = 2000) -> str:
    """Triton's message, trimmed to what matters: where (its first line, `at LINE:COLUMN:`) and how it ends (the
    kernel's source up to the error, the caret, the error itself). Triton's own message is cut to the source's last
    lines, but a long one loses its end to describe()'s cap; here the start goes first."""
    lines = f"{type(exc).__name__}: {exc}".strip().splitlines()
    if len(lines) > tail + 2:
        lines = [lines[0], f"... ({len(lines) - tail - 1} lines of the kernel's source)", *lines[-tail:]]
    text = "\n".join(lines)
    return text if len(text) <= limit else f"{lines[0]}\n... {text[-(limit - len(lines[0]) - 5):]}"


class EvalFailure(Exception):
    """Ends an evaluation with a verdict (incorrect / runtime_error / rejected) and a message; an incorrect
    one may carry the comparison that failed (its errors go into the CheckResult)."""

    def __init__(self, status: Status, message: str, comparison=None):
        super().__init__(message)
        self.status = status
        self.comparison = comparison


@contextlib.contextmanager
def failing_as(what: str, status: Status = "runtime_error"):
    """Turn anything raised inside (SystemExit too) into a `status` failure that says what failed (a failed
    build of an extension, or a Triton kernel that does not compile, into a compile_error)."""
    try:
        yield
    except EvalFailure:
        raise  # already a verdict (a defense fired inside)
    except BaseException as exc:
        traceback.print_exc()
        if is_build_failure(exc):  # load_inline called in __init__ or forward, and its build failed
            raise EvalFailure("compile_error", f"{what}: building an extension failed: {describe(exc)}") from None
        refused = triton_compile_error(exc)
        if refused is not None:  # Triton compiles a kernel at its first launch, inside forward
            raise EvalFailure("compile_error", f"{what}: Triton could not compile a kernel: "
                                               f"{describe_compile_error(refused)}") from None
        raise EvalFailure(status, f"{what}: {describe(exc)}") from None


def trial_seed(seed: int, label: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{label}".encode()).digest()[:8], "little") >> 1


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


def seeded_inputs(problem, device, dtype, seed: int, label: str) -> list:
    """The inputs for `label`: the same values every time they are asked for, different for every label."""
    return inputs_for(problem, device, dtype, trial_seed(seed, label))


def inputs_for(problem, device, dtype, call_seed: int) -> list:
    """The inputs of one call's seed (trial_seed of the run's seed and a label): the same in every process."""
    import torch

    torch.manual_seed(call_seed)
    return forward_inputs(problem, device, dtype)


def ready_device(torch, target: str) -> int:
    """(cuda) Create the context now, so the evaluation does not pay for it. The attempts it took."""
    import time

    if target == "cuda" and torch.cuda.is_available():
        for attempt in range(5):
            try:
                torch.empty(1, device="cuda")
                return attempt + 1
            except RuntimeError:  # the evaluation beside us may hold all free memory for a moment (poison)
                time.sleep(0.5 * (attempt + 1))
        return 5
    return 1


def started_device(torch, target: str) -> dict:
    """Ready the device (ready_device), saying how this process's start went so far: seconds from its start to here
    (its imports), the device's own seconds (the CUDA context) and the attempts the context took."""
    imported = _process_age()
    attempts = ready_device(torch, target)
    return {"imports_s": round(imported, 3), "device_s": round(_process_age() - imported, 3),
            "device_attempts": attempts}


def start_figures(started: dict) -> dict:
    """How this process's start went, for the judge's report: started_device's figures, and seconds from its start
    to now (ready_s)."""
    return {"ready_s": round(_process_age(), 3), **started}


def _process_age() -> float:
    """Seconds since this process started (its interpreter's start, from /proc: imports included)."""
    import os

    with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
        start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
        return float(uptime.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")


def timed_side(problem, device, dtype, seed: int, name: str, fn):
    """A timing side whose every call gets inputs of its own (label timing-NAME-I), made outside the timer."""
    from harness.child.timing import Side

    counter = iter(range(1 << 62))

    def prepare():
        label = f"timing-{name}-{next(counter)}"
        return label, seeded_inputs(problem, device, dtype, seed, label)
    return Side(prepare, fn)


def held_mib(torch, device) -> int | None:
    """The most device memory this process's allocator has held, in MiB (None: not a GPU)."""
    return torch.cuda.max_memory_reserved(device) >> 20 if device.type == "cuda" else None


def target_device(torch, target: str):
    """The device, its name, a timer and a sync for `target` (cuda: the one visible GPU, TF32 off)."""
    from harness.child.timing import CpuTimer, CudaTimer

    if target == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("target cuda, but torch in the evaluation process sees no GPU "
                               f"(torch {torch.__version__}, CUDA build {torch.version.cuda})")
        device = torch.device("cuda", 0)
        torch.cuda.set_device(device)
        exact_fp32(torch)
        return device, torch.cuda.get_device_name(device), CudaTimer(device), torch.cuda.synchronize
    return torch.device("cpu"), "cpu", CpuTimer(), (lambda: None)
