"""The judge's check stage, over the problem's workloads (a part of evaluate.Evaluation, whose state it shares):
trials on fresh inputs, each output judged against the reference and its float64 truth (truth.py), the timed
calls' outputs checked again. The problem as written (the default workload) gets every trial, trial 0 on poisoned
memory and run twice; every other workload gets OTHER_TRIALS, its first run twice, a drawn one new values each.

A failure on a held-out workload tells the model its `about` and nothing of its values: the numbers in its
message are masked (the user finds them in the workload's record)."""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable, Iterator
from typing import cast

import torch

from harness.checks import CheckSpec
from harness.child.channel import Shared
from harness.child.check import (
    compare,
    compare_tensor,
    item_name,
    one_thread,
    one_value,
    output_stats,
    seed_sample,
    tensors,
    varies,
)
from harness.child.common import EvalFailure, failing_as, trial_seed
from harness.child.judge_workload import JudgeWorkload, Record, fits
from harness.child.remote import KEPT, Remote
from harness.child.stage_clock import DeviceTurns
from harness.child.truth import Expected, judge
from harness.child.workload import Instance
from harness.protocol import OutputStats, WorkerSpec
from harness.types import HARNESS_ERROR
from harness.workloads import DEFAULT, Workload, WorkloadStatus, mask_numbers

_clock, _clock_ns = time.perf_counter, time.perf_counter_ns  # bound before any candidate code runs
RECHECK_SHARE = 0.1  # share of timed candidate calls whose output is checked again (besides the first two)
OTHER_TRIALS = 2     # trials of every workload but the default
VERDICTS = ("incorrect", "runtime_error", "compile_error", "rejected")


