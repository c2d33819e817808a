"""Forward mode (JVP) edge by edge: against torch.func.jvp, the transposed VJP and seed 2."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, end_to_end_jacobian, forward
from engine.errors import GraphError
from engine.examples import list_examples
from engine.fileformat import load
from engine.forward_mode import jvp, one_hot, ones, pass_counts, tangent_inputs
from engine.graph import Graph
from support import close, seed2_graph, torch, torch_op

EXAMPLES = [p for p, _ in list_examples()]


def test_seed2_e1_gives_the_jacobians_first_column():
    g = seed2_graph()
    fwd = forward(g)
    trace = jvp(g, fwd, one_hot(g, fwd, 0))
    close(trace.tangents["y"], [6.0, 1.0, 1.0])
    assert len(trace) == 15  # one step per edge, like the backward trace
    assert [(s.operand, s.consumer) for s in trace.steps[:2]] == [("x1", "a"), ("x2", "a")]
    for k, col in ((1, [3, 1, 3]), (2, [2, 1, 2])):
        close(jvp(g, fwd, one_hot(g, fwd, k)).tangents["y"], col)


def test_each_step_shows_its_jacobian_and_j_times_u():
    g = seed2_graph()
    fwd = forward(g)
    trace = jvp(g, fwd, {"x1": 1.0, "x2": 0.0, "x3": 0.0})
    last = trace.steps[-1]  # y3 -> y, operand 2 of the stack
    assert (last.operand, last.consumer) == ("y3", "y")
    close(last.jacobian(), [[0.0], [0.0], [1.0]])
    close(last.jvp, [0.0, 0.0, 1.0])
    close(last.jacobian() @ np.atleast_1d(last.tangent), last.jvp)
    close(last.before, [6.0, 1.0, 0.0])
    close(last.accumulated, [6.0, 1.0, 1.0])


def test_tangents_are_checked_and_named():
    g = seed2_graph()
    fwd = forward(g)
    with pytest.raises(GraphError, match="'x1'.*shape \\(2,\\).*shape \\(\\)"):
        jvp(g, fwd, {"x1": [1.0, 2.0]})
    with pytest.raises(GraphError, match="'a'.*requires grad"):
        jvp(g, fwd, {"a": 1.0})
    with pytest.raises(GraphError, match="out of range"):
        one_hot(g, fwd, 3)
    assert tangent_inputs(g, fwd) == ["x1", "x2", "x3"]
    assert set(ones(g, fwd)) == {"x1", "x2", "x3"}


def random_tangents(g, fwd, rng):  # noqa: ANN001, ANN201
    return {x: rng.standard_normal(fwd.values[x].shape) for x in tangent_inputs(g, fwd)}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_transposed_vjp_agrees_on_every_example(path):
    gf = load(path)
    g, out = gf.graph, gf.output
    fwd = forward(g)
    rng = np.random.default_rng(0)
    u = random_tangents(g, fwd, rng)
    v = rng.standard_normal(fwd.values[out].shape)
    ju = jvp(g, fwd, u).tangents[out]
    grads = backward(g, fwd, out, v).leaf_grads
    lhs = sum(float(np.sum(u[x] * grads[x])) for x in u if grads.get(x) is not None)
    assert float(np.sum(v * ju)) == pytest.approx(lhs, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_columns_are_the_end_to_end_jacobian(path):
    gf = load(path)
    g, out = gf.graph, gf.output
    fwd = forward(g)
    leaves = tangent_inputs(g, fwd)
    jac = end_to_end_jacobian(g, fwd, out, leaves)
    for k in range(jac.shape[1]):
        close(jvp(g, fwd, one_hot(g, fwd, k)).tangents[out].ravel(), jac[:, k], rtol=1e-12)


def torch_graph(g: Graph, leaves: list[str], out: str):  # noqa: ANN201
    """The graph as a function of its tangent inputs, in PyTorch (float64)."""

    def f(*xs):  # noqa: ANN002, ANN202
        env = dict(zip(leaves, xs, strict=True))
        for nid in g.topological_order():
            node = g.nodes[nid]
            if nid not in env:
                if node.is_leaf:
                    env[nid] = torch.tensor(node.value, dtype=torch.float64)
                else:
                    env[nid] = torch_op(node.op, [env[s] for s in node.inputs], node.attrs)
        return env[out]

    return f


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_matches_torch_func_jvp(path):
    gf = load(path)
    g, out = gf.graph, gf.output
    fwd = forward(g)
    leaves = tangent_inputs(g, fwd)
    u = random_tangents(g, fwd, np.random.default_rng(1))
    primals = tuple(torch.tensor(fwd.values[x]) for x in leaves)
    tangents = tuple(torch.tensor(u[x]) for x in leaves)
    value, expected = torch.func.jvp(torch_graph(g, leaves, out), primals, tangents)
    close(value.numpy(), fwd.values[out])
    close(jvp(g, fwd, u).tangents[out], expected.numpy(), rtol=1e-10)


def test_pass_counts_seed2_and_a_loss_over_1000_inputs():
    g = seed2_graph()
    counts = pass_counts(g, forward(g), "y")
    assert (counts.forward_passes, counts.reverse_passes) == (3, 3)
    big = Graph()
    big.add_node("w", "input", value=np.linspace(-1, 1, 1000))
    big.add_node("sq", "mul", ["w", "w"])
    big.add_node("loss", "mean", ["sq"])
    counts = pass_counts(big, forward(big), "loss")
    assert (counts.forward_passes, counts.reverse_passes) == (1000, 1)
    assert "reverse mode is cheaper" in counts.words()
