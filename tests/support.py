"""Test support shared by the engine and GUI tests: seed graphs and the PyTorch reference.

On the import path through ``pythonpath = ["tests"]`` (pyproject.toml):
``import support`` / ``from support import seed2_graph``.
"""

from __future__ import annotations

import importlib.util
import os
import random
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from engine.graph import Graph
from engine.ops import OPS
from engine.ops.torch_source import expression
from engine.trace import JACOBIAN_LIMIT

try:
    import torch
except ImportError:  # the torch comparisons skip; everything else still runs
    torch = None


# --------------------------------------------------------------------------- seed graphs


def seed2_graph() -> Graph:
    """Seed example 2: y = [x1·x2·x3, x1+x2+x3, x1+x2·x3], as a stack of three scalars.

    x1, x2, x3 = 1, 2, 3; a = x1·x2, y1 = a·x3; b = x1+x2, y2 = b+x3; c = x2·x3,
    y3 = x1+c; y = stack(y1, y2, y3).
    """
    g = Graph()
    for name, v in (("x1", 1.0), ("x2", 2.0), ("x3", 3.0)):
        g.add_node(name, "input", value=v)
    g.add_node("a", "mul", ["x1", "x2"])
    g.add_node("y1", "mul", ["a", "x3"])
    g.add_node("b", "add", ["x1", "x2"])
    g.add_node("y2", "add", ["b", "x3"])
    g.add_node("c", "mul", ["x2", "x3"])
    g.add_node("y3", "add", ["x1", "c"])
    g.add_node("y", "stack", ["y1", "y2", "y3"])
    return g


def shuffled_graph(rng: random.Random, n: int = 40, *, complete: bool = False) -> Graph:
    """Leaves and unary, binary (and, unless ``complete``, variadic) ops, linked to
    earlier nodes in a shuffled order, so consumer orders are not creation orders
    (the orders an edit history leaves). Unless ``complete``, a few ports stay empty.
    """
    ops = [("tanh", 1), ("add", 2), ("mul", 2)] + ([] if complete else [("stack", 3)])
    g = Graph()
    ports: list[tuple[str, int]] = []
    for i in range(n):
        nid = f"n{i}"
        if i < 3 or rng.random() < 0.2:
            g.add_node(nid, "input", value=0.1 * i)
            continue
        op, arity = rng.choice(ops)
        g.add_node(nid, op)
        ports += [(nid, k) for k in range(arity)]
    rng.shuffle(ports)
    order = list(g.nodes)
    for dst, k in ports:
        if not complete and rng.random() < 0.1:
            continue
        g.connect(rng.choice(order[: order.index(dst)]), dst, k)
    return g


def seed3_graph() -> Graph:
    """Seed example 3: x=ones(2,2), y=x+2, z=y*y, out=z.mean()."""
    g = Graph()
    g.add_node("x", "input", value=np.ones((2, 2)))
    g.add_node("two", "const", value=2.0)
    g.add_node("y", "add", ["x", "two"])
    g.add_node("z", "mul", ["y", "y"])
    g.add_node("out", "mean", ["z"])
    return g


# --------------------------------------------------------------------------- PyTorch reference


def torch_op(name: str, xs: Sequence[Any], attrs: dict[str, Any]) -> Any:
    """The PyTorch counterpart of one engine op, applied to tensors ``xs``.

    Read from the op table: the expression the script export writes for the node
    (:func:`engine.ops.torch_source.expression`), run on the tensors, so the spellings
    the table publishes are the ones tested.
    """
    names = [f"x{i}" for i in range(len(xs))]
    source = expression(OPS[name], names, attrs)
    return eval(source, {"torch": torch, **dict(zip(names, xs, strict=True))})  # noqa: S307


