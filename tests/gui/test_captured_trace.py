"""A captured PyTorch pass in the main window: the one player, canvas, chain-rule panel
and exporters show it; its modules are collapsed groups that play as one step."""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pytest

from engine import tracefile
from engine.groups import GroupStep
from engine.trace import Step
from gui.commands import READ_ONLY, MoveNodes, push
from gui.group_commands import set_collapsed
from gui.model.chain_rule import chain_rule_html
from gui.model.formatting import fmt_num
from support import captured_cnn, captured_mlp, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


@pytest.fixture(scope="module", params=["mlp", "cnn"])
def trace_path(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    make = {"mlp": captured_mlp, "cnn": captured_cnn}[request.param]
    return make(tmp_path_factory.mktemp("captured") / f"{request.param}.bptrace")


@pytest.fixture
def window(qtbot, trace_path: Path):  # noqa: ANN001, ANN201
    from gui.main_window import MainWindow

    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    assert w.files.load_path(trace_path)
    return w


def _text(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_every_step_shows_its_vjp_and_the_leaves_end_as_the_trace(window, trace_path) -> None:  # noqa: ANN001
    trace = tracefile.load(trace_path)
    player, tl = window.player, window.player.timeline
    assert window.doc.read_only and window.read_only_banner.isVisibleTo(window)
    assert all(g.collapsed and " · " in g.title for g in window.doc.groups)
    assert len(tl.steps) < len(trace.steps)  # each module is one step
    for k in range(1, len(tl.steps) + 1):
        player.seek(tl.position_of_step(k))
        frame = player.frame
        text = _text(chain_rule_html(window.doc.graph, tl, frame, player.end_to_end, 12))
        step = tl.steps[k - 1]
        if isinstance(step, Step):
            assert f"{step.consumer}" in text and f"{step.operand}" in text
            assert fmt_num(float(step.vjp.ravel()[0])) in text
            np.testing.assert_array_equal(frame.grads[step.operand], step.accumulated)
        else:
            assert isinstance(step, GroupStep) and frame.active_group is step
            assert f"{step.edges} edge" in text and step.group.title in text
    player.to_end()
    for leaf in trace.leaves:
        np.testing.assert_allclose(player.frame.grads[leaf], trace.grads[leaf], rtol=1e-12)


def test_an_expanded_module_plays_its_edges(window) -> None:  # noqa: ANN001
    doc, player = window.doc, window.player
    group = doc.groups[0]
    before = len(player.timeline.steps)
    edges = next(s.edges for s in player.timeline.steps if isinstance(s, GroupStep)
                 and s.group.id == group.id)
    rebuilt: list[bool] = []
    player.timelineChanged.connect(lambda: rebuilt.append(True))
    runs = doc.recompute_count
    assert push(doc, set_collapsed(doc, group.id, False)) is None
    assert rebuilt == [True] and doc.recompute_count == runs  # one new timeline, no recompute
    assert len(player.timeline.steps) == before + edges - 1
    assert not doc.modified or not window.isWindowModified()  # nothing to save
    assert push(doc, set_collapsed(doc, group.id, True)) is None
    assert len(player.timeline.steps) == before


def test_edits_are_refused_in_one_line(window) -> None:  # noqa: ANN001
    from gui.commands import Rename

    doc = window.doc
    nid = next(iter(doc.graph.nodes))
    error = push(doc, Rename(doc, nid, "renamed"))
    assert error is not None and str(error) == READ_ONLY and nid in doc.graph.nodes
    assert not window.named_actions["save"].isEnabled() and not window.palette_dock.isEnabled()
    x, y = doc.positions[nid]
    assert push(doc, MoveNodes(doc, {nid: (x, y)}, {nid: (x + 10, y)})) is None  # a view change


def test_quit_closes_every_window_and_ends_the_app(qtbot, monkeypatch, window) -> None:  # noqa: ANN001
    from PySide6.QtWidgets import QApplication, QWidget

    other = QWidget()
    qtbot.addWidget(other)
    other.show()
    quits = []
    monkeypatch.setattr(QApplication, "quit", lambda: quits.append(True))
    window.named_actions["quit"].trigger()
    assert quits == [True] and not window.isVisible() and not other.isVisible()


def test_double_click_expands_a_module_in_place_and_collapses_it_again(qtbot, window) -> None:  # noqa: ANN001
    from PySide6.QtCore import Qt

    doc, canvas = window.doc, window.canvas
    frames = window.teaching.group_frames.frames
    group = doc.groups[-1]
    canvas.centerOn(frames[group.id].sceneBoundingRect().center())

    def click_on(gid: str) -> None:
        rect = frames[gid].sceneBoundingRect()
        at = canvas.mapFromScene(rect.center().x(), rect.top() + 4)  # its caption strip
        qtbot.mouseDClick(canvas.viewport(), Qt.MouseButton.LeftButton, pos=at)

    steps = len(window.player.timeline.steps)
    click_on(group.id)
    assert not next(g for g in doc.groups if g.id == group.id).collapsed
    assert len(window.player.timeline.steps) > steps
    click_on(group.id)
    assert next(g for g in doc.groups if g.id == group.id).collapsed
    assert len(window.player.timeline.steps) == steps


def test_every_panel_follows_a_captured_pass(window) -> None:  # noqa: ANN001
    """Each tab below the canvas renders every step (pytest-qt fails on an exception in
    a Qt handler); forward mode, which needs the engine's ops, says so in one line."""
    from gui.model.timeline import Direction
    from gui.panels.forward_mode import CAPTURED_NO_JVP

    tl, tabs = window.player.timeline, window.tabs
    for i in range(tabs.count()):
        tabs.setCurrentIndex(i)
        for k in range(len(tl.steps) + 1):
            window.player.seek(tl.position_of_step(k))
    forward = window.teaching.forward_panel
    messages = [w.text() for w in forward.findChildren(type(window.player_status))]
    assert CAPTURED_NO_JVP in messages
    box = window.player_bar.direction_box  # the player bar refuses forward mode too
    box.setCurrentIndex(box.findData(Direction.FORWARD))
    assert window.player.direction is Direction.REVERSE
    assert box.currentData() is Direction.REVERSE
    assert window.player_bar.status_label.text() == CAPTURED_NO_JVP


def _shown_rects(window) -> list[tuple[str, object]]:  # noqa: ANN001
    """Every box and frame on screen, as scene rectangles: a collapsed module's frame
    stands for its members (they sit under it), an expanded one is around its own."""
    doc, frames = window.doc, window.teaching.group_frames.frames
    under = {m for g in doc.groups if g.collapsed and g.id in frames for m in g.members}
    out = [(f"frame {gid}", f.sceneBoundingRect()) for gid, f in frames.items()]
    out += [(nid, item.scene_rect()) for nid, item in window.canvas.scene().nodes.items()
            if nid not in under]
    return out


def _overlaps(window) -> list[tuple[str, str]]:  # noqa: ANN001
    doc, frames = window.doc, window.teaching.group_frames.frames
    inside = {(f"frame {g.id}", m) for g in doc.groups for m in g.members}
    inside |= {(f"frame {g.id}", f"frame {h.id}") for g in doc.groups for h in doc.groups
               if g.id != h.id and set(h.members) < set(g.members)}
    rects = _shown_rects(window)
    assert len(frames) and rects
    return [(a, b) for i, (a, ra) in enumerate(rects) for b, rb in rects[i + 1 :]
            if (a, b) not in inside and (b, a) not in inside and ra.intersects(rb)]


def test_no_box_or_module_frame_overlaps_another(window) -> None:  # noqa: ANN001
    """Collapsed, a module is one box of the layout; expanded, a frame around its own
    layout: either way no box or frame covers one that is not its own."""
    doc = window.doc
    assert _overlaps(window) == []
    for group in list(doc.groups):
        assert push(doc, set_collapsed(doc, group.id, False)) is None
        assert _overlaps(window) == [], group.id
    for group in list(doc.groups):
        assert push(doc, set_collapsed(doc, group.id, True)) is None
    assert _overlaps(window) == []


def test_expanding_lays_the_module_out_in_place_and_collapsing_restores(window) -> None:  # noqa: ANN001
    doc = window.doc
    group = doc.groups[len(doc.groups) // 2]
    before = dict(doc.positions)
    frame = window.teaching.group_frames.frames[group.id].sceneBoundingRect()
    assert len({before[m] for m in group.members}) == 1  # collapsed: never laid out
    assert push(doc, set_collapsed(doc, group.id, False)) is None
    spots = {doc.positions[m] for m in group.members}
    assert len(spots) == len(group.members)  # expanded: each member has its own place
    grown = window.teaching.group_frames.frames[group.id].sceneBoundingRect()
    assert grown.topLeft() == frame.topLeft()  # in place: it grows from where it was
    assert push(doc, set_collapsed(doc, group.id, True)) is None
    assert doc.positions == before


def test_a_module_step_shows_its_own_jacobian_in_the_heatmap(window) -> None:  # noqa: ANN001
    """A collapsed module's step draws J (from its inner VJPs) with upstream · J = vjp."""
    tl, tabs = window.player.timeline, window.tabs
    tabs.setCurrentIndex(next(i for i in range(tabs.count()) if "heatmap" in tabs.tabText(i)))
    view = window.jacobian_view
    shown = 0
    for k, step in enumerate(tl.steps, 1):
        if not isinstance(step, GroupStep):
            continue
        window.player.seek(tl.position_of_step(k))
        view.follow.flush()
        jac = view.jacobian()
        row = np.concatenate([np.ravel(step.upstream[o]) for o in step.outputs])
        out = np.concatenate([np.ravel(step.vjps[x]) for x in step.inputs])
        if row.size * out.size <= 4096:
            assert jac is not None and jac.shape == (row.size, out.size)
            np.testing.assert_allclose(row @ jac, out, rtol=1e-10, atol=1e-14)
            shown += 1
        else:
            assert jac is None
    assert shown


def test_a_captured_step_redraws_only_its_boxes_and_a_refused_edit_recomputes_nothing(
    window, monkeypatch  # noqa: ANN001
) -> None:
    """"One change, one recompute" and frame purity for a captured pass: a step redraws
    the boxes it changes (an edge's two ends, a module's inputs), nothing more; an edit
    refused on the read-only trace runs nothing."""
    from gui.commands import Rename
    from support import redrawn_boxes

    player, doc = window.player, window.doc
    player.to_start()
    touched = redrawn_boxes(monkeypatch)

    def ends(s: object) -> set[str]:
        return set(s.inputs) if isinstance(s, GroupStep) else {s.operand, s.consumer}  # type: ignore[attr-defined]

    player.seek(player.timeline.forward_length)
    steps = player.timeline.steps
    drawn: set[str] = set()
    for k in range(1, len(steps) + 1):
        drawn.update(touched)
        touched.clear()
        frame_before = player.frame
        player.step_forward()
        allowed = ends(steps[k - 1]) | (ends(steps[k - 2]) if k > 1 else set())
        assert set(touched) <= allowed, k
        assert player.timeline.frame(frame_before.position) == frame_before  # pure
    assert drawn  # the boxes did follow the player
    runs = doc.recompute_count
    assert push(doc, Rename(doc, next(iter(doc.graph.nodes)), "other")) is not None
    assert doc.recompute_count == runs


def test_nested_modules_frame_each_other_without_overlaps(qtbot, tmp_path: Path) -> None:  # noqa: ANN001
    """An expanded module's frame holds its inner modules' boxes and frames (each a box
    of its layout), collapsed or expanded in turn, and nothing else."""
    from engine.capture import capture, tracking
    from gui.main_window import MainWindow

    torch.manual_seed(7)
    inner = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh())
    model = torch.nn.Sequential(inner, torch.nn.Linear(3, 2)).double()
    x = torch.randn(2, 3, dtype=torch.float64)
    with tracking(model):
        loss = model(x).pow(2).sum()
    path = tmp_path / "nested.bptrace"
    capture(loss, names=model).save(path)
    w = MainWindow()
    qtbot.addWidget(w)
    w.resize(1280, 720)
    w.show()
    assert w.files.load_path(path)
    doc = w.doc
    assert {"0", "0.0", "0.1", "1"} <= {g.id for g in doc.groups}
    assert set(w.teaching.group_frames.frames) == {"0", "1"}  # inner ones under the box
    assert _overlaps(w) == []
    for gid in ("0", "0.0", "0.1"):  # outer first, then each inner one in it
        assert push(doc, set_collapsed(doc, gid, False)) is None
        assert _overlaps(w) == [], gid
    frames = w.teaching.group_frames.frames
    outer = frames["0"].sceneBoundingRect()
    assert all(outer.contains(frames[g].sceneBoundingRect()) for g in ("0.0", "0.1"))


def test_a_module_step_outlines_its_frame_without_working_the_nesting_out_again(
    window, monkeypatch  # noqa: ANN001
) -> None:
    """Each step outlines the module it plays (and the one before goes back to plain)
    from the nesting the last full refresh worked out: none is worked out per step."""
    from PySide6.QtGui import QColor

    from gui.canvas import group_frames
    from gui.theme import THEME

    frames = window.teaching.group_frames.frames
    worked_out: list[int] = []
    real = group_frames.holders
    monkeypatch.setattr(group_frames, "holders",
                        lambda groups: worked_out.append(1) or real(groups))
    player = window.player
    player.seek(player.timeline.forward_length)
    played = set()
    for _ in range(len(player.timeline.steps)):
        player.step_forward()
        active = player.frame.active_group
        gid = active.group.id if active is not None else None
        for fid, frame in frames.items():
            colour = THEME.edge_active if fid == gid else THEME.group_border
            assert frame.pen().color() == QColor(colour), (fid, gid)
        played.add(gid)
    assert played - {None} and not worked_out


def test_opening_places_the_module_frames_once_and_a_collapse_places_them_again(
    window, trace_path, monkeypatch  # noqa: ANN001
) -> None:
    """Positions, results and groups are announced one after another as a trace opens:
    the frames are placed on the first only; a collapse (new groups) places them again."""
    from gui.canvas import group_frames

    placed: list[str] = []
    real = group_frames.GroupFrame.show_group
    monkeypatch.setattr(group_frames.GroupFrame, "show_group",
                        lambda self, *a: placed.append(self.group_id) or real(self, *a))
    assert window.files.load_path(trace_path)
    frames = window.teaching.group_frames.frames
    assert frames and sorted(placed) == sorted(frames)  # each frame once
    group = window.doc.groups[0]
    placed.clear()
    set_collapsed(window.doc, group.id, not group.collapsed).redo()
    assert group.id in placed


def test_a_collapsed_module_hides_the_edges_inside_it(window) -> None:  # noqa: ANN001
    """Its members sit stacked under its box, so an edge between two of them (Linear's
    T → Addmm) curled out of the box's sides; it is drawn nowhere until expanded."""
    doc, scene = window.doc, window.canvas.canvas
    holder = {m: g.id for g in doc.groups for m in g.members}
    inside = [k for k in scene.edges if holder.get(k[0]) is not None
              and holder.get(k[0]) == holder.get(k[1])]
    assert inside  # every captured Linear holds one
    assert all(not scene.edges[k].isVisible() and not scene.edges[k].in_background
               for k in inside)
    assert all(scene.edges[k].isVisible() for k in scene.edges if k not in inside)
    gid = holder[inside[0][0]]
    mine = [k for k in inside if holder[k[0]] == gid]
    assert push(doc, set_collapsed(doc, gid, False)) is None
    assert all(scene.edges[k].isVisible() for k in mine)
    assert push(doc, set_collapsed(doc, gid, True)) is None
    assert all(not scene.edges[k].isVisible() for k in mine)
