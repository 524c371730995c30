"""Triton's just-in-time work in the evaluation child, measured apart from the stage it happens in:

  compile   Triton compiling a kernel at its first launch (or loading it from the candidate's cache), and making
            its launcher (a C module gcc compiles, in the Triton versions that make one per signature). It is build
            time, done here because Triton needs the launch's argument types and shapes to compile; a build child
            has neither the inputs nor (on the GPU machine) a GPU, and a source that builds nothing has none.
  autotune  `@triton.autotune` benchmarking its configs at the first call with a new key, less the compiles
            inside it. It happens in the checked trials, before timing: the timed calls run the chosen config.

On the cpu target Triton's interpreter has no benchmarker (autotune would fail for want of a GPU driver): each
config is timed on the wall clock instead, so an autotuned kernel is checked there as it would be on a GPU.

Installed before the candidate's code runs, and only for a candidate whose source names Triton.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import time

_clock = time.perf_counter  # bound before any candidate code runs
CPU_BENCH_RUNS = 3


class JitClock:
    """Seconds of Triton compiling and autotuning in this process so far (`seconds`)."""

    def __init__(self, interpreted: bool):
        self.seconds = {"compile": 0.0, "autotune": 0.0}
        self._inside: set[str] = set()  # the kinds being timed now (one thread: the runner's)
        import triton.compiler
        import triton.compiler.compiler
        import triton.runtime.autotuner
        import triton.runtime.jit

        compile_ = triton.compiler.compile
        timed = self._timed("compile", compile_)
        for module in (triton.compiler, triton.compiler.compiler, triton.runtime.jit):  # wherever jit looks it up
            if getattr(module, "compile", None) is compile_:
                module.compile = timed
        if not interpreted:  # made at a kernel's first launch, after compile() returned
            with contextlib.suppress(Exception):  # no driver: the launch itself says what is wrong
                from triton.runtime import driver

                launcher = driver.active.launcher_cls
                launcher.__init__ = self._timed("compile", launcher.__init__)
        autotuner = triton.runtime.autotuner.Autotuner
        autotuner._bench = self._timed("autotune", autotuner._bench)
        if interpreted:
            autotuner.do_bench = functools.cached_property(lambda tuner: tuner._do_bench or cpu_bench)
            autotuner.do_bench.__set_name__(autotuner, "do_bench")

    def _timed(self, kind: str, function):
        @functools.wraps(function)
        def timed(*args, **kwargs):
            if kind in self._inside:  # counted once, by the outermost (a launcher made inside a compile)
                return function(*args, **kwargs)
            compiled_before, started = self.seconds["compile"], _clock()
            self._inside.add(kind)
            try:
                return function(*args, **kwargs)
            finally:
                self._inside.discard(kind)
                elapsed = _clock() - started
                if kind == "autotune":  # a config compiled while being benchmarked is compile time
                    elapsed -= self.seconds["compile"] - compiled_before
                self.seconds[kind] += elapsed
        return timed


def cpu_bench(call, quantiles=None, **_) -> float | list[float]:
    """The interpreter's stand-in for Triton's benchmarker: milliseconds of `call` on the wall clock."""
    call()
    times = []
    for _run in range(CPU_BENCH_RUNS):
        started = _clock()
        call()
        times.append((_clock() - started) * 1e3)
    times.sort()
    if quantiles is None:
        return times[len(times) // 2]
    return [times[min(len(times) - 1, int(q * len(times)))] for q in quantiles]


def warm_driver() -> float | None:
    """Make Triton's driver module now, before any candidate's code is here: C helpers that gcc compiles into
    TRITON_CACHE_DIR (this process's scratch) when a process first creates Triton's CUDA driver, at its first
    launch, and that were therefore part of every Triton candidate's first checked call; and the hash of Triton's
    sources that its first compile keys the kernel cache with. The seconds it took, or
    None where it failed: that is left to the first launch, which will say what is wrong."""
    started = _clock()
    try:
        from triton.runtime import driver

        driver.active.get_current_device()
    except Exception:  # noqa: BLE001 - no Triton, no GPU driver: the candidate's own launch reports it
        return None
    source_key()
    return _clock() - started


def source_key() -> None:
    """Hash Triton's own sources, as its first compile does for its cache key (cached for the process after)."""
    for module_name in ("triton.runtime.cache", "triton.compiler.compiler"):  # where it is, newest Triton first
        try:
            key = getattr(importlib.import_module(module_name), "triton_key", None)
        except ImportError:
            continue
        if callable(key):
            with contextlib.suppress(Exception):  # the first compile makes it then, and reports what fails
                key()
            return
