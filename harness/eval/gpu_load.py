"""Other processes on the GPU: checked before and after each timed evaluation (in the parent, never in the child).

Another process computing on the GPU while a candidate is timed moves its speedup by 15-20 % either way (an
H100 beside a loop of fp32 GEMMs: reverse_cumsum 4.43x instead of 3.84x, softmax 1.27x instead of 1.54x), and
the clean-process rebaseline cannot tell, since it is slowed as much. So, per evaluation:

  before  other processes' work on the GPU over the last second: if there is any, wait (polling every 0.25 s)
          until there has been none for a second, at most --contention-wait seconds (stage `contention_wait`);
  after   other processes' work over the evaluation's own interval (looked at every 5 s during a longer one
          too, from a thread: NVML keeps a limited history of samples).

Work seen before (still there after the wait) or during flags the result `contended`: it is kept, and counts
in no aggregate (flags.EXCLUDING). Once a wait has run out, later evaluations on that GPU do not wait
again until it is seen free: a long job elsewhere costs one wait, not one per candidate.

What is sampled, per GPU (NVML through pynvml, from nvidia-ml-py; else nvidia-smi; else nothing is checked,
said once on stderr):
  * the compute processes (nvmlDeviceGetComputeRunningProcesses): ours are this process, the children it
    started (process.started, even after they exited) and their descendants (the ppid chain in /proc); the
    evaluation children started ahead of need hold a context each and are ours;
  * each process's SM utilization since a time (nvmlDeviceGetProcessUtilization): another process at >= 5 %
    in any sample is contention;
  * where per-process utilization is unsupported (nvidia-smi, some MIG or virtual GPUs) or blind (it shows
    nothing, not even our own evaluation), the device's utilization, but only before an evaluation and 2 s
    or more after our last one (it averages over up to a second, and showed an ended GEMM loop for 1.5 s);
    after the evaluation, any other compute process present counts, since the device's figure is ours.
  * PID namespaces: in a container NVML may report host PIDs, none of which is ours. Until one of our own
    processes is seen in the list (then the numbering is ours, for good), a listed PID that does not exist
    here means host numbering: other processes are then counted (listed processes minus ours holding the
    GPU open), and utilization is judged by count too: before an evaluation nothing of ours computes, so
    any busy process is another's; during it, one busy process is ours and a second one is another's.
Cost: a look is 2 NVML calls and a few /proc reads; an evaluation of a few seconds takes 2 looks (4 calls of
~0.1-1 ms each; 0.25 ms of Python measured with a fake NVML), recorded as the stage `contention_check`;
nvidia-smi costs tens of ms a call.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from harness import process
from harness.eval.gpu_sampler import Sampler, SamplerError, open_sampler
from harness.figures import Contention
from harness.flags import CONTENDED
from harness.types import DeviceInfo

log = logging.getLogger(__name__)

FOREIGN_UTIL_PCT = 5.0  # SM utilization of another process (or of the device with nothing of ours on it)
LOOKBACK_S = 1.0        # before an evaluation: foreign work this recent counts as ongoing
IDLE_S = 1.0            # waiting: the GPU must have been free of foreign work this long
POLL_S = 0.25           # waiting: how often to look again
DEVICE_LAG_S = 2.0      # the device's utilization still shows our own work this long after it ended
BLIND_MIN_S = 1.0       # an evaluation this long that shows in no per-process sample: the samples are blind
DURING_POLL_S = 5.0     # during a longer evaluation, look this often too (NVML keeps a limited history)


# ---- whose processes ----

def parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()  # after "pid (comm) ": state, ppid, ...
    return int(fields[1]) if len(fields) > 1 else None


def alive(pid: int) -> bool:
    return os.path.exists(f"/proc/{pid}")


def live_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def holds_gpu(pid: int, minor: int | None) -> bool:
    """Whether `pid` has the GPU's device file (/dev/nvidiaN) open."""
    wanted = re.compile(rf"/dev/nvidia{minor if minor is not None else r'[0-9]+'}$")
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if wanted.match(os.readlink(f"/proc/{pid}/fd/{fd}")):
                return True
        except OSError:
            continue
    return False


