"""Random DAGs of ops on random tensors, checked against PyTorch float64.

For each drawn graph: every leaf's gradient equals ``.grad`` after
``out.backward(gradient=v)``, every non-leaf's equals its ``retain_grad()`` value
(None exactly where PyTorch has None), every step's VJP is the upstream row
vector times that step's local Jacobian, and the end-to-end Jacobian matches
``torch.autograd.functional.jacobian``. Values stay in domains where numpy and
PyTorch agree: each record's ``domain`` says which operands must be provably positive
(log, a base of pow) or in (0, 1), and when a result is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine.autodiff import backward, end_to_end_jacobian, forward
from engine.graph import Graph
from engine.ops import OPS, validate_attrs
from engine.ops.record import OpShapeError

LEAF_SHAPES = [(2, 3), (), (3,), (2, 1), (1, 3), (3, 2), (2, 2), (2, 2, 3), (1, 2, 3), (2, 3, 1)]
# Every op of the table; hypothesis leans on the first choice of a list: make it a binary op.
BINARY = [n for n, op in OPS.items() if op.arity == 2 and op.category == "Arithmetic"]
ALL_OPS = BINARY + [n for n, op in OPS.items() if not op.is_leaf and n not in BINARY]


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@dataclass
class Spec:
    id: str
    op: str
    inputs: list[str] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    value: np.ndarray | None = None
    requires_grad: bool = False
    shape: tuple[int, ...] = ()
    positive: bool = False
    unit: bool = False  # every element in (0, 1)


@st.composite
def leaf(draw, k: int, shapes: list[tuple[int, ...]]) -> Spec:
    shape = draw(st.sampled_from(shapes))
    positive = draw(st.booleans())
    lo, hi = (0.5, 2.0) if positive else (-1.5, 1.5)
    value = draw(hnp.arrays(np.float64, shape, elements=st.floats(lo, hi)))
    kinds = ["input", "input", "input", "frozen", "const"] if k else ["input"]
    kind = draw(st.sampled_from(kinds))
    return Spec(
        id=f"x{k}",
        op="const" if kind == "const" else "input",
        value=value,
        requires_grad=kind == "input",
        shape=shape,
        positive=positive,
    )


def _grow(draw, specs: list[Spec], k: int) -> Spec | None:
    """Draw one op node on top of ``specs``; None if what was drawn does not fit."""
    op = draw(st.sampled_from(ALL_OPS))
    rule = OPS[op]

    def pick(pool: list[Spec]) -> Spec:
        # Mostly one of the newest nodes, so graphs grow deep rather than wide.
        anywhere = draw(st.integers(0, 3)) == 3
        return draw(st.sampled_from(pool if anywhere else pool[-2:]))

    n = rule.arity if rule.arity is not None else draw(st.integers(1, 3))
    ops: list[Spec] = []
    for i in range(n):
        pool = specs  # within the record's test domain
        if rule.domain.needs(i) == "positive":
            pool = [s for s in specs if s.positive]
        elif rule.domain.needs(i) == "unit":
            pool = [s for s in specs if s.unit]
        if ops and (rule.arity is None or draw(st.integers(0, 2))):
            # Mostly an operand whose shape fits the first one's.
            fits = [s for s in pool if s.shape == ops[0].shape]
            pool = fits or pool
        if not pool:
            return None
        ops.append(pick(pool))
    # each attribute kind's strategy: values often but not always valid
    attrs = {a.name: draw(a.strategy(ops[0].shape)) for a in rule.attrs}
    try:
        rule.check([s.shape for s in ops], validate_attrs(op, attrs))
    except OpShapeError:
        return None
    positive = rule.domain.keeps(rule.domain.gives_positive, [s.positive for s in ops])
    unit = rule.domain.keeps(rule.domain.gives_unit, [s.unit for s in ops])
    return Spec(
        id=f"n{k}",
        op=op,
        inputs=[s.id for s in ops],
        attrs=attrs,
        requires_grad=any(s.requires_grad for s in ops),
        positive=positive,
        unit=unit,
    )


@st.composite
def random_graph(draw, max_ops: int = 10, shapes: list[tuple[int, ...]] | None = None):
    shapes = shapes or LEAF_SHAPES
    n_leaves = draw(st.integers(1, 4))
    specs = [draw(leaf(k, shapes)) for k in range(n_leaves)]
    n_ops = draw(st.integers(max(1, max_ops // 3), max_ops))
    graph = Graph()
    by_id = {s.id: s for s in specs}
    for s in specs:
        graph.add_node(s.id, s.op, value=s.value, requires_grad=s.requires_grad)
    for k in range(n_ops):
        spec = _grow(draw, specs, k)
        if spec is None:
            continue
        node = graph.add_node(spec.id, spec.op, spec.inputs, attrs=spec.attrs)
        spec.shape = OPS[spec.op].check([by_id[i].shape for i in spec.inputs], node.attrs)
        specs.append(spec)
        by_id[spec.id] = spec
    fwd = forward(graph)
    assert not fwd.errors, {n: str(e) for n, e in fwd.errors.items()}
    for s in specs:  # the shape checks predicted every shape the forward produced
        assert fwd.values[s.id].shape == s.shape, s.id
    assume(all(np.all(np.abs(v) < 1e6) for v in fwd.values.values()))
    candidates = [s.id for s in specs if s.requires_grad and s.op not in ("input", "const")]
    assume(candidates)
    # Mostly the last op node that requires grad; sometimes an earlier one.
    earlier = draw(st.integers(0, 3)) == 3
    output = draw(st.sampled_from(candidates)) if earlier else candidates[-1]
    out_shape = fwd.values[output].shape
    v = draw(hnp.arrays(np.float64, out_shape, elements=st.floats(-1.0, 1.0)))
    return graph, specs, output, v


def _torch_values(tref, graph: Graph, specs: list[Spec], leaves: dict[str, Any]):
    """Replay the graph in PyTorch; leaves given, every non-leaf retaining its grad."""
    values: dict[str, Any] = dict(leaves)
    for s in specs:
        if s.id in values:
            continue
        node = graph.nodes[s.id]
        operands = [values[i] for i in node.inputs]
        t = tref.torch_op(node.op, operands, node.attrs)
        if any(t is x for x in operands):  # a no-op (flatten of one dim) hands back x itself
            t = t.view_as(t)
        if t.requires_grad:
            t.retain_grad()
        values[s.id] = t
    return values


def _leaf_tensors(tref, specs: list[Spec]) -> dict[str, Any]:
    return {
        s.id: tref.t64(s.value, requires_grad=s.requires_grad)
        for s in specs
        if s.op in ("input", "const")
    }


def _close(actual, expected) -> None:
    expected = np.asarray(expected, dtype=np.float64)
    scale = float(np.max(np.abs(expected), initial=1.0))
    np.testing.assert_allclose(actual, expected, rtol=1e-7, atol=1e-9 * scale)


@_settings(80)
@given(case=random_graph())
def test_random_graph_gradients_match_torch(tref, case):
    graph, specs, output, v = case
    fwd = forward(graph)
    assert not fwd.errors
    trace = backward(graph, fwd, output, v)

    tvals = _torch_values(tref, graph, specs, _leaf_tensors(tref, specs))
    for s in specs:
        _close(fwd.values[s.id], tvals[s.id].detach().numpy())
    tvals[output].backward(gradient=tref.t64(v))

    for s in specs:
        expected = tvals[s.id].grad
        actual = trace.grads[s.id]
        if expected is None:
            assert actual is None, s.id
        else:
            assert actual is not None, s.id
            _close(actual, expected.numpy())
    assert set(trace.leaf_grads) == {s.id for s in specs if s.op == "input" and s.requires_grad}

    for step in trace.steps:
        jac = step.jacobian(force=True)
        assert jac.shape == (step.upstream.size, step.vjp.size)
        if np.all(np.isfinite(step.upstream)):
            # A dense product turns NaN·0 into NaN where a structured VJP (as torch's)
            # never touches the zero: vjp = uᵀJ holds for finite upstream gradients only.
            _close(step.vjp.ravel(), step.upstream.ravel() @ jac)
        _close(step.accumulated, step.vjp if step.before is None else step.before + step.vjp)
        assert graph.nodes[step.consumer].inputs[step.operand_index] == step.operand


@_settings(50)
@given(case=random_graph(max_ops=6))
def test_random_graph_end_to_end_jacobian_matches_torch(tref, case):
    torch = tref.torch
    graph, specs, output, _ = case
    fwd = forward(graph)
    wrt = [s.id for s in specs if s.op == "input" and s.requires_grad]
    jac = end_to_end_jacobian(graph, fwd, output, wrt, limit=10**6)

    fixed = _leaf_tensors(tref, specs)

    def fn(*args):
        leaves = dict(fixed)
        leaves.update(zip(wrt, args, strict=True))
        with torch.enable_grad():
            return _torch_values(tref, graph, specs, leaves)[output]

    expected = torch.autograd.functional.jacobian(fn, tuple(fixed[w].detach() for w in wrt))
    m = fwd.values[output].size
    blocks = [e.reshape(m, -1).numpy() for e in expected]
    _close(jac, np.hstack(blocks))


@_settings(40)
@given(case=random_graph(max_ops=25, shapes=[()]), calls=st.integers(2, 3))
def test_random_scalar_graph_accumulates_like_torch(tref, case, calls):
    graph, specs, output, v = case
    tvals = _torch_values(tref, graph, specs, _leaf_tensors(tref, specs))
    fwd = forward(graph)
    grads: dict = {}  # .grad between calls, as the document keeps it
    for _ in range(calls):
        trace = backward(graph, fwd, output, v, prior=grads)
        grads = trace.held_grads
        tvals[output].backward(gradient=tref.t64(v), retain_graph=True)
    for s in specs:
        if s.op == "input" and s.requires_grad:
            expected = tvals[s.id].grad
            if expected is None:
                assert trace.leaf_grads[s.id] is None
                assert s.id not in grads
            else:
                _close(trace.leaf_grads[s.id], expected.numpy())
                _close(grads[s.id], expected.numpy())


def _same_bits(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.shape == b.shape and np.asarray(a, np.float64).tobytes() == b.tobytes()


@_settings(60)
@given(case=random_graph(max_ops=12))
def test_the_reference_backward_takes_the_engines_steps_bit_for_bit(case):
    """engine.reference (the loop to read) and engine.autodiff (the fast one): the same
    edges, in the same order, with the same upstream, VJP and sums, to the bit."""
    from engine import reference

    graph, _specs, output, v = case
    fwd = forward(graph)
    trace = backward(graph, fwd, output, v)
    steps, grads = reference.backward(graph, fwd, output, v)
    got = [(s.consumer, s.operand, s.index) for s in steps]
    assert got == [(s.consumer, s.operand, s.operand_index) for s in trace.steps]
    for ours, fast in zip(steps, trace.steps, strict=True):
        assert _same_bits(ours.upstream, fast.upstream)
        assert _same_bits(ours.vjp, fast.vjp)
        assert _same_bits(ours.before, fast.before)
        assert _same_bits(ours.after, fast.accumulated)
    for nid, g in trace.grads.items():
        assert _same_bits(grads.get(nid), g), nid
