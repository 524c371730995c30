"""Kernel coverage: in a profiled forward after the checked trials (never timed), how much of the work the
candidate's own code did, against PyTorch's operators (on the CPU the runner profiles several and keeps the median).

How: torch's profiler records every operator that goes through the dispatcher (from Python or from C++), and
a profile function (sys.setprofile, on for that one call) opens a profiler range named `candidate::<fn>` around
each call into a function of the candidate's own extension modules, however the candidate reached it (an
attribute, an alias, a bound method), and around each launch through Triton's launcher (a `@triton.jit` kernel,
autotuned or not, compiled or interpreted). Then, on the recorded tree:
  pytorch    every outermost `aten::` / `prim::` operator, wherever it was called from (a launcher that calls
             at::matmul hands the work to PyTorch): its time, with its children;
  candidate  each outermost candidate range, less the PyTorch operators inside it;
  other      every kernel launched neither inside an operator nor inside a candidate range (GPU): torch.compile's
             generated kernels, a CUDA graph replayed through PyTorch; on the CPU, each outermost range of code
             torch.compile generated (`Torch-Compiled Region`), less the operators and candidate ranges inside it.
             Not the candidate's own work.
Time is device time on the GPU (each kernel, copy or memset belongs to whatever launched it: the candidate's own
are those launched inside its ranges outside any operator) and wall time on the CPU. Python glue is none of them.

Operators the candidate registers itself (TORCH_LIBRARY, torch.library: any namespace that appeared once its code
ran) are its own ranges too, as the profiler records them.

A candidate can only lower its own share here (calling PyTorch inside a range of its own is still PyTorch's).
Not seen: a launcher that calls ATen's kernels without the dispatcher (at::native::...) or a vendor library looks
like its own work.
"""

from __future__ import annotations

import sys
import types
from collections import defaultdict
from collections.abc import Callable
from typing import Literal

import torch
import torch.profiler

from harness.evidence import Coverage, KernelTime

CANDIDATE = "candidate::"
FORWARD = "harness::forward"
COMPILED = "Torch-Compiled Region"  # the profiler's range around code torch.compile generated
PYTORCH_NAMESPACES = ("aten", "prim", "prims", "quantized")
Owner = Literal["candidate", "pytorch", "other"]  # KernelTime.owner
OWNERS: tuple[Owner, ...] = ("candidate", "pytorch", "other")
TOP = 5
CPU_PROFILED_CALLS = 5  # wall time is what the machine allows: the median of several calls, not one


def measure(call: Callable[[], object], modules: frozenset[str], cuda: bool,
            namespaces: frozenset[str] = frozenset()) -> tuple[Coverage, object]:
    """Run `call` once, profiled; its time attributed, and what it returned. `modules`: the candidate's extension
    module names; `namespaces`: those of the operators it registered (TORCH_LIBRARY, torch.library)."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    enter, leave = torch.ops.profiler._record_function_enter_new, torch.ops.profiler._record_function_exit
    launchers = _triton_launchers()
    opened: list[tuple[object, object]] = []  # (what opened the range: a C function or a frame, its handle)
    triton_launches = 0

    def hook(frame, event, arg) -> None:
        nonlocal triton_launches
        if event == "c_call" and getattr(arg, "__module__", None) in modules:
            opened.append((arg, enter(CANDIDATE + getattr(arg, "__name__", "?"), None)))
        elif event == "call" and frame.f_code in launchers:
            triton_launches += not any(isinstance(what, types.FrameType) for what, _ in opened)  # autotune's inside
            opened.append((frame, enter(CANDIDATE + _launched(frame), None)))
        elif event in ("c_return", "c_exception", "return") and opened and \
                opened[-1][0] is (frame if event == "return" else arg):
            leave(opened.pop()[1])

    with torch.profiler.profile(activities=activities) as profile:
        with torch.profiler.record_function(FORWARD):
            sys.setprofile(hook)
            try:
                returned = call()
            finally:
                sys.setprofile(None)
                while opened:
                    leave(opened.pop()[1])
            if cuda:
                torch.cuda.synchronize()
    coverage = attribute(profile.events(), cuda, namespaces)
    return coverage.model_copy(update={"triton_launches": triton_launches}), returned


def combined(forward: Coverage, backward: Coverage | None) -> Coverage:
    """A training problem's call, its forward and backward measured apart: their sums and shares together, with the
    backward's own measurement kept beside (its share is what says whether autograd did the backward)."""
    if backward is None:
        return forward
    candidate, pytorch, other = (getattr(forward, f) + getattr(backward, f)
                                 for f in ("candidate_ms", "pytorch_ms", "other_ms"))
    done = candidate + pytorch + other
    top = sorted((*forward.top, *backward.top), key=lambda k: -k.ms)[:TOP]
    return Coverage(share=candidate / done if done > 0 else None, candidate_ms=candidate, pytorch_ms=pytorch,
                    other_ms=other, calls=forward.calls + backward.calls,
                    triton_launches=forward.triton_launches + backward.triton_launches, top=tuple(top),
                    backward=backward)


