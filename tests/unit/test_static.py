from harness.eval.candidate import candidate_from_source, precheck


def test_model_new_class_passes():
    assert precheck("import torch\nclass ModelNew(torch.nn.Module):\n    pass\n") is None


def test_assignment_or_import_of_model_new_counts():
    assert precheck("ModelNew = object\n") is None
    assert precheck("from elsewhere import ModelNew\n") is None


def test_no_model_new_is_no_code():
    status, message = precheck("class Model:\n    pass\n")
    assert status == "no_code" and "ModelNew" in message


def test_syntax_error_is_a_compile_error_with_the_line():
    status, message = precheck("class ModelNew(:\n")
    assert status == "compile_error" and "line 1" in message


def test_candidate_hash_is_of_the_source():
    a, b = candidate_from_source("x = 1\n"), candidate_from_source("x = 2\n")
    assert a.sha256 != b.sha256 and len(a.sha256) == 64 and a.path is None
