"""The import direction is a contract: engine and gui.model never import Qt, no circles.

Runs import-linter with the contracts in pyproject.toml; a broken contract fails
the suite with import-linter's report (which import chain broke it).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    code = "from importlinter.cli import lint_imports_command; lint_imports_command()"
    run = subprocess.run(
        [sys.executable, "-c", code, "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 broken" in run.stdout
    assert "Contracts: 3 kept" in run.stdout


def test_view_model_runs_headless() -> None:
    """gui.model builds frames and write-ups in a process that never loads Qt."""
    code = (
        "import sys\n"
        "import gui.model.chain_rule, gui.model.node_box, gui.model.end_to_end\n"
        "assert not any(m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')"
        " for m in sys.modules), 'Qt was imported'\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
