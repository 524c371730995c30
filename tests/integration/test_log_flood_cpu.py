"""A candidate that prints 300 MB when imported (issue 19, attack 15: before the log caps, stored three times,
945 MB, and the harness's own process grew to 1.47 GB): its build and its evaluation still get their verdicts, and
what the harness keeps of its output is a capped log, in the store and on disk."""
import sqlite3

from harness import Evaluator
from harness.config import load_settings
from harness.process import LOG_LIMIT
from tests.escapes import HONEST

FLOOD = '''import sys

from torch.utils.cpp_extension import load_inline  # named: a build child imports it too (a source naming none has none)

_line = "flood " * 174762 + "\\n"  # 1 MiB
for _ in range(300):  # in the build child's import and again in the runner's
    sys.stdout.write(_line)
sys.stdout.flush()
'''


def test_a_flood_of_output_is_capped_everywhere_it_is_kept(tmp_path):
    settings = load_settings(results_dir=tmp_path / "results", timing={"budget_s": 0.2}, trials=1,
                             static_rules=False)
    source = FLOOD + HONEST  # torch.relu beside a token Triton kernel: no C++ built, but a build child
    [result] = Evaluator(target="cpu", settings=settings).evaluate([("cpu/relu", source)])
    assert result.status == "correct", result.error
    assert len(result.build.log) < LOG_LIMIT + 200 and "bytes of this log cut" in result.build.log
    with sqlite3.connect(settings.db) as db:
        kept = db.execute("SELECT SUM(LENGTH(log)) FROM builds").fetchone()[0]
        assert kept < LOG_LIMIT + 200
        assert all(len(row) < 2 * LOG_LIMIT for (row,) in db.execute("SELECT result_json FROM evaluations"))
    on_disk = sum(f.stat().st_size for f in (tmp_path / "results").rglob("*") if f.is_file())
    assert on_disk < 64 << 20, f"{on_disk / 2**20:.0f} MiB kept under the results directory"
