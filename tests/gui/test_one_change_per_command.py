"""One user command = one structural change = one recompute = one refresh.

Bulk edits (delete a selection, duplicate, paste, their undo and redo) used to
call the document once per node, each call recomputing everything and refreshing
every view. These tests count: the engine runs once per command and each
document signal fires once, however many nodes the command touches.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from engine.autodiff import backward, forward
from engine.errors import GraphError
from engine.fileformat import GraphFile
from engine.graph import Graph
from gui.canvas import CanvasView
from gui.clipboard import Clipboard
from gui.document import GraphDocument
from gui.model.timeline import Direction
from gui.player import Player

N = 60  # nodes in the test graph: enough that per-node refreshes would show


def chain_graph(n: int = N) -> Graph:
    """x -> tanh -> tanh ... with a few side branches (adds) so edges fan out."""
    g = Graph()
    g.add_node("x", "input", value=[0.5, -0.25])
    prev = "x"
    for i in range(1, n):
        if i % 5 == 0:
            g.add_node(f"n{i}", "add", [prev, "x"])
        else:
            g.add_node(f"n{i}", "tanh", [prev])
        prev = f"n{i}"
    return g


class Counter:
    """How often each document signal fired."""

    def __init__(self, doc: GraphDocument) -> None:
        self.doc = doc
        self.counts = dict.fromkeys(("structure", "results", "backward", "node"), 0)
        doc.structureChanged.connect(lambda: self._hit("structure"))
        doc.resultsChanged.connect(lambda: self._hit("results"))
        doc.backwardChanged.connect(lambda: self._hit("backward"))
        doc.nodeChanged.connect(lambda _id: self._hit("node"))
        self.recomputes0 = doc.recompute_count

    def _hit(self, name: str) -> None:
        self.counts[name] += 1

    def reset(self) -> None:
        self.counts = dict.fromkeys(self.counts, 0)
        self.recomputes0 = self.doc.recompute_count

    @property
    def recomputes(self) -> int:
        return self.doc.recompute_count - self.recomputes0


@pytest.fixture
def view(qtbot) -> CanvasView:  # noqa: ANN001
    doc = GraphDocument()
    g = chain_graph()
    doc.load(
        GraphFile(
            graph=g,
            output=f"n{N - 1}",
            gradient=np.ones(2),
        ),
        None,
    )
    v = CanvasView(doc)
    v.animations_enabled = False
    qtbot.addWidget(v)
    v.resize(800, 600)
    return v


def assert_one_change(counter: Counter, structure: bool = True) -> None:
    assert counter.recomputes == 1
    assert counter.counts["results"] == 1
    assert counter.counts["structure"] == (1 if structure else 0)


def test_delete_all_undo_redo_each_recompute_once(view: CanvasView) -> None:
    doc = view.doc
    counter = Counter(doc)
    view.select_all()
    view.delete_selected()
    assert len(doc.graph) == 0 and doc.output is None
    assert_one_change(counter)
    assert counter.counts["backward"] == 1  # the output went with its node, said once
    counter.reset()
    doc.undo_stack.undo()
    assert len(doc.graph) == N and doc.output == f"n{N - 1}"
    assert doc.results.trace is not None  # the backward is back too
    assert_one_change(counter)
    counter.reset()
    doc.undo_stack.redo()
    assert len(doc.graph) == 0
    assert_one_change(counter)


def test_mixed_delete_of_nodes_and_edges_recomputes_once(view: CanvasView) -> None:
    doc = view.doc
    counter = Counter(doc)
    view.select_ids(["n10", "n11", "n12"])
    view.select_edges([("x", "n5", 1), ("x", "n15", 1)], add=True)
    view.delete_selected()
    assert "n11" not in doc.graph and doc.graph.nodes["n5"].inputs == ["n4", None]
    assert doc.undo_stack.count() == 1
    assert_one_change(counter)
    counter.reset()
    doc.undo_stack.undo()
    assert doc.graph.nodes["n5"].inputs == ["n4", "x"] and "n11" in doc.graph
    assert_one_change(counter)


def test_duplicate_and_its_undo_recompute_once(view: CanvasView) -> None:
    doc = view.doc
    counter = Counter(doc)
    new = Clipboard().duplicate(doc, list(doc.graph.nodes))
    assert isinstance(new, list) and len(new) == N and len(doc.graph) == 2 * N
    assert_one_change(counter)
    counter.reset()
    doc.undo_stack.undo()
    assert len(doc.graph) == N
    assert_one_change(counter)


def test_views_refresh_with_the_collector_paused(view: CanvasView) -> None:
    # Views build and drop thousands of items on a big edit; collections triggered
    # meanwhile rescan the whole heap and free nothing. The collector is on again after.
    doc = view.doc
    seen: list[tuple[str, bool]] = []
    doc.structureChanged.connect(lambda: seen.append(("structure", gc.isenabled())))
    doc.resultsChanged.connect(lambda: seen.append(("results", gc.isenabled())))
    doc.positionsChanged.connect(lambda _ids: seen.append(("positions", gc.isenabled())))
    assert gc.isenabled()
    Clipboard().duplicate(doc, list(doc.graph.nodes))
    doc.undo_stack.undo()
    view.auto_layout()
    assert {name for name, _ in seen} == {"structure", "results", "positions"}
    assert not any(enabled for _, enabled in seen)
    assert gc.isenabled()


def test_the_forward_direction_and_its_tangents_rebuild_once_and_recompute_nothing(
    view: CanvasView,
) -> None:
    """Switching to forward mode, new tangents, and back: one new timeline each, and the
    engine's forward and backward are not run again (forward mode is its own pass)."""
    doc = view.doc
    counter = Counter(doc)
    player = Player(doc)
    rebuilt: list[int] = []
    player.timelineChanged.connect(lambda: rebuilt.append(1))
    player.set_direction(Direction.FORWARD)
    assert player.timeline.tangents is not None and len(rebuilt) == 1
    player.set_tangents({"x": [0.0, 1.0]})
    assert len(rebuilt) == 2
    player.set_tangents({"x": [0.0, 1.0]})  # the same again: no work
    assert len(rebuilt) == 2
    player.set_direction(Direction.REVERSE)
    assert len(rebuilt) == 3 and counter.recomputes == 0 and counter.counts["results"] == 0
    view.select_ids(["n10"])  # one edit in the forward direction: one recompute, one timeline
    player.set_direction(Direction.FORWARD)
    counter.reset()
    rebuilt.clear()
    view.delete_selected()
    assert_one_change(counter)
    assert len(rebuilt) == 1 and player.direction is Direction.FORWARD