class Owners:
    """Tells our processes (this one, the children it started, their descendants) from others'."""

    def __init__(self, me: int | None = None, started: Callable[[], set[int]] | None = None) -> None:
        self.me = me or os.getpid()
        self.started = started or (lambda: set(process.started))
        self._others: set[int] = set()  # PIDs found to be another's: stays so (until the PID is reused)

    def snapshot(self) -> Callable[[int], bool]:
        roots = self.started() | {self.me}

        def ours(pid: int) -> bool:
            if pid in roots:
                return True
            if pid in self._others:
                return False
            p = pid
            for _ in range(64):
                parent = parent_of(p)
                if parent is None:
                    break
                p = parent
                if p in roots:
                    return True
                if p <= 1:
                    break
            if alive(pid):  # a dead PID with no known parent may be a child we have not recorded: not cached
                self._others.add(pid)
            return False

        return ours

    def ours_holding(self, minor: int | None) -> int:
        """How many of our live processes hold the GPU open (to count others where PIDs are not ours). A
        sandboxed child's own process is a grandchild of the one started (the sandbox's launcher and init)."""
        ours = self.snapshot()
        return sum(1 for pid in live_pids() if ours(pid) and holds_gpu(pid, minor))


# ---- one look at the GPU ----

@dataclass(frozen=True)
class Reading:
    available: bool
    foreign: int = 0                   # other compute processes on the GPU
    foreign_util: float | None = None  # the highest SM % of other processes' work over the window; None: unknown
    any_util: float | None = None      # the highest SM % of any process (None: no per-process samples)
    what: str = ""                     # for the log: who, how much

    @property
    def busy(self) -> bool:
        if not self.available:
            return False
        if self.foreign_util is not None:
            return self.foreign_util >= FOREIGN_UTIL_PCT
        return self.foreign > 0  # utilization cannot tell: another process present is taken as using it


@dataclass
class Watch:
    """One GPU, as seen from this process: what the checks learn and remember between evaluations."""

    sampler: Sampler
    index: int
    owners: Owners = field(default_factory=Owners)
    clock: Callable[[], float] = time.time
    matched: bool = False               # NVML's PIDs are numbered as ours (one of ours was seen listed)
    blind: bool = False                 # the last evaluation showed in no per-process sample
    persisting: bool = False            # a wait ran out and the work went on: do not wait again until free
    last_own_work: float | None = None  # when our last evaluation on it ended
    per_process: bool = False           # per-process utilization was read (the sampler and the device give it)
    told: set[str] = field(default_factory=set)

    def tell(self, key: str, message: str) -> None:
        if key not in self.told:
            self.told.add(key)
            log.warning(message)

    def look(self, since: float, ours_in_window: bool) -> Reading:
        """Other processes' work on the GPU between `since` and now. `ours_in_window`: an evaluation of ours
        ran in that interval (so the device's utilization is ours, and one busy process of unknown PID too)."""
        try:
            pids = self.sampler.compute_pids(self.index)
            util = self.sampler.process_util(self.index, since)
        except SamplerError as exc:
            self.tell(f"error:{exc}", f"GPU {self.index}: contention check failed ({exc}); not checked this time")
            return Reading(available=False)
        ours = self.owners.snapshot()
        self.per_process |= util is not None
        if not self.matched and any(ours(p) for p in pids):
            self.matched = True
        host_pids = not self.matched and not all(alive(p) for p in pids)
        if host_pids:
            self.tell("host-pids", f"GPU {self.index}: {self.sampler.name} lists processes by PIDs of another "
                                   "namespace (a container?); other processes are counted, not named")
            foreign = max(0, len(pids) - self.owners.ours_holding(self.sampler.minor(self.index)))
            foreign_pids: list[int] = []
        else:
            foreign_pids = [p for p in pids if not ours(p)]
            foreign = len(foreign_pids)
        any_util = max(util.values(), default=0.0) if util is not None else None
        foreign_util = None
        if util is not None and not self.blind:
            if host_pids:
                busy = sorted(util.values(), reverse=True)
                allowance = 1 if ours_in_window else 0
                foreign_util = busy[allowance] if len(busy) > allowance else 0.0
                what = f"{len(busy) - allowance} other busy processes, up to {foreign_util:.0f} % SM"
            else:
                others = {p: u for p, u in util.items() if not ours(p)}
                foreign_util = max(others.values(), default=0.0)
                top = sorted(others.items(), key=lambda item: -item[1])[:3]
                what = ", ".join(f"pid {p} at {u:.0f} % SM" for p, u in top) or "no other process computing"
        elif not ours_in_window and (self.last_own_work is None
                                     or self.clock() - self.last_own_work >= DEVICE_LAG_S):
            foreign_util = self.sampler.device_util(self.index)
            what = f"the device at {foreign_util} % utilization with nothing of ours computing"
        else:
            what = ""
        if foreign_util is None or not what:
            what = f"{foreign} other compute process(es)" + (f" ({', '.join(map(str, foreign_pids[:5]))})"
                                                            if foreign_pids else "")
        return Reading(available=True, foreign=foreign, foreign_util=foreign_util, any_util=any_util, what=what)


