"""The inspector: one selected node's name, attributes, value and gradient, and the
backward settings (output node and ``v``).

It is the only place a student types numbers, so it leans on two rules: every
change is a command pushed through :func:`gui.commands.push` (undoable, and a
refused edit becomes a one-line message naming the node, never a traceback), and
the widgets are refreshed from the document's signals, never from their own state.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
from PySide6.QtCore import QCoreApplication, QEvent, QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QUndoCommand
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStyle,
    QStyleOptionGroupBox,
    QStylePainter,
    QVBoxLayout,
    QWidget,
)

from engine.errors import GraphError
from engine.ops import OPS
from engine.ops.record import ATTR_KINDS, Attr

from ..commands import EditCommand, Rename, SetAttrs, SetBackward, SetRequiresGrad, SetValue, push
from ..document import GraphDocument
from ..model.formatting import count, fmt_shape, format_tensor
from ..paint_cache import PaintCache
from ..qt_override import reported_or
from ..tensor_editor import TensorEditor
from ..theme import THEME, error_sheet, muted_sheet, sheet_of, style

#: A scrub (wheel, arrow keys, drag) pauses this long before it counts as finished.
GESTURE_IDLE_MS = 900
#: How many looks (one per size, title, palette...) of a section's frame are kept: the
#: node section alternates between two sizes (a node selected, none), and a page of
#: another op (its attribute rows) is another; each is a pixmap the box's size (half a
#: megabyte for the node page, four times that on a 2x screen).
FRAMES_KEPT = 4

NO_SELECTION = (
    "Select a node on the canvas to see its value and gradient.\n"
    "Add nodes by double-clicking an op in the palette, dragging it onto the canvas, "
    "or pressing Tab on the canvas."
)
def _grad() -> str:
    return f"color: {THEME.grad_text.name()};"


class ScrubValue(SetValue):
    """SetValue that merges only within one gesture, so two scrubs are two undo steps."""

    def __init__(self, doc: GraphDocument, id: str, value: Any, gesture: int) -> None:
        super().__init__(doc, id, value, merge=True)
        self.gesture = gesture
        self.setText(f"Scrub value of {id!r}")

    @reported_or(bool)
    def mergeWith(self, other: QUndoCommand) -> bool:  # noqa: N802 - Qt API
        return getattr(other, "gesture", None) == self.gesture and super().mergeWith(other)


def _plain(text: str = "", wrap: bool = True) -> QLabel:
    """A label that shows its text as typed: node ids are user text, never markup."""
    return QLabel(text, textFormat=Qt.TextFormat.PlainText, wordWrap=wrap)


def _mono() -> QLabel:
    label = _plain(wrap=False)
    font = label.font()
    font.setFamily("DejaVu Sans Mono")
    label.setFont(font)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class _Section(QGroupBox):
    """Shared plumbing: push a command, report a refusal in one line; the frame drawn
    once per look (:meth:`_look`) and blitted after."""

    message = Signal(str)

    def __init__(self, title: str, doc: GraphDocument) -> None:
        super().__init__(title)
        self.doc = doc
        self.problem = _plain()
        style(self.problem, error_sheet)
        self.problem.hide()
        #: Fusion draws a group box as a nine-patch picture stretched over the whole
        #: box, area by area: a quarter of a millisecond for the node section on each
        #: paint, and a node added when none was selected painted it twice (the page
        #: appearing, then the window's repaint), the backward section once more in
        #: every window repaint. Its ``captures`` count the style's drawings (tests).
        self.frame = PaintCache(self, state=self._look, keep=FRAMES_KEPT, draw=self._draw_frame)

    def _option(self) -> QStyleOptionGroupBox:
        option = QStyleOptionGroupBox()
        self.initStyleOption(option)
        return option

    def _look(self) -> tuple:
        """What the style's drawing of the frame and title depends on: the option it
        draws from (its size, state, title and its colour, palette, features), the font
        the painter takes from the box, the style and the screen's pixel ratio."""
        option = self._option()
        return (option.state.value, option.direction.value,
                option.palette.cacheKey(), option.text, option.textAlignment.value,
                option.textColor.rgba(), option.features.value, option.subControls.value,
                option.activeSubControls.value, option.lineWidth, option.midLineWidth,
                self.font().key(), id(self.style()), self.style().name(),
                self.devicePixelRatioF())

    def _draw_frame(self, painter: QStylePainter) -> None:
        painter.drawComplexControl(QStyle.ComplexControl.CC_GroupBox, self._option())

    def _push(self, cmd: EditCommand) -> bool:
        error = push(self.doc, cmd)
        if error is None:
            self.problem.hide()
            return True
        self._refuse(str(error))
        return False

    def _refuse(self, text: str) -> None:
        self.problem.setText(text)
        self.problem.show()
        self.message.emit(text)


