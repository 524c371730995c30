"""The training corpus as Triton kernels (tests/training_corpus.py, cuda): each case is the Triton reference for
level1/layer_norm_training (solutions/reference/triton/level1/layer_norm_training.py) with its docstring replaced and
a few edits, written out as a candidate file. The reference's text is the one place its kernels live; an edit that
no longer finds its text fails loudly instead of testing something else."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "solutions/reference/triton/level1/layer_norm_training.py"


@dataclass(frozen=True)
class Edit:
    """`old`, found exactly once, replaced by `new`; with `through`, the span from `old` to the end of the first
    `through` after it."""

    old: str
    new: str
    through: str = ""

    def apply(self, text: str) -> str:
        assert text.count(self.old) == 1, f"the reference no longer holds {self.old!r} exactly once"
        start = text.index(self.old)
        end = start + len(self.old)
        if self.through:
            end = text.index(self.through, end) + len(self.through)
        return text[:start] + self.new + text[end:]


@dataclass(frozen=True)
class Variant:
    about: str  # its docstring: what it does, and the verdict it must get
    edits: tuple[Edit, ...] = ()


APPLY = "        return LayerNormFunction.apply(x, self.ln.weight, self.ln.bias, self.ln.eps)\n"
RETURN_GRADS = "        return dx.view(ctx.shape), dw, db, None\n"

VARIANTS = {
    "honest": Variant("""\
The Triton reference's kernels (solutions/reference/triton/level1/layer_norm_training.py), for
level1/layer_norm_training: a torch.autograd.Function whose forward and backward are its own Triton kernels (a
row-held forward, a backward writing x's gradient and partial sums of the weight's and bias's, a column-sum kernel;
looped kernels for rows longer than 8192). Must be: correct, both halves its own (no low_backward_coverage)."""),
    "straight_through": Variant("""\
