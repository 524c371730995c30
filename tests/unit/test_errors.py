"""One root for the harness's errors (harness/errors.py) and one table from exception to exit status
(harness/cli/exits.py): bad input 2, the model's server 1, the harness's own failures 3, a signal 128 + N."""

import ast
import signal
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from harness.api import RunError
from harness.cli import eval as cli_eval
from harness.cli import exits
from harness.cli.console import UsageError
from harness.cli.main import Terminated, main
from harness.config import SettingsError
from harness.device import DeviceError
from harness.errors import HarnessError, HarnessFailed, InputError
from harness.eval.audit import AnswersError
from harness.eval.candidate import CandidateError
from harness.eval.confine import SandboxUnavailable
from harness.eval.gpu_sampler import SamplerError
from harness.eval.ray import RayUnavailable
from harness.facts import FactsError
from harness.llm.prompts import PromptError
from harness.llm.providers import ProviderConfigError, ProviderError
from harness.problems.index import ProblemError
from harness.store import StoreError

PACKAGE = Path(__file__).resolve().parents[2] / "harness"
# Not errors of the harness's: they carry a verdict on the candidate (child/common.py, child/defenses.py) or on a
# problem the gate runs (child/gate.py) to the place that reports it.
VERDICTS = {"EvalFailure", "Tampered", "Stage"}
# sandbox.py is also the launcher's script, run by `python -I -S` with the standard library alone (its docstring).
STANDALONE = {"SandboxError"}
ROOTS = {"Exception", "BaseException", "RuntimeError", "ValueError"}


def exception_classes() -> dict[str, list[str]]:
    """Every class in harness/ that derives from an exception, by name, with the names of its bases."""
    bases = {node.name: [b.id if isinstance(b, ast.Name) else b.attr for b in node.bases]
             for path in PACKAGE.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
             if isinstance(node, ast.ClassDef) and node.bases}

    def is_exception(name: str) -> bool:
        return name in ROOTS or "KeyboardInterrupt" == name or any(is_exception(b) for b in bases.get(name, ()))
    return {name: parents for name, parents in bases.items() if any(is_exception(b) for b in parents)}


def test_every_exception_of_the_harness_is_a_harness_error():
    classes = exception_classes()

    def rooted(name: str) -> bool:
        return name == "HarnessError" or any(rooted(b) for b in classes.get(name, ()))
    outside = {name for name, parents in classes.items() if not rooted(name) and "KeyboardInterrupt" not in parents}
    assert len(classes) > 20 and outside == VERDICTS | STANDALONE


def test_the_standalone_modules_import_nothing_of_the_harness():
    for name in ("sandbox.py", "freeze.py"):  # run as files by the sandbox's launcher and init
        imported = {n.module for n in ast.walk(ast.parse((PACKAGE / name).read_text()))
                    if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(ast.parse((PACKAGE / name).read_text())) if isinstance(n, ast.Import)
                     for a in n.names}
        assert not {m for m in imported if m.split(".")[0] == "harness"}, name


@pytest.mark.parametrize("error", [UsageError, SettingsError, RunError, ProblemError, CandidateError, DeviceError,
                                   StoreError, PromptError, FactsError, ProviderConfigError, RayUnavailable,
                                   SandboxUnavailable, AnswersError])
def test_bad_input_exits_2(error):
    assert issubclass(error, InputError) and exits.status_of(error("why")) == 2


def test_the_table_of_exit_statuses():
    class Setting(BaseModel):
        trials: int

    with pytest.raises(ValidationError) as refused:
        Setting(trials="many")
    assert exits.status_of(refused.value) == 2
    assert exits.status_of(ProviderError("down")) == 1
    assert exits.status_of(HarnessFailed(2, "run it again")) == 3
    assert exits.status_of(KeyboardInterrupt()) == 130 and exits.status_of(Terminated(signal.SIGTERM)) == 143
    assert exits.status_of(SamplerError("nvml")) is None and exits.status_of(ValueError("bug")) is None
    assert isinstance(SamplerError("nvml"), HarnessError)


def test_harness_failures_exit_3_after_the_results(monkeypatch, capsys, tmp_path):
    def failed(args):
        print("the results")
        raise HarnessFailed(2, "the harness or the machine failed, not the candidate; run the same command again")
    monkeypatch.setattr(cli_eval, "cmd_eval", failed)
    assert main(["eval", "--problem", "relu", str(tmp_path / "c.py")]) == 3
    captured = capsys.readouterr()
    assert captured.out == "the results\n"
    assert " ".join(captured.err.split()) == ("2 harness error(s): the harness or the machine failed, not the "
                                              "candidate; run the same command again")


def test_a_bug_is_not_reported_as_an_error(monkeypatch, tmp_path):
    def broken(args):
        raise SamplerError("a bug's traceback is shown, not one line")
    monkeypatch.setattr(cli_eval, "cmd_eval", broken)
    with pytest.raises(SamplerError):
        main(["eval", "--problem", "relu", str(tmp_path / "c.py")])