_watches: dict[int, Watch] = {}
_sampler: list[Sampler | None] = []  # opened once per process: [] not tried yet, [None] none works
_lock = threading.Lock()


def watch_for(device: DeviceInfo) -> Watch | None:
    """This process's Watch of `device`, or None: not a GPU, or no way to query it (said once)."""
    if device.target != "cuda" or device.index is None:
        return None
    with _lock:
        if not _sampler:
            _sampler.append(open_sampler())
            if _sampler[0] is None:
                log.warning("GPU contention check off: neither NVML (pip install nvidia-ml-py) nor nvidia-smi "
                            "answers here, so results are not checked for other processes using the GPU")
        if _sampler[0] is None:
            return None
        if device.index not in _watches:
            _watches[device.index] = Watch(_sampler[0], device.index)
        return _watches[device.index]


# ---- one evaluation ----

class Check:
    """The check around one timed evaluation: before() may wait, after() decides; then flags and figures."""

    def __init__(self, watch: Watch | None, wait_s: float, sleep: Callable[[float], None] = time.sleep,
                 poll_during: bool = True) -> None:
        self.watch, self.wait_s, self.sleep, self.poll_during = watch, wait_s, sleep, poll_during
        self.clock = watch.clock if watch else time.time
        self.waited = 0.0
        self.checking = 0.0
        self.busy_before = False
        self.busy_during = False
        self.started: float | None = None
        self.seen_until = 0.0
        self.during: list[Reading] = []
        self._poller: threading.Thread | None = None
        self._stop = threading.Event()

    def _look(self, since: float, ours_in_window: bool) -> Reading:
        w = self.watch
        assert w is not None  # before() and after() look only with a watch
        t = time.perf_counter()
        try:
            return w.look(since, ours_in_window)
        except Exception as exc:  # noqa: BLE001 - the check must never cost an evaluation
            w.tell(f"bug:{type(exc).__name__}", f"GPU {w.index}: contention check failed "
                                                f"({type(exc).__name__}: {exc}); not checked")
            return Reading(available=False)
        finally:
            self.checking += time.perf_counter() - t

    def before(self) -> None:
        w = self.watch
        if w is None:
            return
        start = self.clock()
        since = start - LOOKBACK_S  # (our last evaluation may show in it: by PID, or by count where PIDs are not ours)
        reading = self._look(since, ours_in_window=w.last_own_work is not None and since < w.last_own_work)
        if reading.busy and w.persisting:
            self.busy_before = True  # the last wait ran out and it is still busy: time now, flagged
        elif reading.busy:
            log.warning(f"GPU {w.index}: in use by another process ({reading.what}); waiting up to "
                        f"{self.wait_s:g} s (--contention-wait) before timing")
            self.busy_before = not self._wait_until_free(start)
            self.waited = self.clock() - start
            if self.busy_before:
                w.persisting = True
                log.warning(f"GPU {w.index}: still in use after {self.waited:.0f} s; timing anyway, flagged "
                            f"{CONTENDED} (no more waiting on this GPU until it is seen free)")
        elif reading.available:
            w.persisting = False
        self.started = self.seen_until = self.clock()
        if self.poll_during:
            self._poller = threading.Thread(target=self._poll, args=(threading.current_thread(),), daemon=True,
                                            name=f"gpu-load-{w.index}")
            self._poller.start()

    def _poll(self, caller: threading.Thread) -> None:
        while not self._stop.wait(DURING_POLL_S) and caller.is_alive():
            self.look_during()

    def look_during(self) -> None:
        """Other processes' work since the last look (during the evaluation)."""
        now = self.clock()
        self.during.append(self._look(self.seen_until, ours_in_window=True))
        self.seen_until = now

    def _wait_until_free(self, start: float) -> bool:
        """Poll until no foreign work for IDLE_S; False if `wait_s` runs out first."""
        deadline = start + self.wait_s
        last_busy = last_look = start
        while (now := self.clock()) < deadline:
            self.sleep(min(POLL_S, deadline - now))
            now = self.clock()
            reading = self._look(last_look, ours_in_window=False)
            last_look = now
            if reading.busy:  # (a look that fails says nothing either way)
                last_busy = now
            elif now - last_busy >= IDLE_S:
                return True
        return False

    def after(self) -> None:
        w = self.watch
        if w is None or self.started is None:
            return
        self.close()
        self.look_during()
        end = w.last_own_work = self.clock()
        busy = [r for r in self.during if r.busy]
        self.busy_during = bool(busy)
        if busy and not self.busy_before:
            log.warning(f"GPU {w.index}: another process used it during an evaluation ({busy[0].what}); "
                        f"flagged {CONTENDED}")
        seen = [r.any_util for r in self.during if r.any_util is not None]
        if seen and end - self.started >= BLIND_MIN_S:
            blind = max(seen) < FOREIGN_UTIL_PCT  # our own evaluation did not show: NVML cannot see it
            if blind and not w.blind:
                w.tell("blind", f"GPU {w.index}: {w.sampler.name} shows no per-process utilization here, not even "
                                "ours; other processes are seen only between evaluations, by the device's "
                                "utilization")
            w.blind = blind
        if not self.busy_before and not busy and all(r.available for r in self.during):
            w.persisting = False

    def close(self) -> None:
        """Stop the looks during the evaluation (after() does; an evaluation that raised before it must)."""
        if self._poller:
            self._stop.set()
            self._poller.join()
            self._poller = None

    @property
    def flags(self) -> tuple[str, ...]:
        return (CONTENDED,) if self.busy_before or self.busy_during else ()

    @property
    def figures(self) -> Contention:
        if self.watch is None:
            return Contention()
        return Contention(gpu_check_s=self.checking, gpu_wait_s=self.waited or None)


SHARE_OF_MEMORY = 0.8  # of a GPU's memory, what evaluations side by side may plan to take together


def sharing_budget(device: DeviceInfo) -> int | None:
    """The bytes of GPU memory evaluations side by side may take together, where sharing the GPU leaves this check
    its meaning: NVML tells our processes' work from others' by PID and per-process utilization (a busy process
    of ours is then never read as another's). None: one evaluation at a time (nvidia-smi, host PIDs, a device whose
    per-process samples are blind, or no look yet)."""
    w = watch_for(device)
    if w is None or not (w.matched and w.per_process) or w.blind:
        return None
    total = w.sampler.total_memory(w.index)
    return int(total * SHARE_OF_MEMORY) if total else None


def check_for(device: DeviceInfo, wait_s: float) -> Check:
    """The contention check of one evaluation on `device` (does nothing off the GPU or where it cannot look)."""
    return Check(watch_for(device), wait_s)