def test_player_rebuilds_its_timeline_once_per_command(view: CanvasView) -> None:
    doc = view.doc
    player = Player(doc)
    rebuilt: list[int] = []
    player.timelineChanged.connect(lambda: rebuilt.append(1))
    view.select_all()
    view.delete_selected()
    doc.undo_stack.undo()
    assert len(rebuilt) == 2  # one per command, not one per node


# --------------------------------------------------------------------------- frames and panels


@pytest.mark.parametrize("direction", list(Direction), ids=lambda d: d.value)
def test_a_player_step_redraws_only_the_boxes_it_changes(view, monkeypatch, direction) -> None:  # noqa: ANN001
    from support import redrawn_boxes

    player = Player(view.doc)
    player.set_direction(direction)
    view.canvas.apply_frame(player.frame)
    touched = redrawn_boxes(monkeypatch)
    player.frameChanged.connect(view.show_frame)
    player.to_start()  # a jump back over every step: may redraw everything
    for _ in range(5):
        touched.clear()
        player.step_forward()
        step = player.frame.edge_step
        assert step is not None and player.direction is direction
        assert set(touched) <= {step.operand, step.consumer} | prev_touch(player)
        assert len(touched) <= 4  # of N boxes


def prev_touch(player: Player) -> set[str]:
    """The previous step's operand and consumer (their highlight goes away)."""
    k = player.frame.k
    if k < 2:
        return set()
    s = player.timeline.steps[k - 2]
    return {s.operand, s.consumer}


