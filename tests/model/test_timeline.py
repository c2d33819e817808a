"""The timeline's frames are views, not copies, and say what changed between them.

Headless (no Qt): gui.model is the Qt-free view model.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine import tracefile
from engine.autodiff import backward, forward, trace_after_edit
from engine.captured import as_graph
from engine.forward_mode import ForwardStep, jvp, ones
from engine.groups import GroupStep, playback_steps
from gui.model.results import Results
from gui.model.timeline import Phase, Timeline
from support import captured_mlp, seed2_graph, torch


def seed2_timeline() -> Timeline:
    g = seed2_graph()
    fwd = forward(g)
    return Timeline(Results(fwd, backward(g, fwd, "y", np.array([0.1, 0.2, 0.3]))))


def seed2_forward_mode() -> Timeline:
    """Seed 2 in the forward direction: forward mode with every input's tangent 1."""
    g = seed2_graph()
    fwd = forward(g)
    results = Results(fwd, backward(g, fwd, "y", np.array([0.1, 0.2, 0.3])))
    return Timeline(results, tangents=jvp(g, fwd, ones(g, fwd)))


@pytest.fixture(scope="module", params=["seed2", "captured", "modules", "forward mode"])
def timeline(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Timeline:
    """Seed 2, a captured PyTorch MLP (its edges, modules expanded; or its modules
    collapsed, each one step) and seed 2's forward mode: one timeline."""
    if request.param == "seed2":
        return seed2_timeline()
    if request.param == "forward mode":
        return seed2_forward_mode()
    if torch is None:
        pytest.skip("torch is not installed")
    trace = tracefile.load(captured_mlp(Path(tmp_path_factory.mktemp("tl")) / "mlp.bptrace"))
    shown = as_graph(trace)
    if request.param == "modules":
        steps = playback_steps(shown.graph, trace, shown.groups)
        assert any(isinstance(s, GroupStep) for s in steps)
        return Timeline(Results(shown.forward, trace), steps)
    return Timeline(Results(shown.forward, trace))


def naive_frame(tl: Timeline, k: int) -> tuple[dict[str, np.ndarray], set]:
    """What frame k must show, rebuilt the slow way (every step so far replayed)."""
    grads = dict(tl.start_grads)
    done = set()
    for s in tl.steps[:k]:
        if isinstance(s, GroupStep):  # a collapsed module: one step into its inputs
            grads.update(s.accumulated)
            done.add((s.group.id, s.group.id, -1))
            continue
        grads[s.consumer if isinstance(s, ForwardStep) else s.operand] = s.accumulated
        done.add((s.operand, s.consumer, s.operand_index))
    return grads, done


def touched(s: object) -> set[str]:
    """The boxes a step redraws: its edge's two ends, or a module's inputs."""
    if isinstance(s, GroupStep):
        return set(s.inputs)
    return {s.operand, s.consumer}  # type: ignore[attr-defined]


def key(s: object) -> tuple[str, str, int]:
    if isinstance(s, GroupStep):
        return (s.group.id, s.group.id, -1)
    return (s.operand, s.consumer, s.operand_index)  # type: ignore[attr-defined]


def test_every_frame_matches_replaying_the_steps(timeline: Timeline) -> None:
    tl = timeline
    F = tl.forward_length
    for p in range(tl.length):
        f = tl.frame(p)
        if p < F:
            assert set(f.shown_values) == set(tl.forward_order[:p]) and not f.grads
            continue
        grads, done = naive_frame(tl, p - F)
        assert set(f.grads) == set(grads)
        for nid, g in grads.items():
            assert f.grads.get(nid) is g
        assert set(f.done_edges) == done and len(f.done_edges) == len(done)
        assert all(key in f.done_edges for key in done)
        assert f.done_edges - done == frozenset()
        assert set(f.shown_values) == set(tl.forward_order)
    done = Phase.BACKWARD_DONE if tl.tangents is None else Phase.TANGENT_DONE
    assert tl.frame(tl.end).phase is done


def test_forward_mode_frames_show_the_engines_tangents() -> None:
    """The forward direction's last frame holds every tangent forward mode computed, and
    each step's frame names its edge and J·t's receiver (the consumer)."""
    tl = seed2_forward_mode()
    assert tl.tangents is not None
    end = tl.frame(tl.end)
    for nid, t in tl.tangents.tangents.items():
        np.testing.assert_array_equal(end.grads[nid], t)
    np.testing.assert_allclose(end.grads["y"], [11, 3, 6])  # J·[1, 1, 1]: J's row sums
    f = tl.frame(tl.position_of_step(6))
    s = tl.steps[5]
    assert isinstance(s, ForwardStep) and f.tangent_step is s and f.active is None
    assert f.active_edge == (s.operand, s.consumer, s.operand_index)
    assert f.status == f"forward mode step 6 of 15: {s.operand} → {s.consumer}"
    assert tl.frame(tl.forward_length).status == "forward done; forward mode 0 of 15 steps"


def test_a_step_changes_only_the_nodes_and_edges_it_touches(timeline: Timeline) -> None:
    tl = timeline
    F = tl.forward_length
    for k in range(1, len(tl.steps)):
        a, b = tl.frame(F + k), tl.frame(F + k + 1)
        change = tl.changes(a, b)
        prev, step = tl.steps[k - 1], tl.steps[k]
        assert change is not None
        assert change.nodes == touched(prev) | touched(step)
        # a module's step lights no edge: the one before it has no highlight to take away
        assert change.edges == {key(s) for s in (prev, step)
                                if s is step or not isinstance(s, GroupStep)}
    # a forward step shows one more value and nothing else
    change = tl.changes(tl.frame(2), tl.frame(3))
    assert change is not None and change.nodes == {tl.forward_order[2]} and not change.edges


def test_changes_across_phases_or_timelines_mean_everything() -> None:
    tl, other = seed2_timeline(), seed2_timeline()
    F = tl.forward_length
    assert tl.changes(tl.frame(F - 1), tl.frame(F + 1)) is None
    assert tl.changes(tl.frame(F + 1), other.frame(F + 2)) is None


def test_step_contributions_and_senders_are_indexed() -> None:
    tl = seed2_timeline()
    for k, s in enumerate(tl.steps, start=1):
        earlier = [t for t in tl.steps[:k] if t.operand == s.operand]
        assert tl.contribution(k) == len(earlier)
        assert tl.senders(s.operand) == [t.consumer for t in tl.steps if t.operand == s.operand]


def test_a_timeline_after_an_edit_outside_the_cone_indexes_the_same_steps_once() -> None:
    """A node added where backward never reaches keeps the trace's steps (shared by
    trace_after_edit): the new timeline reuses the last one's index of them and says
    what a timeline built from a fresh backward pass says."""
    g = seed2_graph()
    fwd = forward(g)
    before = Timeline(Results(fwd, backward(g, fwd, "y", np.array([0.1, 0.2, 0.3]))))
    g.add_node("z", "input", value=[1.0, 2.0])
    after_fwd = forward(g, fwd, {"z"})
    assert before.results.trace is not None
    after = Timeline(Results(after_fwd, trace_after_edit(before.results.trace, after_fwd)))
    assert after._edge_index is before._edge_index and after._updates is before._updates
    fresh_fwd = forward(g)
    fresh = Timeline(Results(fresh_fwd, backward(g, fresh_fwd, "y", np.array([0.1, 0.2, 0.3]))))
    assert after.forward_order == fresh.forward_order and after.length == fresh.length
    assert [key(s) for s in after.steps] == [key(s) for s in fresh.steps]
    assert after.fan_in == fresh.fan_in
    assert [after.contribution(k) for k in range(1, len(after.steps) + 1)] == [
        fresh.contribution(k) for k in range(1, len(fresh.steps) + 1)]
    assert list(after.start_grads) == list(fresh.start_grads)
    assert all(np.array_equal(after.start_grads[n], fresh.start_grads[n])
               for n in fresh.start_grads)
    assert all(after.update_steps(n) == fresh.update_steps(n) for n in g.nodes)


def test_a_module_step_counts_its_edges_in_words(tmp_path: Path) -> None:
    """The status line says how many edges a collapsed module holds, singular for one
    (an activation module is one edge: "(1 edges)" read wrong on a projector)."""
    if torch is None:
        pytest.skip("torch is not installed")
    trace = tracefile.load(captured_mlp(tmp_path / "mlp.bptrace"))
    shown = as_graph(trace)
    steps = playback_steps(shown.graph, trace, shown.groups)
    tl = Timeline(Results(shown.forward, trace), steps)
    # (after the last step the status says the pass is done)
    said = [(s, tl.frame(tl.position_of_step(k + 1)).status)
            for k, s in enumerate(tl.steps[:-1]) if isinstance(s, GroupStep)]
    assert any(s.edges == 1 for s, _ in said) and any(s.edges > 1 for s, _ in said)
    for s, status in said:
        assert f"{s.group.title} ({s.edges} edge{'s' if s.edges > 1 else ''}) →" in status
