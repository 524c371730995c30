"""The adversarial corpus on the cpu target (see tests/corpus.py): every exploit fools the naive
evaluator and none is counted as a correct speedup; the static rules and the runtime defenses (rules
off) are each checked against what the exploit's header says."""
from tests.corpus import corpus_tests

globals().update(corpus_tests("cpu"))