def close(actual: Any, expected: Any, rtol: float = 1e-9, atol: float = 1e-12) -> None:
    """Same shape and the same numbers within the tolerances (NaN equals NaN)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)


# --------------------------------------------------------------------------- benchmarks

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@cache
def script(name: str) -> ModuleType:
    """Import ``benchmarks/<name>.py`` as a module, keeping this process's environment
    (the scripts pin BLAS threads and sandbox settings folders when they start)."""
    saved = dict(os.environ)
    try:
        spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return module


def count_calls(monkeypatch: Any, owner: object, name: str) -> list[int]:
    """Count the calls of ``owner.name`` from now on (the list's one item)."""
    count = [0]
    original = getattr(owner, name)

    def counted(*args: object, **kwargs: object) -> object:
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return count


def redrawn_boxes(monkeypatch: Any) -> list[str]:
    """The ids of the node boxes given new content from now on (in order, repeats kept):
    a player step must redraw only the boxes it changes."""
    from gui.canvas.node_item import NodeItem

    touched: list[str] = []
    original = NodeItem.set_content

    def counting(self: Any, content: Any) -> Any:
        touched.append(self.node_id)
        return original(self, content)

    monkeypatch.setattr(NodeItem, "set_content", counting)
    return touched


def laid_out_ahead(qtbot: Any, panel: Any) -> None:
    """Wait (untimed: however loaded the machine) until the chain-rule ``panel`` has
    laid out the next step's write-up in idle time, as it does ``AHEAD_MS`` after a step."""
    qtbot.waitUntil(lambda: panel._ahead is not None, timeout=10_000)


def wheel(view: Any, notches: int) -> None:
    """``notches`` turns of the mouse wheel (120 each) over the middle of ``view``."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    centre = QPointF(view.viewport().rect().center())
    QApplication.sendEvent(view.viewport(), QWheelEvent(
        centre, QPointF(view.viewport().mapToGlobal(centre.toPoint())), QPoint(),
        QPoint(0, 120 * notches), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase, False))


# --------------------------------------------------------------------------- captured models


def captured_mlp(path: Path) -> Path:
    """A two-layer MLP with cross-entropy, captured with its modules tracked, saved."""
    from engine.capture import capture, tracking

    torch.manual_seed(5)
    model = torch.nn.Sequential(
        torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2)
    ).double()
    x = torch.randn(2, 4, dtype=torch.float64)
    with tracking(model):
        loss = torch.nn.functional.cross_entropy(model(x), torch.tensor([0, 1]))
    capture(loss, names=model).save(path)
    return path


def lesson_file(name: str, folder: Path) -> Path:
    """A shipped example's file by its stem, or ("mlp", "cnn") a captured model's trace
    saved in ``folder`` (skipped without torch)."""
    if name not in ("mlp", "cnn"):
        from engine.examples import example_path

        return example_path(name)
    if torch is None:
        import pytest

        pytest.skip("torch is not installed")
    return (captured_mlp if name == "mlp" else captured_cnn)(folder / f"{name}.bptrace")


def present(win: Any, size: tuple[int, int] = (1280, 720)) -> Any:
    """``win`` in presentation mode at ``size`` (the offscreen screen is not that size:
    the window is sized instead), its animations off, settled."""
    from PySide6.QtWidgets import QApplication

    win.canvas.animations_enabled = False
    win.enter_presentation()
    win.showNormal()
    win.resize(*size)
    QApplication.processEvents()
    return win


def captured_cnn(path: Path) -> Path:
    """A small CNN (conv, batch norm, max-pool), captured and saved."""
    from engine.capture import capture, tracking

    torch.manual_seed(6)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3),
        torch.nn.BatchNorm2d(2),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(2, 2),
    ).double()
    x = torch.randn(1, 1, 4, 4, dtype=torch.float64)
    with tracking(model):
        loss = model(x).pow(2).sum()
    capture(loss, names=model).save(path)
    return path


def captured_block(path: Path) -> Path:
    """A transformer-style block (nested modules: a layer norm, multi-head attention and
    a GELU MLP, each with a residual), captured and saved."""
    from engine.capture import capture, tracking

    nn = torch.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = nn.LayerNorm(4)
            self.attn = nn.MultiheadAttention(4, 2, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 4))

        def forward(self, x: Any) -> Any:
            h = self.norm(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(x)

    torch.manual_seed(7)
    model = nn.Sequential(Block()).double()
    x = torch.randn(1, 3, 4, dtype=torch.float64)
    with tracking(model):
        loss = model(x).pow(2).sum()
    capture(loss, names=model).save(path)
    return path


def assert_edges_compose(trace: Any, limit: int = JACOBIAN_LIMIT) -> int:
    """upstream · J == vjp on every edge with at most ``limit`` Jacobian entries."""
    checked = 0
    for s in trace.steps:
        if s.jacobian_size > limit:
            continue
        jac = s.jacobian(limit)
        assert jac is not None, (s.consumer, s.operand)
        got = s.upstream.ravel() @ jac
        np.testing.assert_allclose(
            got, s.vjp.ravel(), rtol=0, atol=1e-12, err_msg=f"{s.consumer} -> {s.operand}"
        )
        checked += 1
    return checked


# --------------------------------------------------------------------------- exports


def decoded(path: Path) -> list[np.ndarray]:
    """Every picture of an animation, as RGB arrays (Pillow, or PyAV for MP4)."""
    if path.suffix == ".mp4":
        import av  # lazy: only the export tests decode video

        with av.open(str(path)) as c:
            return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    from PIL import Image

    with Image.open(path) as im:
        out = []
        for i in range(im.n_frames):
            im.seek(i)
            out.append(np.asarray(im.convert("RGB")))
        return out


def deep_mlp(activation: type) -> Any:
    """Issue 27's gradient-flow model: 10 Linear layers of width 16 with ``activation``
    after each, Kaiming-normal weights, zero biases (float64)."""
    torch.manual_seed(0)
    layers: list[Any] = []
    for _ in range(10):
        linear = torch.nn.Linear(16, 16).double()
        torch.nn.init.kaiming_normal_(linear.weight)
        torch.nn.init.zeros_(linear.bias)
        layers += [linear, activation()]
    return torch.nn.Sequential(*layers)


def deep_mlp_trace(activation: str) -> Any:
    """:func:`deep_mlp` with ``torch.nn.<activation>``, captured with its modules tracked."""
    from engine.capture import capture, tracking

    model = deep_mlp(getattr(torch.nn, activation))
    x = torch.randn(8, 16, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    with tracking(model):
        loss = model(x).sum()
    return capture(loss, names=model)


def relative_luminance(hex_rgb: str) -> float:
    """WCAG 2 relative luminance of ``#rrggbb``."""
    channels = [int(hex_rgb[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2 contrast ratio of two ``#rrggbb`` colours (1 .. 21)."""
    hi, lo = sorted((relative_luminance(a), relative_luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


# --------------------------------------------------------------------------- results


def same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_results_fresh(doc: Any) -> None:
    """A document's results (however it recomputed them: incrementally after an edit,
    or whole) equal, bit for bit, a fresh forward and backward of its graph: values,
    errors, requires-grad flags, the order, every gradient and every step's numbers."""
    from engine.autodiff import backward, forward
    from engine.errors import GraphError

    got, fresh = doc.results.forward, forward(doc.graph)
    assert got.order == fresh.order
    assert list(got.values) == list(fresh.values)
    assert all(same_bits(got.values[n], fresh.values[n]) for n in fresh.values)
    assert {n: str(e) for n, e in got.errors.items()} == {
        n: str(e) for n, e in fresh.errors.items()}
    assert got.requires_grad == fresh.requires_grad
    trace = doc.results.trace
    if doc.output is None:
        assert trace is None
        return
    try:
        full = backward(doc.graph, fresh, doc.output, doc.gradient, prior=doc.prior_grads)
    except GraphError as exc:
        assert trace is None and str(doc.results.backward_error) == str(exc)
        return
    assert trace is not None
    assert list(trace.grads) == list(full.grads)
    assert all(same_bits(trace.grads[n], full.grads[n]) for n in full.grads)
    assert trace.leaves == full.leaves and trace.output == full.output
    assert len(trace.steps) == len(full.steps)
    for s, f in zip(trace.steps, full.steps, strict=True):
        assert (s.consumer, s.operand, s.operand_index) == (f.consumer, f.operand,
                                                            f.operand_index)
        assert same_bits(s.upstream, f.upstream) and same_bits(s.vjp, f.vjp)
        assert same_bits(s.before, f.before) and same_bits(s.accumulated, f.accumulated)


# --------------------------------------------------------------------------- exported pages


def pdf_page_size() -> tuple[float, float]:
    """The PDF handout's page inside its margins (1/96 inch), as the export lays it out."""
    from gui.export.handout import _Pages

    pages = _Pages("size")
    size = pages.width, pages.height
    pages.close()
    return size


def laid_out(html: str, width: float) -> Any:
    """``html`` as the PDF draws it (Qt, no margin) in a column ``width`` wide: a
    ``QTextDocument``."""
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setDocumentMargin(0)
    doc.setHtml(html)
    doc.setTextWidth(width)
    return doc
