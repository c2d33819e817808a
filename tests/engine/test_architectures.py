"""Real architectures captured (issue 27): an MLP with cross-entropy, a CNN with
BatchNorm and max-pool, an LSTM over 5 steps, a TransformerEncoderLayer, an
Embedding + LayerNorm language-model head and torchvision's resnet18 at 32x32.

Each is captured once (module-scoped, float64) and checked against PyTorch itself:
the leaves' gradients bit-equal a plain ``backward`` on a copy of the model,
``upstream · J == vjp`` on every edge whose Jacobian has at most 4,096 entries,
and the modules become groups titled by path and class (``layer1.0.conv1 · Conv2d``).
The GUI half (opened, played, exported) is tests/gui/test_architectures_gui.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from architectures import ARCHITECTURES, capture_of
from engine import tracefile
from engine.capture import capture
from engine.captured import as_graph, end_to_end_jacobian
from support import assert_edges_compose, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module", params=list(ARCHITECTURES))
def case(request: pytest.FixtureRequest) -> tuple[str, Any, Any, Any]:
    """(name, the captured model, the trace, a fresh copy's plain-backward gradients)."""
    model, trace, loss = capture_of(request.param)
    twin = copy.deepcopy(model)
    twin.zero_grad(set_to_none=True)  # the copy starts without the capture's .grad
    loss(twin).backward()
    plain = {n: p.grad.numpy() for n, p in twin.named_parameters() if p.grad is not None}
    return request.param, model, trace, plain


def test_leaf_gradients_bit_equal_a_plain_backward(case: tuple[str, Any, Any, Any]) -> None:
    _name, model, trace, plain = case
    assert set(plain) <= set(trace.leaves)
    for name, grad in plain.items():
        assert np.array_equal(trace.grads[name], grad), name
        assert np.array_equal(trace.grads[name], model.get_parameter(name).grad.numpy()), name


def test_every_small_edge_composes(case: tuple[str, Any, Any, Any]) -> None:
    _name, _model, trace, _plain = case
    assert assert_edges_compose(trace) > 0


#: A module each model must show as a group, and the title it must have.
EXPECTED_GROUPS = {
    "mlp": "2 · Linear",
    "cnn": "1 · BatchNorm2d",
    "lstm": "lstm · LSTM",
    "transformer": "self_attn · MultiheadAttention",
    "language_model": "norm · LayerNorm",
    "resnet18": "layer1.0.conv1 · Conv2d",
}
#: ...and for resnet18, its stages and blocks nest around their layers.
RESNET_NESTING = {"layer1 · Sequential", "layer1.0 · BasicBlock", "layer4.1.bn2 · BatchNorm2d"}


def test_modules_are_grouped_by_path_with_class_names(
    case: tuple[str, Any, Any, Any], tmp_path: Path
) -> None:
    name, model, trace, _plain = case
    classes = {p: type(m).__name__ for p, m in model.named_modules() if p}
    titles = {g.title for g in as_graph(trace).groups}
    assert EXPECTED_GROUPS[name] in titles, sorted(titles)
    if name == "resnet18":
        assert RESNET_NESTING <= titles, sorted(titles)
    for title in titles:
        path, _, cls = title.partition(" · ")
        assert classes[path] == cls, title
    if name == "resnet18":  # its file, float32 as users save it, is bench_capture's: in
        return  # float64 with every weight it is 250 MB of JSON, seconds to write and read
    trace.save(tmp_path / f"{name}.bptrace")  # and the file says the same
    back = tracefile.load(tmp_path / f"{name}.bptrace")
    assert {g.title for g in as_graph(back).groups} == titles
    for s, t in zip(trace.steps, back.steps, strict=True):
        assert np.array_equal(s.vjp, t.vjp) and np.array_equal(s.accumulated, t.accumulated)


def test_end_to_end_jacobian_joins_a_multi_output_nodes_slots() -> None:
    """An LSTM's ``unbind`` and a ``chunk`` receive each slot on its own edge; the
    end-to-end Jacobian (the chain-rule panel's) assembles them as PyTorch does."""

    def f(x: Any) -> Any:
        a, b, c = torch.unbind((x * 1.5).reshape(3, 2))
        return torch.stack([(a * c).sum(), (b**2).sum()])

    x = torch.arange(6.0, dtype=torch.float64, requires_grad=True)
    trace = capture(f(x), torch.ones(2, dtype=torch.float64), names={"x": x})
    want = torch.autograd.functional.jacobian(f, x.detach()).numpy()
    np.testing.assert_allclose(end_to_end_jacobian(trace), want, rtol=0, atol=1e-12)
