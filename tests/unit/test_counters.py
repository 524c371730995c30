"""Nsight Compute's report read (eval/counters.py: parsed), the command line the runner runs under, and which stored
results a profile asking for counters may serve again. The rows are ncu 2025.3.1's on an H100, verbatim (fixtures/ncu;
its header line as ncu's CSV pages print it); the real tool end to end: tests/gpu/test_profile_gpu.py."""
import pytest

from harness.eval import counters
from harness.eval.counters import METRICS, parsed, runner_tool
from harness.evidence import Counters
from harness.markers import PROFILED_CALL_ENV
from tests.conftest import FIXTURES, eval_result

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"')
ROWS = (FIXTURES / "ncu" / "mul_kernel_rows.csv").read_text()  # one kernel: x * 2 in PyTorch
REPORT = f"""==PROF== Connected to process 26 (/usr/bin/python3.12)
candidate printed this
==PROF== Profiling "vectorized_elementwise_kernel": 0%....50%....100% - 1 pass
==PROF== Disconnected from process 26
{HEADER}
{ROWS}"""


def test_a_kernel_s_rows_are_one_record_of_its_metrics_in_base_units():
    (kernel,), error = parsed(REPORT)
    assert error is None
    assert kernel.name.startswith("void vectorized_elementwise_kernel<4, AUnaryFunctor<float, float, float, "
                                  "binary_internal::MulFunctor<float>>")
    assert (kernel.block, kernel.grid) == ("(128, 1, 1)", "(16384, 1, 1)")
    assert kernel.duration_us == pytest.approx(41.92)  # 41,920 ns
    assert (kernel.dram_read_bytes, kernel.dram_write_bytes) == (67_117_056, 46_787_840)
    assert (kernel.compute_pct, kernel.memory_pct, kernel.occupancy_pct) == (6.13, 81.11, 80.6)
    assert kernel.registers == 32


def test_kernels_come_in_launch_order_and_lines_in_between_are_skipped():
    second = ROWS.replace('"1","26"', '"10","26"').replace("MulFunctor", "AddFunctor")
    kernels, _ = parsed(f"{HEADER}\n{second}printed by the candidate\n{ROWS}")
    assert [k.name.split("binary_internal::")[1][:10] for k in kernels] == ["MulFunctor", "AddFunctor"]


def test_no_report_is_ncu_s_own_error_lines():
    log = ("==PROF== Connected to process 26 (/usr/bin/python3.12)\n"
           "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
           "Counters on the target device 0.\n")
    kernels, error = parsed(log)
    assert kernels == [] and error.startswith("ncu printed no metrics: ") and "ERR_NVGPUCTRPERM" in error


def test_the_runner_runs_under_ncu_profiling_only_its_bracketed_call_with_the_clocks_left_alone(monkeypatch):
    monkeypatch.setenv(counters.PATH_ENV, "/opt/nsight/ncu --quiet-ish")
    tool = runner_tool()
    argv = list(tool.argv)
    assert argv[:2] == ["/opt/nsight/ncu", "--quiet-ish"]
    assert argv[argv.index("--profile-from-start") + 1] == "off"
    assert argv[argv.index("--clock-control") + 1] == "none"  # a profile must not change a shared GPU's clocks
    assert argv[argv.index("--metrics") + 1].split(",") == list(METRICS)
    assert tool.env == {PROFILED_CALL_ENV: "1"}
    assert counters.available("cuda") and not counters.available("cpu")


def test_a_stored_result_serves_a_profile_asking_for_counters_only_where_it_holds_them(tmp_path):
    from harness.config import load_settings
    from harness.eval.pipeline import servable
    settings = load_settings(results_dir=tmp_path, counters=True)
    assert not servable(eval_result(), settings)
    assert servable(eval_result().model_copy(update={"counters": Counters(error="ncu printed no metrics")}), settings)
    assert servable(eval_result().model_copy(update={"status": "compile_error"}), settings)  # nothing ran to count
    assert servable(eval_result(), load_settings(results_dir=tmp_path))


def test_columns_are_found_by_name_and_those_it_can_do_without_may_be_missing():
    renamed = HEADER.replace('"Block Size"', '"Block"').replace('"Grid Size"', '"Grid"')
    (kernel,), error = parsed(f"{renamed}\n{ROWS}")
    assert error is None and (kernel.block, kernel.grid) == ("", "") and kernel.registers == 32
    _, error = parsed(HEADER.replace('"Metric Value"', '"Value"') + "\n" + ROWS)
    assert error == "ncu printed no metrics"  # a report it cannot read is a note, not a crash
