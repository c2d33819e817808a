"""The PyTorch bridge stays readable: no module over 600 lines, no function over a
cyclomatic complexity of 15 (ruff's mccabe count, the one reviewers see)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "engine" / "pytorch_import"


def test_no_module_of_the_bridge_is_over_600_lines() -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in PACKAGE.glob("*.py")}
    assert len(sizes) >= 8
    assert {name: n for name, n in sizes.items() if n > 600} == {}


def test_no_function_of_the_bridge_is_over_complexity_15() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901"]
        + ["--config", "lint.mccabe.max-complexity=15", str(PACKAGE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
