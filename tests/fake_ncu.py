"""A stand-in for NVIDIA Nsight Compute's ncu where there is no GPU (the cpu target's tests of the profile tool's
counters): ncu's command line and what it prints. It runs its target as a child, and once the target has ended
prints its CSV report, one row per metric asked for, for one kernel (FAKE_NCU_KERNEL) where the target was told to
bracket a call (the runner's PROFILED_CALL_ENV), and none where not; it exits with the target's status."""
import csv
import os
import sys

VALUED = {"--profile-from-start", "--clock-control", "--launch-count", "--metrics", "--print-units"}
args = sys.argv[1:]
options = {}
while args and args[0].startswith("--"):
    valued = args[0] in VALUED
    options[args[0]] = args[1] if valued else ""
    args = args[2 if valued else 1:]
print("==PROF== Connected to process 1 (fake)", flush=True)
pid = os.fork()
if pid == 0:
    os.execvp(args[0], args)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
print("==PROF== Disconnected from process 1", flush=True)
out = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
out.writerow(["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
              "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
if os.environ.get("HARNESS_PROFILED_CALL") == "1":
    for metric in options["--metrics"].split(","):
        unit, value = ("ns", "12,345") if metric.startswith("gpu__time") else ("byte", "4,194,304")
        out.writerow(["0", "1", "python3", "127.0.0.1", os.environ.get("FAKE_NCU_KERNEL", "relu_kernel"), "1", "7",
                      "(256, 1, 1)", "(4096, 1, 1)", "0", "9.0", "Command line profiler metrics", metric, unit, value])
sys.stdout.flush()
sys.exit(code if code >= 0 else 128 - code)