def test_chain_rule_panel_renders_once_per_change_and_not_while_hidden(qtbot) -> None:  # noqa: ANN001
    from gui.panels.chain_rule import ChainRulePanel

    doc = GraphDocument()
    doc.load(
        GraphFile(
            graph=chain_graph(12),
            output="n11",
            gradient=np.ones(2),
        ),
        None,
    )
    player = Player(doc)
    panel = ChainRulePanel(player)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    follow = panel.follow
    before = follow.renders
    player.step_back()
    assert follow.renders == before + 1
    doc.set_backward("n10", np.ones(2))  # new results: timeline and frame change together
    assert follow.renders == before + 2
    panel.hide()
    for _ in range(3):
        player.step_back()
    assert follow.renders == before + 2  # hidden: nothing rendered
    panel.show()
    assert follow.renders == before + 3  # shown again: rendered once, up to date
    assert f"Step {player.frame.k} of" in panel.text()


def _chain_panel_at_end(qtbot):  # noqa: ANN001, ANN202
    """A 12-node chain's document, its player at the end, and a chain-rule panel shown."""
    from gui.panels.chain_rule import ChainRulePanel

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    player = Player(doc)
    panel = ChainRulePanel(player)
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    player.to_end()
    return doc, player, panel


def test_an_edit_that_leaves_the_write_up_as_it_was_lays_nothing_out(qtbot) -> None:  # noqa: ANN001
    """A constant added at the end of backward changes nothing the write-up says: the
    panel keeps the document it shows (no new page laid out); an input added does (the
    summary names its .grad), and the page says so."""
    doc, player, panel = _chain_panel_at_end(qtbot)
    shown, renders = panel.browser.document(), panel.follow.renders
    doc.add_node("c1", "const", (0.0, 0.0), value=2.0)
    assert panel.follow.renders == renders + 1 and player.position == player.timeline.end
    assert panel.browser.document() is shown
    doc.add_node("x9", "input", (0.0, 0.0), value=2.0)
    assert panel.browser.document() is not shown and "x9.grad = None" in panel.text()