class NodeSection(_Section):
    """Name, attributes, value editor, requires_grad, value/gradient/error of one node.

    ``renamed(new_id)`` tells the window to select the node under its new name (the
    canvas rebuilds the renamed item, which drops it from the selection).
    """

    renamed = Signal(str)

    def __init__(self, doc: GraphDocument) -> None:
        super().__init__("Node", doc)
        self.node_id: str | None = None
        self._op: str | None = None
        self._gesture = 0
        self._idle = QTimer(self, singleShot=True, interval=GESTURE_IDLE_MS)
        self._idle.timeout.connect(self._end_gesture)

        self.hint = _plain(NO_SELECTION)
        style(self.hint, muted_sheet)
        #: The node's widgets, built when a node is first selected (see _build_body): a
        #: window opens with none selected, so the first paint never needs them.
        self.body: QWidget | None = None
        self.attr_widgets: dict[str, QWidget] = {}
        self._layout = QVBoxLayout(self)
        self._layout.addWidget(self.hint)
        self._layout.addWidget(self.problem)

        doc.trainChanged.connect(self.refresh)
        doc.structureChanged.connect(self.refresh)
        doc.nodeChanged.connect(self._node_changed)
        doc.resultsChanged.connect(self._show_results)
        self.set_node(None)

    def _build_body(self) -> QWidget:
        self.op_label = QLabel(wordWrap=True)
        self.name_edit = QLineEdit()
        self.name_edit.setToolTip("The node's id; press Enter to rename")
        self.value_caption = _plain("value", wrap=False)
        self.value_editor = TensorEditor()
        self.requires_grad = QCheckBox("requires_grad")
        self.requires_grad.setToolTip("Whether backward fills this input's .grad")
        self.trainable = QCheckBox("trainable")
        self.trainable.setToolTip("A parameter Teach > Train updates (the data stay fixed)")
        self.value_label = _mono()
        self.grad_label = _mono()
        style(self.grad_label, _grad)
        self.error_label = _plain()
        style(self.error_label, error_sheet)

        body = QWidget()
        form = QFormLayout(body)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow(self.op_label)
        form.addRow("name", self.name_edit)  # attribute rows go right after this one
        form.addRow(self.value_caption)
        form.addRow(self.value_editor)
        form.addRow(self.requires_grad)
        form.addRow(self.trainable)
        form.addRow("value", self.value_label)
        form.addRow("grad", self.grad_label)
        form.addRow(self.error_label)
        self._form = form
        self._layout.insertWidget(1, body)  # under the hint

        self.name_edit.editingFinished.connect(self._rename)
        self.value_editor.valueEdited.connect(self._value_edited)
        self.value_editor.gestureEnded.connect(self._end_gesture)
        self.requires_grad.toggled.connect(self._requires_grad_toggled)
        self.trainable.toggled.connect(self._trainable_toggled)
        self.body = body
        return body

    # ------------------------------------------------------------------ selection

    def set_node(self, node_id: str | None) -> None:
        if node_id != self.node_id:
            self._end_gesture()
            self.problem.hide()
        self.node_id = node_id
        self.refresh()

    def refresh(self) -> None:
        node = self.doc.graph.nodes.get(self.node_id) if self.node_id else None
        self.hint.setVisible(node is None)
        if node is None:
            if self.body is not None:
                self.body.hide()  # its attribute rows stay: the next node of that op refills them
            return
        body = self.body or self._build_body()
        anew = body.isHidden()
        body.show()
        if node.op != self._op or set(self.attr_widgets) != set(node.attrs):
            self._build_attrs(node.op)
            self._op = node.op
        doc_text = OPS[node.op].doc
        muted = muted_sheet()
        self.op_label.setText(f"<b>{node.op}</b> &nbsp;<span style='{muted}'>{doc_text}</span>")
        if not self.name_edit.hasFocus():
            self.name_edit.setText(node.id)
        self._show_attrs(node.attrs)
        leaf = node.is_leaf
        for w in (self.value_caption, self.value_editor):
            w.setVisible(leaf)
        self.requires_grad.setVisible(node.op == "input")
        self._form.setRowVisible(self.value_label, not leaf)
        if leaf:
            assert node.value is not None  # a leaf holds its value
            self.value_caption.setText(f"value ({fmt_shape(node.value.shape)})")
            self.value_editor.set_value(node.value)
            with QSignalBlocker(self.requires_grad):
                self.requires_grad.setChecked(node.requires_grad)
        self.trainable.setVisible(node.op == "input" and self.doc.train is not None)
        if self.doc.train is not None:
            from engine.train import params_of  # with a train block: start-up loads none

            self.trainable.setEnabled(node.requires_grad)
            with QSignalBlocker(self.trainable):
                self.trainable.setChecked(node.id in params_of(self.doc.graph, self.doc.train))
        self._show_results()
        if anew:
            self._settle()

    def _settle(self) -> None:
        """Lay the page shown anew out, and mark its widgets for repaint, now, before the
        window paints next: the window's repaint is often asked for first (a box added
        to the canvas), and the page then painted with its rows where the hint had been,
        was laid out after, and painted all again at the next pass (a node selected or
        added drew its page twice). The section and the boxes above it relayout (their
        posted layout requests, handed over now), and the widgets' update-laters (posted
        as they were shown) mark them dirty for that one paint: handed over together, in
        one call (asking each of the page's fifty widgets, found one by one, cost twice
        the time; any other widget shown meanwhile is marked for the same paint)."""
        widget: QWidget | None = self
        while widget is not None and not widget.isWindow():
            QCoreApplication.sendPostedEvents(widget, QEvent.Type.LayoutRequest)
            widget = widget.parentWidget()
        QCoreApplication.sendPostedEvents(None, QEvent.Type.UpdateLater)

    def _node_changed(self, node_id: str) -> None:
        if node_id == self.node_id:
            self.refresh()

    def _show_results(self) -> None:
        nid = self.node_id
        if nid is None or nid not in self.doc.graph or self.body is None:
            return
        results = self.doc.results
        fwd = results.forward
        value = fwd.values.get(nid)
        self.value_label.setText(
            format_tensor(value) if value is not None else "— (no value)"
        )
        if value is not None and value.ndim:
            self.value_label.setToolTip(f"shape {fmt_shape(value.shape)}")
        error = fwd.errors.get(nid)
        if error is None and value is None:
            error_text = "no value: an operand upstream has a problem"
        else:
            error_text = str(error) if error is not None else ""
        self.error_label.setText(error_text)
        self.error_label.setVisible(bool(error_text))
        self.grad_label.setText(self._grad_text(nid))

    def _grad_text(self, nid: str) -> str:
        results = self.doc.results
        node = self.doc.graph.nodes[nid]
        if results.trace is None:
            return "— (backward not run)"
        grad = results.trace.grads.get(nid)
        if grad is not None:
            return format_tensor(grad)
        if node.op == "const" or (node.op == "input" and not node.requires_grad):
            return "— (does not require grad)"
        if nid not in results.forward.requires_grad:
            return "— (no input that requires grad leads here)"
        return f"— (not on a path to {results.trace.output!r})"

    # ------------------------------------------------------------------ attributes

    def _build_attrs(self, op: str) -> None:
        for widget in self.attr_widgets.values():
            self._form.removeRow(widget)
        self.attr_widgets = {}
        row: int
        row, _role = self._form.getWidgetPosition(self.name_edit)  # type: ignore[misc]
        for attr in OPS[op].attrs:
            widget = self._attr_widget(attr)
            self.attr_widgets[attr.name] = widget
            row += 1
            self._form.insertRow(row, attr.name, widget)

    def _attr_widget(self, attr: Attr) -> QWidget:
        """The widget the attribute's kind (from the op table) calls for."""
        name = attr.name
        if attr.kind == "bool":
            box = QCheckBox()
            box.setToolTip(attr.help)
            box.toggled.connect(lambda flag: self._set_attr(name, bool(flag)))
            return box
        if attr.kind == "int":
            spin = QSpinBox()
            spin.setRange(attr.low if attr.low is not None else -(2**31),
                          attr.high if attr.high is not None else 2**31 - 1)
            spin.setKeyboardTracking(False)
            spin.setToolTip(attr.help)
            spin.valueChanged.connect(lambda v: self._set_attr(name, int(v)))
            return spin
        edit = QLineEdit(placeholderText=ATTR_KINDS[attr.kind].placeholder)
        edit.setToolTip(attr.help)
        edit.editingFinished.connect(lambda: self._attr_text_edited(attr, edit))
        return edit

    def _show_attrs(self, attrs: dict[str, Any]) -> None:
        for name, widget in self.attr_widgets.items():
            value = attrs.get(name)
            with QSignalBlocker(widget):
                if isinstance(widget, QCheckBox):
                    widget.setChecked(bool(value))
                elif isinstance(widget, QSpinBox):
                    widget.setValue(int(value or 0))
                elif isinstance(widget, QLineEdit) and not widget.hasFocus():
                    widget.setText(_attr_text(value))

    def _attr_text_edited(self, attr: Attr, edit: QLineEdit) -> None:
        node = self.doc.graph.nodes.get(self.node_id or "")
        if node is None:
            return
        try:
            value = ATTR_KINDS[attr.kind].parse(edit.text())
        except ValueError as exc:
            self._refuse(str(GraphError(f"{attr.name}: {exc}", node.id)))
            edit.setText(_attr_text(node.attrs.get(attr.name)))
            return
        self._set_attr(attr.name, value)

    def _set_attr(self, name: str, value: Any) -> None:
        node = self.doc.graph.nodes.get(self.node_id or "")
        if node is None or node.attrs.get(name) == value:
            return
        if not self._push(SetAttrs(self.doc, node.id, {name: value})):
            self._show_attrs(node.attrs)

    # ------------------------------------------------------------------ edits

    def _rename(self) -> None:
        old = self.node_id
        new = self.name_edit.text().strip()
        if old is None or old not in self.doc.graph or new == old:
            return
        self.node_id = new  # follow the node through the rename's signals
        if not self._push(Rename(self.doc, old, new)):
            self.node_id = old
            self.name_edit.setText(old)
            return
        self.set_node(new)
        self.renamed.emit(new)

    def _value_edited(self, value: np.ndarray, scrubbing: bool) -> None:
        nid = self.node_id
        if nid is None or nid not in self.doc.graph:
            return
        if scrubbing:
            self._idle.start()
            self._push(ScrubValue(self.doc, nid, value, self._gesture))
        else:
            self._end_gesture()
            self._push(SetValue(self.doc, nid, value))

    def _end_gesture(self) -> None:
        self._idle.stop()
        self._gesture += 1

    def _requires_grad_toggled(self, flag: bool) -> None:
        if self.node_id is not None and self.node_id in self.doc.graph:
            self._push(SetRequiresGrad(self.doc, self.node_id, bool(flag)))

    def _trainable_toggled(self, flag: bool) -> None:
        if self.node_id in self.doc.graph and self.doc.train is not None:
            from ..train_commands import set_trainable  # as params_of in refresh

            self._push(set_trainable(self.doc, self.node_id, bool(flag)))  # type: ignore[arg-type]


