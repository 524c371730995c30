"""What a candidate's build is expected to cost, from its source alone, for ordering builds (scheduler.py).

nvcc spends nearly all of a torch-header build in its front ends reading torch's headers: a `.cu` that load_inline
prefixes with torch/types.h (every call without no_implicit_headers=True), or whose code includes torch, ATen or
c10 itself, took ~61 s on an H100 host, where a lean `.cu` (kernel and raw-pointer launcher) took a few seconds
beside a C++ binding that a precompiled torch/extension.h serves. Triton and plain PyTorch build nothing before
the evaluation. Relative weights, not seconds: only the order matters.
"""

from __future__ import annotations

import ast
import re

NOTHING, LEAN, TORCH_HEADERS = 0.0, 1.0, 4.0
_TORCH_INCLUDE = re.compile(r"#\s*include\s*[<\"](?:torch|ATen|c10)/")
_CUDA_CODE = re.compile(r"__global__|<<<")


def expected_build_cost(source: str) -> float:
    if "load_inline" not in source and "cpp_extension" not in source:
        return NOTHING
    if "cuda_sources" not in source and ".cu" not in source:
        return LEAN  # C++ alone: its torch/extension.h is precompiled
    if re.search(r"no_implicit_headers\s*=\s*True", source) is None:
        return TORCH_HEADERS  # load_inline puts torch/types.h before the .cu's own code
    return TORCH_HEADERS if any(_TORCH_INCLUDE.search(text) for text in _cuda_strings(source)) else LEAN


def _cuda_strings(source: str) -> list[str]:
    """The string constants that hold CUDA code (a kernel or a launch), where a torch include costs most."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return [source]
    return [node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _CUDA_CODE.search(node.value)]
