"""Static integrity rules: read the candidate's syntax tree (never regexes over its text) for the
known ways to fake a speedup. Each rule has an id, a policy and a one-line reason:

  reject  the candidate is not built or run; its status is `rejected`
  flag    it is evaluated, and the flag goes with its result (shown, still counted)

Rules are conservative about what they forbid: benign code (`try/except ImportError`, torch glue
such as `empty`, `view`, `contiguous`, helper functions and classes) passes. What they cannot see,
for example work hidden in the C++ or CUDA source, is left to the runtime defenses of the worker.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Literal

from harness.types import merge_flags

Policy = Literal["reject", "flag"]


@dataclass(frozen=True)
class Rule:
    id: str
    policy: Policy
    reason: str


RULES: dict[str, Rule] = {rule.id: rule for rule in (
    Rule("no-kernel", "reject", "builds no custom kernel (load_inline, load or a triton.jit function)"),
    Rule("kernel-unused", "reject", "ModelNew.forward never reaches the compiled kernel"),
    Rule("reference-model", "reject", "ModelNew subclasses, builds or calls the reference Model"),
    Rule("torch-fallback", "reject", "an except handler falls back to PyTorch (or swallows a failed build)"),
    Rule("concurrency", "reject", "streams, threads or processes: work the timer might not wait for"),
    Rule("patching", "reject", "assigns to attributes of modules (torch, time, ...), sys.modules or the harness"),
    Rule("introspection", "reject", "gc, inspect, frames, globals or dynamic code (exec, eval, __import__)"),
    Rule("tensor-subclass", "reject", "a torch.Tensor subclass or __torch_function__ / __torch_dispatch__"),
    Rule("io", "reject", "network, environment or stdin access, or pickled tensors (torch.load / torch.save)"),
    Rule("torch-ops", "flag", "PyTorch compute ops in forward: part of the work is not a custom kernel"),
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
        """Result flags from flag-policy rules: the rule id with `_` for `-` (torch-ops -> torch_ops)."""
        return merge_flags([f.rule.replace("-", "_") for f in self.findings if RULES[f.rule].policy == "flag"])

    def message(self) -> str:
        return "rejected by static rules:\n" + "\n".join(f.describe() for f in self.rejections)


KERNEL_BUILDERS = {"torch.utils.cpp_extension.load_inline", "torch.utils.cpp_extension.load",
                   "triton.jit", "triton.autotune", "cupy.RawKernel", "cupy.RawModule", "numba.cuda.jit"}
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
                       "cr_frame", "_getframe", "settrace", "setprofile", "_current_frames", "__reduce__",
                       "__reduce_ex__", "__class__"}
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
KERNEL = "<kernel>"  # graph node every kernel build reaches


class _Index(ast.NodeVisitor):
    """Imports (alias -> qualified name) and an identifier graph (name -> names its definition mentions)."""

    def __init__(self, tree: ast.Module):
        self.aliases: dict[str, str] = {}
        self.modules: set[str] = set()  # qualified names bound by imports
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                    self.modules.add(a.name)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    self.aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        self.aliases = {k: _canonical(v) for k, v in self.aliases.items()}

    def qualname(self, node: ast.AST) -> str | None:
        """`F.relu` -> torch.nn.functional.relu, when the chain starts at an imported name."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.aliases:
            return ".".join([self.aliases[node.id], *reversed(parts)])
        return None

    def is_module_ref(self, node: ast.AST) -> bool:
        """An expression naming an imported module or something inside one (not a local object)."""
        return self.qualname(node) is not None


def _canonical(name: str) -> str:
    return "numpy" + name[5:] if name == "numpy" or name.startswith("numpy.") else name


def _names(node: ast.AST, index: _Index) -> set[str]:
    """Identifiers an expression or body mentions; `torch.relu` mentions torch, not relu."""
    found: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            found.add(sub.id)
        elif isinstance(sub, ast.Attribute) and not index.is_module_ref(sub.value):
            found.add(sub.attr)
        elif isinstance(sub, ast.Call) and index.qualname(sub.func) in KERNEL_BUILDERS:
            found.add(KERNEL)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                index.qualname(d.func if isinstance(d, ast.Call) else d) in KERNEL_BUILDERS
                for d in sub.decorator_list):
            found.add(KERNEL)
    return found