class Checking:
    """The check stage and what it needs: entering a workload, making its inputs and expected outputs, judging."""

    # The state it shares with evaluate.Evaluation, which sets it (in __init__, setup and time).
    spec: WorkerSpec
    problem: Instance  # the problem as written, read before any candidate code ran
    remote: Remote
    turns: DeviceTurns  # when the GPU is this evaluation's alone
    device: torch.device
    dtype: torch.dtype
    sync: Callable[[], object]
    atol: float
    rtol: float
    other: tuple[CheckSpec, float, float] | None  # the other check (`harness audit`) and its tolerances
    other_compared: int
    other_failure: str | None
    wants_truth: bool
    truth_fell_back: bool
    trials_run: int
    rechecked: int
    poisoned_s: float
    check_parts: dict[str, float]
    worst: list[float]
    reference_stats: tuple[OutputStats, ...]
    seed_samples: list[torch.Tensor]
    seed_mismatch: tuple[float, ...] | None
    deferred: list[float]
    copies: list[float]
    copy_buffer: Shared | None
    records: dict[str, Record]
    default: JudgeWorkload
    current: JudgeWorkload | None
    current_key: tuple | None
    draw: random.Random

    def stage_ends(self, name: str) -> None:
        raise NotImplementedError  # Evaluation's: its stage clock

    @property
    def entered(self) -> JudgeWorkload:
        """The current workload: there is one from setup on, but while the next one is made (enter)."""
        assert self.current is not None
        return self.current

    @contextlib.contextmanager
    def part(self, parts: dict[str, float], name: str) -> Iterator[None]:
        started = _clock()
        try:
            yield
        finally:
            parts[name] += _clock() - started

    @contextlib.contextmanager
    def reference_runs(self, what: str) -> Iterator[None]:
        """A failure of the reference is the problem's (the harness's), but for running out of device memory while
        the candidate's process holds it."""
        try:
            with failing_as(f"problem error: {what} failed", HARNESS_ERROR):
                yield
        except EvalFailure as failure:
            if failure.status == HARNESS_ERROR and "OutOfMemoryError" in str(failure):
                raise EvalFailure("runtime_error", f"{failure} (with the candidate's process holding the device's "
                                                   "memory beside it)") from None
            raise

    def inputs(self, label: str) -> list:
        return self.entered.instance.inputs(self.device, self.dtype, self.seed(label))

    def seed(self, label: str) -> int:
        return trial_seed(self.spec.seed, label)

    def check(self) -> None:
        for workload in self.spec.workloads:
            self.check_workload(workload)
        self.stage_ends("check")

    def check_workload(self, workload: Workload) -> None:
        default = workload.name == DEFAULT.name
        record = self.records[workload.name]
        with self.on(record):
            for trial in range(self.spec.trials if default else min(self.spec.trials, OTHER_TRIALS)):
                label = f"trial{trial}" if default else f"{workload.name}-trial{trial}"
                what = self.call_name(workload, f"trial {trial}")
                judged = self.enter(workload, workload.values(self.seed(f"{label}-values")), what)
                if judged is None:
                    record.status = "skipped"
                    return
                record.values, record.trials = judged.values, record.trials + 1
                self.trials_run += 1
                # under a tool (compute-sanitizer) no poisoning: it claims all free memory, which the tool shadows
                poison = default and trial == 0 and not self.spec.instrumented
                record.saw(self.trial(label, what, first=trial == 0, poison=poison, observe=default and trial < 2))
            record.status = "correct"

    def trial(self, label: str, what: str, *, first: bool, poison: bool, observe: bool):
        with self.part(self.check_parts, "inputs_s"):
            inputs = self.inputs(label)
        with self.part(self.check_parts, "reference_s"):
            expected = self.expected(inputs, self.seed(label), observe=self.observe_reference if observe else None)
        del inputs
        # Poison only before trial 0's two runs (defenses.Poison): later trials' inputs are fresh, and nothing has
        # computed on them in the runner before the candidate runs, so its freed memory cannot hold their answers; an
        # output left partly unwritten already fails trial 0 on poisoned memory.
        with self.turns.alone_awhile() if poison else contextlib.nullcontext():
            started = _clock()
            with self.part(self.check_parts, "call_s"):
                out = self.remote.call(self.seed(label), poison, what, expected.reference)
                if first:  # the same input twice: uninitialised memory or races show as disagreement
                    again = self.remote.call(self.seed(label), poison, f"{what}, second run on the same input",
                                             expected.reference)
                    if poison:
                        self.poisoned_s = _clock() - started
        with self.part(self.check_parts, "compare_s"), one_thread(self.device):
            # An output of another shape or dtype than the reference's arrives as a meta tensor (channel.decode),
            # for the judgement below to say so.
            if first and not any(t.device.type == "meta" for t in tensors(out)):
                result = compare(again, out, self.atol, self.rtol)
                if not result.ok:
                    raise EvalFailure("incorrect", "two runs on the same input disagree (uninitialised memory "
                                                   f"or a race): {result.message}", result)
                del again
            result = self.judged(out, expected, what)
        with self.part(self.check_parts, "settled_s"):
            settled = self.remote.settled(what)
        if not settled:
            raise EvalFailure("incorrect", f"{what}: the output changed after forward returned "
                                           "(work still running in the background)")
        return result

    def call_name(self, workload: Workload, call: str) -> str:
        if workload.name == DEFAULT.name:
            return call
        if workload.public:
            return f"workload {workload.name} ({workload.about}), {call}"
        return f"held-out workload ({workload.about}), {call}"

    def enter(self, workload: Workload, values: dict, what: str) -> JudgeWorkload | None:
        """The workload with these values, ready here and in the runner; None where it does not fit the device."""
        key = (workload.name, tuple(sorted(values.items())))
        if key == self.current_key:
            return self.current
        if workload.name == DEFAULT.name:
            judged = self.default
        else:
            # the last workload's models and truth go before the next one's are made (the runner is told at the end)
            self.current, self.current_key = None, None
            with self.reference_runs(f"making workload {workload.name}"):
                instance = self.problem.variant(values, workload.distribution)
                ok, truth_fits, note = fits(instance, self.device, self.dtype, self.spec.training)
                self.records[workload.name].note(note)
                if not ok:
                    return None
                judged = JudgeWorkload(workload, instance, self.device, self.dtype, self.seed("init"),
                                       truth=self.wants_truth and truth_fits, training=self.spec.training)
        self.remote.workload(values, workload.distribution, what)
        self.current, self.current_key = judged, key
        return judged

    @contextlib.contextmanager
    def on(self, record: Record):
        """Failures on this workload: kept whole in its record, masked for the model where it is held out."""
        try:
            yield
        except EvalFailure as failure:
            workload = record.workload
            record.status = cast(WorkloadStatus, failure.status) if failure.status in VERDICTS else "not_run"
            record.message = f"{record.values}: {failure}" if record.values else str(failure)
            if workload.public or failure.status == HARNESS_ERROR:
                raise
            masked = mask_numbers(str(failure).replace(workload.about, "\0")).replace("\0", workload.about)
            if "held-out workload" not in masked:
                masked = f"held-out workload ({workload.about}): {masked}"
            raise EvalFailure(failure.status, masked, failure.comparison) from None
        finally:
            if self.current is not None and self.current.truth is not None:
                record.note(self.current.truth.failure)

    # ---- expected outputs and the judgement ----

    def expected(self, inputs: list, seed: int, observe=None) -> Expected:
        """What the call of `seed` (its inputs, and a training problem's upstream gradients) is judged against."""
        with self.reference_runs("running the reference"):
            reference = self.entered.run(inputs, seed)
            self.sync()
        truth = self.entered.truth_of(inputs, reference, seed)
        self.sync()
        self.truth_fell_back |= self.wants_truth and truth is None
        if observe:
            observe(reference)
        return Expected(reference, truth)

    def judged(self, out, expected: Expected, what: str):
        """The candidate's output (as the runner copied it when forward returned) under the evaluation's check, and
        under the other one where there is one. One value everywhere where the reference varies is wrong, however
        close the tolerance lets it come."""
        self.see_other(out, expected)
        result = judge(out, expected, self.spec.check, self.atol, self.rtol, self.entered.names)
        if self.current is self.default:  # said first: it is what is wrong, whatever else the check found
            for i, (mine, ref, stats) in enumerate(zip(tensors(out), tensors(expected.reference),
                                                       self.reference_stats)):
                if varies(stats) and (mine.shape, mine.dtype, mine.device) == (ref.shape, ref.dtype, ref.device) \
                        and one_value(mine):
                    where = item_name(i, self.entered.names) if len(self.reference_stats) > 1 else "output"
                    raise EvalFailure("incorrect", f"{what}: {where} is {float(mine.reshape(-1)[0]):g} everywhere, "
                                                   f"where the reference varies (std {stats.std:.3g}, mean |x| "
                                                   f"{stats.mean_abs:.3g}): an output of one value is never right "
                                                   "there, however small its values", result)
        if not result.ok:
            raise EvalFailure("incorrect", f"{what}: {result.message}", result)
        self.worst = [max(a, b or 0.0) for a, b in zip(self.worst, (result.max_abs_err, result.max_rel_err,
                                                                     result.norm_err))]
        return result

    def see_other(self, out, expected: Expected) -> None:
        """The other check (`harness audit`: the claim's own) sees what a claim was made on: the problem as
        written."""
        if self.other is None or self.other_failure is not None or self.current is not self.default:
            return
        spec, atol, rtol = self.other
        found = judge(out, expected, spec, atol, rtol)
        self.other_compared += 1
        if not found.ok:
            self.other_failure = found.message

    def observe_reference(self, expected) -> None:
        """Trial 0: the reference outputs' statistics and a sample of each; trial 1: how much of that sample
        a new seed changed (the parent decides from these whether the problem can tell right from wrong)."""
        outputs = tensors(expected)
        if not self.reference_stats:
            self.reference_stats = tuple(output_stats(t, self.atol, self.rtol) for t in outputs)
            self.seed_samples = [seed_sample(t) for t in outputs]
        elif self.seed_mismatch is None:
            self.seed_mismatch = tuple(
                compare_tensor(seed_sample(t), s, self.atol, self.rtol, locating=False).mismatch_fraction or 0.0
                for t, s in zip(outputs, self.seed_samples, strict=True))
            self.seed_samples = []

    # ---- the timed calls' outputs ----

    def recheck(self, side: str, round_: int, label: str, args: list, out) -> None:
        """Called by the timer after each timed call: the first two candidate outputs, then a secret share."""
        if side != "candidate" or out is not KEPT or (round_ >= 2 and self.draw.random() >= RECHECK_SHARE):
            return
        what = self.call_name(self.entered.workload, f"timed call {round_}")
        expected = self.expected(self.inputs(label), self.seed(label))
        found, handover_ms = self.remote.output(what, expected.reference)
        self.copies.append(self.copy_ms(expected.reference, on_device=self.remote.channel.last_box == "device"))
        self.deferred.append(handover_ms - self.copies[-1])
        with one_thread(self.device):
            self.judged(found, expected, f"{what}, on fresh inputs (a cached or stale result?)")
        self.rechecked += 1

    def copy_ms(self, expected, on_device: bool) -> float:
        """What handing an output like `expected` over costs when its work is done: one copy of its bytes into
        memory of the kind the runner's outbox is (a shared file in host memory, or device memory), timed here."""
        parts = [t.detach().contiguous().reshape(-1).view(torch.uint8) for t in tensors(expected) if t.numel()]
        size = sum(p.numel() for p in parts)
        if on_device:
            buffer = torch.empty(size, dtype=torch.uint8, device=self.device)
        else:
            buffer = self.host_buffer(size)
        self.sync()
        start, offset = _clock_ns(), 0
        for part in parts:
            buffer[offset:offset + part.numel()].copy_(part)
            offset += part.numel()
        self.sync()
        return (_clock_ns() - start) / 1e6

    def host_buffer(self, size: int):
        if self.copy_buffer is None or self.copy_buffer.size < size:
            self.copy_buffer = Shared.create(size)
            self.copy_buffer.bytes.fill_(1)  # its pages in place, as the runner's are after its first output
        return self.copy_buffer.bytes
