"""The cuda corpus's static half needs no GPU: the rules must reject what each header says, in CI too."""
from tests.corpus import corpus_tests

globals().update({name: test for name, test in corpus_tests("cuda").items()
                  if name in ("test_static_rules_reject_what_the_header_says",
                              "test_correct_and_wrong_files_raise_no_static_findings")})
