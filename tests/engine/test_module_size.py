"""The engine stays readable: no module over 600 lines, no function over a cyclomatic
complexity of 15 (ruff's mccabe count, the one reviewers see), in every package of it
(the PyTorch bridge, the op table, the file format, the autodiff core)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ENGINE = Path(__file__).resolve().parents[2] / "engine"


def test_no_module_of_the_engine_is_over_600_lines() -> None:
    sizes = {
        str(p.relative_to(ENGINE)): len(p.read_text(encoding="utf-8").splitlines())
        for p in ENGINE.rglob("*.py")
    }
    assert "pytorch_import/walker.py" in sizes and "ops/record.py" in sizes
    assert {name: n for name, n in sizes.items() if n > 600} == {}


def test_no_function_of_the_engine_is_over_complexity_15() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901"]
        + ["--config", "lint.mccabe.max-complexity=15", str(ENGINE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stdout + run.stderr