def test_an_edit_that_changes_only_the_summary_replaces_it_in_place(qtbot) -> None:  # noqa: ANN001
    """An input added at the end of backward changes only the whole call's summary (its
    J is one column wider, it names the new leaf's .grad): the panel replaces that part
    of the document it shows, lays no new page out and, the summary being below the
    fold, draws nothing again; the page reads as a fresh one would, and so after undo."""
    from gui.commands import AddNode, push
    from gui.panels import chain_rule as chain_rule_module

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    player = Player(doc)
    panel = chain_rule_module.ChainRulePanel(player)
    qtbot.addWidget(panel)
    panel.resize(1000, 160)  # the last step fills the panel: the summary is below the fold
    panel.show()
    qtbot.waitExposed(panel)
    player.to_end()
    browser = panel.browser
    assert browser.verticalScrollBar().isVisible()
    laid_out: list[str] = []
    original = chain_rule_module.ChainRulePanel._laid_out

    def counting(self, html):  # noqa: ANN001, ANN202
        laid_out.append(html)
        return original(self, html)

    qtbot.wait(chain_rule_module.AHEAD_MS + 40)  # nothing is laid out ahead at the end
    chain_rule_module.ChainRulePanel._laid_out = counting  # type: ignore[method-assign]
    browser.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # (focused, it paints as QTextBrowser
    browser.clearFocus()  # does: in the window, the canvas has the focus)
    QApplication.processEvents()
    browser.viewport().repaint()
    try:
        for taken in (False, True):  # shown from its drawing, then the browser's own
            if taken:
                browser.adopt()
            shown, draws, renders = browser.shown_document(), browser.draws, panel.follow.renders
            push(doc, AddNode(doc, "input", (0.0, 0.0)))
            assert panel.follow.renders == renders + 1 and laid_out == []
            assert browser.shown_document() is shown
            QApplication.processEvents()
            browser.viewport().repaint()
            # the step above it drawn once, before: the summary changed out of view only
            assert browser.draws == draws
            argb = QImage.Format.Format_ARGB32_Premultiplied
            kept = browser.viewport().grab().toImage().convertToFormat(argb)
            fresh_drawing = browser.drawing(browser.shown_document()).toImage()
            assert kept == fresh_drawing.convertToFormat(argb)  # the page as drawn afresh
            fresh = original(panel, panel.html(panel.fit))
            assert shown.toHtml() == fresh.toHtml() and "x1.grad = None" in panel.text()
            doc.undo_stack.undo()
            assert laid_out == [] and browser.shown_document() is shown
            assert shown.toHtml() == original(panel, panel.html(panel.fit)).toHtml()
            assert "x1.grad" not in panel.text()
        browser.selectAll()  # text selected: a new page, as for any other change
        shown = browser.shown_document()
        push(doc, AddNode(doc, "input", (0.0, 0.0)))
        assert browser.shown_document() is not shown and len(laid_out) == 1
    finally:
        chain_rule_module.ChainRulePanel._laid_out = original  # type: ignore[method-assign]


def test_a_hidden_forward_mode_panel_does_no_work_on_new_results(qtbot) -> None:  # noqa: ANN001
    from gui.model.timeline import Direction
    from gui.panels.forward_mode import ForwardModePanel

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    player = Player(doc)
    panel = ForwardModePanel(player)
    qtbot.addWidget(panel)  # a tab behind another one: never shown yet
    follow = panel.follow
    doc.set_backward("n10", np.ones(2))
    doc.undo_stack.clear()
    assert follow.renders == 0 and not panel.editors
    panel.show()
    qtbot.waitExposed(panel)
    assert follow.renders == 1  # shown: built once, for the results of now
    assert set(panel.editors) == {"x"} and player.direction is Direction.REVERSE
    panel.run()
    assert player.direction is Direction.FORWARD and player.frame.k == 0
    tl = player.timeline
    player.seek(tl.position_of_step(3))
    s = tl.steps[2]
    assert player.frame.active_edge == (s.operand, s.consumer, s.operand_index)
    built: list[object] = []
    player.timelineChanged.connect(lambda: built.append(player.timeline))
    doc.set_backward("n11", np.ones(2))  # visible: rebuilt once; forward mode replayed once
    assert follow.renders == 2 and len(built) == 1
    assert player.direction is Direction.FORWARD and player.timeline.tangents is not None
    panel.hide()
    doc.set_backward("n10", np.ones(2))  # hidden: the panel does nothing
    assert follow.renders == 2 and len(built) == 2


def test_a_bulk_duplicate_routes_only_the_new_edges(qtbot, monkeypatch) -> None:  # noqa: ANN001
    from gui.canvas import scene as scene_module

    n = scene_module.REROUTE_ALL + 16  # a bulk arrival
    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(n), output=f"n{n - 1}", gradient=np.ones(2)), None)
    view = CanvasView(doc)
    qtbot.addWidget(view)
    scene = view.canvas
    routed: list[tuple[str, str, int]] = []
    original = scene_module.CanvasScene._update_edge

    def counting(self, key):  # noqa: ANN001, ANN202
        routed.append(key)
        return original(self, key)

    scene.route_pending()  # the opening's own routing, deferred to idle time, done
    monkeypatch.setattr(scene_module.CanvasScene, "_update_edge", counting)
    before = set(scene.edges)
    Clipboard().duplicate(doc, list(doc.graph.nodes))
    new = set(scene.edges) - before
    assert len(new) == len(before)
    assert sorted(routed) == sorted(new)  # each new edge once, no edge already there


