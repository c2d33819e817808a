"""Capture failures explain themselves in one line (issue 27): the node, what PyTorch
refused, and the change a PyTorch user makes. Never a traceback of PyTorch's insides."""

from __future__ import annotations

from typing import Any

import pytest

from engine.capture import CaptureError, capture
from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


def _line(output: Any, **kwargs: Any) -> str:
    with pytest.raises(CaptureError) as err:
        capture(output, **kwargs)
    text = str(err.value)
    assert "\n" not in text and err.value.__cause__ is None
    assert err.value.__context__ is None or err.value.__suppress_context__  # no torch chain
    assert err.value._render_traceback_() == [f"CaptureError: {text}"]  # a notebook's cell
    return text


def test_an_in_place_change_of_a_saved_tensor_names_the_node_and_the_fix() -> None:
    x = torch.ones(3, dtype=torch.float64, requires_grad=True)
    y = x.exp()
    out = (y * 2).sum()
    y.add_(1)  # exp's backward needs its own output, changed now
    text = _line(out, names={"x": x})
    assert text.startswith("node 'Exp1' (Exp): a tensor its backward saved (shape (3,), output 0")
    assert "changed in place" in text and "out-of-place" in text and ".clone()" in text


def test_a_graph_freed_by_an_earlier_backward() -> None:
    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    out = (x.sin() * x).sum()
    out.backward()
    text = _line(out, names={"x": x})
    assert text.startswith("node 'Mul1' (Mul): an earlier backward() freed this graph")
    assert "retain_graph=True" in text


def test_a_node_that_refuses_a_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx: Any, t: Any) -> Any:
            return t * 2

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 2

    def refuse(self: Any, hook: Any) -> None:
        raise RuntimeError("hooks are not supported on this node")

    x = torch.ones(2, dtype=torch.float64, requires_grad=True)
    out = Twice.apply(x).sum()
    monkeypatch.setattr(Twice._backward_cls, "register_hook", refuse)
    text = _line(out, names={"x": x})
    assert text.startswith("node 'Twice1' (Twice): PyTorch refused a backward hook")
    assert "(hooks are not supported on this node)" in text and "eagerly" in text
    assert x.grad is None  # refused before the backward ran


def test_outputs_that_are_not_float() -> None:
    logits = torch.randn(2, 3, dtype=torch.float64, requires_grad=True)
    text = _line(logits.argmax(dim=1))
    assert text.startswith("the output is torch.int64, not floating point")
    assert "cross_entropy(logits, target)" in text
    text = _line((logits * 1j).sum(), names={"logits": logits})
    assert text == (
        "node 'Sum1': the output is torch.complex128: capture a real loss "
        "(output.abs().sum(), or output.real)"
    )


def test_a_non_scalar_output_needs_a_gradient_of_its_shape() -> None:
    w = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    text = _line(w * 2, names={"w": w})
    assert text.startswith("node 'Mul1': the output has shape (2, 3), so PyTorch needs gradient=")
    assert "output.sum()" in text
    text = _line(w * 2, gradient=torch.ones(3, dtype=torch.float64), names={"w": w})
    assert text == (
        "node 'Mul1': gradient= has shape (3,), the output (2, 3): give v the output's shape"
    )
    assert w.grad is None
