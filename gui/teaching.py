"""The Teach menu: gradient checks (and the other teaching modes) wired into the window.

Kept out of :mod:`gui.main_window` so that module only assembles: the window makes
one :class:`Teaching`, which adds its menu, its panel tabs and its connections. The
tabs are :class:`LazyTab`: each panel (and its modules) is built when its tab is first
shown or its action first used, not at start-up.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QMenuBar, QTabWidget, QWidget

from engine.errors import GraphError
from engine.examples import EXAMPLE_LESSONS
from engine.groups import playback_steps

from .canvas.group_frames import GroupFrames, make_room
from .canvas.train_marks import TrainMarks
from .commands import push
from .document import GraphDocument
from .group_commands import Place, group_nodes, set_collapsed, ungroup
from .model import labels
from .panels.lazy_tab import LazyTab

if TYPE_CHECKING:
    from engine.gradcheck import GradCheck

    from .panels.forward_mode import ForwardModePanel
    from .panels.gradcheck import GradCheckPanel
    from .panels.quiz import QuizPanel


class Host(Protocol):
    """What Teaching needs of the main window (a protocol: no import back into it)."""

    doc: GraphDocument
    player: Any  # gui.player.Player
    tabs: QTabWidget
    canvas: Any  # gui.canvas.view.CanvasView

    def menuBar(self) -> QMenuBar: ...  # noqa: N802 - Qt API

    def action(self, text: str, slot: Any, keys: str | None, tip: str) -> QAction: ...

    def show_status(self, text: str) -> None: ...


class Teaching(QObject):
    """Owns the Teach menu and the gradient-check tab of one window."""

    def __init__(self, window: Host) -> None:
        super().__init__(window)  # type: ignore[arg-type]
        self.window = window
        self._gradcheck_tab = LazyTab(self._make_gradcheck)
        window.tabs.addTab(self._gradcheck_tab, "Gradient check")
        self._quiz_tab = LazyTab(self._make_quiz)
        window.tabs.addTab(self._quiz_tab, "Quiz")
        self._forward_tab = LazyTab(self._make_forward)
        window.tabs.addTab(self._forward_tab, "Forward mode")
        self._train_tab = LazyTab(self._make_train)
        window.tabs.addTab(self._train_tab, "Train")
        self.actions: dict[str, QAction] = {}
        for text, keys, tip, slot in (  # named after their text: "quiz_mode", "reveal", ...
            ("&Quiz Mode", "Ctrl+Shift+Q", "Hide each vjp until the student predicts it",
             lambda: self.quiz_panel.set_active(self.actions["quiz_mode"].isChecked())),
            ("&Reveal", "R", "Quiz mode: show the hidden number (works in presentation mode)",
             lambda: self.quiz_panel.reveal()),
            ("Check &Gradients", None,
             "Compare every input's gradient with central finite differences",
             lambda: self.check(None)),
            ("&Group Selection", "Ctrl+G",
             "Fold the selected op nodes into one box with its own Jacobian",
             self.group_selection),
            ("&Ungroup", "Ctrl+Shift+G", "Remove the group around the selection",
             self.ungroup_selection),
            ("Collapse or &Expand Group", "Ctrl+Alt+G",
             "Collapsed, a group plays as one step; expanded, its members' steps play",
             self.toggle_group),
            ("&Train", "Ctrl+Shift+T",
             "After the backward pass, the update: optimizer steps and the loss curve",
             self.show_train),
        ):
            name = text.replace("&", "").lower().replace(" ", "_")
            self.actions[name] = window.action(text, slot, keys, tip)
        self.actions["quiz_mode"].setCheckable(True)
        scene = window.canvas.canvas
        self.group_frames = GroupFrames(scene, window.doc, scene.nodes)
        window.player.frameChanged.connect(self.group_frames.show_frame)
        self.train_marks = TrainMarks(
            scene, window.doc, scene.nodes, animate=lambda: window.canvas.animations_enabled,
            pace=self._train_pace,
        )
        self.menu = QMenu("&Teach", window)  # type: ignore[call-overload]
        for i, section in enumerate((("quiz_mode", "reveal"),
                                     ("group_selection", "ungroup", "collapse_or_expand_group"),
                                     ("check_gradients",), ("train",))):
            if i:
                self.menu.addSeparator()
            self.menu.addActions([self.actions[k] for k in section])
        bar = window.menuBar()
        help_action = bar.actions()[-1] if bar.actions() else None
        bar.insertMenu(help_action, self.menu)  # type: ignore[arg-type]
        window.canvas.gradientCheckRequested.connect(self.check)

    def _make_gradcheck(self) -> QWidget:
        from .panels.gradcheck import GradCheckPanel

        return GradCheckPanel()

    def _make_quiz(self) -> QWidget:
        from .panels.quiz import QuizPanel

        panel = QuizPanel(self.window.player)
        panel.modeChanged.connect(self._quiz_mode_changed)
        return panel

    def _make_forward(self) -> QWidget:
        from .panels.forward_mode import ForwardModePanel

        return ForwardModePanel(self.window.player)

    @property
    def gradcheck_panel(self) -> GradCheckPanel:
        return self._gradcheck_tab.build()  # type: ignore[return-value]

    @property
    def quiz_panel(self) -> QuizPanel:
        return self._quiz_tab.build()  # type: ignore[return-value]

    @property
    def forward_panel(self) -> ForwardModePanel:
        return self._forward_tab.build()  # type: ignore[return-value]

    def _make_train(self) -> QWidget:
        from .panels.train import TrainPanel

        panel = TrainPanel(self.window.doc, self.window.player)
        panel.status.connect(self.window.show_status)
        return panel

    def _train_pace(self) -> float | None:
        """Play's pace for the update act; a panel never built is not playing (asking it
        would build it, and load pyqtgraph, at start-up)."""
        panel = self._train_tab.panel
        return None if panel is None else panel.step_interval_ms()  # type: ignore[attr-defined]

    @property
    def train_panel(self) -> Any:  # gui.panels.train.TrainPanel
        return self._train_tab.build()

    # ------------------------------------------------------------------ groups

    def _push(self, make: Any, *args: Any) -> bool:
        try:
            error = push(self.window.doc, make(self.window.doc, *args))
        except GraphError as exc:
            error = exc
        if error is not None:
            self.window.show_status(str(error))
            return False
        return True

    def group_selection(self) -> None:
        """Ctrl+G: the selected op nodes become one group (leaves stay its inputs)."""
        if self._push(group_nodes, self.window.canvas.selected_ids(), self._room()):
            collapsed, expanded = self.playback_counts()
            self.window.show_status(
                f"Grouped: playback has {collapsed} steps collapsed, {expanded} expanded"
            )

    def _room(self) -> Place:
        """Where boxes a group collapsing would cover go (see gui.canvas.group_frames)."""
        return make_room(self.window.doc, self.window.canvas.canvas.node_sizes())

    def _group_at_selection(self) -> str | None:
        """The innermost group holding a selected node."""
        selected = set(self.window.canvas.selected_ids())
        holding = [g for g in self.window.doc.groups if selected & set(g.members)]
        if not holding:
            self.window.show_status("Select a node of a group first")
            return None
        return min(holding, key=lambda g: len(g.members)).id

    def ungroup_selection(self) -> None:
        gid = self._group_at_selection()
        if gid is not None:
            self._push(ungroup, gid)

    def toggle_group(self) -> None:
        gid = self._group_at_selection()
        if gid is not None:
            group = next(g for g in self.window.doc.groups if g.id == gid)
            self._push(set_collapsed, gid, not group.collapsed, self._room())

    def playback_counts(self) -> tuple[int, int]:
        """Backward steps with the groups as they are, and with every group expanded."""
        doc = self.window.doc
        trace = doc.results.trace
        if trace is None:
            return (0, 0)
        steps = playback_steps(doc.graph, trace, doc.live_groups())
        return (len(steps), len(trace.steps))

    def _quiz_mode_changed(self, on: bool) -> None:
        self.actions["quiz_mode"].setChecked(on)
        canvas = self.window.canvas
        canvas.edge_label_provider = self.quiz_panel.edge_label if on else labels.edge_label
        if on:
            self.window.tabs.setCurrentWidget(self._quiz_tab)
        self.window.player.refresh_frame()

    def show_train(self) -> None:
        """Teach > Train: the Train tab, with a train block made on the output if none."""
        from .panels.train import ensure_train

        self.train_panel  # noqa: B018 - built before it shows
        self.window.tabs.setCurrentWidget(self._train_tab)
        ensure_train(self.window.doc, self.window.show_status)

    def run_check(self, node: str | None) -> GradCheck:
        """The engine's check for the whole graph (``node`` None), a leaf or an op node."""
        from engine.gradcheck import check_graph, check_node

        doc = self.window.doc
        graph = doc.graph
        if node is not None and node in graph and not graph.nodes[node].is_leaf:
            trace = doc.results.trace
            upstream = trace.grads.get(node) if trace is not None else None
            return check_node(graph, node, upstream)
        if doc.output is None:
            raise GraphError("choose an output to run backward from first")
        return check_graph(graph, doc.output, doc.gradient, None if node is None else [node])

    def check(self, node: str | None) -> GradCheck | None:
        """Run a check and show it in the Gradient check tab; a refusal is one line."""
        panel = self.gradcheck_panel
        self.window.tabs.setCurrentWidget(self._gradcheck_tab)
        try:
            result = self.run_check(node)
        except GraphError as exc:
            panel.show_error(f"Cannot check gradients: {exc}")
            self.window.show_status(str(exc))
            return None
        panel.show_result(result)
        self.window.show_status(result.summary())
        return result


def examples_tour_html(examples: list[tuple[Path, str]]) -> str:
    """Help > Examples Tour's text: each example's title (escaped) and what it teaches
    (:data:`engine.examples.EXAMPLE_LESSONS`), in teaching order."""
    rows = [
        f"<p><b>{labels.esc(title or path.stem)}</b><br/>"
        f"{labels.esc(EXAMPLE_LESSONS.get(path.stem, ''))}</p>"
        for path, title in examples
    ]
    return "<p>Open any of them from File &gt; Open Example.</p>" + "".join(rows)