def test_the_chain_rule_panel_keeps_its_scroll_bar_while_rendering(qtbot) -> None:  # noqa: ANN001
    """``setHtml`` empties the page first: a scroll bar that went away and came back
    resized the text area twice and had the write-up laid out at both widths. A tall
    write-up replacing a tall one keeps the bar (the area is never resized); a short one
    lets it go; the policy is left as it was."""
    from PySide6.QtCore import QEvent, QObject, Qt

    from gui.panels.chain_rule import ChainRulePanel

    class Resizes(QObject):
        count = 0

        def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
            if event.type() == QEvent.Type.Resize:
                self.count += 1
            return False

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    player = Player(doc)
    panel = ChainRulePanel(player)
    qtbot.addWidget(panel)
    panel.resize(420, 90)  # every step's write-up is taller than this
    panel.show()
    qtbot.waitExposed(panel)
    player.to_start()
    player.step_forward()
    bar = panel.browser.verticalScrollBar()
    assert bar.isVisible()
    resizes = Resizes()
    panel.browser.viewport().installEventFilter(resizes)
    for _ in range(4):
        player.step_forward()
        assert bar.isVisible() and f"Step {player.frame.k} of" in panel.text()
    assert resizes.count == 0
    assert panel.browser.verticalScrollBarPolicy() == Qt.ScrollBarPolicy.ScrollBarAsNeeded
    panel.resize(900, 900)  # room for all of it: the bar goes
    player.step_forward()
    assert not bar.isVisible()


# --------------------------------------------------------------------------- what an edit changed


def test_an_edit_backward_never_reaches_names_the_nodes_it_changed() -> None:
    """Results.changed: an edit outside the output's cone changes the backward pass in
    nothing, and only the touched nodes and what is downstream of them may read
    differently; one that reaches the output, or forgets accumulated .grad, names nothing."""
    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    before = doc.results
    doc.add_node("b", "input", (0.0, 0.0), value=[1.0, 2.0])
    assert doc.results.changed_since(before) == {"b"}
    assert doc.results.changed_since(None) is None
    doc.add_node("t", "tanh", (0.0, 0.0))
    doc.connect_operand("b", "t", 0)
    before = doc.results
    doc.set_value("b", [3.0, 4.0])  # a branch nothing downstream of the output reads
    assert doc.results.changed_since(before) == {"b", "t"}
    assert doc.results.trace is not None
    before = doc.results
    doc.disconnect_operand("n5", 1)  # in the output's cone: gradients change
    assert doc.results.changed_since(before) is None
    before = doc.results
    doc.connect_operand("t", "n5", 1)
    assert doc.results.changed_since(before) is None
    doc.backward_again()  # .grad accumulated: the next edit forgets it everywhere
    before = doc.results
    doc.add_node("c", "input", (0.0, 0.0), value=[1.0, 2.0])
    assert doc.results.changed_since(before) is None
    before = doc.results
    doc.set_backward("t", None)  # another output: anything may differ
    assert doc.results.changed_since(before) is None