The honest Triton forward, the backward left to autograd: the value is the kernel's, the gradient flows
through an eager layer_norm added and subtracted (out = kernel(x) + (eager(x) - eager(x).detach()), the
kernel's inputs detached), so the backward kernels never run. Must be: correct, flagged low_backward_coverage.""", (
        Edit(APPLY, """\
        eager = torch.nn.functional.layer_norm(x, x.shape[-1:], self.ln.weight, self.ln.bias, self.ln.eps)
        out = LayerNormFunction.apply(x.detach(), self.ln.weight.detach(), self.ln.bias.detach(), self.ln.eps)
        return out + (eager - eager.detach())
"""),)),
    "grad_on_reference": Variant("""\
The honest Triton forward in a torch.autograd.Function whose backward calls torch.autograd.grad on the eager
reference (nn.functional.layer_norm); the backward kernels are left unused. Must be: correct, flagged
low_backward_coverage.""", (
        Edit("        ctx.save_for_backward(x2, w, mean, rstd)\n        ctx.shape = shape\n",
             "        ctx.save_for_backward(x, weight, bias)\n        ctx.eps = eps\n"),
        Edit("        x2, w, mean, rstd = ctx.saved_tensors\n", """\
        x, w, b = ctx.saved_tensors
        with torch.enable_grad():
            xx, ww, bb = (t.detach().requires_grad_() for t in (x, w, b))
            out = torch.nn.functional.layer_norm(xx, xx.shape[-1:], ww, bb, ctx.eps)
            dx, dw, db = torch.autograd.grad(out, (xx, ww, bb), dy)
        return dx, dw, db, None
""", through=RETURN_GRADS),
    )),
    "zero_param_grads": Variant("""\
The honest Triton kernels, with zero gradients for the weight and the bias (the kernels compute them, the
backward returns zeros). Must be: incorrect, 'the gradient of ln.weight is 0 everywhere'.""", (
        Edit(RETURN_GRADS, "        return dx.view(ctx.shape), torch.zeros_like(dw), torch.zeros_like(db), None\n"),)),
    "cached_grads": Variant("""\
The honest Triton kernels, the backward's results cached by shape across calls: the first call's gradients
are right, every later call (another input, another upstream gradient) returns them again. Must be: incorrect,
'the gradient of x mismatch'.""", (
        Edit("CHUNK = 4096  # chunk of the looped kernels for longer rows\n",
             "CHUNK = 4096  # chunk of the looped kernels for longer rows\n"
             "_CACHE = {}  # the upstream gradient's shape -> the gradients of the first backward\n"),
        Edit("    def backward(ctx, dy):\n",
             "    def backward(ctx, dy):\n        if dy.shape in _CACHE:\n            return _CACHE[dy.shape]\n"),
        Edit(RETURN_GRADS, "        _CACHE[dy.shape] = (dx.view(ctx.shape), dw, db, None)\n"
                           "        return _CACHE[dy.shape]\n"),
    )),
    "public_only": Variant("""\
The honest Triton kernels, but the backward's block hard-coded to 8192, the block of both public row lengths
(8192 as written, 4099 in the public workload one_row), and the weight's and bias's partial rows laid out at
that block's stride while the column-sum kernel reads them at the row's: right where the two agree (rows of
8192) or where there is one partial row (one row), wrong for the held-out row counts and lengths up to 8192.
Must be: incorrect, on a 'held-out workload'.""", (
        Edit("CHUNK = 4096", "PUBLIC_BLOCK = 8192  # next_power_of_2 of the public row lengths, 8192 and 4099\n"
                             "CHUNK = 4096"),
        Edit("    part = pid.to(tl.int64) * n_cols\n",
             "    part = pid.to(tl.int64) * BLOCK  # the partials' stride: the block, not the row\n"),
        Edit("""\
            block = triton.next_power_of_2(n_cols)
            programs = min(n_rows, PROGRAMS_PER_SM * _sm_count(x2.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
            pb = torch.empty((n_parts, n_cols), dtype=torch.float32, device=x2.device)
""", """\
            block = PUBLIC_BLOCK
            programs = min(n_rows, PROGRAMS_PER_SM * _sm_count(x2.device))
            rows_per_program = triton.cdiv(n_rows, programs)
            n_parts = triton.cdiv(n_rows, rows_per_program)
            pw = torch.zeros((n_parts, block), dtype=torch.float32, device=x2.device)
            pb = torch.zeros((n_parts, block), dtype=torch.float32, device=x2.device)
"""),
    )),
    "detached": Variant("""\
The honest Triton kernels, the autograd.Function applied under torch.no_grad(): the output has no gradient.
Must be: incorrect, 'does not require grad'.""", (
        Edit(APPLY, "        with torch.no_grad():\n    " + APPLY),)),
    "renamed_params": Variant("""\
The honest Triton kernels, the parameters held as ModelNew.weight and ModelNew.bias instead of Model's
ln.weight and ln.bias. Must be: incorrect, 'Model has ln.weight (8192,), ln.bias (8192,); ModelNew has weight'.""", (
        Edit("""\
        self.ln = nn.LayerNorm(hidden)
        nn.init.uniform_(self.ln.weight, 0.5, 1.5)
        nn.init.uniform_(self.ln.bias, -0.5, 0.5)
""", """\
        ln = nn.LayerNorm(hidden)
        nn.init.uniform_(ln.weight, 0.5, 1.5)
        nn.init.uniform_(ln.bias, -0.5, 0.5)
        self.weight, self.bias, self.eps = ln.weight, ln.bias, ln.eps
"""),
        Edit(APPLY, "        return LayerNormFunction.apply(x, self.weight, self.bias, self.eps)\n"),
    )),
}


def source(name: str) -> str:
    """Case `name`'s candidate: the reference's code after its docstring, with the case's docstring and edits."""
    reference = REFERENCE.read_text()
    assert reference.startswith('"""')
    text = f'"""{VARIANTS[name].about}"""' + reference[reference.index('"""', 3) + 3:]
    for edit in VARIANTS[name].edits:
        text = edit.apply(text)
    return text


def write(directory: Path, names: list[str]) -> list[Path]:
    """The cases' candidate files in `directory`, named after them."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / f"{name}.py" for name in names]
    for name, path in zip(names, paths, strict=True):
        path.write_text(source(name))
    return paths