def median_by_share(measured: list[Coverage]) -> Coverage:
    """The profiled call whose share is the median (calls with no measurable work sort first)."""
    ranked = sorted(measured, key=lambda c: -1.0 if c.share is None else c.share)
    return ranked[len(ranked) // 2]


def op_namespaces() -> frozenset[str]:
    """The namespaces of every operator registered with the dispatcher so far."""
    return frozenset(name.split("::", 1)[0] for name in torch._C._dispatch_get_all_op_names())


def warm_up(cuda: bool) -> None:
    """Profile nothing once, ahead of need: the profiler's first use loads modules (torch._dynamo, which wraps
    torch.manual_seed: it must happen before the defenses take their snapshot) and starts its tracer."""
    measure(lambda: torch.zeros(8).add_(1), frozenset(), cuda)


def _triton_launchers() -> frozenset:
    """The code of Triton's launch functions (a jit kernel's, the interpreter's, autotune's), where the candidate
    imported Triton: a kernel launched through them is the candidate's own."""
    triton_modules = ("triton.runtime.jit", "triton.runtime.interpreter", "triton.runtime.autotuner")
    codes = set()
    for module in filter(None, (sys.modules.get(name) for name in triton_modules)):
        for cls in ("JITFunction", "InterpretedFunction", "Autotuner", "Heuristics"):
            run = getattr(getattr(module, cls, None), "run", None)
            if (code := getattr(run, "__code__", None)) is not None:
                codes.add(code)
    return frozenset(codes)


def _launched(frame) -> str:
    kernel = frame.f_locals.get("self")
    return str(getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "triton"))


def _is_pytorch(name: str) -> bool:
    return name.split("::", 1)[0] in PYTORCH_NAMESPACES and "::" in name


def attribute(events, cuda: bool, namespaces: frozenset[str] = frozenset()) -> Coverage:
    """The candidate's and PyTorch's shares of the profiled forward (see the module's docstring)."""
    def is_own(event) -> bool:
        return event.name.startswith(CANDIDATE) or "::" in event.name and event.name.split("::", 1)[0] in namespaces

    def outermost_own(event) -> bool:
        return is_own(event) and not any(is_own(p) for p in _ancestors(event))

    host = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    device = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA and not e.is_user_annotation]
    by_name: dict[tuple[str, Owner], float] = defaultdict(float)  # (name, owner) -> microseconds
    calls = sum(1 for e in host if outermost_own(e))
    if cuda:
        _device_time(host, device, by_name, is_own)
    else:
        for event in host:
            if _is_pytorch(event.name) and not any(_is_pytorch(p.name) for p in _ancestors(event)):
                by_name[(event.name, "pytorch")] += event.cpu_time_total
            elif outermost_own(event):
                itself = event.cpu_time_total - sum(d.cpu_time_total for d in _outermost_below(event, _is_pytorch))
                by_name[(event.name.removeprefix(CANDIDATE), "candidate")] += max(itself, 0.0)
            elif event.name.startswith(COMPILED) and not any(p.name.startswith(COMPILED) for p in _ancestors(event)):
                below = _outermost_below(event, lambda name: _is_pytorch(name) or name.startswith(CANDIDATE))
                by_name[(event.name, "other")] += max(event.cpu_time_total - sum(d.cpu_time_total for d in below), 0.0)
    totals = {owner: sum(us for (_, o), us in by_name.items() if o == owner) for owner in OWNERS}
    done = sum(totals.values())
    top = sorted(by_name.items(), key=lambda item: -item[1])[:TOP]
    return Coverage(share=totals["candidate"] / done if done > 0 else None,
                    candidate_ms=totals["candidate"] / 1e3, pytorch_ms=totals["pytorch"] / 1e3,
                    other_ms=totals["other"] / 1e3, calls=calls,
                    top=tuple(KernelTime(name=name[:200], owner=owner, ms=us / 1e3)
                              for (name, owner), us in top if us > 0))


def _device_time(host: list, device: list, by_name: dict[tuple[str, Owner], float],
                 is_own: Callable[[object], bool]) -> None:
    """Each kernel (or copy, or memset) on the device, owned by whatever launched it: the launch is the host-side
    runtime call with the kernel's correlation id (torch's own kernel-to-operator links are not used: on some
    versions they mix up operator and runtime ids), and its owner the outermost PyTorch operator above it, else a
    candidate range above it, else no one the candidate can claim (`other`)."""
    launches = {e.id: e for e in host if not e.is_user_annotation and "::" not in e.name and e.name.startswith("cu")}
    for kernel in device:
        launch = launches.get(kernel.id)
        if launch is None:
            continue
        chain = [launch, *_ancestors(launch)]
        ops = [e.name for e in chain if _is_pytorch(e.name)]
        duration = kernel.time_range.end - kernel.time_range.start
        if ops:
            by_name[(ops[-1], "pytorch")] += duration
        elif any(is_own(e) for e in chain):
            by_name[(kernel.name, "candidate")] += duration
        else:  # neither PyTorch's operator nor the candidate's code launched it (torch.compile's kernels)
            by_name[(kernel.name, "other")] += duration


def _ancestors(event):
    parent = event.cpu_parent
    while parent is not None:
        yield parent
        parent = parent.cpu_parent


def _outermost_below(event, matches: Callable[[str], bool]):
    for child in event.cpu_children:
        if matches(child.name):
            yield child
        else:
            yield from _outermost_below(child, matches)
