"""What a child and its parent agree on besides protocol.py's JSON: the files of a build directory, the lines a
child prints that the parent looks for in its log (who is to blame for a failure, what the candidate caught), and a
switch the parent sets in an evaluation child's environment."""

# Printed by a child (build or evaluation) just before the candidate's code first runs: what fails before it is
# the harness's or the machine's doing, never the candidate's (harness_error).
CANDIDATE_STARTS = "harness: the candidate's code starts here"
HARNESS_FAILED = 3  # the build child's exit status when the harness itself failed after the candidate's import
# A build directory, as the parent writes it and the build child fills it:
CANDIDATE_FILE = "candidate.py"
MANIFEST_FILE = "manifest.json"
RESULT_FILE = "build.json"
LOG_FILE = "build.log"
# Written instead of running a build child for a source that builds nothing (no load_inline or load: Triton, plain
# PyTorch): the candidate is imported first by its runner, which makes an import failure a compile_error.
UNIMPORTED_FILE = "unimported"
# Printed by the build child when a kernel build failed and the candidate's import caught the exception (then what
# it fails with); the parent quotes it when such a candidate's forward ran none of its kernels (no_kernel_ran).
CAUGHT_BUILD = "harness: a kernel build failed, and the candidate's code caught the exception:"
# Printed by the runner, one JSON object on the line after the marker (child/caught.py): a failure of the candidate's
# own code that its code caught (a build in __init__ or forward, an exception from its extension); the parent quotes
# it where the verdict is not `correct` (eval/said.py). And where its first checked call returned: what it printed up
# to there is what feedback shows of its output.
CAUGHT_AT_RUN = "harness: the candidate's code caught a failure of its own:"
FIRST_CALL_DONE = "harness: the candidate's first checked call returned"
NO_GPU_HINT = (
    "note: the build step imports the candidate with no GPU visible; create CUDA tensors in "
    "__init__ or forward, not at module level"
)
# Set for an evaluation child's runner started ahead of need in a batch with Triton candidates (on a GPU): it makes
# Triton's driver module before the candidate arrives (child/triton_jit.warm_driver)
WARM_TRITON_ENV = "HARNESS_WARM_TRITON"
# Set for the runner of a run under Nsight Compute (eval/counters.py): its first checked call runs once unprofiled
# (compiles, autotuning, caches) and then again between cudaProfilerStart and Stop, the kernels ncu measures
PROFILED_CALL_ENV = "HARNESS_PROFILED_CALL"
