"""Progress on stderr: a bar on a terminal, one line per finished build and evaluation everywhere."""

from __future__ import annotations

from pathlib import Path

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from harness.api import RunDone, RunEvents
from harness.cli.console import err
from harness.completions import Completion
from harness.eval.phases import Events, Phase, PhaseTook
from harness.report.labels import not_counted, times
from harness.report.leaderboard import STATUS_STYLE
from harness.store import RunUsage
from harness.types import BuildResult, Candidate, DeviceInfo, EvalResult


class ConsoleEvents(Events):
    """A progress bar on a terminal; one line per finished evaluation everywhere (on stderr)."""

    def __init__(self) -> None:
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=err, transient=True, disable=not err.is_terminal)
        self.tasks: dict[str, TaskID] = {}

    def __enter__(self) -> ConsoleEvents:
        self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        self.progress.stop()

    def _task(self, name: str, total: int | None, description: str | None = None) -> None:
        """Create the bar, or restart it (each turn of a run builds and evaluates a new batch)."""
        if name in self.tasks:
            self.progress.reset(self.tasks[name], total=total, description=description or name)
        else:
            self.tasks[name] = self.progress.add_task(description or name, total=total)

    def phase(self, phase: Phase) -> None:
        """A step that makes no result of its own: said as it starts, and again as it ends with what it took."""
        self.progress.console.print(f"[cyan]{escape(phase.announce())}[/]", soft_wrap=True)

    def phase_done(self, phase: Phase, took: PhaseTook) -> None:
        self.progress.console.print(f"[dim]  {escape(phase.doing.split(':')[0])}: done in {took.describe()}[/]",
                                    soft_wrap=True)

    def planned(self, builds: int, evaluations: int) -> None:
        self._task("build", builds)
        self._task("evaluate", evaluations)

    def built(self, candidate: Candidate, build: BuildResult) -> None:
        self.progress.advance(self.tasks["build"])
        how = "cached" if build.cached else f"{build.duration_s:.1f} s"
        label = candidate.path or candidate.sha256[:12]
        self.progress.console.print(f"[dim]build {build.status:<13} {escape(label)} ({how})[/]")

    def evaluated(self, result: EvalResult) -> None:
        # The bar counts evaluations that run; stored and prechecked results arrive before planned().
        bar = next((t for t in self.progress.tasks if t.id == self.tasks.get("evaluate")), None)
        if bar is not None and bar.total is not None and bar.completed < bar.total:
            self.progress.advance(bar.id)
        style = STATUS_STYLE[result.status]
        counted = result.counted or result.status != "correct"  # a flagged result's speed: measured, not counted
        speed = f" {times(result.speedup) if counted else not_counted(result.speedup)}" if result.speedup else ""
        cached = " (cached)" if result.cached else ""
        covered = f" coverage {result.coverage.percent}" if result.coverage else ""
        flags = f" [yellow]\\[{escape(', '.join(result.flags))}][/]" if result.flags else ""
        self.progress.console.print(f"[{style}]{result.status:<13}[/]{speed} {escape(result.problem_id)} "
                                    f"{escape(result.candidate_label)}{cached}{covered}{flags}")


class RunConsoleEvents(ConsoleEvents, RunEvents):
    """Adds the model's side: what the run is, requests per turn, problems finished, tokens and cost so far."""

    def __init__(self, max_memory_gb: float | None = None, results: Path | None = None) -> None:
        super().__init__()
        self.max_memory_gb, self.results = max_memory_gb, results
        self.samples = self.turns = 1
        self.prices: tuple[float, float] | None = None
        self.usage = RunUsage()
        self.remaining: dict[str, int] = {}

    def starting(self, done: RunDone, device: DeviceInfo) -> None:
        config = done.config
        for p in done.too_big:
            err.print(f"[yellow]skipped[/] {escape(p.id)}: needs {p.memory_gb:g} GB "
                      f"(--max-memory-gb {self.max_memory_gb:g})")
        for pid, why in done.unusable.items():
            err.print(f"[yellow]excluded[/] {escape(pid)}: {escape(' '.join(why))} (`harness problems validate "
                      "--static` says more)", soft_wrap=True)
        if done.no_reference:
            err.print(f"[yellow]skipped[/] {len(done.no_reference)} of {len(done.problems) + len(done.no_reference)} "
                      f"problems with no {escape(config.model.removeprefix('offline:'))}/<id>.py: "
                      f"{escape(', '.join(done.no_reference[:6]))}"
                      + (", ..." if len(done.no_reference) > 6 else ""), soft_wrap=True)
        self.samples, self.turns = config.samples, config.turns if done.mode == "run" else 1
        self.prices = config.prices
        err.print(f"[dim]run {done.name}: {escape(config.model)}"
                  + (f" at {escape(config.base_url)}" if config.base_url else "")
                  + f", {len(done.problems)} problems x {config.samples} samples x {self.turns} turns, "
                  f"target {device.target} on {escape(device.name)}"
                  + (f"; results in {self.results}" if self.results else "") + "[/]", soft_wrap=True)
        self._task("problems", len(done.problems), "problems done")

    def requesting(self, turn: int, count: int) -> None:
        self.turn = turn
        self._task("requests", count, self._request_label())

    def _request_label(self) -> str:
        tokens = self.usage.prompt_tokens + self.usage.completion_tokens
        cost = f", {self.usage.cost_label(self.prices)}" if self.prices else ""
        return f"turn {self.turn}/{self.turns} answers ({tokens:,} tokens{cost})"

    def answered(self, completion: Completion) -> None:
        self.usage = self.usage.plus(completion.usage, cached=completion.cached)
        self.progress.update(self.tasks["requests"], advance=1, description=self._request_label())

    def conversation_done(self, problem_id: str) -> None:
        self.remaining[problem_id] = self.remaining.get(problem_id, self.samples) - 1
        if self.remaining[problem_id] == 0:
            self.progress.advance(self.tasks["problems"])
