"""A workload as a child process runs it: the problem file executed with the workload's values in place of its
module constants (constants computed from them follow, as if the file had been written so), its init inputs, and its
inputs for a call's seed (floating ones scaled and shifted as the workload asks). The judge and the runner each make
their own from the same values; only the judge draws them (harness/workloads.py)."""

from __future__ import annotations

import ast
import importlib.util

from harness.child.common import forward_inputs


def import_problem(path: str, source: str, values: dict | None = None):
    """The problem module from `source`, the file's text as the parent indexed it (`path` names it in tracebacks),
    with `values` (module constant -> value) assigned where the file assigns those names."""
    spec = importlib.util.spec_from_file_location("reference_problem", path)
    if spec is None or spec.loader is None:  # not a file Python can import
        raise ImportError(f"cannot import {path} as a module")
    module = importlib.util.module_from_spec(spec)
    tree = ast.parse(source, filename=path)
    for node in tree.body:
        if (values and isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id in values):
            node.value = ast.copy_location(ast.Constant(values[node.targets[0].id]), node.value)
    exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 - the problem file itself, as import runs it
    return module


class Instance:
    """One workload's values in this process: the problem module with them set, and its init inputs."""

    def __init__(self, path: str, source: str, values: dict | None = None,
                 distribution: tuple[float, float] = (1.0, 0.0)):
        self.path, self.source = path, source
        self.values = dict(values or {})
        self.module = import_problem(path, source, self.values)
        self.init_inputs = self.module.get_init_inputs()
        if not isinstance(self.init_inputs, (list, tuple)):
            raise TypeError(f"get_init_inputs() returned {type(self.init_inputs).__name__}, not a list")
        self.distribution = distribution

    def variant(self, values: dict, distribution: tuple[float, float]) -> Instance:
        """Another workload of the same problem, from the same text."""
        return Instance(self.path, self.source, values, distribution)

    def as_module(self):
        """The problem as a module whose get_inputs() gives this workload's inputs (the quality gate and the
        baselines take a module)."""
        import types

        scale, shift = self.distribution
        module = self.module

        def get_inputs():
            import torch

            inputs = module.get_inputs()
            if (scale, shift) == (1.0, 0.0):
                return inputs
            return [x * scale + shift if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                    for x in inputs]
        return types.SimpleNamespace(Model=module.Model, get_init_inputs=module.get_init_inputs, get_inputs=get_inputs)

    def inputs(self, device, dtype, call_seed: int) -> list:
        """The inputs of one call's seed: the same in every process."""
        import torch

        torch.manual_seed(call_seed)
        inputs = forward_inputs(self.module, device, dtype)
        scale, shift = self.distribution
        if (scale, shift) == (1.0, 0.0):
            return inputs
        return [x.mul_(scale).add_(shift) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in inputs]


def same_init(a: list | tuple, b: list | tuple) -> bool:
    """Whether two workloads construct their modules from the same arguments (then one ModelNew serves both: a
    candidate that keeps the first call's sizes meets the second's)."""
    import torch

    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and x.shape == y.shape
                    and x.dtype == y.dtype and torch.equal(x, y)):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True
