"""Chat messages from jinja2 templates: prompts/<kind>/{system,first_turn,feedback}.j2 + a worked example, where
the kind is the target (cuda, cpu) for load_inline answers and `triton` for Triton answers on either target."""

from __future__ import annotations

from pathlib import Path

import jinja2

from harness.checks import TRUTH, CheckSpec
from harness.data import prompts_root
from harness.errors import InputError
from harness.eval.build import error_lines
from harness.problems.workload_file import public_source
from harness.types import Backend, EvalResult, Problem, Target, TargetFacts

DEFAULT_DIR = prompts_root()
TEMPLATES = ("system.j2", "first_turn.j2", "feedback.j2")
EXAMPLES = ("example_problem.py", "example_solution.py")
TRAINING_EXAMPLES = ("training_problem.py", "training_solution.py")  # the worked example for training problems


class PromptError(InputError, ValueError):
    """A prompt directory or template that cannot be used."""


class Prompts:
    """The templates of one target and backend. Undefined variables are errors, never silently empty text."""

    def __init__(self, target: Target, directory: Path | None = None, backend: Backend = "cuda"):
        self.directory = Path(directory or DEFAULT_DIR).resolve()
        self.kind = "triton" if backend == "triton" else target
        missing = [f"{self.kind}/{name}" for name in TEMPLATES + EXAMPLES + TRAINING_EXAMPLES
                   if not (self.directory / self.kind / name).is_file()]
        if missing:
            raise PromptError(f"prompt directory {self.directory} lacks {', '.join(missing)} "
                              f"(copy {DEFAULT_DIR} and edit it)")
        self.env = jinja2.Environment(loader=jinja2.FileSystemLoader(self.directory), autoescape=False,
                                      undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
        self.examples = {training: tuple((self.directory / self.kind / name).read_text() for name in names)
                         for training, names in ((False, EXAMPLES), (True, TRAINING_EXAMPLES))}

    def _render(self, name: str, **variables) -> str:
        path = f"{self.kind}/{name}"
        try:
            return self.env.get_template(path).render(**variables).strip() + "\n"
        except jinja2.TemplateError as exc:
            where = f"{exc.filename or path}:{exc.lineno}" if isinstance(exc, jinja2.TemplateSyntaxError) else path
            raise PromptError(f"prompt template {where} ({self.directory}): {type(exc).__name__}: {exc}") from None

    def first_messages(self, problem: Problem, facts: TargetFacts, dtype: str = "float32",
                       check: CheckSpec = TRUTH) -> list[dict[str, str]]:
        """The system prompt and the first user turn for a problem, evaluated in `dtype` and judged by `check`. The
        source shown leaves WORKLOADS out: the public workloads are listed, the held-out ones only counted."""
        atol, rtol = check.tolerances(dtype, problem.atol, problem.rtol)
        public = [dict(name=w.name, about=w.about, timed=w.timed,
                       constants=", ".join(f"{c} = {v}" for c, v in w.shown().items())
                       + (f"; floating inputs x {w.scale:g} + {w.shift:g}" if w.distribution != (1.0, 0.0) else ""))
                  for w in problem.workloads[1:] if w.public]
        user = self._render("first_turn.j2", problem=problem, facts=facts, dtype=dtype, check=check,
                            atol=f"{atol:g}", rtol=f"{rtol:g}", public_workloads=public,
                            held_out=sum(w.held_out for w in problem.workloads),
                            reference_source=public_source(problem.source, problem.workloads),
                            example_problem=self.examples[problem.training][0],
                            example_solution=self.examples[problem.training][1])
        return [{"role": "system", "content": self._render("system.j2", facts=facts)},
                {"role": "user", "content": user}]

    def feedback(self, result: EvalResult, turns_left: int, sol_fraction: float | None = None) -> dict[str, str]:
        """The user turn that reports an evaluation and asks for a better version; `sol_fraction`, the share of
        the speed of light its time reaches (eval/context.py), where the problem's bytes or FLOPs are known."""
        check = result.check
        build_log = result.build.log if result.build and result.build.status == "compile_error" else ""
        content = self._render(
            "feedback.j2", status=result.status, error=result.error, flags=list(result.flags),
            runtime_ms=result.runtime_ms, ref_runtime_ms=result.ref_runtime_ms, speedup=result.speedup,
            sol_fraction=sol_fraction if result.status == "correct" else None,
            coverage=result.coverage.feedback() if result.coverage and result.status == "correct" else "",
            compiler_errors=error_lines(build_log) if build_log else "",
            max_abs_err=check.max_abs_err if check else None, max_rel_err=check.max_rel_err if check else None,
            mismatch_fraction=check.mismatch_fraction if check else None, turns_left=turns_left,
            output=result.output if result.status not in ("correct", "compile_error") else "",
            **workload_facts(result))
        return {"role": "user", "content": content}


FAILED = ("incorrect", "runtime_error", "compile_error", "rejected")


def workload_facts(result: EvalResult) -> dict:
    """What feedback says of the workloads: how many it was right on (how many of those held out), and the one it
    failed, a held-out one by its `about` alone (its values never reach the model)."""
    right = [w for w in result.workloads if w.status == "correct"]
    failed = next((w for w in result.workloads if w.status in FAILED and w.name != "default"), None)
    return dict(workloads_checked=len(right), held_out_checked=sum(not w.public for w in right),
                failed_workload=failed and dict(name=failed.name if failed.public else None, about=failed.about,
                                                held_out=not failed.public))
