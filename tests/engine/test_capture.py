"""Capturing PyTorch's own backward pass: the steps match what PyTorch computed.

Each test runs a real ``backward`` under :func:`engine.capture.capture` (or
``recording``) and checks the recorded steps against PyTorch itself: leaf
gradients, what a pre-hook sees, and ``upstream · J == vjp`` for the Jacobians
pulled back through PyTorch's nodes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from engine import capture as capture_module
from engine import tracefile
from engine.capture import INSTALL_HINT, CaptureError, capture, recording
from support import assert_edges_compose, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")

F64 = None if torch is None else torch.float64


def mlp(depth: int, width: int = 32) -> torch.nn.Module:
    layers: list[torch.nn.Module] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers).double()


def walk(root: object) -> list[object]:
    seen, stack = {root}, [root]
    while stack:
        n = stack.pop()
        for m, _ in n.next_functions:
            if m is not None and m not in seen:
                seen.add(m)
                stack.append(m)
    return list(seen)


def test_deep_mlp_matches_plain_backward_and_pre_hooks() -> None:
    torch.manual_seed(0)
    model = mlp(200)
    x = torch.randn(8, 32, dtype=F64)
    out = model(x).sum()
    seen: dict[tuple[object, int], np.ndarray] = {}
    handles = []
    for node in walk(out.grad_fn):  # what each node receives, summed by PyTorch

        def pre(grad_outputs: tuple, node: object = node) -> None:
            for slot, g in enumerate(grad_outputs):
                if g is not None:
                    seen[(node, slot)] = g.detach().numpy().copy()

        handles.append(node.register_prehook(pre))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # the walk must not recurse
    try:
        trace = capture(out, names=model)
    finally:
        sys.setrecursionlimit(limit)
        for h in handles:
            h.remove()
    assert 950 <= len(trace.nodes) <= 1050 and 950 <= len(trace.steps) <= 1050
    captured = {n: p.grad.clone() for n, p in model.named_parameters()}
    model.zero_grad()
    model(x).sum().backward()
    for name, p in model.named_parameters():
        assert np.array_equal(trace.grads[name], p.grad.numpy()), name  # bitwise
        assert torch.equal(captured[name], p.grad)  # the hooks changed nothing
    last: dict[tuple[str, int], np.ndarray] = {}
    for s in trace.steps:
        slot = trace.nodes[s.consumer].inputs[s.operand_index][1]
        last[(s.operand, slot)] = s.accumulated
    ids = {s.context.node: s.consumer for s in trace.steps}
    params = {p: n for n, p in model.named_parameters()}
    seen.pop((out.grad_fn, 0))  # the output's node receives v, from no step
    for (node, slot), g in seen.items():
        nid = params[node.variable] if hasattr(node, "variable") else ids[node]
        assert np.array_equal(last[(nid, slot)], g), nid
    assert len(seen) == len(last)
    # the player's order is PyTorch's: the output's node first, the first layer last
    assert trace.steps[0].consumer == trace.output
    assert trace.steps[-1].operand == "0.weight"
    assert trace.nodes["0.weight"].module == "0" and trace.nodes["Addmm1"].module == "0"


def test_hooks_are_removed_even_when_backward_fails() -> None:
    x = torch.ones(3, dtype=F64, requires_grad=True)
    y = x * 2
    recorder = capture_module._Recorder(y.grad_fn, None)
    with pytest.raises(RuntimeError), recorder.hooked():
        y.backward(torch.ones(2, dtype=F64))  # wrong shape: PyTorch refuses
    with recorder.hooked():
        y.backward(torch.ones(3, dtype=F64), retain_graph=True)
    n = len(recorder.records)
    assert n == 1
    y.backward(torch.ones(3, dtype=F64))  # a later plain backward records nothing
    assert len(recorder.records) == n


def test_recording_captures_each_backward_and_restores_torch() -> None:
    original = torch.autograd.backward
    w = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    with recording(names={"w": w}) as traces:
        (w * w).sum().backward()
        (3 * w).sum().backward()
    assert torch.autograd.backward is original
    (w * 5).sum().backward()
    assert len(traces) == 2
    first_into_w = next(s for s in traces[1].steps if s.operand == "w")
    np.testing.assert_array_equal(first_into_w.before, [2.0, 4.0])  # the earlier .grad
    np.testing.assert_array_equal(traces[1].grads["w"], [5.0, 7.0])


def test_two_captures_without_zero_grad_start_from_the_earlier_grad() -> None:
    torch.manual_seed(1)
    model = mlp(2, 4)
    x = torch.randn(3, 4, dtype=F64)
    capture(model(x).sum(), names=model)
    earlier = model[2].weight.grad.clone()
    second = capture(model(x).pow(2).sum(), names=model)
    first = next(s for s in second.steps if s.operand == "2.weight")
    assert first.before is not None
    np.testing.assert_array_equal(first.before, earlier.numpy())
    np.testing.assert_array_equal(second.grads["2.weight"], model[2].weight.grad.numpy())


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph=True")
def test_create_graph_gradients_are_detached_and_jacobians_built_without_grad() -> None:
    x = torch.tensor([0.5, -1.0, 2.0], dtype=F64, requires_grad=True)
    with recording(names={"x": x}) as traces:
        (x.sin() * x).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None  # PyTorch's own gradient stays differentiable
    (trace,) = traces
    assert all(type(s.vjp) is np.ndarray and s.vjp.dtype == np.float64 for s in trace.steps)
    assert assert_edges_compose(trace) == len(trace.steps)
    expected = (torch.sin(x) + x * torch.cos(x)).detach().numpy()
    np.testing.assert_allclose(trace.grads["x"], expected, atol=1e-15)
    x.grad = None  # break the cycle PyTorch warns about


def test_multi_output_nodes_deliver_tuples_of_upstreams() -> None:
    x = torch.arange(6.0, dtype=F64, requires_grad=True)
    a, b, c = torch.chunk(x * 1.5, 3)
    p, q = torch.split(a + c, [1, 1])
    out = (a * 2).sum() + (b**2).sum() + (p * 3).sum() + q.sum() * 4
    trace = capture(out, names={"x": x})
    chunk = next(n for n in trace.nodes.values() if len(n.shapes) == 3)
    assert chunk.shapes == [(2,), (2,), (2,)]
    into_slots = {
        trace.nodes[s.consumer].inputs[s.operand_index][1]
        for s in trace.steps
        if s.operand == chunk.id
    }
    assert into_slots == {0, 1, 2}
    out_of_chunk = next(s for s in trace.steps if s.consumer == chunk.id)
    assert out_of_chunk.upstream.shape == (6,)  # the three slots' gradients end to end
    assert assert_edges_compose(trace) == len(trace.steps)
    np.testing.assert_array_equal(trace.grads["x"], x.grad.numpy())


def test_fused_linear_and_cross_entropy() -> None:
    torch.manual_seed(2)
    model = torch.nn.Linear(3, 4).double()
    x = torch.randn(2, 3, dtype=F64)
    loss = torch.nn.functional.cross_entropy(model(x), torch.tensor([1, 3]))
    trace = capture(loss, names=model)
    kinds = [n.kind for n in trace.nodes.values()]
    assert "LogSoftmax" in kinds and "NllLoss" in kinds
    addmm = next(n for n in trace.nodes.values() if n.kind == "Addmm")
    assert [src for src, _ in filter(None, addmm.inputs)] == ["bias", "T1"]
    assert len(addmm.inputs) == 3 and addmm.inputs[1] is None  # x needs no grad
    assert trace.nodes["T1"].inputs == [("weight", 0)]
    assert assert_edges_compose(trace) == len(trace.steps)


def test_views_and_in_place_ops_are_walked_at_backward_time() -> None:
    x = torch.tensor([[1.0, -2.0], [3.0, -4.0]], dtype=F64, requires_grad=True)
    y = x * 1.0
    y.mul_(2.0)  # in place: y's grad_fn is now the second Mul
    v = y.view(4)
    v[1] = v[0] * 5  # in place on a view: CopySlices
    out = (v * torch.arange(4.0, dtype=F64)).sum()
    trace = capture(out, names={"x": x})
    kinds = {n.kind for n in trace.nodes.values()}
    assert "CopySlices" in kinds and sum(n.kind == "Mul" for n in trace.nodes.values()) >= 3
    assert assert_edges_compose(trace) == len(trace.steps)
    np.testing.assert_array_equal(trace.grads["x"], x.grad.numpy())


def test_seed2_stack_by_slots() -> None:
    x1, x2, x3 = (torch.tensor(v, dtype=F64, requires_grad=True) for v in (1.0, 2.0, 3.0))
    y = torch.zeros(3, dtype=F64)
    y[0] = x1 * x2 * x3
    y[1] = x1 + x2 + x3
    y[2] = x1 + x2 * x3
    trace = capture(
        y, torch.tensor([0.1, 0.2, 0.3], dtype=F64), names={"x1": x1, "x2": x2, "x3": x3}
    )
    for name, want in (("x1", 1.1), ("x2", 1.4), ("x3", 1.0)):
        assert trace.grads[name] == pytest.approx(want, abs=1e-15)
    # the last write's node passes the rest of y back to the earlier writes, slot 2 zeroed
    overwritten = next(
        s for s in trace.steps if s.consumer == trace.output and s.operand_index == 0
    )
    np.testing.assert_array_equal(overwritten.jacobian(), np.diag([1.0, 1.0, 0.0]))
    assert assert_edges_compose(trace) == len(trace.steps)


def test_small_models_every_small_edge_composes() -> None:
    torch.manual_seed(3)
    small = mlp(3, 5)
    trace = capture(small(torch.randn(4, 5, dtype=F64)).tanh().sum(), names=small)
    assert assert_edges_compose(trace) == len(trace.steps)

    cnn = torch.nn.Sequential(
        torch.nn.Conv2d(1, 2, 3),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 3),
        torch.nn.LogSoftmax(dim=1),
    ).double()
    logp = cnn(torch.randn(2, 1, 6, 6, dtype=F64))
    trace = capture(torch.nn.functional.nll_loss(logp, torch.tensor([0, 2])), names=cnn)
    kinds = {n.kind for n in trace.nodes.values()}
    assert {"Convolution", "MaxPool2DWithIndices", "LogSoftmax", "NllLoss"} <= kinds, kinds
    assert assert_edges_compose(trace) == len(trace.steps)

    attn = torch.nn.MultiheadAttention(4, 2, batch_first=True).double()
    q = torch.randn(1, 3, 4, dtype=F64)
    out, _ = attn(q, q, q)
    trace = capture(out.square().sum(), names=attn)
    assert assert_edges_compose(trace) == len(trace.steps)
    assert "Softmax" in {n.kind for n in trace.nodes.values()}


def test_without_torch_one_line_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(CaptureError) as err:
        capture(object())
    assert str(err.value) == INSTALL_HINT and "\n" not in INSTALL_HINT
    assert "pip install" in INSTALL_HINT and "[torch]" in INSTALL_HINT


def test_show_saves_and_opens_the_app_in_another_process(monkeypatch: pytest.MonkeyPatch) -> None:
    launched: list[list[str]] = []
    monkeypatch.setattr(capture_module.subprocess, "Popen", lambda args: launched.append(args))
    x = torch.tensor([1.0, 2.0], dtype=F64, requires_grad=True)
    capture((x * x).sum(), names={"x": x}).show()
    ((python, main, path),) = launched
    assert python == sys.executable and main.endswith("main.py") and path.endswith(".bptrace")
    from engine import tracefile

    try:
        assert [s.operand for s in tracefile.load(path).steps] == ["Mul1", "x", "x"]
    finally:
        os.unlink(path)


def test_tracking_the_forward_labels_modules_and_values(tmp_path: Path) -> None:
    from engine.capture import tracking

    torch.manual_seed(6)
    model = torch.nn.Sequential(
        torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2), torch.nn.LogSoftmax(dim=1)
    ).double()
    x = torch.randn(5, 3, dtype=F64)
    with tracking(model):
        logp = model(x)
    hidden = model[1](model[0](x))  # outside: nothing is labelled
    assert not any(k.startswith("backprop_studio") for k in hidden.grad_fn.metadata)
    loss = torch.nn.functional.nll_loss(logp, torch.tensor([0, 1, 0, 1, 1]))
    trace = capture(loss, names=model)
    modules = {n.id: n.module for n in trace.nodes.values()}
    assert modules["Relu1"] == "1" and modules["T1"] == "0" and modules["LogSoftmax1"] == "3"
    assert modules["NllLoss1"] == ""  # made outside the model
    np.testing.assert_array_equal(trace.nodes["Relu1"].value, hidden.detach().numpy())
    np.testing.assert_array_equal(trace.nodes["0.weight"].value, model[0].weight.detach().numpy())
    assert trace.modules() == ["0", "1", "2", "3"]
    trace.save(tmp_path / "tracked.bptrace")
    back = tracefile.load(tmp_path / "tracked.bptrace")
    assert {n.id: n.module for n in back.nodes.values()} == modules
    np.testing.assert_array_equal(back.nodes["Relu1"].value, trace.nodes["Relu1"].value)
