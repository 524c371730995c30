"""How the evaluation child names what went wrong in a candidate: a Triton kernel that does not compile (raised at
its first launch, inside forward) is a compile_error, like a load_inline build that fails; anything else raised is
a runtime_error."""
import pytest

from harness.child.common import EvalFailure, failing_as


def raised(exc: BaseException) -> EvalFailure:
    with pytest.raises(EvalFailure) as caught, failing_as("ModelNew.forward failed (trial 0)"):
        raise exc
    return caught.value


def test_triton_compiler_errors_are_compile_errors():
    from triton.compiler.errors import CompilationError

    failure = raised(CompilationError("def k(x):\n    tl.foo(x)\n", None, "foo is not defined"))
    assert failure.status == "compile_error" and "Triton could not compile a kernel" in str(failure)


def test_the_interpreter_wrapping_what_a_compiler_would_refuse_is_a_compile_error():
    from triton.runtime.errors import InterpreterError

    try:
        try:
            raise AttributeError("module 'triton.language' has no attribute 'maximun'")
        except AttributeError as cause:
            raise InterpreterError(repr(cause)) from cause
    except InterpreterError as exc:
        failure = raised(exc)
    assert failure.status == "compile_error" and "maximun" in str(failure)


def test_other_failures_stay_runtime_errors():
    from triton.runtime.errors import InterpreterError

    assert raised(RuntimeError("CUDA error: an illegal memory access")).status == "runtime_error"
    assert raised(AttributeError("'NoneType' object has no attribute 'shape'")).status == "runtime_error"
    assert raised(InterpreterError("out of resources")).status == "runtime_error"


def test_a_long_triton_compile_error_keeps_where_and_what():
    """The message a model gets back: Triton's `at LINE:COLUMN:`, the lines before the error and the error itself,
    even where the kernel's lines are long (describe() alone would keep the first 2000 characters)."""
    import ast

    from triton.compiler.errors import CompilationError

    source = "def k(x):\n" + "".join(f"    y{i} = x + {'1 + ' * 80}{i}\n" for i in range(30)) + "    tl.maximun(x)\n"
    failure = raised(CompilationError(source, ast.parse(source).body[0].body[-1], "maximun is not defined"))
    text = str(failure)
    assert failure.status == "compile_error" and "at 32:4:" in text and text.endswith("maximun is not defined")
    assert "tl.maximun(x)" in text and len(text) < 2200
