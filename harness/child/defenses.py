"""Runtime defenses of the evaluation child: they hold even when a trick gets past the static rules.

- Guard: everything the harness and the reference rely on (torch functions, tensor methods, nn layers,
  clocks, global torch settings) is snapshotted before the candidate is imported and compared after
  each of its calls; any change rejects the candidate.
- Poison: memory the candidate could be handed by an allocator is filled with NaN first, so "returning
  uninitialised memory that happens to hold the expected output" returns NaN instead (the reference runs in
  the judge, another process: its outputs are never in the runner's memory).
- Outputs: a plain torch.Tensor with real, eager storage, copied the moment forward returns (work that
  finishes later, on a thread, does not count).
"""

from __future__ import annotations

import bisect
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from harness.child.check import same_values
from harness.child.common import EvalFailure

POISON_BYTE = 0xFF  # all-ones bits: NaN in fp32, fp16 and bf16
POISON_CHUNK = 4 << 30
POISON_MARGIN = 64 << 20
SMALL_REQUEST = 1 << 20  # torch's allocator serves requests up to 1 MiB from its small pool


class Tampered(EvalFailure):
    """The candidate changed something it must not touch: it is rejected."""

    def __init__(self, message: str):
        super().__init__("rejected", message)


def _watched() -> dict[str, dict[str, object]]:
    import harness.child.check
    import harness.child.common
    import harness.child.defenses
    import harness.child.observe
    import harness.child.timing
    import harness.child.workload
    import harness.cpu_stat

    modules: dict[str, object] = {
        "torch": torch, "torch.nn.functional": F, "torch.cuda": torch.cuda, "torch.linalg": torch.linalg,
        "torch.fft": torch.fft, "torch.special": torch.special, "torch._C": torch._C, "torch._C._nn": torch._C._nn,
        "time": time, "math": math, "statistics": statistics}
    modules.update({module.__name__: module for module in (
        harness.child.check, harness.child.common, harness.child.defenses, harness.child.observe,
        harness.child.timing, harness.child.workload, harness.cpu_stat)})
    classes: dict[str, object] = {"torch.Tensor": torch.Tensor, "torch._C.TensorBase": torch._C.TensorBase,
               "torch._C._VariableFunctions": type(torch._C._VariableFunctions),
               "torch.cuda.Event": torch.cuda.Event, "torch.nn.Module": nn.Module}
    classes.update({f"torch.nn.{name}": obj for name, obj in vars(nn).items()
                    if isinstance(obj, type) and issubclass(obj, nn.Module)})
    return {"modules": modules, "classes": classes}


def _settings() -> dict[str, object]:
    """Global torch state that changes what the reference computes or how fast."""
    state = {
        "torch.get_num_threads()": torch.get_num_threads(),
        "torch.get_default_dtype()": torch.get_default_dtype(),
        "torch.are_deterministic_algorithms_enabled()": torch.are_deterministic_algorithms_enabled(),
        "torch.get_float32_matmul_precision()": torch.get_float32_matmul_precision(),
        "torch.backends.cudnn.enabled": torch.backends.cudnn.enabled,
        "torch.backends.cudnn.benchmark": torch.backends.cudnn.benchmark,
        "torch.backends.cudnn.deterministic": torch.backends.cudnn.deterministic,
        "torch.backends.cudnn.allow_tf32": torch.backends.cudnn.allow_tf32,
        "torch.backends.cuda.matmul.allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
        "torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
    }
    return state


class Guard:
    """Identity snapshot of watched namespaces and a value snapshot of global settings."""

    def __init__(self, also: dict[str, object] | None = None):
        """`also`: more modules and classes to watch, by label (the caller's own, which this module cannot
        import without a cycle)."""
        watched = _watched()
        for label, obj in (also or {}).items():
            watched["classes" if isinstance(obj, type) else "modules"][label] = obj
        self._modules = {label: (m, dict(vars(m))) for label, m in watched["modules"].items()}
        self._classes = {label: (c, dict(vars(c))) for label, c in watched["classes"].items()}
        self._settings = _settings()

    def changes(self) -> list[str]:
        found = []
        for label, (module, before) in self._modules.items():
            now = vars(module)
            # New names in a module cannot change code that looked up old ones; changed or removed functions
            # and classes can (data such as torch.cuda._initialized changes legitimately).
            found += [f"{label}.{name}" for name, value in before.items()
                      if callable(value) and now.get(name, _MISSING) is not value]
        for label, (cls, before) in self._classes.items():
            now = vars(cls)
            # In a class a new name shadows an inherited method (torch.Tensor.relu), so additions count too.
            found += [f"{label}.{name}" for name in before.keys() | now.keys()
                      if before.get(name, _MISSING) is not now.get(name, _MISSING)]
        settings = _settings()
        found += [f"{name} (was {self._settings[name]!r}, now {value!r})" for name, value in settings.items()
                  if value != self._settings[name]]
        return sorted(found)

    def verify(self, when: str) -> None:
        changed = self.changes()
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            raise Tampered(f"ModelNew changed {shown} ({when}); a candidate may not patch torch, the clocks, "
                           "the harness or global torch settings")


_MISSING = object()


