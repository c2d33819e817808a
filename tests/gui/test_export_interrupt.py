"""Ctrl+C during an export is the clean "export cancelled, nothing written", however
many times it is pressed and wherever it lands (issue 25, item 10)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.examples import EXAMPLES_DIR

MAIN = Path(__file__).resolve().parents[2] / "main.py"


@pytest.mark.parametrize("suffix", [".gif", ".pdf"])
def test_sigint_during_an_export_cancels_cleanly(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"lesson{suffix}"
    proc = subprocess.Popen(
        [
            sys.executable,
            str(MAIN),
            "export",
            str(EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"),
            "--all",
            "--out",
            str(out),
            "--progress",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith("progress: ")
    for _ in range(6):  # a held Ctrl+C: repeats while the export cleans up
        proc.send_signal(signal.SIGINT)
        time.sleep(0.02)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert err.strip().endswith("export cancelled, nothing written"), err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []
