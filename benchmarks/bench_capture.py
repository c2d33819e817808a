"""Capture benchmark: recording a real PyTorch backward pass, and replaying a trace.

Run ``python benchmarks/bench_capture.py``; it prints one ``name: value`` line per
figure. Targets:

- ``capture_mlp1000_ratio`` <= 15: the median time of :func:`engine.capture.capture`
  over the median time of a plain ``backward()`` on the same 1,000-node MLP (200
  Linear+ReLU layers, width 32, batch 8, float64), interleaved in the same run. The
  capture does the same backward plus the walk, the hooks and the float64 copies.
- ``capture_mlp1000_mb`` <= 20: the peak memory the capture allocates (tracemalloc:
  the recorded arrays and steps).
- ``open_trace_5000_s`` < 2: a 5,000-node trace file to the first painted frame of the
  main window, its modules collapsed.
- ``player_step_trace_5000_ms`` < 33: one step of the main player on that trace, with
  every visible panel and the canvas repainted.
- ``expand_module_500_ms`` < 200: expanding a 500-node module in place, repainted.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from engine.capture import capture, tracking  # noqa: E402


def mlp(depth: int, width: int) -> Any:
    layers: list[Any] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).double()


def capture_figures(repeats: int) -> dict[str, float]:
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = mlp(200, 32)
    x = torch.randn(8, 32, dtype=torch.float64)
    plain, captured = [], []
    for _ in range(repeats):
        out = model(x).sum()
        gc.collect()
        t = time.perf_counter()
        out.backward()
        plain.append(time.perf_counter() - t)
        model.zero_grad(set_to_none=True)
        out = model(x).sum()
        gc.collect()
        t = time.perf_counter()
        trace = capture(out, names=model)
        captured.append(time.perf_counter() - t)
        del trace
        model.zero_grad(set_to_none=True)
    out = model(x).sum()
    gc.collect()
    tracemalloc.start()
    trace = capture(out, names=model)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(trace.steps) >= 1000
    return {
        "capture_mlp1000_ratio": statistics.median(captured) / statistics.median(plain),
        "capture_mlp1000_mb": peak / 2**20,
    }


def trace_5000(folder: Path) -> Path:
    """A 5,000-node trace: 1,000 Linear+ReLU layers (width 4, batch 2), saved."""

    torch.manual_seed(1)
    model = mlp(1000, 4)
    trace = capture(model(torch.randn(2, 4, dtype=torch.float64)).sum(), names=model)
    path = folder / "mlp5000.bptrace"
    trace.save(path)
    return path


def module_500(folder: Path) -> Path:
    """A trace whose one module holds 500 nodes (250 x -> tanh(x * w) inside ``block``)."""

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.full((2,), 0.5, dtype=torch.float64))

        def forward(self, x: Any) -> Any:
            for _ in range(250):
                x = torch.tanh(x * self.w)
            return x

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), Block()).double()
    with tracking(model, values=False):
        out = model(torch.ones(1, 2, dtype=torch.float64)).sum()
    path = folder / "module500.bptrace"
    capture(out, names=model).save(path)
    return path


def _painted(app: Any, window: Any) -> None:
    app.processEvents()
    window.canvas.viewport().repaint()


def window_figures(repeats: int) -> dict[str, float]:
    """The main window on captured traces: open, step, expand one module."""
    from gui.application import ensure_app
    from gui.group_commands import set_collapsed
    from gui.main_window import MainWindow

    app = ensure_app()
    with tempfile.TemporaryDirectory() as folder:
        path, big = trace_5000(Path(folder)), module_500(Path(folder))
        window = MainWindow()
        window.resize(1280, 720)
        window.show()
        _painted(app, window)
        gc.collect()
        t = time.perf_counter()
        assert window.files.load_path(path)
        _painted(app, window)  # the first painted frame, modules collapsed
        opened = time.perf_counter() - t
        assert len(window.doc.graph) >= 5000 and all(g.collapsed for g in window.doc.groups)
        player = window.player
        start = player.timeline.forward_length
        times = []
        for k in range(repeats * 10):
            t = time.perf_counter()
            player.seek(start + k)
            _painted(app, window)
            times.append(time.perf_counter() - t)
        assert window.files.load_path(big)
        _painted(app, window)
        group = max(window.doc.groups, key=lambda g: len(g.members))
        assert len(group.members) >= 500, len(group.members)
        expand = []
        for _ in range(repeats):
            t = time.perf_counter()
            set_collapsed(window.doc, group.id, False).redo()
            _painted(app, window)
            expand.append(time.perf_counter() - t)
            set_collapsed(window.doc, group.id, True).redo()
            _painted(app, window)
        window.close()
    return {
        "open_trace_5000_s": opened,
        "player_step_trace_5000_ms": statistics.median(times) * 1e3,
        "expand_module_500_ms": statistics.median(expand) * 1e3,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    figures = capture_figures(args.repeats)
    figures.update(window_figures(args.repeats))
    for name, value in figures.items():
        print(f"{name}: {value:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
