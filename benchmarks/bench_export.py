"""Lesson export figures: each is a whole ``main.py export --all`` process, as a user runs it.

    .venv/bin/python benchmarks/bench_export.py [name ...]

Prints one ``name: value`` line per figure:

- ``gif_seed2_s``: seed example 2, every step (with the default transitions), 1280x720
  GIF. Target < 5.
- ``mp4_1000_steps_s``: a 1,000-step backward pass (a chain of 1,000 unary ops) to a
  1280x720 MP4, one picture per step (``--transition 0``). Target < 60.
- ``mp4_1000_steps_peak_mb`` and ``mp4_250_steps_peak_mb``: the peak resident memory of
  those processes; equal within noise when frames are streamed, not held.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"
UNARY = ("sin", "tanh", "cos", "sigmoid")


def chain_file(steps: int, folder: Path) -> Path:
    """A graph file whose backward pass has exactly ``steps`` steps: x then ``steps``
    unary ops in a row, the last one the output."""
    from engine.fileformat import GraphFile, save
    from engine.graph import Graph

    g = Graph()
    g.add_node("x", "input", value=0.5)
    prev = "x"
    for i in range(steps):
        nid = f"n{i + 1}"
        g.add_node(nid, UNARY[i % len(UNARY)], [prev])
        prev = nid
    path = folder / f"chain_{steps}.bpgraph"
    save(path, GraphFile(graph=g, output=prev, title=f"A chain of {steps} ops"))
    return path


def run_export(*args: str) -> tuple[float, float]:
    """Wall seconds and peak resident MB of one ``main.py export`` process."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, str(ROOT / "main.py"), "export", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(child.pid, 0)  # this child's own peak memory
    seconds = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"export failed: {child.stderr.read().decode().strip()}")
    return seconds, usage.ru_maxrss / 1024.0


def gif_seed2_s(folder: Path) -> float:
    return run_export(
        str(SEED2), "--all", "--out", str(folder / "seed2.gif"), "--size", "1280x720"
    )[0]


def _mp4_chain(folder: Path, steps: int) -> tuple[float, float]:
    return run_export(
        str(chain_file(steps, folder)),
        "--all",
        "--out",
        str(folder / f"chain_{steps}.mp4"),
        "--size",
        "1280x720",
        "--transition",
        "0",
    )


def mp4_1000_steps_s(folder: Path) -> float:
    return _mp4_chain(folder, 1000)[0]


def mp4_1000_steps_peak_mb(folder: Path) -> float:
    return _mp4_chain(folder, 1000)[1]


def mp4_250_steps_peak_mb(folder: Path) -> float:
    return _mp4_chain(folder, 250)[1]


FIGURES: dict[str, Callable[[Path], float]] = {
    "gif_seed2_s": gif_seed2_s,
    "mp4_1000_steps_s": mp4_1000_steps_s,
    "mp4_250_steps_peak_mb": mp4_250_steps_peak_mb,
    "mp4_1000_steps_peak_mb": mp4_1000_steps_peak_mb,
}


def main(names: list[str]) -> int:
    unknown = [n for n in names if n not in FIGURES]
    if unknown:
        print(
            f"unknown figure(s): {', '.join(unknown)}; known: {', '.join(FIGURES)}", file=sys.stderr
        )
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or list(FIGURES):
            print(f"{name}: {FIGURES[name](Path(tmp)):.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