def test_an_edit_recomputes_only_what_it_reaches_with_the_same_numbers() -> None:
    """An edit that names what it touched takes every other node's value from the last
    results and, outside the output's cone, the backward pass too: the results equal a
    fresh forward and backward in every number, order and name."""
    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    for edit in (
        lambda: doc.add_node("b", "input", (0.0, 0.0), value=[1.0, 2.0]),
        lambda: doc.add_node("t", "tanh", (0.0, 0.0)),
        lambda: doc.connect_operand("b", "t", 0),
        lambda: doc.set_value("b", [3.0, -4.0]),
        lambda: doc.disconnect_operand("n5", 1),  # in the cone: backward runs again
        lambda: doc.connect_operand("t", "n5", 1),
        lambda: doc.remove_node("b"),  # t loses its operand: an error downstream
    ):
        before = doc.results
        edit()
        got, fresh = doc.results.forward, forward(doc.graph)
        assert got.order == fresh.order and list(got.values) == list(fresh.values)
        assert all(np.array_equal(got.values[n], fresh.values[n]) for n in fresh.values)
        assert {n: str(e) for n, e in got.errors.items()} == {
            n: str(e) for n, e in fresh.errors.items()}
        assert got.requires_grad == fresh.requires_grad
        reach = doc.graph.downstream([n for n in ("b", "t", "n5") if n in doc.graph])
        kept = [n for n in before.forward.values if n in got.values and n not in reach
                and doc.graph.nodes[n].inputs]
        assert kept and all(got.values[n] is before.forward.values[n] for n in kept)
        trace = doc.results.trace
        try:
            full = backward(doc.graph, fresh, "n11", doc.gradient)
        except GraphError as exc:
            assert trace is None and str(doc.results.backward_error) == str(exc)
            continue
        assert trace is not None and list(trace.grads) == list(full.grads)
        assert all((a is None and b is None) or np.array_equal(a, b)
                   for a, b in zip(trace.grads.values(), full.grads.values(), strict=True))
        assert trace.leaves == full.leaves and len(trace.steps) == len(full.steps)
        shared = doc.results.changed_since(before) is not None
        assert shared == (before.trace is not None and trace.steps is before.trace.steps)


@pytest.mark.parametrize("at_end", [True, False], ids=["at the end", "mid-forward"])
def test_adding_a_node_redraws_only_its_box(qtbot, monkeypatch, at_end) -> None:  # noqa: ANN001
    """A node added from the palette touches nothing backward reads: the new timeline's
    frame redraws its box only, and every box still says what a fresh build would."""
    from gui.commands import AddNode, push
    from gui.model.node_box import NodeBoxes
    from gui.player import connect_canvas
    from support import redrawn_boxes

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(), output=f"n{N - 1}", gradient=np.ones(2)), None)
    player = Player(doc)  # before the canvas, as in the window: it hears new results first
    view = CanvasView(doc)
    view.animations_enabled = False
    qtbot.addWidget(view)
    connect_canvas(player, view)
    if not at_end:  # an edit shows the end: from a forward frame, everything may change
        player.seek(3)
    touched = redrawn_boxes(monkeypatch)
    cmd = AddNode(doc, "input", (0.0, -300.0))
    assert push(doc, cmd) is None
    assert (set(touched) == {cmd.node}) is at_end

    def assert_as_built() -> None:
        fresh = NodeBoxes()
        fresh.set_results(doc.results)
        for nid, item in view.canvas.nodes.items():
            assert item.content == fresh.content(doc.graph, doc.results, doc.output, nid,
                                                 player.frame), nid

    assert_as_built()
    touched.clear()
    doc.undo_stack.undo()
    assert touched == [] and cmd.node not in view.canvas.nodes
    assert_as_built()


