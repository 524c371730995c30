"""Training problems on the cpu target (issue 59): the training corpus (tests/training_corpus.py) as C++ kernels
sharing one extension, on cpu/layernorm_training. Real builds, real children."""
from tests.training_corpus import training_tests

globals().update(training_tests("cpu"))
