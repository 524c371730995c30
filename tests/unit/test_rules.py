"""Static integrity rules: each rule fires on its trick, and benign code stays clean."""

import textwrap

import pytest

from harness.eval.rules import RULES, check

HEADER = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline

ext = load_inline(name="k", cpp_sources="torch::Tensor relu(torch::Tensor x);", functions=["relu"])
"""


def findings(body: str, header: str = HEADER) -> set[str]:
    return {f.rule for f in check(textwrap.dedent(header) + textwrap.dedent(body)).findings}


BENIGN = {
    "plain kernel call": """
        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.relu(x.contiguous())
    """,
    "glue, helpers and a stored extension": """
        import os
        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
        os.environ.setdefault("MAX_JOBS", "4")
        try:
            import triton
        except ImportError:
            triton = None

        def launch(mod, x):
            out = torch.empty_like(x)
            return mod.relu(x.view(-1)).view_as(out)

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ext = ext
                self.register_buffer("scale", torch.ones(4))

            def forward(self, x):
                return launch(self.ext, x.reshape(x.size(0), -1))

        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                with torch.no_grad():
                    y = self.block(x).to(x.dtype)
                torch.cuda.synchronize()
                return y.unsqueeze(0).squeeze(0)
    """,
    "lazy build in a getter": """
        _ext = None

        def get_ext():
            global _ext
            if _ext is None:
                _ext = load_inline(name="k2", cpp_sources="", functions=["relu"])
            return _ext

        class ModelNew(nn.Module):
            def forward(self, x):
                return get_ext().relu(x)
    """,
    "kernel method named like a torch op": """
        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.sum(x)
    """,
    # Real answers write their headers and sources and build them with load(): files are not a leak.
    "writing sources and building them with load": """
        import glob
        import io
        import os
        import pathlib
        import shutil
        import tempfile
        from torch.utils.cpp_extension import load

        work = tempfile.mkdtemp()
        os.makedirs(os.path.join(work, "include"), exist_ok=True)
        with open(os.path.join(work, "include", "relu.h"), "w") as f:
            f.write("#pragma once\\n")
        pathlib.Path(work, "relu.cpp").write_text(io.StringIO("// source").getvalue())
        sources = sorted(glob.glob(os.path.join(work, "*.cpp")))
        ext2 = load(name="k3", sources=sources, extra_include_paths=[os.path.join(work, "include")])
        shutil.rmtree(work, ignore_errors=True)

        class ModelNew(nn.Module):
            def forward(self, x):
                return ext2.relu(x)
    """,
}


@pytest.mark.parametrize("name", BENIGN)
def test_benign_code_has_no_findings(name):
    assert findings(BENIGN[name]) == set()


def test_triton_kernel_counts_as_a_kernel():
    source = """
        import torch, triton, triton.language as tl
        import torch.nn as nn

        @triton.jit
        def relu_kernel(x_ptr, n, BLOCK: tl.constexpr):
            pass

        class ModelNew(nn.Module):
            def forward(self, x):
                out = torch.empty_like(x)
                relu_kernel[(1,)](x, x.numel(), BLOCK=1024)
                return out
    """
    assert findings(source, header="") == set()


TRICKS = {
    "no-kernel": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                return torch.relu(x)
    """, "import torch\nimport torch.nn as nn\n"),
    "entry-point": ("""
        class Impl(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        def pick():
            return Impl
        ModelNew = pick()
    """, HEADER),
    "kernel-unused": ("""
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.ext = ext
            def forward(self, x):
                return torch.relu(x)
    """, HEADER),
    "reference-model": ("""
        class Model(nn.Module):
            def forward(self, x):
                return torch.relu(x)
        class ModelNew(Model):
            def forward(self, x):
                ext.relu(x)
                return super().forward(x)
    """, HEADER),
    "torch-fallback": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                try:
                    return ext.relu(x)
                except RuntimeError:
                    return F.relu(x)
    """, HEADER),
    "concurrency": ("""
        class ModelNew(nn.Module):
            def forward(self, x):
                s = torch.cuda.Stream()
                with torch.cuda.stream(s):
                    return ext.relu(x)
    """, HEADER),
    "patching": ("""
        import time
        time.perf_counter = lambda: 0.0
        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.relu(x)
    """, HEADER),
    "introspection": ("""
        import gc
        class ModelNew(nn.Module):
            def forward(self, x):
                gc.collect()
                return ext.relu(x)
    """, HEADER),
    "tensor-subclass": ("""
        class Lazy(torch.Tensor):
            pass
        class ModelNew(nn.Module):
            def forward(self, x):
                return ext.relu(x).as_subclass(Lazy)
    """, HEADER),
    "io": ("""
        import os
        class ModelNew(nn.Module):
            def forward(self, x):
                os.environ.get("OPENAI_API_KEY")
                return ext.relu(x)
    """, HEADER),
    "torch-ops": ("""
        class ModelNew(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def forward(self, x):
                return ext.relu(self.fc(x))
    """, HEADER),
}


@pytest.mark.parametrize("rule", RULES)
def test_every_rule_fires_on_its_trick(rule):
    body, header = TRICKS[rule]
    assert rule in findings(body, header)


@pytest.mark.parametrize("body, rule", [
    ("torch.Tensor.add = lambda a, b: a\n", "patching"),
    ("setattr(torch, 'relu', print)\n", "patching"),
    ("import sys\nsys.modules['time'] = None\n", "patching"),
    ("from harness import timing\n", "patching"),
    ("import threading\n", "concurrency"),
    ("import sys\nf = sys._getframe(1).f_locals\n", "introspection"),
    ("getattr(torch, 're' + 'lu')\n", "introspection"),
    ("exec('x = 1')\n", "introspection"),
    ("import sys\nprofiled = sys.getprofile() is not None\n", "introspection"),  # coverage's call, told apart
    ("profiled = torch.autograd.profiler._is_profiler_enabled\n", "introspection"),
    ("from torch.profiler import profile\n", "introspection"),
    ("import os\nkey = os.environ['OPENAI_API_KEY']\n", "io"),
    ("import os\nkey = os.getenv('OPENAI_API_KEY')\n", "io"),
    ("import socket\n", "io"),
    ("from urllib.request import urlopen\n", "io"),
    ("import sqlite3\n", "io"),
    ("expected = torch.load('expected.pt')\n", "io"),
    ("import os\nos.environ['OPENAI_API_KEY'] = 'x'\n", "io"),
    ("class T(torch.Tensor):\n    @classmethod\n    def __torch_function__(cls, *a, **k):\n        pass\n",
     "tensor-subclass"),
    ("try:\n    ext2 = load_inline(name='k', cpp_sources='')\nexcept Exception:\n    ext2 = None\n", "torch-fallback"),
])
def test_more_tricks(body, rule):
    model_new = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.relu(x)\n"
    assert rule in findings(body + model_new)


def test_torch_compute_in_forward_is_a_flag_not_a_rejection():
    verdict = check(textwrap.dedent(HEADER) + textwrap.dedent("""
        class ModelNew(nn.Module):
            def forward(self, x, w):
                y = ext.relu(x @ w)
                return y.sum(dim=1)
    """))
    assert verdict.rejections == () and verdict.flags == ("torch_ops",)
    assert {f.detail for f in verdict.findings} == {"uses @ (a PyTorch matmul)", "calls y.sum"}


def test_a_guarded_kernel_is_a_flag_running_decides():
    # whether the guarded kernel built and did the work is measured (eval/kernel_use.py), not guessed from syntax
    body, header = TRICKS["torch-fallback"]
    verdict = check(textwrap.dedent(header) + textwrap.dedent(body))
    assert verdict.rejections == () and verdict.flags == ("torch_fallback", "torch_ops")


def test_rejection_message_names_rule_line_and_reason():
    verdict = check(textwrap.dedent(HEADER) + "import gc\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        return ext.relu(x)\n")
    message = verdict.message()
    assert "[introspection] line 8: imports gc" in message and RULES["introspection"].reason in message


ALIASED = textwrap.dedent("""
    class Impl(nn.Module):
        def forward(self, x):
            return {body}
""")


@pytest.mark.parametrize("binding, rules", [
    ("ModelNew = Impl\n", {"kernel-unused", "torch-ops"}),  # was: no finding at all, evaluated and counted
    ("Chosen = Impl\nModelNew = Chosen\n", {"kernel-unused", "torch-ops"}),
    ("class ModelNew(Impl):\n    pass\n", {"kernel-unused", "torch-ops"}),
    ("class ModelNew(nn.Module):\n    def forward(self, x):\n        return ext.relu(x)\nModelNew = Impl\n",
     {"kernel-unused", "torch-ops"}),  # the last binding is what the harness imports
    ("try:\n    ModelNew = Impl\nexcept Exception:\n    ModelNew = None\n", {"entry-point"}),
    ("from elsewhere import ModelNew\n", {"entry-point"}),
    ("ModelNew = type('ModelNew', (Impl,), {})\n", {"entry-point"}),
])
def test_whatever_binds_model_new_is_what_the_rules_inspect(binding, rules):
    assert findings(ALIASED.format(body="torch.relu(x)") + binding) == rules


@pytest.mark.parametrize("binding", ["ModelNew = Impl\n", "class ModelNew(Impl):\n    pass\n",
                                     "class Mid(Impl):\n    pass\nclass ModelNew(Mid):\n    pass\n"])
def test_an_alias_or_a_subclass_of_a_kernel_class_passes(binding):
    assert findings(ALIASED.format(body="ext.relu(x)") + binding) == set()
