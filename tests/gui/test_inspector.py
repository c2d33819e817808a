"""The inspector edits a node the way a student does: every change one undoable command,
every refusal one line naming the node."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtWidgets import QApplication, QCheckBox, QGroupBox, QLineEdit, QSpinBox, QWidget

from engine.ops import OPS
from engine.ops.record import ATTR_KINDS, parse_int_list
from gui.commands import AddNode, Connect, SetBackward, push
from gui.document import GraphDocument
from gui.panels.inspector import Inspector, _Section


class LayoutRequests(QObject):
    """The layout requests ``widget`` receives from now on (``seen``, the objects asked)."""

    def __init__(self, widget: QObject) -> None:
        super().__init__(widget)  # kept as long as the widget
        self.seen: list[QObject] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.LayoutRequest:
            self.seen.append(watched)
        return False


@pytest.fixture
def doc() -> GraphDocument:
    """x = [1, 2, 3] (input), c = 2 (const), y = x * c, s = sum(y)."""
    d = GraphDocument()
    for cmd in (
        AddNode(d, "input", (0, 0), id="x", value=[1.0, 2.0, 3.0]),
        AddNode(d, "const", (0, 100), id="c", value=2.0),
        AddNode(d, "mul", (200, 50), id="y"),
        AddNode(d, "sum", (400, 50), id="s"),
        Connect(d, "x", "y", 0),
        Connect(d, "c", "y", 1),
        Connect(d, "y", "s", 0),
        SetBackward(d, "s", None),
    ):
        assert push(d, cmd) is None
    return d


@pytest.fixture
def inspector(qtbot, doc: GraphDocument) -> Inspector:
    widget = Inspector(doc)
    qtbot.addWidget(widget)
    widget.resize(380, 900)
    widget.show()
    return widget


def test_shows_value_gradient_and_error(inspector: Inspector, doc: GraphDocument) -> None:
    inspector.set_selection(["x"])
    assert inspector.node.grad_label.text() == "[2, 2, 2]"
    assert inspector.node.requires_grad.isVisible()
    inspector.set_selection(["y"])
    assert inspector.node.value_label.text() == "[2, 4, 6]"
    assert not inspector.node.error_label.isVisible()
    inspector.set_selection(["c"])
    assert "does not require grad" in inspector.node.grad_label.text()
    assert not inspector.node.requires_grad.isVisible()
    # A shape error is shown on the node it belongs to, in one line naming it.
    editor = inspector.node.value_editor
    editor.kind.setCurrentText("vector")
    editor.cols.setValue(2)
    inspector.set_selection(["y"])
    assert inspector.node.error_label.isVisible()
    assert inspector.node.error_label.text().startswith("node 'y':")
    assert "\n" not in inspector.node.error_label.text()


def test_rename_and_refused_rename(inspector: Inspector, doc: GraphDocument) -> None:
    inspector.set_selection(["x"])
    inspector.node.name_edit.setText("inp")
    inspector.node.name_edit.editingFinished.emit()
    assert "inp" in doc.graph and "x" not in doc.graph
    assert inspector.node_id == "inp"
    count = doc.undo_stack.count()
    inspector.node.name_edit.setText("y")  # taken
    inspector.node.name_edit.editingFinished.emit()
    assert "inp" in doc.graph and doc.undo_stack.count() == count
    assert inspector.node.problem.text() == "node 'inp': the name 'y' is already used"
    assert inspector.node.name_edit.text() == "inp"
    doc.undo_stack.undo()
    assert "x" in doc.graph


def test_table_editor_changes_values_and_shape(inspector: Inspector, doc: GraphDocument) -> None:
    inspector.set_selection(["x"])
    editor = inspector.node.value_editor
    assert editor.kind.currentText() == "vector" and editor.cols.value() == 3
    editor.cell(0, 1).setText("5")
    np.testing.assert_array_equal(doc.graph.nodes["x"].value, [1, 5, 3])
    assert inspector.node.grad_label.text() == "[2, 2, 2]"
    editor.cols.setValue(4)
    np.testing.assert_array_equal(doc.graph.nodes["x"].value, [1, 5, 3, 0])
    editor.kind.setCurrentText("matrix")
    editor.rows.setValue(2)
    np.testing.assert_array_equal(doc.graph.nodes["x"].value, [[1, 5, 3, 0], [0, 0, 0, 0]])
    editor.cell(1, 3).setText("7")
    assert doc.graph.nodes["x"].value[1, 3] == 7
    editor.cell(0, 0).setText("seven")  # not a number: refused in place, nothing pushed
    assert doc.graph.nodes["x"].value[0, 0] == 1
    assert editor.cell(0, 0).text() == "1"
    for _ in range(5):
        doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.graph.nodes["x"].value, [1, 2, 3])
    assert editor.cols.value() == 3 and editor.kind.currentText() == "vector"


def test_scrub_is_one_undo_step_per_gesture(qtbot, inspector: Inspector, doc: GraphDocument):
    inspector.set_selection(["c"])
    editor = inspector.node.value_editor
    assert editor.kind.currentText() == "scalar"
    before = doc.undo_stack.count()
    for v in (2.1, 2.2, 2.3, 2.4):  # wheel / arrow keys: each a valueChanged
        editor.spin.setValue(v)
        assert doc.results.forward.values["s"] == pytest.approx(6 * v)  # the graph follows
    editor.gestureEnded.emit()
    assert doc.undo_stack.count() == before + 1
    # A drag on the handle is a second gesture: a second step.
    handle = editor.handle
    qtbot.mousePress(handle, Qt.MouseButton.LeftButton, pos=QPoint(2, 5))
    for x in range(6, 60, 6):
        qtbot.mouseMove(handle, QPoint(x, 5))
    qtbot.mouseRelease(handle, Qt.MouseButton.LeftButton, pos=QPoint(60, 5))
    assert doc.graph.nodes["c"].value > 2.4
    assert doc.undo_stack.count() == before + 2
    doc.undo_stack.undo()
    assert float(doc.graph.nodes["c"].value) == pytest.approx(2.4)
    doc.undo_stack.undo()
    assert float(doc.graph.nodes["c"].value) == 2.0
    assert editor.spin.value() == 2.0


def test_requires_grad_checkbox(inspector: Inspector, doc: GraphDocument) -> None:
    inspector.set_selection(["x"])
    inspector.node.requires_grad.setChecked(False)
    assert not doc.graph.nodes["x"].requires_grad
    assert "does not require grad" in inspector.backward.status.text()
    doc.undo_stack.undo()
    assert inspector.node.requires_grad.isChecked()
    assert inspector.node.grad_label.text() == "[2, 2, 2]"


def test_attribute_widgets(inspector: Inspector, doc: GraphDocument) -> None:
    inspector.set_selection(["s"])
    widgets = inspector.node.attr_widgets
    assert set(widgets) == {"dim", "keepdim"}
    dim = widgets["dim"]
    assert dim.text() == ""
    dim.setText("0")
    dim.editingFinished.emit()
    assert doc.graph.nodes["s"].attrs["dim"] == 0
    dim.setText("[0]")
    dim.editingFinished.emit()
    assert doc.graph.nodes["s"].attrs["dim"] == [0]
    dim.setText("")
    dim.editingFinished.emit()
    assert doc.graph.nodes["s"].attrs["dim"] is None
    count = doc.undo_stack.count()
    dim.setText("one")
    dim.editingFinished.emit()
    assert doc.undo_stack.count() == count
    assert inspector.node.problem.text().startswith("node 's': dim:")
    widgets["keepdim"].setChecked(True)
    assert doc.graph.nodes["s"].attrs["keepdim"] is True


def test_a_node_of_the_same_op_selected_after_none_refills_its_attribute_rows(
        inspector: Inspector, doc: GraphDocument) -> None:
    # The page is filled, not built again: a node added with none selected (the usual
    # add) got its attribute rows made anew each time (~0.8 ms for sum's in a 200-node graph).
    inspector.set_selection(["s"])
    rows = dict(inspector.node.attr_widgets)
    rows["dim"].setText("1")
    rows["dim"].editingFinished.emit()
    assert push(doc, AddNode(doc, "sum", (600, 50), id="t")) is None
    inspector.set_selection([])
    inspector.set_selection(["t"])
    assert inspector.node.attr_widgets == rows  # the same widgets, refilled with t's attrs
    assert rows["dim"].text() == "" and not rows["keepdim"].isChecked()
    rows["keepdim"].setChecked(True)
    assert doc.graph.nodes["t"].attrs["keepdim"] is True
    assert doc.graph.nodes["s"].attrs["keepdim"] is False


@pytest.mark.parametrize("op", [n for n, o in OPS.items() if o.attrs])
def test_attribute_widgets_follow_the_op_table(inspector, doc, op: str) -> None:
    # One widget per attribute spec, its kind choosing the widget, its range the spin's.
    assert push(doc, AddNode(doc, op, (600, 50), id="n")) is None
    inspector.set_selection(["n"])
    widgets = inspector.node.attr_widgets
    assert list(widgets) == [a.name for a in OPS[op].attrs]
    for attr in OPS[op].attrs:
        widget = widgets[attr.name]
        want = {"bool": QCheckBox, "int": QSpinBox}.get(attr.kind, QLineEdit)
        assert isinstance(widget, want) and widget.toolTip() == attr.help
        if attr.kind == "int":
            assert (widget.minimum(), widget.maximum()) == (attr.low, attr.high)
            assert widget.value() == attr.default


def parse_attr_text(kind: str, text: str) -> object:
    return ATTR_KINDS[kind].parse(text)


def test_parse_attr_text_by_kind() -> None:
    assert parse_attr_text("shape", "6") == [6]
    assert parse_attr_text("int-or-list", "6") == 6
    assert parse_attr_text("int-or-null", "") is None
    assert parse_attr_text("number-or-null", "-0.5") == -0.5
    assert parse_attr_text("bool-tensor", "[true, 0, 1]") == [True, False, True]
    assert parse_attr_text("int", " -2 ") == -2
    assert parse_attr_text("bool", "False") is False
    bad = [("int-or-null", "1, 2"), ("number-or-null", "x"), ("bool-tensor", "[2]")]
    bad += [("int", "1, 2"), ("int", "[3]"), ("bool", "yes")]
    for kind, text in bad:
        with pytest.raises(ValueError):
            parse_attr_text(kind, text)


def test_every_attribute_kind_parses_its_own_default_written_as_text() -> None:
    """The kind object is the one switch over kinds: what it parses it also accepts."""
    for name, kind in ATTR_KINDS.items():
        for op in OPS.values():
            for attr in op.attrs:
                if attr.kind == name and attr.default is not None:
                    text = str(attr.default).replace("[", "").replace("]", "")
                    if name == "bool-tensor":
                        text = str(attr.default).lower()
                    assert kind.accepts(kind.parse(text)), (op.name, attr.name, text)


def test_parse_int_list() -> None:
    assert parse_int_list("", allow_none=True) is None
    assert parse_int_list("None", allow_none=True) is None
    assert parse_int_list(" 2 ", allow_none=True) == 2
    assert parse_int_list("0, 1", allow_none=True) == [0, 1]
    assert parse_int_list("[2, -1]", allow_none=False) == [2, -1]
    with pytest.raises(ValueError):
        parse_int_list("", allow_none=False)
    with pytest.raises(ValueError):
        parse_int_list("1.5", allow_none=True)


def test_backward_section(inspector: Inspector, doc: GraphDocument) -> None:
    back = inspector.backward
    assert back.output_combo.currentText() == "s"
    assert back.implicit.isChecked()
    # Choose the non-scalar y: v is empty, and the message says why nothing runs.
    back.output_combo.setCurrentText("y")
    back.output_combo.activated.emit(back.output_combo.currentIndex())
    assert doc.output == "y" and doc.gradient is None
    assert "implicitly created only for scalar outputs" in back.status.text()
    assert back.v_editor.value().shape == (3,)  # pre-filled with the output's shape
    back.ones_button.click()
    np.testing.assert_array_equal(doc.gradient, [1, 1, 1])
    inspector.set_selection(["x"])
    assert inspector.node.grad_label.text() == "[2, 2, 2]"
    back.onehot_index.setValue(2)
    back.onehot_button.click()
    np.testing.assert_array_equal(doc.gradient, [0, 0, 1])
    assert inspector.node.grad_label.text() == "[0, 0, 2]"
    back.v_editor.cell(0, 0).setText("0.5")
    np.testing.assert_array_equal(doc.gradient, [0.5, 0, 1])
    back.implicit.setChecked(True)
    assert doc.gradient is None
    assert "scalar outputs" in back.status.text()
    doc.undo_stack.undo()
    np.testing.assert_array_equal(doc.gradient, [0.5, 0, 1])


def test_an_add_or_delete_changes_one_entry_of_the_output_list(
    inspector: Inspector, doc: GraphDocument,
) -> None:
    """A node added (or deleted) is one output candidate more (or less): the list gains
    (or loses) that entry alone, in the order a list made afresh has (nodes nothing
    consumes first), the chosen output still shown; other changes make it afresh."""
    combo = inspector.backward.output_combo
    model = combo.model()
    counts = {"inserted": 0, "removed": 0, "reset": 0}
    model.rowsInserted.connect(lambda *_: counts.__setitem__("inserted", counts["inserted"] + 1))
    model.rowsRemoved.connect(lambda *_: counts.__setitem__("removed", counts["removed"] + 1))
    model.modelReset.connect(lambda: counts.__setitem__("reset", counts["reset"] + 1))

    def entries() -> list[str]:
        return [combo.itemText(i) for i in range(combo.count())]

    assert entries() == ["(none)", "s", "x", "c", "y"]
    assert push(doc, AddNode(doc, "input", (0, 200), id="z", value=1.0)) is None
    assert entries() == ["(none)", "z", "s", "x", "c", "y"] and combo.currentText() == "s"
    assert counts == {"inserted": 1, "removed": 0, "reset": 0}
    doc.undo_stack.undo()
    assert entries() == ["(none)", "s", "x", "c", "y"] and combo.currentText() == "s"
    assert counts == {"inserted": 1, "removed": 1, "reset": 0}


def test_the_output_list_is_as_wide_as_its_widest_entry_measured_only_when_that_changes(
    qtbot, inspector: Inspector, doc: GraphDocument,  # noqa: ANN001
) -> None:
    """The output list's size is the one an ``AdjustToContents`` list of the same entries
    has, after an add of a short name, a long one, and their undo; a name no wider than
    the widest asks the backward section for no new layout."""
    from PySide6.QtWidgets import QApplication, QComboBox

    section = inspector.backward
    combo = section.output_combo

    def fresh_hint() -> tuple[int, int]:
        twin = QComboBox(sizeAdjustPolicy=QComboBox.SizeAdjustPolicy.AdjustToContents)
        qtbot.addWidget(twin)
        twin.setFont(combo.font())
        twin.addItems([combo.itemText(i) for i in range(combo.count())])
        return twin.sizeHint().toTuple()

    for _ in range(3):  # the layouts showing the window asked for, done
        QApplication.processEvents()
    requests = LayoutRequests(section).seen
    assert push(doc, AddNode(doc, "input", (0, 200), id="z", value=1.0)) is None
    QApplication.processEvents()
    assert combo.itemText(1) == "z" and requests == []
    assert combo.sizeHint().toTuple() == fresh_hint()
    narrow = combo.sizeHint().width()
    long_name = "a_rather_long_node_name_" * 3
    assert push(doc, AddNode(doc, "input", (0, 300), id=long_name, value=1.0)) is None
    QApplication.processEvents()
    assert combo.sizeHint().toTuple() == fresh_hint() and combo.sizeHint().width() > narrow
    assert requests  # wider: the section is laid out again
    doc.undo_stack.undo()
    QApplication.processEvents()
    assert combo.sizeHint().toTuple() == fresh_hint() and combo.sizeHint().width() == narrow


def test_a_refresh_that_changes_nothing_lays_the_backward_section_out_again_never(
    qtbot, inspector: Inspector, doc: GraphDocument,  # noqa: ANN001
) -> None:
    """The one-hot index's range is set only when the output's size changes: set again,
    even to the same range, the spin box asks its section for a new layout (0.3 ms on
    every edit)."""
    from PySide6.QtWidgets import QApplication

    section = inspector.backward
    section.refresh()
    for _ in range(3):  # the layouts showing the window asked for, done
        QApplication.processEvents()
    requests = LayoutRequests(section).seen
    section.refresh()
    QApplication.processEvents()
    assert requests == []
    push(doc, SetBackward(doc, "y", None))  # three elements: the index goes to 0..2
    QApplication.processEvents()
    assert section.onehot_index.maximum() == 2


class Paints(QObject):
    """How many paint events each of ``widgets`` receives from now on."""

    def __init__(self, widgets: list[QWidget]) -> None:
        super().__init__()
        self.count = dict.fromkeys(widgets, 0)
        for w in widgets:
            w.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and watched in self.count:
            self.count[watched] += 1  # type: ignore[index]  # a watched widget
        return False


def test_a_node_added_paints_the_inspector_page_once(make_window) -> None:  # noqa: ANN001
    """Adding a node asks the window to repaint (the canvas) before the inspector shows
    the new node's page: the page is laid out and marked before that paint, so the event
    loop paints it once, not first with its rows where the hint had been, then again."""
    win = make_window()
    view, node = win.canvas, win.inspector.node
    centre = view.mapToScene(view.viewport().rect().center())
    view.add_node_at("input", centre)  # the page's widgets built
    win.doc.undo_stack.undo()
    for _ in range(3):
        QApplication.processEvents()
    assert node.body is not None and node.body.isHidden()
    watched = [node.op_label, node.name_edit, node.value_editor, node.requires_grad]
    paints = Paints(watched)
    view.add_node_at("input", centre)
    for _ in range(3):
        QApplication.processEvents()
    assert list(paints.count.values()) == [1, 1, 1, 1]


def test_the_backward_section_moves_without_painting_again(make_window) -> None:  # noqa: ANN001
    """The node page appearing above it (a node added after none selected) moves the
    backward section down: its pixels are copied, its buttons not painted again, and
    the inspector looks the same as painted afresh."""
    win = make_window()
    view, inspector = win.canvas, win.inspector
    backward = inspector.backward
    centre = view.mapToScene(view.viewport().rect().center())
    paints = Paints([backward.ones_button, backward.onehot_button])
    before = backward.y()
    view.add_node_at("input", centre)
    for _ in range(3):
        QApplication.processEvents()
    assert backward.y() > before  # moved down, under the node page
    assert list(paints.count.values()) == [0, 0]
    for theme in ("dark", "light"):  # (the light one last: as the next test expects)
        win.set_theme(theme)
        QApplication.processEvents()
        shown = inspector.grab().toImage()
        backward.setAutoFillBackground(False)  # as a see-through section paints it
        assert inspector.grab().toImage() == shown, theme
        backward.setAutoFillBackground(True)


def test_a_sections_frame_is_drawn_by_the_style_once_per_look(inspector: Inspector,
                                                              doc: GraphDocument) -> None:
    """The node section's frame (Fusion stretches a picture over the whole box) is drawn
    once per look: a node selected after none, and the window's repaint after, blit the
    frames drawn for those sizes before; a look it never had (another title) is drawn,
    and each looks exactly as the style paints a group box of that size and title."""
    node = inspector.node
    for ids in (["x"], [], ["x"], []):  # both sizes painted once
        inspector.set_selection(ids)
        node.repaint()
    draws = node.frame.captures
    for ids in (["x"], [], ["x"]):
        inspector.set_selection(ids)
        node.repaint()
        inspector.repaint()
    assert node.frame.captures == draws
    pages = [QWidget(), QWidget()]
    section, plain = _Section("Node", doc), QGroupBox("Node")
    for page, box in zip(pages, (section, plain), strict=True):
        page.setAutoFillBackground(True)  # as the inspector's scrolled page is
        page.resize(320, 140)
        box.setParent(page)
        box.setGeometry(10, 10, 300, 120)
    for title, draws in (("Node", 1), ("Backward", 2)):
        section.setTitle(title)
        plain.setTitle(title)
        assert pages[0].grab().toImage() == pages[1].grab().toImage(), title
        assert section.frame.captures == draws
