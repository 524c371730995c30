"""Static integrity rules: read the candidate's syntax tree (never regexes over its text) for the
known ways to fake a speedup. Each rule has an id, a policy and a one-line reason:

  reject  the candidate is not built or run; its status is `rejected`
  flag    it is evaluated, and the flag goes with its result (shown, still counted)

Rules are conservative about what they forbid: benign code (`try/except ImportError`, torch glue
such as `empty`, `view`, `contiguous`, helper functions and classes) passes. What they cannot see,
for example work hidden in the C++ or CUDA source, is left to the runtime defenses of the evaluation child.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Literal

from harness.eval import source_graph
from harness.eval.source_graph import KERNEL, KERNEL_BUILDERS
from harness.flags import TORCH_FALLBACK, TORCH_OPS, merge_flags

Policy = Literal["reject", "flag"]


@dataclass(frozen=True)
class Rule:
    id: str
    policy: Policy
    reason: str
    flag: str | None = None  # the result's flag, for a rule of policy "flag"


RULES: dict[str, Rule] = {rule.id: rule for rule in (
    Rule("no-kernel", "reject", "builds no custom kernel (load_inline, load or a triton.jit function)"),
    Rule("entry-point", "reject", "ModelNew is not a class defined in the file, so no rule can see what it runs"),
    Rule("kernel-unused", "reject", "ModelNew.forward never reaches the compiled kernel"),
    Rule("reference-model", "reject", "ModelNew subclasses, builds or calls the reference Model"),
    Rule("torch-fallback", "flag", "an except handler falls back to PyTorch (or swallows a failed build): whether "
                                   "the kernel did the work is measured (no_kernel_ran, low_coverage)",
         TORCH_FALLBACK),
    Rule("concurrency", "reject", "streams, threads or processes: work the timer might not wait for"),
    Rule("patching", "reject", "assigns to attributes of modules (torch, time, ...), sys.modules or the harness"),
    Rule("introspection", "reject", "gc, inspect, frames, globals, the profiler's state or dynamic code (exec, "
                                    "eval, __import__)"),
    Rule("tensor-subclass", "reject", "a torch.Tensor subclass or __torch_function__ / __torch_dispatch__"),
    Rule("io", "reject", "network, environment or stdin access, or pickled tensors (torch.load / torch.save)"),
    Rule("torch-ops", "flag", "PyTorch compute ops in forward: part of the work is not a custom kernel", TORCH_OPS),
)}


@dataclass(frozen=True)
class Finding:
    rule: str
    line: int
    detail: str

    def describe(self) -> str:
        return f"[{self.rule}] line {self.line}: {self.detail} ({RULES[self.rule].reason})"


@dataclass(frozen=True)
class Verdict:
    findings: tuple[Finding, ...]

    @property
    def rejections(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if RULES[f.rule].policy == "reject")

    @property
    def flags(self) -> tuple[str, ...]:
        """Result flags from flag-policy rules (torch-ops -> torch_ops)."""
        return merge_flags([flag for f in self.findings if (flag := RULES[f.rule].flag)])

    def message(self) -> str:
        return "rejected by static rules:\n" + "\n".join(f.describe() for f in self.rejections)


CONCURRENT_MODULES = {"threading", "_thread", "multiprocessing", "concurrent", "asyncio", "subprocess",
                      "torch.multiprocessing"}
CONCURRENT_NAMES = {"torch.cuda.Stream", "torch.cuda.stream", "torch.cuda.ExternalStream", "torch.cuda.set_stream",
                    "torch.Stream", "torch.stream", "torch.cpu.Stream", "os.fork", "os.forkpty", "os.system",
                    "os.popen", "os.posix_spawn", "os.spawnv", "os.spawnl", "os.execv", "os.execl"}
INTROSPECTION_MODULES = {"gc", "inspect", "ctypes", "importlib", "builtins", "code", "codeop", "types",
                         "pickle", "marshal", "dill", "weakref", "tracemalloc"}
INTROSPECTION_CALLS = {"exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint"}
INTROSPECTION_ATTRS = {"__globals__", "__code__", "__closure__", "__builtins__", "__subclasses__", "__dict__",
                       "__mro__", "__bases__", "f_back", "f_locals", "f_globals", "f_code", "gi_frame", "tb_frame",
                       "cr_frame", "_getframe", "settrace", "setprofile", "gettrace", "getprofile",
                       "_current_frames", "__reduce__", "__reduce_ex__", "__class__"}
# Coverage is measured in one call under the profiler (eval/kernel_use.py): a candidate must not tell when.
PROFILER_NAMES = ("torch.profiler", "torch.autograd.profiler", "torch.autograd.profiler_util", "torch._C._autograd",
                  "torch._C._profiler", "torch.autograd._profiler_enabled")
HARNESS_MODULES = {"harness", "reference_problem"}
# Files are allowed: real answers write headers and sources and build them with load(), and the evaluation
# child holds nothing secret on disk (its spec arrives off disk, its cwd is a private scratch directory).
IO_MODULES = {"socket", "socketserver", "ssl", "urllib", "urllib3", "http", "requests", "httpx", "aiohttp",
              "websocket", "websockets", "ftplib", "smtplib", "poplib", "imaplib", "telnetlib", "xmlrpc",
              "sqlite3", "mmap"}
IO_CALLS = {"input", "os.getenv", "os.putenv", "os.unsetenv", "os.getenvb", "torch.load", "torch.save",
            "numpy.load", "numpy.save"}
# Environment variables a candidate may set for its own build (common in real answers; never secrets).
BUILD_VARIABLES = {"TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "CUDA_HOME", "CXX", "CC", "NVCC_APPEND_FLAGS",
                   "TORCH_EXTENSIONS_DIR", "OMP_NUM_THREADS"}
# Torch calls that move, shape, allocate or describe data: glue around a kernel, not compute.
GLUE = {
    "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like", "full", "full_like",
    "tensor", "as_tensor", "from_numpy", "arange", "view", "view_as", "reshape", "reshape_as", "contiguous",
    "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "expand_as", "narrow",
    "select", "split", "chunk", "unbind", "size", "dim", "numel", "stride", "storage_offset", "data_ptr",
    "element_size", "is_contiguous", "to", "cuda", "cpu", "float", "half", "bfloat16", "double", "int", "long",
    "bool", "type_as", "detach", "clone", "copy_", "zero_", "fill_", "new_empty", "new_zeros", "new_ones",
    "new_full", "new_tensor", "item", "tolist", "get_device", "cat", "stack", "as_strided", "movedim", "no_grad",
    "inference_mode", "enable_grad", "manual_seed", "is_tensor", "is_floating_point", "result_type", "broadcast_to",
    "finfo", "iinfo", "device", "dtype", "Size", "Generator", "set_grad_enabled", "get_default_dtype",
    "is_grad_enabled", "resize_", "requires_grad_", "register_buffer", "register_parameter", "Parameter",
}
TORCH_NAMESPACES = ("torch.", "torch.nn.functional.", "torch.linalg.", "torch.fft.", "torch.special.")
NOT_COMPUTE_NAMESPACES = ("torch.cuda.", "torch.utils.", "torch.backends.", "torch.library.", "torch.testing.",
                          "torch.nn.init.", "torch.ops.")
# Tensor methods that compute (called on anything that is not a kernel module): the common ones.
TENSOR_COMPUTE_METHODS = {
    "sum", "mean", "var", "std", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "logsumexp",
    "cumsum", "cumprod", "cummax", "cummin", "softmax", "log_softmax", "matmul", "mm", "bmm", "addmm", "baddbmm",
    "relu", "gelu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "pow", "abs", "neg", "clamp", "clamp_min",
    "clamp_max", "add", "sub", "mul", "div", "add_", "sub_", "mul_", "div_", "relu_", "clamp_", "masked_fill",
    "masked_fill_", "where", "gather", "scatter", "scatter_add", "index_select", "flip", "roll", "sort", "topk",
    "einsum", "conv2d", "linear", "layer_norm", "exp_", "sign", "floor", "ceil", "round", "reciprocal", "erf",
    "sin", "cos", "maximum", "minimum", "all", "any", "eq", "ne", "lt", "gt", "le", "ge", "triu", "tril", "diff",
    "outer", "dot", "mv", "addcmul", "lerp", "nan_to_num", "square", "logical_and", "logical_or", "count_nonzero",
}
NN_NOT_COMPUTE = {"Module", "ModuleList", "ModuleDict", "Parameter", "ParameterList", "ParameterDict",
                  "Sequential", "Identity", "Buffer"}
class _Checker:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.index = source_graph.Index(tree)
        self.graph = source_graph.graph(tree, self.index)
        self.kernel_modules = source_graph.kernel_modules(tree, self.index)
        self.findings: list[Finding] = []

    def add(self, rule: str, node: ast.AST, detail: str) -> None:
        self.findings.append(Finding(rule, getattr(node, "lineno", 0), detail))

    def run(self) -> Verdict:
        self.imports()
        for node in ast.walk(self.tree):
            self.node(node)
        self.kernel_use()
        unique = {(f.rule, f.line): f for f in reversed(self.findings)}  # one finding per rule and line
        return Verdict(tuple(sorted(unique.values(), key=lambda f: (f.line, f.rule))))

    def imports(self) -> None:
        for node in ast.walk(self.tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if isinstance(node, ast.ImportFrom) and node.level:
                self.add("patching", node, "a relative import reaches into the harness's package")
            for name in names:
                top = name.split(".")[0]
                if top in CONCURRENT_MODULES or name in CONCURRENT_MODULES:
                    self.add("concurrency", node, f"imports {name}")
                elif top in INTROSPECTION_MODULES or name.startswith(PROFILER_NAMES):
                    self.add("introspection", node, f"imports {name}")
                elif top in HARNESS_MODULES:
                    self.add("patching", node, f"imports {name}")
                elif top in IO_MODULES:  # sys itself is harmless: sys.modules and frames are checked where used
                    self.add("io", node, f"imports {name}")

    def node(self, node: ast.AST) -> None:
        if isinstance(node, ast.Call):
            self.call(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                self.assignment(node, target)
        elif isinstance(node, ast.Attribute):
            self.attribute(node)
        elif isinstance(node, ast.Name):
            if node.id in ("__builtins__", "__loader__", "__spec__"):
                self.add("introspection", node, f"uses {node.id}")
            elif node.id == "Model" and isinstance(node.ctx, ast.Load):
                self.add("reference-model", node, "uses the reference's name Model")
        elif isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            self.tensor_subclass(node)
        elif isinstance(node, ast.Try):
            self.try_block(node)

    def tensor_subclass(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A class deriving from torch.Tensor, or a definition of a tensor subclass's hooks."""
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                if self.index.qualname(base) in ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase"):
                    self.add("tensor-subclass", node, f"class {node.name}({ast.unparse(base)})")
        elif node.name in ("__torch_function__", "__torch_dispatch__"):
            self.add("tensor-subclass", node, f"defines {node.name}")

    def call(self, node: ast.Call) -> None:
        name = self.index.qualname(node.func)
        bare = node.func.id if isinstance(node.func, ast.Name) else None
        if name in CONCURRENT_NAMES or (name and name.split(".")[0] in CONCURRENT_MODULES):
            self.add("concurrency", node, f"calls {name}")
        if bare in INTROSPECTION_CALLS:
            self.add("introspection", node, f"calls {bare}()")
        if bare in ("setattr", "delattr") and node.args and not _is_self(node.args[0]):
            self.add("patching", node, f"{bare}() on {ast.unparse(node.args[0])}")
        if bare == "getattr" and node.args and self.index.is_module_ref(node.args[0]) and \
                not (len(node.args) > 1 and isinstance(node.args[1], ast.Constant)):
            self.add("introspection", node, f"getattr() with a computed name on {ast.unparse(node.args[0])}")
        if bare in IO_CALLS or name in IO_CALLS:
            self.add("io", node, f"calls {name or bare}()")
        if name and name.startswith("os.environ") and not self.build_variable_write(node):
            self.add("io", node, f"reads {ast.unparse(node.func)}")

    def attribute(self, node: ast.Attribute) -> None:
        name = self.index.qualname(node)
        if node.attr in INTROSPECTION_ATTRS:
            self.add("introspection", node, f"uses .{node.attr}")
        elif name and name.startswith(PROFILER_NAMES):
            self.add("introspection", node, f"uses {name} (whether the profiler is on)")
        elif name in ("sys.modules", "sys.meta_path", "sys.path_hooks"):
            self.add("patching", node, f"uses {name}")
        elif name in CONCURRENT_NAMES:
            self.add("concurrency", node, f"uses {name}")
        elif name == "os.environ" and not self.environ_write(node):
            self.add("io", node, "reads os.environ")
        elif name and name.split(".")[-1] in ("_make_subclass", "_make_wrapper_subclass"):
            self.add("tensor-subclass", node, f"uses {name}")

    def assignment(self, stmt: ast.AST, target: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.assignment(stmt, element)
        elif isinstance(target, ast.Starred):
            self.assignment(stmt, target.value)
        elif isinstance(target, ast.Attribute) and (
                self.index.is_module_ref(target.value)  # torch.relu = ..., time.perf_counter = ...
                or (isinstance(target.value, ast.Call) and self.index.is_module_ref(target.value.func))):
            self.add("patching", stmt, f"assigns {ast.unparse(target)}")

    def environ_write(self, node: ast.Attribute) -> bool:
        """os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0" (and setdefault of a build variable) are allowed."""
        for parent in ast.walk(self.tree):
            if isinstance(parent, ast.Assign) and any(
                    isinstance(t, ast.Subscript) and t.value is node for t in parent.targets):
                return all(_constant_key(t) in BUILD_VARIABLES for t in parent.targets if isinstance(t, ast.Subscript))
            if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.value is node:
                return self.build_variable_write(parent)
        return False

    def build_variable_write(self, call: ast.Call) -> bool:
        return (isinstance(call.func, ast.Attribute) and call.func.attr in ("setdefault", "__setitem__")
                and bool(call.args) and isinstance(call.args[0], ast.Constant)
                and call.args[0].value in BUILD_VARIABLES)

    def try_block(self, node: ast.Try) -> None:
        def catches_only_import_errors(handler: ast.ExceptHandler) -> bool:
            types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
            return handler.type is not None and all(
                isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError") for t in types)

        handlers = [h for h in node.handlers if not catches_only_import_errors(h)]
        if not handlers:
            return
        if KERNEL in source_graph.names(ast.Module(body=node.body, type_ignores=[]), self.index) and not all(
                any(isinstance(s, ast.Raise) for s in ast.walk(h)) for h in handlers):
            self.add("torch-fallback", node, "a kernel build inside try/except that does not re-raise")
        for handler in handlers:
            for call in ast.walk(handler):
                if isinstance(call, ast.Call) and self.compute(call):
                    self.add("torch-fallback", handler, f"except handler calls {ast.unparse(call.func)}")
                    return

    def compute(self, call: ast.Call) -> bool:
        """A PyTorch compute op: torch.X / F.X / an nn layer / a tensor method, not glue, not our kernel."""
        name = self.index.qualname(call.func)
        if name:
            if name.startswith(NOT_COMPUTE_NAMESPACES) or name in KERNEL_BUILDERS:
                return False
            if name.startswith("torch.nn.") and not name.startswith("torch.nn.functional."):
                return name.split(".")[-1] not in NN_NOT_COMPUTE
            return name.startswith(TORCH_NAMESPACES) and name.split(".")[-1] not in GLUE and \
                not name.split(".")[-1][:1].isupper()
        if isinstance(call.func, ast.Attribute) and call.func.attr in TENSOR_COMPUTE_METHODS:
            return not (source_graph.receiver_names(call.func.value) & self.kernel_modules)
        return False

    def kernel_use(self) -> None:
        if KERNEL not in source_graph.names(self.tree, self.index):
            self.add("no-kernel", self.tree.body[0] if self.tree.body else self.tree,
                     "no load_inline / load call and no triton.jit function")
            return
        entry = source_graph.entry(self.tree)
        if entry is None:
            return
        if entry.why:
            self.add("entry-point", entry.node, f"ModelNew is {entry.why}; define `class ModelNew(nn.Module)` (or "
                                                "bind ModelNew to a class defined above it)")
            return
        forward = entry.forward
        if forward is None:
            self.add("kernel-unused", entry.classes[0], "ModelNew defines no forward")
            return
        if not source_graph.reaches_kernel(source_graph.names(forward, self.index), self.graph):
            self.add("kernel-unused", forward, "forward computes without calling the compiled kernel")
        self.torch_ops(forward, entry.classes)

    def torch_ops(self, forward: ast.AST, classes: tuple[ast.ClassDef, ...]) -> None:
        """PyTorch compute in what forward runs: torch calls, ModelNew's nn layers, @."""
        nn_layers = {k: v for cls in reversed(classes) for k, v in self.nn_layers(cls).items()}
        for fn in source_graph.reachable_defs(forward, self.tree, self.index):
            for call in ast.walk(fn):
                if not isinstance(call, ast.Call):
                    continue
                if self.compute(call):
                    self.add("torch-ops", call, f"calls {ast.unparse(call.func)}")
                elif isinstance(call.func, ast.Attribute) and _is_self(call.func.value) and call.func.attr in nn_layers:
                    self.add("torch-ops", call, f"calls self.{call.func.attr} ({nn_layers[call.func.attr]})")
                elif isinstance(call.func, ast.Call) and self.index.qualname(call.func.func) and \
                        self.compute(call.func):  # nn.ReLU()(x)
                    self.add("torch-ops", call, f"calls {ast.unparse(call.func)}")
            for sub in ast.walk(fn):
                if isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.MatMult):
                    self.add("torch-ops", sub, "uses @ (a PyTorch matmul)")

    def nn_layers(self, cls: ast.ClassDef) -> dict[str, str]:
        """self.X = nn.Linear(...) in ModelNew: calling self.X runs PyTorch."""
        layers = {}
        for node in ast.walk(cls):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and self.compute(node.value):
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and _is_self(target.value):
                        layers[target.attr] = ast.unparse(node.value.func)
        return layers


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _constant_key(target: ast.Subscript) -> object:
    return target.slice.value if isinstance(target.slice, ast.Constant) else None


def check(source: str) -> Verdict:
    """The rules' verdict on a candidate's source (which must parse: see static.precheck)."""
    return _Checker(ast.parse(source)).run()
