"""Collapsed groups deliver exactly torch's gradients (issue 31, items 1-4).

Fixed cases for each defect, then a property test: for hypothesis-drawn graphs and
convex groups (collapsed or not, nested, holding the backward's output or not),
playback delivers torch's gradients, each group step hands its inputs what its
members' steps would have, and the group's Jacobian is torch's of the sub-function.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st
from test_random_graphs import _leaf_tensors, _settings, _torch_values, random_graph

from engine.autodiff import backward, forward
from engine.graph import Graph
from engine.groups import (
    Group,
    GroupStep,
    check_group,
    delivered,
    inputs_of,
    local_jacobian,
    outputs_of,
    playback_steps,
)
from support import close


def _issue_graph() -> Graph:
    """x=[1,2]; a=2x; b=a+1; z=a*b; s=sum(z), with 2 and 1 as constants."""
    g = Graph()
    g.add_node("x", "input", value=np.array([1.0, 2.0]), requires_grad=True)
    g.add_node("two", "const", value=np.array(2.0))
    g.add_node("one", "const", value=np.array(1.0))
    g.add_node("a", "mul", ["two", "x"])
    g.add_node("b", "add", ["a", "one"])
    g.add_node("z", "mul", ["a", "b"])
    g.add_node("s", "sum", ["z"])
    return g


def _play(g: Graph, output: str, members: list[str], v=None):  # noqa: ANN001, ANN202
    fwd = forward(g)
    trace = backward(g, fwd, output, v)
    return fwd, trace, playback_steps(g, trace, [Group("g", members)])


def test_an_output_that_feeds_another_member_is_not_counted_twice():
    _, _, steps = _play(_issue_graph(), "s", ["a", "b"])
    close(delivered(steps)["x"], [10.0, 18.0], rtol=1e-12)  # torch's x.grad


def test_a_group_holding_the_backwards_output_delivers_its_seed():
    _, _, steps = _play(_issue_graph(), "a", ["a", "b"], np.array([1.0, 1.0]))
    [step] = steps
    assert isinstance(step, GroupStep) and "a" in step.outputs
    close(delivered(steps)["x"], [2.0, 2.0], rtol=1e-12)


def test_a_group_of_one_step_still_leaves_its_operand_a_gradient():
    _, trace, steps = _play(_issue_graph(), "s", ["a"])
    assert len(steps) == len(trace.steps)  # a's one step (a -> x) became the group's
    close(delivered(steps)["x"], [10.0, 18.0], rtol=1e-12)


def test_constant_columns_of_a_groups_jacobian_hold_true_partials():
    g = _issue_graph()
    fwd = forward(g)
    group = Group("g", ["a", "b"])
    assert inputs_of(g, group.members) == ["x", "two", "one"]
    # rows a1, a2, b1, b2; columns x1, x2, two, one: ∂a/∂two = x, ∂b/∂one = 1
    close(
        local_jacobian(g, fwd, group),
        [[2, 0, 1, 0], [0, 2, 2, 0], [2, 0, 1, 1], [0, 2, 2, 1]],
    )


def _convex(g: Graph, seed: set[str]) -> set[str]:
    """``seed`` with every node between two of its members (the smallest convex group)."""
    below: set[str] = set()
    todo = list(seed)
    while todo:
        for c in g.consumers(todo.pop()):
            if c not in below:
                below.add(c)
                todo.append(c)
    above = set().union(*(g.ancestors(m) for m in seed))
    return seed | (below & above)


@st.composite
def grouped_case(draw):  # noqa: ANN001, ANN201
    graph, specs, output, v = draw(random_graph(max_ops=7))
    ops = [s.id for s in specs if s.op not in ("input", "const")]
    outer = _convex(graph, set(draw(st.lists(st.sampled_from(ops), min_size=1, max_size=4))))
    groups = [Group("outer", [n for n in graph.nodes if n in outer], collapsed=draw(st.booleans()))]
    inner = _convex(graph, {draw(st.sampled_from(sorted(outer)))})
    if inner != outer:
        groups.append(Group("inner", [n for n in graph.nodes if n in inner], draw(st.booleans())))
    for k, grp in enumerate(groups):
        check_group(graph, grp.members, groups[:k])
    return graph, specs, output, v, groups


@_settings(60)
@given(case=grouped_case())
def test_grouped_playback_and_group_jacobians_match_torch(tref, case):
    torch = tref.torch
    graph, specs, output, v, groups = case
    fwd = forward(graph)
    trace = backward(graph, fwd, output, v)
    steps = playback_steps(graph, trace, groups)
    assume(all(np.all(np.isfinite(s.vjp)) for s in trace.steps))

    leaves = _leaf_tensors(tref, specs)
    tvals = _torch_values(tref, graph, specs, leaves)
    tvals[output].backward(gradient=tref.t64(v))
    got = delivered(steps)
    for leaf in trace.leaves:
        want = tvals[leaf].grad
        if want is None:
            assert leaf not in got
        else:
            close(got[leaf], want.numpy(), rtol=1e-7, atol=1e-9)

    last: dict[str, int] = {}  # the index of the last step delivering into each node
    for k, step in enumerate(steps):
        for x in step.vjps if isinstance(step, GroupStep) else [step.operand]:
            last[x] = k
    for k, step in enumerate(steps):
        if not isinstance(step, GroupStep):
            continue
        inside = set(step.group.members)
        for x, vjp in step.vjps.items():  # what the members' own steps deliver into x
            parts = [s.vjp for s in trace.steps if s.consumer in inside and s.operand == x]
            close(vjp, sum(parts[1:], parts[0]), rtol=1e-9, atol=1e-12)
            if last[x] == k:  # the running sum at the boundary is the ungrouped pass's
                close(step.accumulated[x], trace.grads[x], rtol=1e-9, atol=1e-12)

    for grp in groups:
        ins, outs = inputs_of(graph, grp.members), outputs_of(graph, grp.members)
        fixed = {k: t.detach() for k, t in _torch_values(tref, graph, specs, leaves).items()}
        members = [s for s in specs if s.id in set(grp.members)]

        def sub(*args, members=members, ins=ins, outs=outs):  # noqa: ANN001, ANN202
            vals = dict(zip(ins, args, strict=True))
            for s in members:
                node = graph.nodes[s.id]
                vals[s.id] = tref.torch_op(s.op, [vals[i] for i in node.inputs], node.attrs)
            return tuple(vals[o] for o in outs)

        want = torch.autograd.functional.jacobian(sub, tuple(fixed[i] for i in ins))
        rows = [
            np.hstack([want[r][c].reshape(fixed[o].numel(), -1).numpy() for c in range(len(ins))])
            for r, o in enumerate(outs)
        ]
        close(local_jacobian(graph, fwd, grp, limit=10**6), np.vstack(rows), rtol=1e-7, atol=1e-9)
