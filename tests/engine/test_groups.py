"""Groups: a block of nodes as one step with its own end-to-end Jacobian."""

from __future__ import annotations

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.errors import GraphError
from engine.fileformat import FileFormatError, dumps, load, loads
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
from support import close, seed2_graph

SEED2_OPERANDS = ["a", "y1", "b", "y2", "c", "y3"]  # everything that computes y1, y2, y3
V = [0.1, 0.2, 0.3]


def seed2():  # noqa: ANN201
    g = seed2_graph()
    fwd = forward(g)
    return g, fwd, backward(g, fwd, "y", V)


def test_group_around_the_stack_operands_has_the_seeds_jacobian():
    g, fwd, _ = seed2()
    group = Group("g", SEED2_OPERANDS)
    assert inputs_of(g, group.members) == ["x1", "x2", "x3"]
    assert outputs_of(g, group.members) == ["y1", "y2", "y3"]
    close(local_jacobian(g, fwd, group), [[6, 3, 2], [1, 1, 1], [1, 3, 2]])


def test_collapse_and_expand_change_steps_never_leaf_grads():
    g, fwd, trace = seed2()
    group = Group("g", SEED2_OPERANDS)
    collapsed = playback_steps(g, trace, [group])
    group.collapsed = False
    expanded = playback_steps(g, trace, [group])
    assert len(expanded) == len(trace) == 15
    assert len(collapsed) == 4  # y -> y1, y2, y3, then the group as one step
    step = collapsed[-1]
    assert isinstance(step, GroupStep) and step.inputs == ["x1", "x2", "x3"]
    for steps in (collapsed, expanded):
        got = delivered(steps)
        for leaf, want in (("x1", 1.1), ("x2", 1.4), ("x3", 1.0)):
            close(got[leaf], want, rtol=1e-12)
    # the group's vjp is upstream · J
    up = np.array([step.upstream[o] for o in step.outputs])
    jac = local_jacobian(g, fwd, group)
    close([step.vjps[x] for x in step.inputs], up @ jac, rtol=1e-12)


def test_nested_groups_play_as_the_outermost_collapsed_one():
    g, fwd, trace = seed2()
    inner = Group("inner", ["a", "y1"])
    outer = Group("outer", SEED2_OPERANDS)
    check_group(g, inner.members, [outer])
    assert len(playback_steps(g, trace, [inner, outer])) == 4
    outer.collapsed = False
    steps = playback_steps(g, trace, [inner, outer])
    assert len(steps) == 15 - 4 + 1  # a's and y1's four steps become one
    inner_step = next(s for s in steps if isinstance(s, GroupStep))
    close(local_jacobian(g, fwd, inner), [[6, 3, 2]])
    assert inner_step.inputs == ["x1", "x2", "x3"]
    close(delivered(steps)["x1"], 1.1, rtol=1e-12)


def test_refused_groups_say_why():
    g, _, _ = seed2()
    with pytest.raises(GraphError, match="'x1'.*leaf"):
        check_group(g, ["x1", "a"])
    with pytest.raises(GraphError, match="comes back through 'y1'"):
        check_group(g, ["a", "y"])  # a -> y1 -> y leaves and re-enters
    with pytest.raises(GraphError, match="partly overlaps"):
        check_group(g, ["a", "y1", "b"], [Group("h", ["b", "y2"])])


def test_groups_save_and_reload_as_minor_version_1(tmp_path):
    g, _, _ = seed2()
    from engine.fileformat import GraphFile

    gf = GraphFile(
        graph=g,
        output="y",
        gradient=np.array(V),
        groups=[
            Group("g", SEED2_OPERANDS, "the three rows", True),
            Group("inner", ["a", "y1"], collapsed=False),
        ],
    )
    text = dumps(gf)
    assert '"minor_version": 1' in text
    again = loads(text)
    assert [(x.id, x.members, x.title, x.collapsed) for x in again.groups] == [
        ("g", SEED2_OPERANDS, "the three rows", True),
        ("inner", ["a", "y1"], "", False),
    ]
    assert "groups" not in again.extra


def test_old_files_load_unchanged_and_save_without_groups():
    from engine.examples import EXAMPLES_DIR

    path = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"
    gf = load(path)
    assert gf.groups == []
    assert "minor_version" not in dumps(gf) and "groups" not in dumps(gf)


def test_a_bad_group_in_a_file_is_one_line():
    import json

    from engine.examples import EXAMPLES_DIR

    doc = json.loads((EXAMPLES_DIR / "seed2_stack_vjp.bpgraph").read_text(encoding="utf-8"))
    doc["groups"] = [{"id": "g", "members": ["y1", "nope"]}]
    with pytest.raises(FileFormatError, match="group 'g': no node named 'nope'"):
        loads(json.dumps(doc))
    doc["groups"] = [{"id": "g", "members": ["y1", "y"]}, {"id": "g", "members": ["y1"]}]
    with pytest.raises(FileFormatError, match="group 'g': this id is used twice"):
        loads(json.dumps(doc))
