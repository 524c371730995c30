"""The runner (`python -m harness.child run TARGET FD`): the one process that runs the candidate's code. Started
ahead of need beside its judge (evaluate.py), it imports torch and readies the device, then does what the judge
asks over the channel (channel.py, on descriptor FD) and nothing else:

  setup    import the problem and the built candidate, construct ModelNew (the judge's init seed)
  workload make inputs from the problem with these constants from here on (a ModelNew of its own where they change
           the init inputs; the same one where they do not)
  call     one checked forward on the inputs of a seed the judge gives: the output goes back, bytes and all
  settled  whether that output changed since it was returned (work still running in the background)
  profile  profiled forwards: the candidate's coverage (coverage.py)
  time     one timed forward (timing.py's timer), its inputs made first, timed at the judge's `go`: the times
           go back, the output is kept
  output   that kept output, for the judge to check
  jit      Triton's compile and autotune seconds so far (build time, not the stage's)
  ticks    this process's CPU ticks (the judge's load watch tells them from other processes')
  ping     an empty round trip, before setup (the judge's measure of what a reply costs)
  end      the Guard's last look

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
from pathlib import Path

import torch

from harness.child import coverage
from harness.child import observe as cpu_load
from harness.child.caught import Watch, first_call_done
from harness.child.channel import Channel, ChannelError
from harness.child.check import same_values
from harness.child.common import (
    EvalFailure,
    candidate_starts,
    construct,
    describe,
    failing_as,
    start_figures,
    started_device,
    target_device,
)
from harness.child.defenses import Guard, Poison, identical, output_problem, snapshot
from harness.child.loader import import_candidate, install_extension_loader, loaded_modules
from harness.child.triton_jit import JitClock, warm_driver
from harness.child.workload import Instance, same_init
from harness.markers import CANDIDATE_FILE, WARM_TRITON_ENV
from harness.protocol import uses_triton
from harness.types import HARNESS_ERROR


class Runner:
    def __init__(self, channel: Channel, started: dict):
        self.channel = channel
        self.started = started  # how its own start went (warm_up): for the judge's report
        self.jit: JitClock | None = None
        self.kept = None      # a checked call's output and its copy taken on return (for `settled`)
        self.last = None      # the last timed call's output (for `output`)
        self.called = False   # whether a checked call has returned

    def setup(self, spec: dict) -> None:
        with failing_as("problem error: importing the problem failed", HARNESS_ERROR):
            self.problem_path = spec["problem_path"]
            self.default = self.current = Instance(self.problem_path)
            self.init_seed = spec["init_seed"]
            self.device, _, self.timer, self.sync = target_device(torch, spec["target"])
            self.dtype = getattr(torch, spec["dtype"])
            self.poison = Poison(self.device)
        build_dir = Path(spec["build_dir"])
        if uses_triton((build_dir / CANDIDATE_FILE).read_text()):
            self.jit = JitClock(interpreted=spec["target"] == "cpu")
        self.guard = Guard(also={__name__: sys.modules[__name__], f"{__name__}.Runner": Runner,
                                 "harness.child.workload.Instance": Instance})
        install_extension_loader(build_dir, "load", scratch=Path(spec["scratch"]))
        self.known_ops = coverage.op_namespaces()  # any namespace of operators added from here on is the candidate's
        device_outbox = spec.get("device_outbox")
        self.channel.use_device = device_outbox if type(device_outbox) is int else None
        self.channel.send({"event": "ready", "started": self.started})
        candidate_starts()
        self.answer = str(build_dir / CANDIDATE_FILE)  # the name the candidate's frames carry (caught.py)
        with failing_as("constructing ModelNew failed"):
            with Watch("at import", self.answer):
                module = import_candidate(build_dir)
            self.guard.verify("at import")
            self.model_class = module.ModelNew
            with Watch("in ModelNew.__init__", self.answer):
                self.candidate = self.default_candidate = self.construct(self.default)
        self.guard.verify("in ModelNew.__init__")
        self.channel.send({"event": "constructed"})

    def construct(self, instance: Instance):
        return construct(self.model_class, instance.init_inputs, self.device, self.dtype, self.init_seed)

    def workload(self, values: dict, distribution: list, what: str) -> None:
        """Inputs from these constants from now on; ModelNew kept where the init inputs stay the same (a candidate
        that keeps what its first call saw meets other sizes), constructed anew where they change."""
        if not values and tuple(distribution) == (1.0, 0.0):
            self.current, self.candidate = self.default, self.default_candidate
        else:
            with failing_as(f"making the problem's inputs failed ({what})"):
                instance = Instance(self.problem_path, values, (float(distribution[0]), float(distribution[1])))
            if same_init(instance.init_inputs, self.default.init_inputs):
                self.candidate = self.default_candidate
            elif not same_init(instance.init_inputs, self.current.init_inputs):
                self.candidate = None  # the last one's memory goes before the next is made
                with failing_as(f"constructing ModelNew failed ({what})"):
                    self.candidate = self.construct(instance)
                self.guard.verify(f"in ModelNew.__init__ ({what})")
            self.current = instance
        self.channel.send({"event": "workload"})

    def inputs(self, seed: int) -> list:
        return self.current.inputs(self.device, self.dtype, seed)

    def call(self, seed: int, poison: bool, what: str) -> None:
        inputs = self.inputs(seed)
        mine = [x.clone() if isinstance(x, torch.Tensor) else x for x in inputs]
        if poison:
            self.poison()
        first = not self.called  # its set-up and first call are what feedback quotes of its output
        with failing_as(f"ModelNew.forward failed ({what})"):
            with Watch("in forward", self.answer) if first else contextlib.nullcontext():
                out = self.candidate(*mine)
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
        self.channel.send({"event": "called"}, value=self.kept[1])

    def settled(self) -> None:
        out, copy = self.kept
        self.kept = None
        self.channel.send({"changed": not identical(out, copy)})

    def profile(self, seed: int) -> None:
        """Profiled forwards on one set of inputs, the median by share: on the CPU, where time is wall time,
        several (a call the machine interrupts inside one range moves that call's share, not the median)."""
        inputs = self.inputs(seed)
        cuda = self.device.type == "cuda"
        profiled = []
        with failing_as("ModelNew.forward failed (the profiled call)"):
            for _ in range(1 if cuda else coverage.CPU_PROFILED_CALLS):
                measured, _ = coverage.measure(lambda: self.candidate(*inputs), frozenset(loaded_modules), cuda,
                                               namespaces=coverage.op_namespaces() - self.known_ops)
                profiled.append(measured)
        self.guard.verify("in forward, the profiled call")
        self.channel.send({"coverage": coverage.median_by_share(profiled).model_dump(mode="json")})

    def time(self, seed: int) -> None:
        """Make the inputs, say so, and time the call when the judge says go (its clock runs from there)."""
        args = self.inputs(seed)
        self.last = None
        self.channel.send({"event": "armed"})
        message, fd = self.channel.receive()
        if fd is not None:
            os.close(fd)
        if message.get("op") != "go":
            raise RuntimeError(f"expected go, got {message.get('op')!r}")
        with failing_as("failed while timing"):
            sample = self.timer(self.candidate, args)
        self.last = sample.output
        self.channel.send({"event_ms": sample.event_ms, "wall_ms": sample.wall_ms})

    def output(self, what: str) -> None:
        problem_text = output_problem(self.last)
        if problem_text:
            raise EvalFailure("incorrect", f"{what}: {problem_text}")
        self.channel.send({"event": "output"}, value=self.last)
        # After the send, so the judge's clock on the handover sees the copy alone; a patch found here fails the
        # next request (the end's, at the latest).
        self.guard.verify(f"in forward, {what}")

    def end(self) -> None:
        self.guard.verify("while being timed")
        self.channel.send({"event": "end"})

    def serve(self) -> None:
        """Do what the judge asks until it says `end` (or goes away)."""
        while True:
            message, fd = self.channel.receive()
            if fd is not None:
                os.close(fd)
            op = message.get("op")
            if op == "setup":
                self.setup(message)
            elif op == "workload":
                self.workload(message["values"], message["distribution"], message["what"])
            elif op == "call":
                self.call(message["seed"], message["poison"], message["what"])
            elif op == "settled":
                self.settled()
            elif op == "profile":
                self.profile(message["seed"])
            elif op == "time":
                self.time(message["seed"])
            elif op == "output":
                self.output(message["what"])
            elif op == "jit":
                self.channel.send({"seconds": dict(self.jit.seconds) if self.jit else {}})
            elif op == "ping":  # the judge's round trips, before setup: no code of the candidate's here yet
                self.channel.send({"event": "pong"})
            elif op == "ticks":
                self.channel.send({"ticks": cpu_load.own_ticks()})
            elif op == "end":
                self.end()
                return
            else:
                raise RuntimeError(f"unknown request {op!r}")


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
        channel.send({"failure": {"status": status, "message": message}})
    except (ChannelError, OSError):
        pass