class Poison:
    """Fills with NaN the memory a candidate's next allocations can be handed (cuda only; a no-op on the cpu).

    The first time, everything: the allocator's cache goes back to the driver, then as much device memory as can
    be had is claimed, filled and released, so the next allocations hold poison, not old results or fresh zeros.
    After that, only the blocks free in torch's cache are filled (no driver call; a full filling is ~0.2 s):
    every byte the process has held since is either still in that cache or was given back to the driver, and a
    segment given back (empty_cache, an out-of-memory retry) sends it through the whole filling again. Memory the
    candidate's own code takes from the driver and gives back (cudaMalloc, cudaFree) is not refilled: those bytes
    were poison for its first poisoned run, which had to be right on them.
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.released: int | None = None  # segments given back to the driver when it last filled everything

    def __call__(self) -> str:
        """Poison; which filling it took ("all" or "cached"), or "none" off the GPU."""
        if self.device.type != "cuda":
            return "none"
        torch.cuda.synchronize(self.device)
        if self.released is not None and self.released == _segments_released(self.device):
            if _fill_cached_blocks(self.device):
                return "cached"
        _fill_free_memory(self.device)
        self.released = _segments_released(self.device)
        return "all"


def _segments_released(device: torch.device) -> int | None:
    return torch.cuda.memory_stats(device).get("num_device_free")  # None (never equal): always fill everything


def _fill_cached_blocks(device: torch.device) -> bool:
    """Fill every block free in torch's cache, claimed through the allocator itself: claims of the free blocks'
    sizes, largest first, are each handed such a block (best fit). False, the claims given back, where the snapshot
    cannot be read or a claim did not land on a free block (another stream's, a block merged meanwhile)."""
    stream = torch.cuda.current_stream(device).cuda_stream
    try:
        # Only the default pool: a CUDA graph's private pool serves its own replays, which the full filling never
        # touched either.
        free = [(block["address"], block["size"], segment["segment_type"], segment["stream"])
                for segment in torch.cuda.memory_snapshot() if segment["device"] == device.index
                and tuple(segment.get("segment_pool_id", (0, 0))) == (0, 0)
                for block in segment["blocks"] if block["state"] != "active_allocated"]
    except (KeyError, TypeError):  # a torch whose snapshot reads otherwise
        return False
    if any(where != stream for *_, where in free):
        return False
    pieces = []
    for _, size, pool, _ in free:  # a small segment's free block may exceed what the small pool is asked for
        step = SMALL_REQUEST if pool == "small" else size
        pieces += [min(step, size - at) for at in range(0, size, step)]
    released = _segments_released(device)
    try:
        claims = [torch.empty(n, dtype=torch.uint8, device=device) for n in sorted(pieces, reverse=True)]
    except torch.OutOfMemoryError:
        return False
    starts = sorted(free)

    def within_free(claim: torch.Tensor) -> bool:  # claims never overlap: all within and as many bytes is all
        at = bisect.bisect_right(starts, (claim.data_ptr(), math.inf)) - 1
        return at >= 0 and claim.data_ptr() + claim.numel() <= starts[at][0] + starts[at][1]
    if not all(map(within_free, claims)) or _segments_released(device) != released:
        return False
    for claim in claims:
        claim.fill_(POISON_BYTE)
    torch.cuda.synchronize(device)
    return True


def _fill_free_memory(device: torch.device) -> None:
    torch.cuda.empty_cache()
    chunks = []
    try:
        size = POISON_CHUNK
        while size >= POISON_MARGIN:
            # Only what the driver says is free is asked for: a refused request goes through torch's out-of-memory
            # path (freeing its cache, writing a report), once for every halving.
            if torch.cuda.mem_get_info(device)[0] < size:
                size //= 2
                continue
            try:
                chunks.append(torch.empty(size, dtype=torch.uint8, device=device).fill_(POISON_BYTE))
            except torch.OutOfMemoryError:
                size //= 2
    finally:
        torch.cuda.synchronize(device)
        del chunks
        torch.cuda.empty_cache()


def output_problem(value: object, where: str = "output") -> str | None:
    """Why an output cannot be accepted as computed (exact type, eager storage), or None."""
    if isinstance(value, (tuple, list)):
        if type(value) not in (tuple, list):
            return f"{where} must be a plain tuple or list, got {type(value).__qualname__}"
        for i, item in enumerate(value):
            problem = output_problem(item, f"{where}[{i}]")
            if problem:
                return problem
        return None
    if not isinstance(value, torch.Tensor):
        return None  # numbers are compared as they are
    if type(value) is not torch.Tensor:  # a subclass can defer work or fake its values
        return f"{where} must be a plain torch.Tensor, got {type(value).__module__}.{type(value).__qualname__}"
    if value.is_neg() or value.is_conj():
        return f"{where} is a lazy (negated or conjugated) view: the work is not done"
    if value.layout != torch.strided or value.device.type == "meta":
        return f"{where} must be a dense tensor with real storage, got layout {value.layout} on {value.device}"
    if value.numel() and value.untyped_storage().data_ptr() == 0:
        return f"{where} has no storage"
    return None


def snapshot(value: object) -> object:
    """A private copy of an output, taken the moment forward returns."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(snapshot(v) for v in value)
    return value


def identical(a: object, b: object) -> bool:
    """Bit-for-bit equal (NaN equal to NaN): has the output changed since it was returned?"""
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and same_values(a, b)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    return a == b