def _attr_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or (isinstance(value, list) and not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value)):
        return json.dumps(value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


class OutputCombo(QComboBox):
    """The output list, as wide as its widest entry (``AdjustToContents``'s width), but
    measured again only when that width changes (:meth:`entries_changed`).

    ``AdjustToContents`` measures every entry again and asks the section for a new
    layout on each entry added or removed, and once more 20 ms later: a node added to
    a 200-node graph spent ~0.4 ms there, although a name no wider than the widest
    changes nothing. Here the hint is computed by Qt as ``AdjustToContents`` computes
    it (``AdjustToContentsOnFirstShow`` measures the same way, and keeps it); a font or
    style change makes Qt measure again by itself."""

    _POLICY = QComboBox.SizeAdjustPolicy.AdjustToContentsOnFirstShow

    def __init__(self) -> None:
        super().__init__(sizeAdjustPolicy=self._POLICY)
        self._widths: dict[str, int] = {}  # each entry's width, in the font of _font
        self._font = ""
        self._widest = -1

    def entries_changed(self, texts: list[str]) -> None:
        """The entries are now ``texts`` (all of them, in order): measure the combo
        again if its widest entry is no longer as wide."""
        font = self.font().key()
        widths = self._widths
        if font != self._font or len(widths) > 2 * len(texts) + 64:  # (renamed nodes)
            widths.clear()
            self._font = font
        metrics = self.fontMetrics()
        widest = -1
        for text in texts:
            width = widths.get(text)
            if width is None:
                width = widths[text] = metrics.boundingRect(text).width()
            if width > widest:
                widest = width
        if widest != self._widest:
            self._widest = widest
            # Setting a policy forgets the measured hint and relays out (Qt ignores a
            # policy set again unchanged: through another one and back).
            self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
            self.setSizeAdjustPolicy(self._POLICY)


class BackwardSection(_Section):
    """Which node ``backward`` starts from, and the gradient ``v`` it is given."""

    NONE = "(none)"

    def __init__(self, doc: GraphDocument) -> None:
        super().__init__("Backward", doc)
        # Opaque (filled with the window colour its parent shows there: the same pixels),
        # the section is moved by copying its pixels when the node section above grows
        # or shrinks (a node selected or added after none, or deselected): it and its
        # fifteen widgets were painted again, at their new place, each time.
        self.setAutoFillBackground(True)
        self.output_combo = OutputCombo()
        self.output_combo.setToolTip("The node y whose y.backward(gradient=v) is shown")
        self.implicit = QCheckBox("implicit (scalar output)")
        self.implicit.setToolTip(
            "Call y.backward() with no gradient: allowed only when y has one element"
        )
        self.v_caption = QLabel("gradient v")
        self.v_editor = TensorEditor()
        self.ones_button = QPushButton("ones")
        self.ones_button.setToolTip("v = torch.ones_like(y)")
        self.onehot_button = QPushButton("one-hot")
        self.onehot_button.setToolTip("v = e_i: pulls back one row of the Jacobian")
        self.onehot_index = QSpinBox(prefix="i = ")
        self.onehot_index.setToolTip("Which element of y gets the 1 (row-major)")
        self.status = _plain()

        buttons = QHBoxLayout()
        buttons.setContentsMargins(0, 0, 0, 0)
        buttons.addWidget(self.ones_button)
        buttons.addWidget(self.onehot_button)
        buttons.addWidget(self.onehot_index)
        buttons.addStretch(1)

        form = QFormLayout(fieldGrowthPolicy=QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("output", self.output_combo)
        form.addRow(self.implicit)
        form.addRow(self.v_caption)
        form.addRow(self.v_editor)
        form.addRow(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.status)
        layout.addWidget(self.problem)

        self.output_combo.activated.connect(self._output_chosen)
        self.implicit.toggled.connect(self._implicit_toggled)
        self.v_editor.valueEdited.connect(self._v_edited)
        self.ones_button.clicked.connect(lambda: self._shaped_v(np.ones))
        self.onehot_button.clicked.connect(lambda: self._shaped_v(self._one_hot))
        # Every structural edit and every new output or v recomputes, and the document
        # announces the new results last: one refresh then, not one per signal.
        doc.resultsChanged.connect(self.refresh)
        self._combo_ids: list[str] | None = None  # what the output list holds
        self.refresh()

    # ------------------------------------------------------------------ display

    def output_shape(self) -> tuple[int, ...] | None:
        """The chosen output's value shape, or None when it has no value yet."""
        out = self.doc.output
        value = self.doc.results.forward.values.get(out) if out else None
        return None if value is None else tuple(value.shape)

    def refresh(self) -> None:
        doc = self.doc
        ids = [n for n in doc.results.forward.order if n in doc.graph] or list(doc.graph.nodes)
        natural = set(doc.graph.outputs())
        ids.sort(key=lambda n: n not in natural)  # nodes nothing consumes come first
        with QSignalBlocker(self.output_combo):
            if ids != self._combo_ids:  # an edit that adds no output candidate keeps them
                self._fill_outputs(ids)
            self.output_combo.setCurrentText(doc.output or self.NONE)
        shape = self.output_shape()
        has_output = doc.output is not None
        with QSignalBlocker(self.implicit):
            self.implicit.setChecked(doc.gradient is None)
        self.implicit.setEnabled(has_output)
        for w in (self.v_caption, self.v_editor, self.ones_button, self.onehot_button,
                  self.onehot_index):
            w.setEnabled(has_output)
        self.v_editor.setVisible(has_output)  # no output: no v (not the last document's)
        if doc.gradient is not None:
            self.v_editor.set_value(doc.gradient)
        elif shape == ():
            self.v_editor.set_value(np.ones(()))  # PyTorch's implicit gradient: 1
        elif shape is not None:
            self.v_editor.set_value(np.zeros(shape))  # the right shape, ready to type into
        size = int(np.prod(shape)) if shape is not None else 1
        if self.onehot_index.maximum() != max(0, size - 1):  # (set again, it relays out the
            self.onehot_index.setRange(0, max(0, size - 1))  # section: 0.3 ms an edit)
        caption = "gradient v"
        if shape is not None:
            caption += f" (output shape {fmt_shape(shape)})"
        if doc.gradient is None:
            caption += ": not given"
        self.v_caption.setText(caption)
        self._show_status()

    def _fill_outputs(self, ids: list[str]) -> None:
        """The output list holds (none), then ``ids``. A list one entry longer or shorter
        (a node added or deleted) gains or loses that entry alone: making 200 entries
        again was most of the section's refresh on an add."""
        old, combo = self._combo_ids, self.output_combo
        self._combo_ids = ids
        if old is not None and abs(len(ids) - len(old)) == 1:
            longer, shorter = (ids, old) if len(ids) > len(old) else (old, ids)
            pairs = enumerate(zip(shorter, longer, strict=False))
            i = next((k for k, (a, b) in pairs if a != b), len(shorter))
            if longer[i + 1:] == shorter[i:]:
                if longer is ids:
                    combo.insertItem(i + 1, ids[i])  # (after "(none)")
                else:
                    combo.removeItem(i + 1)
                combo.entries_changed([self.NONE, *ids])
                return
        combo.clear()
        combo.addItem(self.NONE)
        combo.addItems(ids)
        combo.entries_changed([self.NONE, *ids])

    def _show_status(self) -> None:
        results = self.doc.results
        if results.backward_error is not None:
            self.status.setText(str(results.backward_error))
            self._status_style(error_sheet)
        elif results.trace is not None:
            n = len(results.trace)
            self.status.setText(
                f"backward from {results.trace.output!r}: {count(n, 'edge step')}"
            )
            self._status_style(muted_sheet)
        else:
            self.status.setText("")

    def _status_style(self, sheet: Callable[[], str]) -> None:
        # a style sheet set again restyles the widget (ms): only when it changes
        if sheet_of(self.status) is not sheet:
            style(self.status, sheet)

    # ------------------------------------------------------------------ edits

    def _set(self, output: str | None, gradient: Any) -> None:
        self._push(SetBackward(self.doc, output, gradient))

    def _output_chosen(self, _index: int) -> None:
        text = self.output_combo.currentText()
        output = None if text == self.NONE else text
        if output == self.doc.output:
            return
        self._set(output, self.doc.gradient_fitting(output))

    def _implicit_toggled(self, flag: bool) -> None:
        if flag:
            self._set(self.doc.output, None)
        else:
            shape = self.output_shape()
            self._set(self.doc.output, np.ones(shape if shape is not None else ()))

    def _v_edited(self, value: np.ndarray, _scrubbing: bool) -> None:
        if self.doc.output is None:
            self._refuse("choose an output node before giving v")
            return
        self._set(self.doc.output, value)

    def _shaped_v(self, make: Callable[[tuple[int, ...]], np.ndarray]) -> None:
        """The ones / one-hot buttons: a v made for the output's shape."""
        shape = self.output_shape()
        if shape is None:
            self._refuse("the output has no value yet, so v has no shape")
            return
        self._set(self.doc.output, make(shape))

    def _one_hot(self, shape: tuple[int, ...]) -> np.ndarray:
        v = np.zeros(int(np.prod(shape)))
        v[min(self.onehot_index.value(), v.size - 1)] = 1.0
        return v.reshape(shape)


class Inspector(QScrollArea):
    """The dock's contents: the selected node above, the backward settings below.

    ``message(str)`` carries refusals to the status bar as well.
    """

    message = Signal(str)
    renamed = Signal(str)

    def __init__(self, doc: GraphDocument, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.doc = doc
        self.node = NodeSection(doc)
        self.backward = BackwardSection(doc)
        inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.node)
        layout.addWidget(self.backward)
        layout.addStretch(1)
        inner.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.setWidget(inner)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.node.message.connect(self.message)
        self.node.renamed.connect(self.renamed)
        self.backward.message.connect(self.message)

    @property
    def node_id(self) -> str | None:
        return self.node.node_id

    def set_selection(self, ids: list[str]) -> None:
        """Show the node when exactly one is selected (several: nothing to edit at once)."""
        self.node.set_node(ids[0] if len(ids) == 1 else None)
        if len(ids) > 1:
            self.node.hint.setText(f"{len(ids)} nodes selected.")
        else:
            self.node.hint.setText(NO_SELECTION)