def _graph(tree: ast.Module, index: _Index) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}

    def add(name: str, node: ast.AST) -> None:
        graph.setdefault(name, set()).update(_names(node, index))

    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            add(node.name, node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        add(t.id, node.value)
                    elif isinstance(t, ast.Attribute):  # self.ext = ext
                        add(t.attr, node.value)
    return graph


def _reaches_kernel(start: Iterable[str], graph: dict[str, set[str]]) -> bool:
    seen, todo = set(), list(start)
    while todo:
        name = todo.pop()
        if name == KERNEL:
            return True
        if name not in seen:
            seen.add(name)
            todo.extend(graph.get(name, ()))
    return False


def _receiver_names(node: ast.AST) -> set[str]:
    """`ext`, `self.ext`, `self.ext_mod` -> the names that may hold an extension module."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.Attribute):
        return {node.attr} | _receiver_names(node.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return {node.func.id}  # _get_ext().relu(x)
    return set()


def _aliased(value: ast.AST) -> set[str]:
    """What a binding's value is another name for: `ext`, `self.ext`, or the result of `get_ext()`."""
    if isinstance(value, (ast.Name, ast.Attribute)):
        return _receiver_names(value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return {value.func.id}
    return set()


def _kernel_modules(tree: ast.Module, index: _Index) -> set[str]:
    """Names bound to a built extension (`ext = load_inline(...)`, `self.ext = ext`, a lazy getter)."""
    def builds(node: ast.AST) -> bool:
        return any(isinstance(c, ast.Call) and index.qualname(c.func) in KERNEL_BUILDERS for c in ast.walk(node))

    bindings: list[tuple[str, ast.AST]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, (ast.Name, ast.Attribute)):
                    bindings.append((target.id if isinstance(target, ast.Name) else target.attr, node.value))
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for ret in ast.walk(node):
                if isinstance(ret, ast.Return) and ret.value is not None:
                    bindings.append((node.name, ret.value))
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in bindings:
            if name not in found and (builds(value) or _aliased(value) & found):
                found.add(name)
                changed = True
    return found


def _model_new(tree: ast.Module) -> ast.ClassDef | None:
    return next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelNew"), None)


def _method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
                None)


def _reachable_defs(cls: ast.ClassDef, tree: ast.Module, index: _Index) -> list[ast.AST]:
    """forward and the functions and methods it reaches by name: the code a timed call runs."""
    defs: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs.setdefault(node.name, []).append(node)
    forward = _method(cls, "forward")
    if forward is None:
        return []
    seen: set[int] = set()
    out: list[ast.AST] = []
    todo: list[ast.AST] = [forward]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        out.append(node)
        for name in _names(node, index):
            todo.extend(defs.get(name, ()))
    return out


class _Checker:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.index = _Index(tree)
        self.graph = _graph(tree, self.index)
        self.kernel_modules = _kernel_modules(tree, self.index)
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
                elif top in INTROSPECTION_MODULES:
                    self.add("introspection", node, f"imports {name}")
                elif top in HARNESS_MODULES:
                    self.add("patching", node, f"imports {name}")
                elif top in IO_MODULES:  # sys itself is harmless: sys.modules and frames are checked where used
                    self.add("io", node, f"imports {name}")

    def node(self, node: ast.AST) -> None:
        q = self.index.qualname
        if isinstance(node, ast.Call):
            name = q(node.func)
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
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                self.assignment(node, target)
        elif isinstance(node, ast.Attribute):
            name = q(node)
            if node.attr in INTROSPECTION_ATTRS:
                self.add("introspection", node, f"uses .{node.attr}")
            elif name in ("sys.modules", "sys.meta_path", "sys.path_hooks"):
                self.add("patching", node, f"uses {name}")
            elif name in CONCURRENT_NAMES:
                self.add("concurrency", node, f"uses {name}")
            elif name == "os.environ" and not self.environ_write(node):
                self.add("io", node, "reads os.environ")
            elif name and name.split(".")[-1] in ("_make_subclass", "_make_wrapper_subclass"):
                self.add("tensor-subclass", node, f"uses {name}")
        elif isinstance(node, ast.Name):
            if node.id in ("__builtins__", "__loader__", "__spec__"):
                self.add("introspection", node, f"uses {node.id}")
            elif node.id == "Model" and isinstance(node.ctx, ast.Load):
                self.add("reference-model", node, "uses the reference's name Model")
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                if q(base) in ("torch.Tensor", "torch._C.TensorBase", "torch._C._TensorBase"):
                    self.add("tensor-subclass", node, f"class {node.name}({ast.unparse(base)})")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in ("__torch_function__", "__torch_dispatch__"):
                self.add("tensor-subclass", node, f"defines {node.name}")
        elif isinstance(node, ast.Try):
            self.try_block(node)

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
        if KERNEL in _names(ast.Module(body=node.body, type_ignores=[]), self.index) and not all(
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
            return not (_receiver_names(call.func.value) & self.kernel_modules)
        return False

    def kernel_use(self) -> None:
        if KERNEL not in _names(self.tree, self.index):
            self.add("no-kernel", self.tree.body[0] if self.tree.body else self.tree,
                     "no load_inline / load call and no triton.jit function")
            return
        cls = _model_new(self.tree)
        if cls is None:
            return
        forward = _method(cls, "forward")
        if forward is None:
            self.add("kernel-unused", cls, "ModelNew defines no forward")
            return
        if not _reaches_kernel(_names(forward, self.index), self.graph):
            self.add("kernel-unused", forward, "forward computes without calling the compiled kernel")
        nn_layers = self.nn_layers(cls)
        for fn in _reachable_defs(cls, self.tree, self.index):
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
