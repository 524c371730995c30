"""A stand-in for NVIDIA's compute-sanitizer where there is no GPU (the cpu target's tests of `--sanitize`): the
tool's command line and its contract with whoever runs it. It runs its target as a child (the descriptors it
inherited go on to it), prints its banner, and once the target has ended prints FAKE_SANITIZER_ERRORS (from the
environment; 0 where unset) reports in memcheck's shape and its summary, then exits with --error-exitcode's status
where it reported errors, else the target's own."""
import os
import sys

args = sys.argv[1:]
options = {}
while args and args[0].startswith("--"):
    options[args[0]] = args[1]
    args = args[2:]
print("========= COMPUTE-SANITIZER", flush=True)
pid = os.fork()
if pid == 0:
    os.execvp(args[0], args)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
errors = int(os.environ.get("FAKE_SANITIZER_ERRORS", "0"))
for thread in range(errors):
    print("========= Invalid __global__ write of size 4 bytes")
    print(f"=========     at relu_kernel(const float *, float *, long)+0x1c0 in {os.getcwd()}/cuda.cu:12")
    print(f"=========     by thread ({thread},0,0) in block (1024,0,0)")
    print("=========     Address 0x7f3a00400000 is out of bounds")
    print("=========     and is 4 bytes after the nearest allocation at 0x7f3a00000000 of size 4194304 bytes")
    print("=========     Saved host backtrace up to driver entry point at kernel launch time")
    print("=========         Host Frame: [0x2f2b5f] in libcuda.so.1")
    print("=========")
print(f"========= ERROR SUMMARY: {errors} error{'s' * (errors != 1)}", flush=True)
sys.exit(int(options["--error-exitcode"]) if errors else code if code >= 0 else 128 - code)
