"""The machine's store (harness/eval/machine.py): what one results directory measured of the machine (the device's
peaks, a problem's baselines) serves every other, which keeps its own copy; no child measures it again."""
import pytest

from harness.config import load_settings
from harness.device import discover
from harness.eval.baseline import _known, baseline_key, device_peaks, keep, measure_baselines, trusted
from harness.eval.build import torch_version
from harness.eval.machine import MEASUREMENTS_ENV, MachineStore, identity, machine_store, measurements_path
from harness.problems.index import resolve
from harness.store import Store
from harness.types import Peaks
from tests.unit.test_baseline_trust import eager

pytestmark = pytest.mark.usefixtures("own_machine_store")  # each test its own machine store


def test_a_baseline_another_results_directory_confirmed_is_served_and_copied(tmp_path):
    """The machine's store (machine.py) holds what one results directory measured: another is served from it
    without a child, and keeps its own copy for its reports."""
    device, problem = discover("cpu"), resolve("cpu/relu")
    first = load_settings(results_dir=tmp_path / "a", db_path=None)
    key = baseline_key(problem, device, first)
    with Store(first.db) as a, MachineStore(tmp_path / "machine.db") as machine:
        for median_ms in (0.5, 0.52):
            keep([a, machine], key, eager(median_ms), a.baselines(*key[:5]).get("eager"))
    second = load_settings(results_dir=tmp_path / "b", db_path=None)
    with Store(second.db) as b:
        found = measure_baselines([problem], device, second, b)
        served = found[problem.sha256]["eager"]
        assert served.timing.median_ms == 0.5 and trusted("eager", served)
        assert b.baselines(*key[:5])["eager"] == served  # copied into b's store
    assert not (tmp_path / "b" / "cache" / "baselines").exists()  # no child measured anything


def test_a_provisional_machine_baseline_is_settled_by_the_next_measurement(tmp_path):
    """One results directory's provisional time and another's agreeing one confirm each other."""
    device, problem = discover("cpu"), resolve("cpu/relu")
    settings = load_settings(results_dir=tmp_path / "a", db_path=None)
    key = baseline_key(problem, device, settings)
    with MachineStore(tmp_path / "machine.db") as machine:
        keep([machine], key, eager(0.5), None)
        with Store(tmp_path / "b.db") as b:
            before = _known(problem, device, settings, [b, machine])["eager"]
            kept = keep([b, machine], key, eager(0.52), before)
        assert trusted("eager", kept) and machine.baselines(*key[:5])["eager"] == kept


def test_peaks_another_results_directory_measured_are_served_and_copied(tmp_path):
    device = discover("cpu")
    peaks = Peaks(bandwidth_gbs=20.0, tflops={"fp32": 0.3}, foreign_cpu=0.0, best_bandwidth_gbs=20.0)
    with MachineStore(tmp_path / "machine.db") as machine:
        machine.add_peaks(device.name, device.target, torch_version(), peaks)
    settings = load_settings(results_dir=tmp_path / "b", db_path=None)
    with Store(settings.db) as b:
        assert device_peaks(device, settings, b) == peaks
        assert b.peaks(device.name, device.target, torch_version()) == peaks
    assert not (tmp_path / "b" / "cache" / "baselines").exists()  # no child measured anything


def test_measurements_are_kept_under_the_machines_identity_and_not_served_to_another(tmp_path, monkeypatch):
    """A cpu's name says nothing of the cores a container or VM is given: what was measured with 2 cores is not served
    where this process may use 1 (or another quota, or other memory); the machine it was measured on still gets it."""
    device, problem = discover("cpu"), resolve("cpu/relu")
    settings = load_settings(results_dir=tmp_path / "a", db_path=None)
    key = baseline_key(problem, device, settings)
    peaks = Peaks(bandwidth_gbs=20.0, tflops={"fp32": 0.3}, foreign_cpu=0.0, best_bandwidth_gbs=20.0)
    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0, 1})
    with machine_store() as machine:
        machine.add_peaks(device.name, device.target, torch_version(), peaks)
        for median_ms in (0.5, 0.52):
            keep([machine], key, eager(median_ms), machine.baselines(*key[:5]).get("eager"))
        assert machine.peaks(device.name, device.target, torch_version()) == peaks
        assert trusted("eager", machine.baselines(*key[:5])["eager"])
    with Store(tmp_path / "machine.db") as plain:  # the rows name the machine, not the device alone
        assert plain.peaks(device.name, device.target, torch_version()) is None
        assert plain.peaks(identity(device.name, "cpu"), "cpu", torch_version()) == peaks
    assert "2 cores" in identity(device.name, "cpu") and identity("H100", "cuda") == "H100"

    monkeypatch.setattr("os.sched_getaffinity", lambda _pid: {0})  # the same cpu model, given one core
    with machine_store() as machine, Store(tmp_path / "b.db") as b:
        assert machine.peaks(device.name, device.target, torch_version()) is None
        assert machine.baselines(*key[:5]) == {}
        assert _known(problem, device, settings, [b, machine]) == {}  # measured again, not served


def test_the_machine_store_can_be_switched_off(monkeypatch, tmp_path):
    monkeypatch.setenv(MEASUREMENTS_ENV, "off")
    assert measurements_path() is None
    with machine_store() as machine:
        assert machine is None
    monkeypatch.delenv(MEASUREMENTS_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert measurements_path() == tmp_path / "kernel-harness" / "measurements.db"


def test_a_machine_store_that_cannot_be_opened_is_named_and_not_used(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv(MEASUREMENTS_ENV, str(tmp_path))  # a directory, not a file
    with machine_store() as machine:
        assert machine is None
    assert f"HARNESS_MEASUREMENTS={tmp_path} cannot be used" in caplog.text
