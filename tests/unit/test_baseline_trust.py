"""An eager baseline stands for later runs only once two clean measurements, each from its own child, agree
(baseline.settle); until then it is provisional and measured again. Decided over a real store in a file."""
import pytest

from harness.config import load_settings
from harness.device import discover
from harness.eval.baseline import (
    AGREEMENT,
    NOISY_BASELINE_RSE,
    Listeners,
    baseline_key,
    keep,
    measure_baselines,
    trusted,
)
from harness.eval.cpu_ceiling import CONTENDED_SHARE
from harness.problems.index import resolve
from harness.store import Store
from harness.types import PROTOCOL_VERSION, Baseline, Timing

KEY = ("p" * 64, "CPU", "cpu", "2.13", "float32", PROTOCOL_VERSION, "eager")


pytestmark = pytest.mark.usefixtures("own_machine_store")  # each test its own machine store


def eager(median_ms: float, rse: float = 0.01, foreign_cpu: float | None = 0.01) -> Baseline:
    timing = Timing(median_ms=median_ms, mean_ms=median_ms, std_ms=0.1, min_ms=0.9 * median_ms, n=20, rse=rse)
    return Baseline(timing=timing, foreign_cpu=foreign_cpu, bytes_moved=8)


def run(path, new: Baseline, key=KEY) -> Baseline:
    """One run's measurement, kept as measure_baselines keeps it; what the store holds afterwards, read anew."""
    with Store(path) as store:
        keep([store], key, new, store.baselines(*key[:5]).get(key[-1]))
    with Store(path) as store:
        return store.baselines(*key[:5])[key[-1]]


def test_one_measurement_is_provisional_and_a_second_that_agrees_confirms_the_faster(tmp_path):
    db = tmp_path / "h.db"
    first = run(db, eager(1.00))
    assert first.confirmations == 0 and not trusted("eager", first)
    second = run(db, eager(0.95))  # 5 % apart: agreed
    assert second.confirmations == 1 and trusted("eager", second)
    assert second.timing.median_ms == 0.95 and second.bytes_moved == 8


def test_the_slower_of_two_that_agree_still_confirms_and_the_faster_stays(tmp_path):
    db = tmp_path / "h.db"
    run(db, eager(1.0))
    kept = run(db, eager(1.0 + AGREEMENT - 0.01))
    assert trusted("eager", kept) and kept.timing.median_ms == 1.0


def test_a_disagreeing_measurement_keeps_the_faster_provisional_until_one_agrees_with_it(tmp_path):
    db = tmp_path / "h.db"
    run(db, eager(12.0))  # a uniform burst from a neighbour the counters do not see: low spread, slow
    kept = run(db, eager(0.9))
    assert kept.timing.median_ms == 0.9 and not trusted("eager", kept)
    kept = run(db, eager(12.0))  # slower again: the faster stays, still provisional
    assert kept.timing.median_ms == 0.9 and kept.confirmations == 0 and not trusted("eager", kept)
    kept = run(db, eager(0.93))
    assert kept.timing.median_ms == 0.9 and kept.confirmations == 1 and trusted("eager", kept)


@pytest.mark.parametrize("disturbed", [eager(1.0, rse=2 * NOISY_BASELINE_RSE), eager(1.0, foreign_cpu=0.5)],
                         ids=["noisy", "contended"])
def test_a_disturbed_measurement_never_confirms_and_a_clean_one_replaces_it(tmp_path, disturbed):
    assert CONTENDED_SHARE < 0.5
    db = tmp_path / "h.db"
    run(db, eager(1.0))
    kept = run(db, disturbed)  # the same median, but its own spread or the counters say it was disturbed
    assert not trusted("eager", kept)
    faster = disturbed.model_copy(update={"timing": disturbed.timing.model_copy(update={"median_ms": 0.8})})
    db2 = tmp_path / "h2.db"
    run(db2, faster)
    kept = run(db2, eager(1.0))  # clean beats faster-but-disturbed: a disturbed one could never be confirmed
    assert kept.timing.median_ms == 1.0 and kept.foreign_cpu == 0.01 and not trusted("eager", kept)
    assert trusted("eager", run(db2, eager(1.02)))


def test_old_rows_without_confirmations_load_as_provisional(tmp_path):
    old = eager(1.0).model_dump(exclude={"confirmations"})
    assert not trusted("eager", Baseline.model_validate(old))
    assert trusted("compile", Baseline(timing=eager(1.0).timing, eager_ms=2.0, foreign_cpu=0.9))  # rule unchanged


def test_a_confirmed_eager_is_served_from_the_store(tmp_path):
    """Served: no child is started (one would take seconds and time something else than 0.5 ms)."""
    settings = load_settings(results_dir=tmp_path, db_path=None)
    device, problem = discover("cpu"), resolve("cpu/relu")
    key = baseline_key(problem, device, settings)
    with Store(settings.db) as store:
        for median_ms in (0.5, 0.52):
            keep([store], key, eager(median_ms), store.baselines(*key[:5]).get("eager"))
        told = []
        found = measure_baselines([problem], device, settings, store,
                                  listeners=Listeners(
                                      on_problem=lambda p, baselines, error: told.append((p.id, baselines, error))))
    served = found[problem.sha256]["eager"]
    assert served.timing.median_ms == 0.5 and trusted("eager", served)
    assert told == [("cpu/relu", {"eager": served}, None)]

