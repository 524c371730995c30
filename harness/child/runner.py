"""The runner (`python -m harness.child run TARGET FD`): the one process that runs the candidate's code. Started
ahead of need beside its judge (evaluate.py), it imports torch and readies the device, then does what the judge
asks over the channel (channel.py, on descriptor FD), the requests runner_protocol.py declares, and nothing else.

It never holds the run's seed (only each call's, derived by a hash), never sees the reference's outputs, never
decides a verdict and writes no report: the judge does, in a process no candidate code runs in. What it reports
about itself (coverage, its own times, a failure) is checked where it can be (the judge's clock) and can only
hurt the candidate where it cannot.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import torch

from harness.child import coverage
from harness.child import observe as cpu_load
from harness.child import runner_protocol as messages
from harness.child.caught import Watch, first_call_done
from harness.child.channel import Channel, ChannelError
from harness.child.check import same_values
from harness.child.common import (
    EvalFailure,
    candidate_starts,
    construct,
    describe,
    failing_as,
    held_mib,
    start_figures,
    started_device,
    target_device,
)
from harness.child.defenses import Guard, Poison, identical, output_problem, snapshot
from harness.child.loader import import_candidate, install_extension_loader, loaded_modules
from harness.child.training import forward_backward, leaves, parameter_shapes, upstream
from harness.child.triton_jit import JitClock, warm_driver
from harness.child.workload import Instance, same_init
from harness.evidence import Coverage
from harness.markers import CANDIDATE_FILE, PROFILED_CALL_ENV, UNIMPORTED_FILE, WARM_TRITON_ENV
from harness.protocol import uses_triton
from harness.types import HARNESS_ERROR


class Runner:
    def __init__(self, channel: Channel, started: dict):
        self.channel = channel
        self.started = started  # how its own start went (warm_up): for the judge's report
        self.jit: JitClock | None = None
        self.kept: tuple[object, object] | None = None  # a checked call's output and its copy taken on return
        self.last: object = None  # the last timed call's output (for `output`)
        self.called = False   # whether a checked call has returned
        self.profiled_call = bool(os.environ.get(PROFILED_CALL_ENV))  # run under Nsight Compute (eval/counters.py)

    def reply(self, reply: messages.Reply, value: object = None) -> None:
        self.channel.send(reply.wire(), value=value)

    def receive(self) -> dict:
        message, fd = self.channel.receive()
        if fd is not None:
            os.close(fd)
        return message

    def setup(self, spec: messages.Setup) -> None:
        with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
            self.default = self.current = Instance(spec.problem_path, spec.problem_source)
            self.init_seed = spec.init_seed
            self.device, _, self.timer, self.sync = target_device(torch, spec.target)
            self.dtype = getattr(torch, spec.dtype)
            self.poison = Poison(self.device)
            self.training = spec.training
        build_dir = Path(spec.build_dir)
        if uses_triton((build_dir / CANDIDATE_FILE).read_text()):
            self.jit = JitClock(interpreted=spec.target == "cpu")
        self.guard = Guard(also={__name__: sys.modules[__name__], f"{__name__}.Runner": Runner,
                                 "harness.child.workload.Instance": Instance})
        install_extension_loader(build_dir, "load", scratch=Path(spec.scratch))
        self.known_ops = coverage.op_namespaces()  # any namespace of operators added from here on is the candidate's
        self.channel.use_device = spec.device_outbox
        self.reply(messages.Ready(started=self.started))
        candidate_starts()
        self.answer = str(build_dir / CANDIDATE_FILE)  # the name the candidate's frames carry (caught.py)
        # A source that builds nothing had no build child (eval/build.py): importing it here is its build step.
        as_build = (failing_as("importing the answer failed", "compile_error")
                    if (build_dir / UNIMPORTED_FILE).is_file() else contextlib.nullcontext())
        with failing_as("constructing ModelNew failed"):
            with Watch("at import", self.answer), as_build:
                module = import_candidate(build_dir)
            self.guard.verify("at import")
            self.model_class = module.ModelNew
            with Watch("in ModelNew.__init__", self.answer):
                self.candidate = self.default_candidate = self.construct(self.default)
        self.guard.verify("in ModelNew.__init__")
        self.reply(messages.Constructed(parameters=parameter_shapes(self.candidate) if self.training else []))

    def construct(self, instance: Instance):
        return construct(self.model_class, instance.init_inputs, self.device, self.dtype, self.init_seed)

    def workload(self, request: messages.Workload) -> None:
        """Inputs from these constants from now on; ModelNew kept where the init inputs stay the same (a candidate
        that keeps what its first call saw meets other sizes), constructed anew where they change."""
        values, distribution, what = request.values, request.distribution, request.what
        if not values and tuple(distribution) == (1.0, 0.0):
            self.current, self.candidate = self.default, self.default_candidate
        else:
            with failing_as(f"making the problem's inputs failed ({what})"):
                instance = self.default.variant(values, (float(distribution[0]), float(distribution[1])))
            if same_init(instance.init_inputs, self.default.init_inputs):
                self.candidate = self.default_candidate
            elif not same_init(instance.init_inputs, self.current.init_inputs):
                self.candidate = None  # the last one's memory goes before the next is made
                with failing_as(f"constructing ModelNew failed ({what})"):
                    self.candidate = self.construct(instance)
                self.guard.verify(f"in ModelNew.__init__ ({what})")
            self.current = instance
        self.reply(messages.WorkloadMade())

    def inputs(self, seed: int) -> list:
        return self.current.inputs(self.device, self.dtype, seed)

    def forward(self, args: list, seed: int, what: str) -> object:
        """The candidate's call: its forward, or on a training problem its forward and backward (the outputs and
        gradients, flat: training.py)."""
        if self.training:
            return forward_backward(self.candidate, args, seed=seed, what=what).flat()
        return self.candidate(*args)

    def own_copy(self, inputs: list) -> list:
        """The inputs a call gets: copies, or on a training problem leaves that gather their gradients."""
        return leaves(inputs) if self.training else [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]

    def call(self, request: messages.Call) -> None:
        what = request.what
        inputs = self.inputs(request.seed)
        mine = self.own_copy(inputs)
        if request.poison:
            self.poison()
            if self.device.type == "cuda":  # the poisoning claimed all free memory for a moment: not what it holds
                torch.cuda.reset_peak_memory_stats(self.device)
        first = not self.called  # its set-up and first call are what feedback quotes of its output
        with failing_as(f"ModelNew.{'forward or backward' if self.training else 'forward'} failed ({what})"):
            with Watch("in forward", self.answer) if first else contextlib.nullcontext():
                profiled = first and self.profiled_call
                if profiled:  # its compiles, autotuning and caches happen before the profiled range
                    self.forward(self.own_copy(inputs), request.seed, what)
                    self.sync()
                with profiled_range(self.device) if profiled else contextlib.nullcontext():
                    out = self.forward(mine, request.seed, what)
                    self.sync()
        if first:
            self.called = True
            first_call_done()
        self.guard.verify(f"in forward, {what}")
        problem_text = output_problem(out)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        self.kept = (out, snapshot(out))  # the moment forward returns: work that finishes later does not count
        changed = [i for i, (a, b) in enumerate(zip(mine, inputs, strict=True))
                   if isinstance(a, torch.Tensor) and not same_values(a, b)]
        if changed:
            raise EvalFailure("incorrect", f"{what}: ModelNew.forward modified its input(s) {changed}")
        self.reply(messages.Called(), value=self.kept[1])

    def upstream(self, seed: int, shapes: list, what: str) -> list:
        """A training problem's upstream gradients for a profiled or timed call, made before the profiler or the clock
        runs (`shapes`: the judge's [shape, dtype] of each)."""
        with failing_as(f"the upstream gradients could not be made ({what})"):
            return upstream([(torch.Size(shape), getattr(torch, dtype)) for shape, dtype in shapes], self.device, seed)

    def settled(self, _: messages.Settled) -> None:
        if self.kept is None:
            raise messages.MalformedMessage("settled asked before a checked call")
        out, copy = self.kept
        self.kept = None
        self.reply(messages.Settledness(changed=not identical(out, copy)))

    def profile(self, request: messages.Profile) -> None:
        """Profiled forwards on one set of inputs, the median by share: on the CPU, where time is wall time,
        several (a call the machine interrupts inside one range moves that call's share, not the median)."""
        inputs = self.inputs(request.seed)
        cuda = self.device.type == "cuda"
        profiled = []

        def measured(run: Callable[[], object]) -> tuple[Coverage, object]:
            return coverage.measure(run, frozenset(loaded_modules), cuda,
                                    namespaces=coverage.op_namespaces() - self.known_ops)
        with failing_as("ModelNew.forward failed (the profiled call)"):
            for _ in range(1 if cuda else coverage.CPU_PROFILED_CALLS):
                if not self.training:
                    profiled.append(measured(lambda: self.candidate(*inputs))[0])
                    continue
                profiled.append(self.profiled_step(inputs, request, measured))
        self.guard.verify("in forward, the profiled call")
        self.reply(messages.Profiled(coverage=coverage.median_by_share(profiled).model_dump(mode="json")))

    def profiled_step(self, inputs: list, request: messages.Profile,
                      measured: Callable[[Callable[[], object]], tuple[Coverage, object]]) -> Coverage:
        """A training problem's profiled call: its forward and its backward measured apart, on fresh leaves (no
        gradient adds up across calls)."""
        grads_in = self.upstream(request.seed, request.upstream, "the profiled call")
        halves: dict[str, Coverage] = {}

        def apart(half: str, run: Callable[[], object]) -> object:
            halves[half], value = measured(run)
            return value
        # On a GPU autograd runs a backward on a device thread of its own, where the profile function (this thread's
        # sys.setprofile) sees none of the candidate's calls: its kernels read as no one's. This call's runs here.
        with torch.autograd.set_multithreading_enabled(False):
            forward_backward(self.candidate, leaves(inputs), grads_in, what="the profiled call", around=apart)
        return coverage.combined(halves["forward"], halves.get("backward"))

    def time(self, request: messages.Time) -> None:
        """Make the inputs, say so, and time the call when the judge says go (its clock runs from there)."""
        args, call = self.inputs(request.seed), self.candidate
        if self.training:
            grads_in = self.upstream(request.seed, request.upstream, "a timed call")
            args = leaves(args)

            def call(*leaf_args):
                return forward_backward(self.candidate, list(leaf_args), grads_in, what="a timed call",
                                        around=self.timer.split)
        self.last = None
        self.reply(messages.Armed())
        messages.Go.read(self.receive())
        with failing_as("failed while timing"):
            sample = self.timer(call, args)
        self.last = sample.output.flat() if self.training else sample.output
        self.reply(messages.Timed(event_ms=sample.event_ms, wall_ms=sample.wall_ms, forward_ms=sample.forward_ms))

    def output(self, request: messages.Output) -> None:
        what = request.what
        problem_text = output_problem(self.last)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        self.reply(messages.Handed(), value=self.last)
        # After the send, so the judge's clock on the handover sees the copy alone; a patch found here fails the
        # next request (the end's, at the latest).
        self.guard.verify(f"in forward, {what}")

    def jit_seconds(self, _: messages.Jit) -> None:
        self.reply(messages.JitSeconds(seconds=dict(self.jit.seconds) if self.jit else {}))

    def ping(self, _: messages.Ping) -> None:
        """The judge's round trips, before setup: no code of the candidate's here yet."""
        self.reply(messages.Pong())

    def ticks(self, _: messages.Ticks) -> None:
        self.reply(messages.OwnTicks(ticks=cpu_load.own_ticks()))

    def end(self, _: messages.End) -> None:
        self.guard.verify("while being timed")
        held = held_mib(torch, self.device)
        self.reply(messages.Ended(memory_mib=-1 if held is None else held))

    # What serves each request the protocol declares (runner_protocol.REQUESTS). Read-only, and a class attribute,
    # so a candidate that redirects a request must change Runner, which the Guard watches.
    SERVES: Mapping[type[messages.Request], Callable[[Runner, Any], None]] = MappingProxyType({
        messages.Ping: ping, messages.Setup: setup, messages.Workload: workload, messages.Call: call,
        messages.Settled: settled, messages.Profile: profile, messages.Time: time, messages.Output: output,
        messages.Jit: jit_seconds, messages.Ticks: ticks, messages.End: end})

    def serve(self) -> None:
        """Do what the judge asks until it says End (or goes away); a request it does not declare ends the runner
        (runner_protocol.MalformedMessage, reported as the harness's error)."""
        while True:
            request = messages.read_request(self.receive())
            Runner.SERVES[type(request)](self, request)
            if type(request) is messages.End:
                return


@contextlib.contextmanager
def profiled_range(device: torch.device) -> Iterator[None]:
    """The range a profiler started with its profiling off (ncu --profile-from-start off) measures."""
    if device.type != "cuda":
        yield
        return
    torch.cuda.profiler.start()
    try:
        yield
    finally:
        torch.cuda.profiler.stop()


def warm_up(target: str) -> dict:
    """What every evaluation pays before it can start: importing torch and the harness's own modules, (cuda)
    creating the context, starting the profiler, and in a batch with Triton candidates making Triton's driver; a warm
    runner pays it while the previous candidate is evaluated.
    How long it took since the process started, and the attempts the context took (for the judge's report)."""
    started = started_device(torch, target)
    coverage.warm_up(target == "cuda" and torch.cuda.is_available())
    # torch.compile patches nn.Module.__init__ and __setstate__ at its first use (Dynamo's generation tagging):
    # done now, before the defenses' snapshot, a candidate that calls torch.compile is not one that patches torch.
    from torch._dynamo.mutation_guard import install_generation_tagging_init
    install_generation_tagging_init()
    if target == "cuda" and os.environ.get(WARM_TRITON_ENV) and (seconds := warm_driver()) is not None:
        started["triton_s"] = round(seconds, 3)  # a batch with Triton candidates: its driver made
    return start_figures(started)  # the rest of ready_s: the profiler's start, Dynamo and Triton's driver


def main(argv: list[str]) -> int:
    """`run TARGET FD`: ready the device, then serve the judge on descriptor FD."""
    target, fd = argv[1], int(argv[2])
    started = warm_up(target)
    channel = Channel(fd)
    runner = Runner(channel, started)
    try:
        with torch.no_grad():
            runner.serve()
    except ChannelError:  # the judge is done or gone: nothing more to do
        pass
    except EvalFailure as failure:
        _report(channel, failure.status, str(failure))
    except BaseException as exc:  # raised by harness code, outside every call into the candidate's
        traceback.print_exc()
        _report(channel, HARNESS_ERROR, f"harness error in the candidate's process: {describe(exc)}")
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: a candidate's destructors or threads have nothing more to say.
    os._exit(0)


def _report(channel: Channel, status: str, message: str) -> None:
    try:
        channel.send(messages.Failure(status=status, message=message).wire())
    except (ChannelError, OSError):
        pass
