"""Where the problem set, the prompt templates and the reference solutions are.

A wheel carries them inside the package, in harness/_data/ (pyproject.toml maps the repository's problems/,
prompts/ and solutions/reference/ there). A checkout or an editable install has no harness/_data: there they are
the checkout's own directories, so a problem file added to problems/ shows at once.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def data_root() -> Path:
    """harness/_data of an installed wheel, else the checkout that holds the harness package."""
    package = Path(str(resources.files("harness"))).resolve()
    packaged = package / "_data"
    return packaged if packaged.is_dir() else package.parent


def problems_root() -> Path:
    """The problem set shipped with the harness (problems/ of a checkout)."""
    return data_root() / "problems"


def prompts_root() -> Path:
    """The prompt templates, one directory per target plus common/ (prompts/ of a checkout)."""
    return data_root() / "prompts"


def reference_solutions() -> Path:
    """The hand-written reference solutions the offline provider answers with (solutions/reference/)."""
    return data_root() / "solutions" / "reference"
