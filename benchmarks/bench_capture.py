"""Capture benchmark: recording a real PyTorch backward pass, and replaying a trace.

Run ``python benchmarks/bench_capture.py [--only capture|window|resnet18|notebook]``;
it prints one ``name: value`` line per figure. Targets:

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

torchvision's ``resnet18`` (10 classes, float32 as it comes, a batch of two 32x32
images, cross-entropy; 11.2 million parameters, 134 autograd nodes):

- ``capture_resnet18_ratio`` <= 10: the median time of ``backprop_studio.capture`` over
  the median time of a plain ``backward()``, interleaved in the same run.
- ``resnet18_trace_mb`` <= 60: the size on disk (MiB, 2**20 bytes) of the ``.bptrace``
  that ``trace.save`` writes for that plain capture (gzip-compressed JSON, float32 as
  captured). ``resnet18_tracked_trace_mb`` is the same capture made after a forward
  under ``bps.tracking(model)``, which also stores every forward value, the 11.2
  million weights included (no target: it says what tracking costs).
- ``open_resnet18_s`` < 2: that plain file to the first painted frame of the main
  window, modules collapsed (grouped from the parameters' paths);
  ``open_resnet18_tracked_s`` the same for the tracked file (no target).
- ``player_step_resnet18_ms`` < 33: one step of the main player on it, with every
  visible panel and the canvas repainted (the median over the whole pass).
- ``notebook_repr_s`` < 5: ``_repr_html_`` of a captured, tracked 200-layer MLP (Linear +
  ReLU, width 32, batch 8): the self-contained HTML player a notebook cell shows.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import os
import shutil
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
    # Never a user's settings: the windows opened here would add recent files and a
    # session to reopen.
    _SANDBOX = tempfile.mkdtemp(prefix="bench-capture-")
    atexit.register(shutil.rmtree, _SANDBOX, ignore_errors=True)
    for _var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[_var] = os.path.join(_SANDBOX, _var.lower())

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


def _resnet18() -> tuple[Any, Any]:
    """resnet18 and the loss of one batch, as a user would write it (float32)."""
    from torchvision.models import resnet18

    torch.manual_seed(18)
    model = resnet18(num_classes=10)
    x, target = torch.randn(2, 3, 32, 32), torch.tensor([3, 7])
    return model, lambda: torch.nn.functional.cross_entropy(model(x), target)


def resnet18_figures(repeats: int, folder: Path) -> tuple[dict[str, float], Path, Path]:
    """Capture against plain backward, interleaved; the plain and the tracked file."""
    import backprop_studio as bps

    torch.set_num_threads(1)
    model, loss = _resnet18()
    plain, captured = [], []
    for _ in range(max(3, repeats // 3)):
        out = loss()
        gc.collect()
        t = time.perf_counter()
        out.backward()
        plain.append(time.perf_counter() - t)
        model.zero_grad(set_to_none=True)
        out = loss()
        gc.collect()
        t = time.perf_counter()
        trace = bps.capture(out, names=model)
        captured.append(time.perf_counter() - t)
        model.zero_grad(set_to_none=True)
    path, tracked = folder / "resnet18.bptrace", folder / "resnet18-tracked.bptrace"
    trace.save(path)
    with bps.tracking(model):
        out = loss()
    bps.capture(out, names=model).save(tracked)
    return {
        "capture_resnet18_ratio": statistics.median(captured) / statistics.median(plain),
        "resnet18_trace_mb": path.stat().st_size / 2**20,
        "resnet18_tracked_trace_mb": tracked.stat().st_size / 2**20,
    }, path, tracked


def notebook_figure() -> dict[str, float]:
    import backprop_studio as bps

    torch.manual_seed(2)
    model = mlp(200, 32)
    with bps.tracking(model):
        out = model(torch.randn(8, 32, dtype=torch.float64)).sum()
    trace = bps.capture(out, names=model)
    gc.collect()
    t = time.perf_counter()
    page = trace._repr_html_()
    took = time.perf_counter() - t
    assert page.startswith("<iframe") and "srcdoc" in page, page[:80]
    return {"notebook_repr_s": took}


def resnet18_window_figures(path: Path, tracked: Path) -> dict[str, float]:
    """The main window on the resnet18 traces: open to first paint, then every step."""
    from gui.application import ensure_app
    from gui.main_window import MainWindow

    app = ensure_app()
    window = MainWindow()
    window.resize(1280, 720)
    window.show()
    _painted(app, window)
    opened = {}
    for name, file in (("open_resnet18_s", path), ("open_resnet18_tracked_s", tracked)):
        gc.collect()
        t = time.perf_counter()
        assert window.files.load_path(file)
        _painted(app, window)
        opened[name] = time.perf_counter() - t
        assert window.doc.groups and all(g.collapsed for g in window.doc.groups)
    player = window.player  # on the tracked pass: its modules are all groups
    times = []
    for k in range(len(player.timeline.steps) + 1):
        t = time.perf_counter()
        player.seek(player.timeline.position_of_step(k))
        _painted(app, window)
        times.append(time.perf_counter() - t)
    window.close()
    return opened | {"player_step_resnet18_ms": statistics.median(times) * 1e3}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parts = ("capture", "window", "resnet18", "notebook")
    parser.add_argument("--only", choices=parts, action="append",
                        help="run only these groups of figures (repeatable; default: all)")
    args = parser.parse_args(argv)
    only = set(args.only or parts)
    figures: dict[str, float] = {}
    if "capture" in only:
        figures.update(capture_figures(args.repeats))
    if "window" in only:
        figures.update(window_figures(args.repeats))
    if "resnet18" in only:
        with tempfile.TemporaryDirectory() as folder:
            resnet, plain, tracked = resnet18_figures(args.repeats, Path(folder))
            figures.update(resnet)
            figures.update(resnet18_window_figures(plain, tracked))
    if "notebook" in only:
        figures.update(notebook_figure())
    for name, value in figures.items():
        print(f"{name}: {value:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
