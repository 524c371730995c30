"""A naive evaluator, the kind the corpus's exploits are written to fool (used by the tests only).

It does what many hand-written benchmark scripts do: one correctness check at a loose tolerance
(1e-2, as KernelBench does) on one input, comparing on the host; then the same input timed again and
again with the clock looked up at call time (cuda: events on the current stream, waiting for the
end event only). The reference goes first unless `--candidate-first` (the other common order).

  python tests/naive_eval.py PROBLEM.py BUILD_DIR cpu|cuda [--candidate-first]  ->  JSON on stdout
"""

import json
import os
import sys
import time
from pathlib import Path

import torch

from harness.child.loader import import_candidate, install_extension_loader
from harness.child.workload import import_problem


def timed(fn, args, device, runs=20):
    for _ in range(3):
        fn(*args)
    if device.type == "cuda":
        torch.cuda.synchronize()
        total = 0.0
        for _ in range(runs):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*args)
            end.record()
            end.synchronize()
            total += start.elapsed_time(end)
        return total / runs
    start = time.perf_counter()
    for _ in range(runs):
        fn(*args)
    return (time.perf_counter() - start) * 1e3 / runs


def main(problem_path, build_dir, target, *flags):
    device = torch.device("cuda" if target == "cuda" else "cpu")
    problem = import_problem(problem_path, Path(problem_path).read_text())
    install_extension_loader(Path(build_dir), "load")
    candidate_module = import_candidate(Path(build_dir))
    init = problem.get_init_inputs()
    torch.manual_seed(0)
    reference = problem.Model(*init).to(device)
    torch.manual_seed(0)
    candidate = candidate_module.ModelNew(*init).to(device)
    torch.manual_seed(1)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in problem.get_inputs()]
    with torch.no_grad():
        if "--candidate-first" in flags:
            out = candidate(*inputs)
            expected = reference(*inputs).cpu()
        else:
            expected = reference(*inputs).cpu()  # the device copy is freed here
            out = candidate(*inputs)
        if device.type == "cuda":
            torch.cuda.synchronize()
        correct = bool(torch.allclose(out.cpu(), expected, atol=1e-2, rtol=1e-2))
        ref_ms = timed(reference, inputs, device)
        new_ms = timed(candidate, inputs, device)
    print(json.dumps({"correct": correct, "speedup": ref_ms / new_ms, "ref_ms": ref_ms, "new_ms": new_ms}), flush=True)
    os._exit(0)  # no teardown: threads a candidate left running must not crash the exit


if __name__ == "__main__":
    main(*sys.argv[1:])
