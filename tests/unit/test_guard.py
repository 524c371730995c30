"""The runner's Guard (harness/child/defenses.py) on its own: what a candidate rebinds is found, what torch itself
does on first use is not."""
import torch

from harness.child.defenses import Guard
from harness.child.runner import warm_up


def test_rebinding_a_function_of_torch_s_c_module_is_found(monkeypatch):
    warm_up("cpu")
    guard = Guard()
    # torch.cuda.synchronize, empty_cache and memory_snapshot call through such functions: a no-op in their place
    # would blind the poisoning and the runner's synchronisation without touching torch.cuda itself.
    monkeypatch.setattr(torch._C, "_get_tracing_state", lambda: None)
    assert guard.changes() == ["torch._C._get_tracing_state"]


def test_torch_compile_and_the_profiler_rebind_nothing_it_watches():
    warm_up("cpu")
    guard = Guard()
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
    torch.compile(model)(torch.randn(4, 16))
    with torch.profiler.profile():
        model(torch.randn(4, 16))
    assert guard.changes() == []