def test_an_edit_that_keeps_the_steps_writes_the_last_step_once(qtbot) -> None:  # noqa: ANN001
    """An input added at the end of backward keeps the pass's steps (the new leaf is off
    the output's path): the panel writes the summary below the last step anew, not the
    step, and the page reads as one written from scratch. A value changed on the path
    gives new steps: the step is written again, with its new numbers."""
    from gui.commands import AddNode, push
    from gui.model.chain_rule import chain_rule_html
    from gui.panels.chain_rule import BASE_PT, ChainRulePanel

    doc = GraphDocument()
    doc.load(GraphFile(graph=chain_graph(12), output="n11", gradient=np.ones(2)), None)
    player = Player(doc)
    panel = ChainRulePanel(player)
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    qtbot.waitExposed(panel)
    player.to_end()
    steps = panel.steps

    def from_scratch() -> str:
        return chain_rule_html(doc.graph, player.timeline, player.frame,
                               player.end_to_end_or_computing, BASE_PT)

    assert panel.html() == from_scratch()
    written = steps.written
    push(doc, AddNode(doc, "input", (0.0, 0.0)))
    assert player.position == player.timeline.end
    assert steps.written == written  # the last step's write-up was kept
    assert panel.html() == from_scratch() and ".grad = None" in panel.text()
    doc.undo_stack.undo()
    assert steps.written == written and panel.html() == from_scratch()
    before = panel.text()
    doc.set_value("x", np.array([0.75, -0.5]))  # on the path: every step's numbers change
    assert steps.written == written + 1  # written anew
    assert panel.html() == from_scratch() and panel.text() != before


def test_a_box_added_beside_an_edge_leaves_it_and_one_added_on_it_routes_it(
    qtbot, monkeypatch,  # noqa: ANN001
) -> None:
    """A long edge's plain curve with nothing in its way: a box added within its extent
    but off the curve leaves it as it is (laid out again it came out the same); a box
    added on the curve routes it around (a detour). Either way every edge reads as one
    laid out afresh."""
    from gui.canvas import scene as scene_module

    g = Graph()
    g.add_node("a", "input", value=1.0)
    g.add_node("b", "tanh", ["a"])
    extra = {"a": {"position": [0.0, 0.0]}, "b": {"position": [900.0, 400.0]}}
    doc = GraphDocument()
    doc.load(GraphFile(graph=g, output="b", gradient=np.ones(()), node_extra=extra), None)
    view = CanvasView(doc)
    qtbot.addWidget(view)
    scene = view.canvas
    scene.route_pending()
    key = ("a", "b", 0)
    edge = scene.edges[key]
    plain = edge.path()
    routed: list[tuple[str, str, int]] = []
    original = scene_module.CanvasScene._update_edge

    def counting(self, k):  # noqa: ANN001, ANN202
        routed.append(k)
        return original(self, k)

    def as_laid_out_afresh() -> None:
        paths = {k: (e.path(), e.lane) for k, e in scene.edges.items()}
        for k in scene.edges:
            original(scene, k)
        assert {k: (e.path(), e.lane) for k, e in scene.edges.items()} == paths

    monkeypatch.setattr(scene_module.CanvasScene, "_update_edge", counting)
    bounds = edge.bounds
    doc.add_node("beside", "input", (bounds.right() - 250.0, bounds.top()), value=2.0)
    assert scene.nodes["beside"].scene_rect().intersects(bounds)  # the edge was looked at
    assert routed == [] and edge.path() == plain
    as_laid_out_afresh()
    doc.add_node("on", "input", (400.0, 160.0), value=3.0)  # across the middle of the curve
    assert routed == [key] and edge.lane is not None and edge.path() != plain
    as_laid_out_afresh()
    doc.undo_stack.clear()


def test_the_kept_step_write_ups_are_of_the_pass_shown_only(qtbot) -> None:  # noqa: ANN001
    """A new backward pass (a value changed on the path) forgets the write-ups of the
    last one's steps: they would keep its steps, and all they hold, alive."""
    doc, player, panel = _chain_panel_at_end(qtbot)
    assert doc.results.trace is not None
    held = list(doc.results.trace.steps)  # (held here: their ids stay theirs)
    old = {id(step) for step in held}

    def kept() -> set[int]:
        return {id(step) for step, _text in panel.steps._kept.values()}

    assert kept() and kept() <= old
    doc.set_value("x", np.array([0.75, -0.5]))
    assert f"Step {player.frame.k} of" in panel.text()
    assert doc.results.trace is not None
    assert kept() and kept() <= {id(step) for step in doc.results.trace.steps}
    assert not kept() & old
