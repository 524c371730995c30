"""Build acceleration: everything that makes a build faster than plain torch `load_inline`, behind one switch.

  names.py       the switch (ENV, enabled) and the names the build child, its compilers and the parent share
  hooks.py       the build child's side: torch's nvcc command made our driver, the precompiled torch/extension.h
  pch.py         that header, keyed by torch's own flags, asked for by a build and made by a child of its own
  nvcc_split.py  nvcc's host and device front ends run side by side, on nvcc_plan.py's reading of its plan
  host_pch.py    a precompiled head for nvcc's host compile
  front_ends.py  the parent's grant of a second core for the split
  maker.py       the parent's side of the headers: made after a build asked, sealed, trusted

Off (`build_acceleration = false`, HARNESS_BUILD_ACCELERATION=0), a build is torch's own: none of these runs. Every
part here leans on torch's private extension API or on nvcc's `--dryrun` plan, so it is the first to break on an
upgrade. torch is imported only inside functions: the parent imports this package too.
"""
