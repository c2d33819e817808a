"""The engine, the view model and the rest of gui/ type-check: mypy with the settings in
pyproject.toml (engine/ and gui/model/ strictly: strict optional, every def annotated;
the rest of gui/ at mypy's defaults), run like lint-imports in test_import_contracts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_engine_and_gui_pass_mypy() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout
    checked = int(run.stdout.split(" in ")[-1].split()[0])  # "... in N source files"
    assert checked > len(list((ROOT / "engine").rglob("*.py"))) + 60  # gui/ is in
