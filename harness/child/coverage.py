"""Kernel coverage: in one profiled forward after the checked trials (never timed), how much of the work the
candidate's own code did, against PyTorch's operators.

How: torch's profiler records every operator that goes through the dispatcher (from Python or from C++), and
a profile function (sys.setprofile, on for that one call) opens a profiler range named `candidate::<fn>` around
each call into a function of the candidate's own extension modules, however the candidate reached it (an
attribute, an alias, a bound method). Then, on the recorded tree:
  pytorch    every outermost `aten::` / `prim::` operator, wherever it was called from (a launcher that calls
             at::matmul hands the work to PyTorch): its time, with its children;
  candidate  each outermost candidate range, less the PyTorch operators inside it.
Time is device time on the GPU (each kernel, copy or memset belongs to whatever launched it: the candidate's own
are those launched inside its ranges outside any operator) and wall time on the CPU. Python glue is neither.

A candidate can only lower its own share here (calling PyTorch inside a range of its own is still PyTorch's).
Not seen: operators the candidate registers with TORCH_LIBRARY are counted as neither, and a launcher that calls
ATen's kernels without the dispatcher (at::native::...) or a vendor library looks like its own work.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Callable

import torch
import torch.profiler

from harness.types import Coverage, KernelTime

CANDIDATE = "candidate::"
FORWARD = "harness::forward"
PYTORCH_NAMESPACES = ("aten", "prim", "prims", "quantized")
TOP = 5


def measure(call: Callable[[], object], modules: frozenset[str], cuda: bool) -> tuple[Coverage, object]:
    """Run `call` once, profiled; its time attributed, and what it returned. `modules`: the candidate's extension
    module names."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    enter, leave = torch.ops.profiler._record_function_enter_new, torch.ops.profiler._record_function_exit
    open_ranges: list = []

    def hook(frame, event, arg) -> None:
        if event == "c_call" and getattr(arg, "__module__", None) in modules:
            open_ranges.append(enter(CANDIDATE + getattr(arg, "__name__", "?"), None))
        elif event in ("c_return", "c_exception") and open_ranges and getattr(arg, "__module__", None) in modules:
            leave(open_ranges.pop())

    with torch.profiler.profile(activities=activities) as profile:
        with torch.profiler.record_function(FORWARD):
            sys.setprofile(hook)
            try:
                returned = call()
            finally:
                sys.setprofile(None)
                while open_ranges:
                    leave(open_ranges.pop())
            if cuda:
                torch.cuda.synchronize()
    return attribute(profile.events(), cuda), returned


def warm_up(cuda: bool) -> None:
    """Profile nothing once, ahead of need: the profiler's first use loads modules (torch._dynamo, which wraps
    torch.manual_seed: it must happen before the defenses take their snapshot) and starts its tracer."""
    measure(lambda: torch.zeros(8).add_(1), frozenset(), cuda)


def _is_pytorch(name: str) -> bool:
    return name.split("::", 1)[0] in PYTORCH_NAMESPACES and "::" in name


def attribute(events, cuda: bool) -> Coverage:
    """The candidate's and PyTorch's shares of the profiled forward (see the module's docstring)."""
    host = [e for e in events if e.device_type == torch.autograd.DeviceType.CPU]
    device = [e for e in events if e.device_type == torch.autograd.DeviceType.CUDA and not e.is_user_annotation]
    by_name: dict[tuple[str, str], float] = defaultdict(float)  # (name, owner) -> microseconds
    calls = sum(1 for e in host if _outermost_candidate_range(e))
    if cuda:
        _device_time(host, device, by_name)
    else:
        for event in host:
            if _is_pytorch(event.name) and not any(_is_pytorch(p.name) for p in _ancestors(event)):
                by_name[(event.name, "pytorch")] += event.cpu_time_total
            elif _outermost_candidate_range(event):
                own = event.cpu_time_total - sum(d.cpu_time_total for d in _outermost_pytorch_below(event))
                by_name[(event.name.removeprefix(CANDIDATE), "candidate")] += max(own, 0.0)
    totals = {owner: sum(us for (_, o), us in by_name.items() if o == owner) for owner in ("candidate", "pytorch")}
    done = totals["candidate"] + totals["pytorch"]
    top = sorted(by_name.items(), key=lambda item: -item[1])[:TOP]
    return Coverage(share=totals["candidate"] / done if done > 0 else None,
                    candidate_ms=totals["candidate"] / 1e3, pytorch_ms=totals["pytorch"] / 1e3, calls=calls,
                    top=tuple(KernelTime(name=name[:200], owner=owner, ms=us / 1e3)
                              for (name, owner), us in top if us > 0))


def _device_time(host: list, device: list, by_name: dict) -> None:
    """Each kernel (or copy, or memset) on the device, owned by whatever launched it: the launch is the host-side
    runtime call with the kernel's correlation id (torch's own kernel-to-operator links are not used: on some
    versions they mix up operator and runtime ids), and its owner the outermost PyTorch operator above it, else a
    candidate range above it."""
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
        elif any(e.name.startswith(CANDIDATE) for e in chain):
            by_name[(kernel.name, "candidate")] += duration


def _ancestors(event):
    parent = event.cpu_parent
    while parent is not None:
        yield parent
        parent = parent.cpu_parent


def _outermost_candidate_range(event) -> bool:
    return event.name.startswith(CANDIDATE) and not any(p.name.startswith(CANDIDATE) for p in _ancestors(event))


def _outermost_pytorch_below(event):
    for child in event.cpu_children:
        if _is_pytorch(child.name):
            yield child
        else:
            yield from _outermost_pytorch_below(child)
