"""The main window: canvas in the middle, palette left, inspector right, panels below.

This module only assembles and wires. The views repaint from document signals,
edits go through commands, files through :class:`gui.files.FileController`, and
copy/paste through :mod:`gui.clipboard`. The dialogs a test must be able to
answer (save changes? recover? which file?) are small methods here, so a test
replaces one method instead of driving a modal dialog.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6 import QtGui
from PySide6.QtCore import QByteArray, QEvent, QRect, QSettings, Qt, QTimer
from PySide6.QtGui import (
    QAction,
    QActionGroup,
    QCloseEvent,
    QCursor,
    QGuiApplication,
    QKeySequence,
    QResizeEvent,
    QShowEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMenuBar,
    QMessageBox,
    QTabBar,
    QTabWidget,
    QToolBar,
    QWidget,
)

from engine import APP_NAME
from engine.errors import GraphError, visible
from engine.examples import EXAMPLES_DIR, list_examples
from engine.fileformat import SUFFIX, TRACE_SUFFIX
from engine.layout_keys import clamp

from .canvas.view import CanvasView
from .commands import READ_ONLY
from .document import GraphDocument
from .files import Answer, DiskChange, FileController
from .guided_tour import GuidedTour
from .model import colours
from .model.formatting import count
from .paint_cache import PaintCache, painted_alone
from .panels.chain_rule import ChainRulePanel
from .panels.inspector import Inspector
from .panels.lazy_tab import LazyTab
from .panels.notes import NotesPanel
from .panels.palette import Palette
from .plain_box import plain_box
from .player import Player, PlayerToolbar, connect_canvas
from .pytorch_code import install as install_pytorch_code
from .qt_override import reported
from .teaching import Teaching
from .theme import PRESENTATION_SCALE, THEME, application_palette, restyle, style, using

if TYPE_CHECKING:
    from .clipboard import Clipboard

SCALE_KEY = "presentation/scale"
THEME_KEY = "view/theme"
#: How long a window manager may take to make the window full screen.
FULL_SCREEN_WAIT_MS = 400
EXPORT_SIZE_KEY = "export/size"
GEOMETRY_KEY = "window/geometry"
STATE_KEY = "window/state"
#: Where the user left: the document's file and the player's position (a later launch).
SESSION_FILE_KEY = "session/file"
SESSION_POSITION_KEY = "session/position"
#: Share of the window's width the status bar's problems line may take.
PROBLEMS_SHARE = 0.45
#: The window's size on first run, when the screen has room for it.
PREFERRED_SIZE = (1440, 900)
DEFAULT_EXAMPLE = "seed2_stack_vjp" + SUFFIX
FILE_FILTER = f"Backprop graphs (*{SUFFIX});;All files (*)"
OPEN_FILTER = f"Backprop graphs and captured traces (*{SUFFIX} *{TRACE_SUFFIX});;" + FILE_FILTER
#: Where the canvas's own shortcuts live: they act on its selection, so they must not
#: fire while the user types in the inspector (Delete, Ctrl+C, F, ...).
CANVAS_SCOPE = Qt.ShortcutContext.WidgetWithChildrenShortcut


def export_size() -> tuple[int, int]:
    """The image size of Export Image and Copy Frame (File > Export Size…), persisted."""
    try:
        w, h = (int(v) for v in str(QSettings().value(EXPORT_SIZE_KEY, "1280x720")).split("x"))
    except ValueError:
        return (1280, 720)
    return (w, h) if 200 <= w <= 8192 and 200 <= h <= 8192 else (1280, 720)


def saved_theme() -> str:
    """The colour theme chosen last (View > Theme), persisted; the default one if none
    or an unknown name was saved."""
    name = str(QSettings().value(THEME_KEY, colours.DEFAULT))
    return name if name in colours.THEMES else colours.DEFAULT


def presentation_scale() -> float:
    """The font scale presentation mode uses (View > Font scale…), persisted."""
    try:
        value = float(QSettings().value(SCALE_KEY, PRESENTATION_SCALE))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        value = PRESENTATION_SCALE
    return value if 0.5 <= value <= 5.0 else PRESENTATION_SCALE


def _title_bar(dock: QDockWidget) -> QRect | None:
    """What a docked dock paints itself: its title bar, above its widget (the Fusion
    style loads the bar's button icons on every paint); None while it floats."""
    widget = dock.widget()
    if dock.isFloating() or widget is None or dock.titleBarWidget() is not None:
        return None
    return QRect(0, 0, dock.width(), widget.y())


def _tabs_state(bar: QTabBar) -> tuple[object, ...]:
    """What a tab bar shows that can change without an event reaching it."""
    tabs = tuple((bar.tabText(i), bar.isTabEnabled(i), bar.isTabVisible(i))
                 for i in range(bar.count()))
    return bar.currentIndex(), tabs


def _menu_state(bar: QMenuBar) -> tuple[object, ...]:
    """What a menu bar shows that can change without an event reaching it (the menu
    highlighted from the keyboard)."""
    menus = tuple((a.text(), a.isVisible(), a.isEnabled()) for a in bar.actions())
    return bar.activeAction(), menus


class MainWindow(QMainWindow):
    """One document in one window."""

    def __init__(self, doc: GraphDocument | None = None) -> None:
        super().__init__()
        self.setObjectName("MainWindow")
        self.doc = doc or GraphDocument(self)
        self.player = Player(self.doc, self)
        self.canvas = CanvasView(self.doc, self)
        connect_canvas(self.player, self.canvas)
        self.setCentralWidget(self.canvas)
        self._clipboard: Clipboard | None = None  # made at the first copy or paste
        self.files = FileController(self.doc, self, self)
        self.presenting = False
        self._frameless_fallback = False  # presenting without a window manager
        self._refit_on_resize = False
        self._refit_after_state = False  # the size a maximise brings arrives later
        self._saved_state: QByteArray | None = None
        self._pending_view: dict[str, Any] | str | None = "fit"
        self._shown_once = False
        THEME.use(saved_theme())  # before building: every widget starts in its colours
        QApplication.setPalette(application_palette())

        self._build_player_bar()
        self._build_read_only_banner()
        self._build_docks()
        self._build_status_bar()
        self._build_actions()
        self._build_menus()
        self.teaching = Teaching(self)
        self.tour = GuidedTour(self)
        self._wire()
        self._update_title()
        self._update_problems()
        painted_alone(self.player_bar, self.read_only_banner, self.statusBar(), self.menuBar())
        self.place_on_screen()

    # ------------------------------------------------------------------ building

    def _build_player_bar(self) -> None:
        self.player_bar = PlayerToolbar(self.player, self)
        self.player_bar.setObjectName("PlayerToolbar")
        self.player_bar.setMovable(False)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.player_bar)
        # The player's shortcuts must work with the toolbar hidden (presentation mode).
        self.addActions(list(self.player_bar.named_actions.values()))

    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)  # movable, closable and floatable: Qt's default features
        self.addDockWidget(area, dock)
        PaintCache(dock, (dock.featuresChanged,), lambda: _title_bar(dock))
        painted_alone(dock)
        return dock

    def _build_docks(self) -> None:
        self.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.setCorner(Qt.Corner.BottomRightCorner, Qt.DockWidgetArea.RightDockWidgetArea)
        self.palette_panel = Palette()
        self.palette_dock = self._dock("Ops", "PaletteDock", self.palette_panel,
                                       Qt.DockWidgetArea.LeftDockWidgetArea)
        self.inspector = Inspector(self.doc)
        self.inspector_dock = self._dock("Inspector", "InspectorDock", self.inspector,
                                         Qt.DockWidgetArea.RightDockWidgetArea)
        self.notes = NotesPanel(self.doc)
        self.notes_dock = self._dock("Notes", "NotesDock", self.notes,
                                     Qt.DockWidgetArea.RightDockWidgetArea)
        self.chain_rule = ChainRulePanel(self.player)
        self.tabs = QTabWidget(documentMode=True)
        self.tabs.addTab(self.chain_rule, "Chain rule")
        self._summary_tab = LazyTab(self._make_summary)
        self._jacobian_tab = LazyTab(self._make_jacobian)
        self.tabs.addTab(self._summary_tab, "End-to-end")
        self.tabs.addTab(self._jacobian_tab, "Jacobian heatmap")
        self._flow_tab = LazyTab(self._make_gradient_flow)
        self.tabs.insertTab(1, self._flow_tab, "Gradient flow")  # beside the chain rule
        self.tabs.currentChanged.connect(self._tab_shown)
        self.panels_dock = self._dock("Panels", "PanelsDock", self.tabs,
                                      Qt.DockWidgetArea.BottomDockWidgetArea)
        self.panels_dock.setTitleBarWidget(QWidget())  # the tabs are title enough
        tab_bar = self.tabs.tabBar()  # a whole-window repaint blits it while it looks the same
        PaintCache(tab_bar, state=lambda: _tabs_state(tab_bar), backdrop=True)
        self.resizeDocks([self.palette_dock, self.inspector_dock], [215, 340],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.panels_dock], [250], Qt.Orientation.Vertical)
        self.resizeDocks([self.notes_dock], [120], Qt.Orientation.Vertical)

    def _make_summary(self) -> QWidget:
        # Lazy, like _make_jacobian: the panel loads when its tab is first shown.
        from .panels.summary import SummaryPanel

        return SummaryPanel(self.doc, self.player)

    def _make_jacobian(self) -> QWidget:
        # Lazy: the panel (and pyqtgraph) load when its tab is first shown, not at startup.
        from .panels.jacobian_view import JacobianView

        return JacobianView(self.player)

    def _make_gradient_flow(self) -> QWidget:
        # Lazy, like _make_jacobian (pyqtgraph), and its rows are computed when shown.
        from .panels.gradient_flow import GradientFlowPanel

        return GradientFlowPanel(self.player)

    @property
    def clipboard(self) -> Clipboard:
        """The nodes last copied; made (and :mod:`gui.clipboard` loaded) at the first copy,
        cut, paste or duplicate, not at start-up."""
        if self._clipboard is None:
            from .clipboard import Clipboard

            self._clipboard = Clipboard()
        return self._clipboard

    @property
    def gradient_flow(self) -> QWidget:
        return self._flow_tab.build()

    @property
    def jacobian_view(self) -> QWidget:
        return self._jacobian_tab.build()

    def _tab_shown(self, index: int) -> None:
        tab = self.tabs.widget(index)
        if isinstance(tab, LazyTab):
            tab.build()

    def _build_read_only_banner(self) -> None:
        self.addToolBarBreak(Qt.ToolBarArea.TopToolBarArea)
        self.read_only_banner = QToolBar("Read-only", self, movable=False)
        self.read_only_banner.setObjectName("ReadOnlyBanner")
        label = QLabel(READ_ONLY[0].upper() + READ_ONLY[1:] + ".")
        label.setContentsMargins(8, 2, 8, 2)
        self.read_only_banner.addWidget(label)
        self.read_only_banner.toggleViewAction().setVisible(False)
        self.addToolBar(Qt.ToolBarArea.TopToolBarArea, self.read_only_banner)
        self.read_only_banner.setVisible(False)

    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.player_status = QLabel(textFormat=Qt.TextFormat.PlainText)
        self.player_status.setObjectName("StatusPlayer")
        self.problems = QLabel(textFormat=Qt.TextFormat.PlainText)  # node ids are user text
        self.problems.setObjectName("StatusProblems")
        style(self.problems, lambda: f"color: {THEME.error_text.name()};")
        # No stretch: the status bar's own messages ("Saved", "Cannot connect: ...")
        # show left of the permanent widgets, so these must leave them room.
        self._problems_text = ""
        bar.addPermanentWidget(self.problems)
        bar.addPermanentWidget(self.player_status)

    def action(
        self,
        text: str,
        slot: Callable[[], Any],
        keys: QKeySequence.StandardKey | str | list[str] | None = None,
        tip: str = "",
        scope: Qt.ShortcutContext = Qt.ShortcutContext.WindowShortcut,
    ) -> QAction:
        """A window action (the menus', Teach's) whose keys work with the menu bar hidden."""
        act = QAction(text, self)
        if isinstance(keys, list):
            act.setShortcuts([QKeySequence(k) for k in keys])
        elif isinstance(keys, QKeySequence.StandardKey):
            # The platform's primary binding only: the alternates include media keys
            # ("Save", "Copy") that would clutter the menus and the shortcuts sheet.
            act.setShortcuts(QKeySequence.keyBindings(keys)[:1])
        elif keys:
            act.setShortcut(QKeySequence(keys))
        act.setShortcutContext(scope)
        if tip:
            act.setStatusTip(tip)
        act.triggered.connect(lambda _checked=False: slot())
        if scope == CANVAS_SCOPE:
            self.canvas.addAction(act)
        else:
            self.addAction(act)  # keeps working while the menu bar is hidden
        return act

    def _build_actions(self) -> None:
        SK = QKeySequence.StandardKey
        a = self.action
        self.named_actions: dict[str, QAction] = {
            "new": a("&New", self.files.new_document, SK.New, "Start an empty graph"),
            "open": a("&Open…", self.files.open_dialog, SK.Open, "Open a .bpgraph file"),
            "save": a("&Save", self.files.save, SK.Save, "Save the graph"),
            "save_as": a("Save &As…", self.files.save_as, "Ctrl+Shift+S",
                         "Save the graph under a new name"),
            "export": a("&Export Image…", self.export_image, "Ctrl+E",
                        "Save the canvas at the current step as PNG or SVG"),
            "export_size": a("Export Si&ze…", self.choose_export_size, None,
                              "The image size Export Image and Copy Frame use"),
            "copy_frame": a("Copy &Frame", self.copy_frame, "Ctrl+Shift+C",
                            "Copy the current frame as an image, for slides"),
            "export_animation": a("Export &Animation…", self.export_animation, "Ctrl+Shift+E",
                                  "The whole backward pass as GIF, video, PDF or web page"),
            "quit": a("&Quit", self.quit, SK.Quit, "Close every window and quit"),
            "cut": a("Cu&t", self.cut, SK.Cut, "Cut the selected nodes", CANVAS_SCOPE),
            "copy": a("&Copy", self.copy, SK.Copy, "Copy the selected nodes", CANVAS_SCOPE),
            "paste": a("&Paste", self.paste, SK.Paste, "Paste nodes", CANVAS_SCOPE),
            "duplicate": a("&Duplicate", self.duplicate, "Ctrl+D",
                           "Copy and paste the selection in one step", CANVAS_SCOPE),
            "delete": a("De&lete", self.canvas.delete_selected, ["Del", "Backspace"],
                        "Delete the selected nodes and edges", CANVAS_SCOPE),
            "select_all": a("Select &All", self.canvas.select_all, SK.SelectAll,
                            "Select every node", CANVAS_SCOPE),
            "fit": a("&Fit All", self.canvas.user_fit_all, "F", "Zoom to show the whole graph",
                     CANVAS_SCOPE),
            "next_panel": a("&Next Panel", self.next_panel, ["Ctrl+Tab", "F6"],
                            "Chain rule, End-to-end, heatmap, ...: the next tab below the "
                            "canvas (also in presentation mode, where the tabs are hidden)"),
            "follow": a("Follow &Step", self.toggle_follow, "Shift+F",
                        "During playback the canvas frames each step's edge; your own pan "
                        "or zoom pauses it until the next play", CANVAS_SCOPE),
            "layout": a("Auto-&layout", self.canvas.auto_layout, "Ctrl+L",
                        "Arrange the nodes from inputs (left) to output (right)"),
            "present": a("&Presentation Mode", self.toggle_presentation, "F5",
                         "Full screen, large fonts, only the canvas and the chain rule"),
            "leave": a("Leave Presentation Mode", self.leave_presentation, "Esc"),
            "font_scale": a("Font &Scale…", self.choose_font_scale, None,
                            "The font scale used in presentation mode"),
            "shortcuts": a("&Keyboard Shortcuts", self.show_shortcuts, SK.HelpContents,
                           "Every action and its shortcut"),
            "about": a(f"&About {APP_NAME}", self.show_about),
        }
        undo = self.doc.undo_stack.createUndoAction(self, "&Undo")
        undo.setShortcut(QKeySequence("Ctrl+Z"))
        redo = self.doc.undo_stack.createRedoAction(self, "&Redo")
        redo.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.addActions([undo, redo])
        self.named_actions["undo"], self.named_actions["redo"] = undo, redo
        self.named_actions["present"].setCheckable(True)
        self.named_actions["follow"].setCheckable(True)
        self.named_actions["follow"].setChecked(self.canvas.follow_step)
        self.canvas.followChanged.connect(self.named_actions["follow"].setChecked)
        act = self.named_actions
        self.canvas.node_actions = [act[n] for n in ("cut", "copy", "duplicate", "delete")]
        self.canvas.canvas_actions = [act[n] for n in ("paste", "select_all", "fit", "layout")]
        self.named_actions["leave"].setEnabled(False)

    def _build_menus(self) -> None:
        act = self.named_actions
        bar = self.menuBar()
        PaintCache(bar, state=lambda: _menu_state(bar), backdrop=True)  # as the tab bar
        file = bar.addMenu("&File")
        file.addActions([act["new"], act["open"]])
        self.examples_menu = file.addMenu("Open E&xample")
        # Filled as it opens, like Open Recent: each title is read from its file, a
        # dozen files parsed before the first paint for a menu not open yet.
        self.examples_menu.aboutToShow.connect(self._fill_examples)
        self.examples_menu.setEnabled(any(EXAMPLES_DIR.glob(f"*{SUFFIX}")))
        self.recent_menu = file.addMenu("Open &Recent")
        self.recent_menu.setObjectName("recentMenu")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        file.addSeparator()
        file.addActions([act["save"], act["save_as"], act["export"], act["export_size"],
                         act["copy_frame"], act["export_animation"]])
        file.addSeparator()
        file.addAction(act["quit"])

        edit = bar.addMenu("&Edit")
        edit.addActions([act["undo"], act["redo"]])
        edit.addSeparator()
        edit.addActions([act["cut"], act["copy"], act["paste"], act["duplicate"],
                         act["delete"]])
        edit.addSeparator()
        edit.addAction(act["select_all"])

        view = bar.addMenu("&View")
        view.addActions([act["fit"], act["follow"], act["layout"], act["next_panel"]])
        view.addSeparator()
        view.addActions([act["present"], act["font_scale"]])
        self._build_theme_menu(view.addMenu("&Theme"))
        view.addSeparator()
        for dock in (self.palette_dock, self.inspector_dock, self.notes_dock, self.panels_dock):
            view.addAction(dock.toggleViewAction())
        view.addAction(self.player_bar.toggleViewAction())

        play = bar.addMenu("&Playback")
        for name in ("play", "step_forward", "step_back", "start", "end", "play_forward"):
            play.addAction(self.player_bar.named_actions[name])

        self.pytorch = install_pytorch_code(self, {"File": file, "Edit": edit, "View": view})

        help_menu = bar.addMenu("&Help")
        help_menu.addActions([act["shortcuts"], act["about"]])
        help_menu.addAction("&Examples Tour", self.show_examples_tour)
        help_menu.addAction("&Guided Tour", lambda: self.tour.start())

    def _build_theme_menu(self, menu: QMenu) -> None:
        """View > Theme: one checkable action per theme of the colour table, exclusive."""
        group = QActionGroup(self)  # exclusive, as a QActionGroup is
        self.theme_actions: dict[str, QAction] = {}
        for name in colours.THEMES:
            action = menu.addAction(name.title())
            action.setObjectName(f"theme_{name}")
            action.setCheckable(True)
            action.setChecked(name == THEME.name)
            action.triggered.connect(lambda _=False, n=name: self.set_theme(n))
            group.addAction(action)
            self.theme_actions[name] = action

    def set_theme(self, name: str) -> None:
        """Show every colour from theme ``name`` now (canvas, panels, docks) and remember
        it for the next launch."""
        QSettings().setValue(THEME_KEY, name)
        THEME.use(name)
        QApplication.setPalette(application_palette())
        restyle(self)
        self.theme_actions[name].setChecked(True)
        self._apply_theme()

    def show_examples_tour(self) -> None:
        """Help > Examples Tour: each shipped example and, in one sentence, what it teaches."""
        from .teaching import examples_tour_html  # lazy: built when first asked for

        box = QMessageBox(QMessageBox.Icon.NoIcon, "Examples tour", "", parent=self)
        box.setTextFormat(Qt.TextFormat.RichText)
        box.setText(examples_tour_html(list_examples()))
        box.setObjectName("ExamplesTour")
        box.show()

    def _fill_examples(self) -> None:
        self.examples_menu.clear()
        try:
            examples = list_examples()
        except Exception:  # a missing examples folder must not stop the app
            examples = []
        for path, title in examples:
            action = self.examples_menu.addAction(title or path.stem)
            action.setStatusTip(path.name)
            action.triggered.connect(lambda _c=False, p=path: self.files.open_path(p, example=True))
        self.examples_menu.setEnabled(bool(examples))

    def _fill_recent(self) -> None:
        menu = self.recent_menu
        menu.clear()
        recent = self.files.recent_files()
        for i, path in enumerate(recent, 1):
            action = menu.addAction(f"&{i} {path.name}")
            action.setStatusTip(str(path))
            action.triggered.connect(lambda _c=False, p=path: self.files.open_path(p))
        if recent:
            menu.addSeparator()
            menu.addAction("Clear Recent Files", self.files.clear_recent)
        menu.setEnabled(bool(recent))

    def _wire(self) -> None:
        doc = self.doc
        doc.fileChanged.connect(self._update_title)
        doc.resultsChanged.connect(self._update_problems)
        self.canvas.selectionChangedIds.connect(self.inspector.set_selection)
        self.canvas.statusMessage.connect(self.show_status)
        self.canvas.statusMessage.connect(self.canvas.show_note)  # where the user looks
        self.canvas.spaceTapped.connect(self.player.toggle_play)
        self.canvas.fileDropped.connect(self.files.open_path)
        self.inspector.message.connect(self.show_status)
        self.inspector.renamed.connect(lambda new: self.canvas.select_ids([new]))
        self.files.message.connect(self.show_status)
        # An opened file starts at step 0, forward values shown (Play starts the lesson);
        # an edit keeps showing the whole pass.
        self.files.opening.connect(lambda on: setattr(self.player, "open_at_start", on))
        self.files.opened.connect(lambda: self.player.seek(self.player.timeline.forward_length))
        self.files.recentChanged.connect(self._fill_recent)
        self.palette_panel.opActivated.connect(self.add_op_at_centre)
        self.player.frameChanged.connect(self._player_moved)
        # After the canvas rebuilt its items: a rename or undo may change the selection.
        doc.structureChanged.connect(self._resync_selection)
        self._player_moved()

    # ------------------------------------------------------------------ title and status

    def _update_title(self) -> None:
        doc = self.doc
        name = visible(doc.path.name if doc.path else (doc.title or "Untitled"))
        shown = " (captured trace, read-only)" if doc.read_only else ""
        self.setWindowTitle(f"{name}[*]{shown} — {APP_NAME}")
        self.setWindowModified(doc.modified and not doc.read_only)
        self._update_read_only()

    def _update_read_only(self) -> None:
        """A captured trace: the banner says why nothing edits it, and the editing
        actions and panels are off; playing, presenting and exporting stay on."""
        ro = self.doc.read_only
        self.read_only_banner.setVisible(ro)
        for name in ("save", "save_as", "cut", "paste", "duplicate", "delete"):
            self.named_actions[name].setEnabled(not ro)
        self.palette_dock.setEnabled(not ro)
        self.inspector_dock.widget().setEnabled(not ro)

    def show_status(self, text: str) -> None:
        self.statusBar().showMessage(text, 8000)

    def _update_problems(self) -> None:
        results = self.doc.results
        parts = []
        if results.backward_error is not None and self.doc.output is not None:
            parts.append(str(results.backward_error))
        bad = results.forward.nonfinite()
        if bad:
            parts.append("NaN or inf in " + ", ".join(bad[:6]) + ("…" if len(bad) > 6 else ""))
        errors = results.forward.errors
        if errors and not parts:
            first = next(iter(errors.values()))
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            parts.append(str(first) + more)
        self._problems_text = "  ·  ".join(parts)
        text = self._problems_text
        self.problems.setToolTip(QtGui.Qt.convertFromPlainText(text) if text else "")
        self._elide_problems()

    def _elide_problems(self) -> None:
        """The problems line cut to at most half the bar (the full text is its tooltip)."""
        room = max(120, int(self.width() * PROBLEMS_SHARE))
        fm = self.problems.fontMetrics()
        self.problems.setText(fm.elidedText(self._problems_text, Qt.TextElideMode.ElideRight,
                                            room))

    def _player_moved(self, *_args: object) -> None:
        self.player_status.setText(self.player.status_text())

    def _resync_selection(self) -> None:
        self.inspector.set_selection(self.canvas.selected_ids())

    # ------------------------------------------------------------------ editing

    def add_op_at_centre(self, op: str) -> str | None:
        """Palette double-click: a new node in the middle of the visible canvas."""
        centre = self.canvas.mapToScene(self.canvas.viewport().rect().center())
        node = self.canvas.add_node_at(op, centre, free_spot=True)  # never on the last one
        if node is not None:
            self.canvas.select_ids([node])
            self.canvas.setFocus()
        return node

    def _select(self, result: list[str] | GraphError | None) -> None:
        """Select the nodes an edit added, or say why it was refused."""
        if isinstance(result, GraphError):
            self.show_status(str(result))
        elif result:
            self.canvas.select_ids(result)

    def copy(self) -> None:
        n = self.clipboard.copy(self.doc, self.canvas.selected_ids())
        self.show_status(f"Copied {count(n, 'node')}" if n else "Nothing selected")

    def cut(self) -> None:
        self._select(self.clipboard.cut(self.doc, self.canvas.selected_ids()))

    def paste(self) -> None:
        self._select(self.clipboard.paste(self.doc))

    def duplicate(self) -> None:
        self._select(self.clipboard.duplicate(self.doc, self.canvas.selected_ids()))

    # ------------------------------------------------------------------ files

    def quit(self) -> None:
        """Close (asking about unsaved changes), then end the process: no window stays."""
        if self.close():
            QApplication.closeAllWindows()
            QApplication.quit()

    def resume_session(self) -> bool:
        """Reopen the file the user left last time at the step they left it on; False
        when there is none (a first launch) or it cannot be read any more."""
        settings = QSettings()
        path = settings.value(SESSION_FILE_KEY)
        if not path or not Path(str(path)).is_file() or not self.files.load_path(str(path)):
            return False
        position = int(settings.value(SESSION_POSITION_KEY, 0))  # type: ignore[call-overload]
        self.player.seek(position)
        return True

    def open_default_example(self) -> bool:
        """Seed example 2 (the stack of three scalars with v = [0.1, 0.2, 0.3])."""
        path = Path(EXAMPLES_DIR) / DEFAULT_EXAMPLE
        return path.exists() and self.files.load_path(path, example=True)

    def export_image(self) -> None:
        path, _filter = QFileDialog.getSaveFileName(
            self, "Export image", self._export_name(), "PNG image (*.png);;SVG image (*.svg)"
        )
        if not path:
            return
        if not Path(path).suffix:
            path += ".png"
        from .export import save_frame  # lazy: the exporters load on first use, not at startup

        try:
            with using(colours.DEFAULT):  # exports are light, whatever the window shows
                save_frame(self.doc, self.player.position, path, export_size(),
                           direction=self.player.direction, tangents=self.player.tangents)
        except Exception as exc:  # disk full, bad folder, ...: one line, app goes on
            self.show_error(f"Cannot export {Path(path).name}: {exc}".splitlines()[0])
            return
        self.show_status(f"Exported {Path(path).name}")

    def choose_export_size(self) -> None:
        """File > Export Size…: the image size Export Image and Copy Frame use."""
        from .export import ExportError, parse_size  # lazy: as in export_image

        w, h = export_size()
        text, ok = QInputDialog.getText(self, "Export size", "Image size in pixels (WxH):",
                                        text=f"{w}x{h}")
        if not ok:
            return
        try:
            w, h = parse_size(text)
            QSettings().setValue(EXPORT_SIZE_KEY, f"{w}x{h}")
        except ExportError as exc:
            self.show_error(str(exc))

    def copy_frame(self) -> None:
        """Edit > Copy Frame: the current frame as an image on the clipboard (for slides)."""
        from .export import render_frame  # lazy: as in export_image

        with using(colours.DEFAULT):  # as Export Image
            image = render_frame(self.doc, self.player.position, export_size(),
                                 direction=self.player.direction, tangents=self.player.tangents)
        QGuiApplication.clipboard().setImage(image)
        self.show_status(f"Copied the frame ({image.width()}x{image.height()})")

    def export_animation(self) -> None:
        """File > Export Animation…: a non-modal dialog; the export runs in the background."""
        from .export.dialog import ExportAnimationDialog  # lazy: as in export_image

        dialog = ExportAnimationDialog(self.doc, self, self.player)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished_export.connect(lambda ok, text: self.show_status(text))
        dialog.show()

    def _export_name(self) -> str:
        stem = self.doc.path.stem if self.doc.path else "graph"
        return f"{stem}-step{self.player.position}.png"

    # ---- the FileHost protocol: dialogs, replaced by tests

    def confirm_discard(self) -> Answer:
        """Ask what to do with unsaved changes: save, discard or cancel."""
        SB = QMessageBox.StandardButton
        text = f"Save changes to {self.windowTitle().split('[*]')[0]}?"
        answer = plain_box(self, QMessageBox.Icon.Warning, APP_NAME, text,
                           SB.Save | SB.Discard | SB.Cancel, SB.Save,
                           "Your changes will be lost if you don't save them.")
        return {SB.Save: Answer.SAVE, SB.Discard: Answer.DISCARD}.get(answer, Answer.CANCEL)

    def show_error(self, text: str) -> None:
        """A one-line problem (a broken file, a failed save) in a dialog and the status bar."""
        self.show_status(text)
        SB = QMessageBox.StandardButton
        plain_box(self, QMessageBox.Icon.Warning, APP_NAME, text, SB.Ok, SB.Ok)

    def ask_recover(self, text: str) -> bool:
        SB = QMessageBox.StandardButton
        icon = QMessageBox.Icon.Question
        answer = plain_box(self, icon, "Recover unsaved work?", text, SB.Yes | SB.No, SB.Yes)
        return answer == SB.Yes

    def ask_replace_read_only(self, name: str) -> bool:
        SB = QMessageBox.StandardButton
        text = f"{name} is read-only. Replace it anyway?"
        return plain_box(self, QMessageBox.Icon.Question, APP_NAME, text, SB.Yes | SB.No,
                         SB.No) == SB.Yes

    def ask_changed_on_disk(self, name: str) -> DiskChange:
        box = QMessageBox(QMessageBox.Icon.Warning, APP_NAME,
                          f"{name} was changed on disk since you opened or saved it here "
                          "(another window or program). Saving now would replace those "
                          "changes.", QMessageBox.StandardButton.NoButton, self)
        box.setTextFormat(Qt.TextFormat.PlainText)
        Role = QMessageBox.ButtonRole
        answers = {
            box.addButton("Overwrite", Role.DestructiveRole): DiskChange.OVERWRITE,
            box.addButton("Save As…", Role.AcceptRole): DiskChange.SAVE_AS,
            box.addButton("Reload from Disk", Role.ResetRole): DiskChange.RELOAD,
        }
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        return answers.get(box.clickedButton(), DiskChange.CANCEL)  # type: ignore[call-overload]

    def ask_open_path(self) -> str | None:
        start = str(self.doc.path.parent) if self.doc.path else ""
        path, _f = QFileDialog.getOpenFileName(self, "Open graph", start, OPEN_FILTER)
        return path or None

    def ask_save_path(self, suggested: str) -> str | None:
        path, _f = QFileDialog.getSaveFileName(self, "Save graph as", suggested, FILE_FILTER)
        return path or None

    def view_state(self) -> dict[str, Any] | None:
        """The canvas zoom and centre, saved in the file's ``extra['view']``."""
        if self.presenting:
            return None  # presentation zoom is for the projector, not the file
        raw = self.view_state_raw()
        x, y = (clamp(c) for c in raw["center"])  # within what the loader accepts
        return {"zoom": round(raw["zoom"], 4), "center": [round(x, 2), round(y, 2)]}

    def apply_view_state(self, view: dict[str, Any] | None) -> None:
        """Restore a saved zoom/centre (or fit the graph); waits for the first show."""
        self._pending_view = view if view else "fit"
        if self.isVisible():
            QTimer.singleShot(0, self, self._apply_pending_view)

    def _apply_pending_view(self) -> None:
        view, self._pending_view = self._pending_view, None
        if view is None:
            return
        if isinstance(view, dict):
            try:
                zoom = float(view["zoom"])
                x, y = (float(c) for c in view["center"])
            except (KeyError, TypeError, ValueError):
                zoom = 0.0
            if 0.02 <= zoom <= 50:
                self.canvas.look_at((x, y), zoom)
                return
        self.canvas.refit()

    # ------------------------------------------------------------------ window events

    @reported
    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if not self._shown_once:
            self._shown_once = True
            QTimer.singleShot(0, self, self._apply_pending_view)

    @reported
    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        self._elide_problems()
        if self._refit_on_resize or self._refit_after_state:
            self._refit_after_state = False
            QTimer.singleShot(0, self.canvas, self.canvas.refit)

    @reported
    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt API
        super().changeEvent(event)
        if event.type() == QEvent.Type.WindowStateChange and not self.presenting:
            self._refit_after_state = True  # maximised or restored: fit the new size
            QTimer.singleShot(0, self.canvas, self.canvas.refit)

    def start_screen_rect(self) -> QRect:
        """The available area of the screen the app starts on (where the mouse is)."""
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        return screen.availableGeometry()

    def place_on_screen(self) -> None:
        """Open inside the screen the app starts on: the preferred 1440x900 shrinks to
        fit a small screen (a 1280x720 projector), centred, title bar included."""
        area = self.start_screen_rect()
        w = min(PREFERRED_SIZE[0], area.width() - 16)
        h = min(PREFERRED_SIZE[1], area.height() - 48)  # the title bar the system adds
        self.resize(w, h)
        self.move(area.x() + (area.width() - w) // 2, area.y() + (area.height() - h - 32) // 2)

    @reported
    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        if not self.files.maybe_save():
            event.ignore()
            return
        if self.presenting:
            self.leave_presentation()
        settings = QSettings()
        settings.setValue(GEOMETRY_KEY, self.saveGeometry())
        settings.setValue(STATE_KEY, self.saveState())
        left = self.doc.path or self.files.last_opened
        if left is not None:
            settings.setValue(SESSION_FILE_KEY, str(left))
            settings.setValue(SESSION_POSITION_KEY, self.player.position)
        self.player.pause()
        self.files.shutdown()
        event.accept()

    def restore_layout(self) -> None:
        """Put the window back as the user left it last time (size, docks)."""
        settings = QSettings()
        geometry = settings.value(GEOMETRY_KEY)
        state = settings.value(STATE_KEY)
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
            if not self.start_screen_rect().contains(self.geometry()):
                self.place_on_screen()  # saved on a bigger or another screen
        if isinstance(state, QByteArray):
            self.restoreState(state)

    # ------------------------------------------------------------------ presentation mode

    def next_panel(self) -> None:
        """Show the next tab of the panels dock (the dock too, if it was closed)."""
        self.panels_dock.show()
        self.tabs.setCurrentIndex((self.tabs.currentIndex() + 1) % self.tabs.count())

    def toggle_follow(self) -> None:
        self.canvas.follow_step = not self.canvas.follow_step

    def toggle_presentation(self) -> None:
        if self.presenting:
            self.leave_presentation()
        else:
            self.enter_presentation()

    def enter_presentation(self) -> None:
        """Full screen, large high-contrast text, only the canvas and the chain rule."""
        if self.presenting:
            return
        self.presenting = True
        self.tour.pause()
        self._saved_state = self.saveState()
        self._was_maximized = self.isMaximized()
        self._saved_view = self.view_state_raw()
        self._was_following = self.canvas.follow_step
        self.canvas.follow_step = True  # the class reads the step being explained
        for dock in (self.palette_dock, self.inspector_dock, self.notes_dock):
            dock.hide()
        self.panels_dock.show()
        self.tabs.setCurrentWidget(self.chain_rule)
        self.player_bar.hide()  # its keys still work: the window holds its actions
        self._presentation_look(True)
        self._apply_theme()
        self.showFullScreen()
        # Without a window manager (a kiosk, a projector's Linux box) nothing makes the
        # window full screen: it then covers the screen frameless instead.
        QTimer.singleShot(FULL_SCREEN_WAIT_MS, self, self._ensure_full_screen)
        self.resizeDocks([self.panels_dock], [int(150 * THEME.scale)], Qt.Orientation.Vertical)
        self._refit_on_resize = True  # the full-screen size arrives later: fit then too
        QTimer.singleShot(0, self.canvas, self.canvas.refit)
        self.canvas.setFocus()

    def _ensure_full_screen(self) -> None:
        """Full screen as far as Qt knows but not covering the screen (no window manager
        acted on it): a frameless window as big as the screen."""
        screen = self.screen()
        if not (self.presenting and self.isFullScreen()) or screen is None:
            return  # left, or shown otherwise since (a window a test sized)
        if self.geometry() == screen.geometry():
            return
        self._frameless_fallback = True
        self.setWindowFlag(Qt.WindowType.FramelessWindowHint, True)
        self.setGeometry(screen.geometry())
        self.showNormal()
        self.raise_()

    def leave_presentation(self) -> None:
        if not self.presenting:
            return
        self.presenting = False
        if self._frameless_fallback:
            self._frameless_fallback = False
            self.setWindowFlag(Qt.WindowType.FramelessWindowHint, False)
        self._refit_on_resize = False
        self._presentation_look(False)
        self.canvas.follow_step = self._was_following
        if self._was_maximized:
            self.showMaximized()
        else:
            self.showNormal()
        if self._saved_state is not None:
            self.restoreState(self._saved_state)
        self._apply_theme()
        self._pending_view = self._saved_view
        QTimer.singleShot(0, self, self._apply_pending_view)
        QTimer.singleShot(0, self, self.tour.resume)  # beside its widget once they are back

    def _presentation_look(self, on: bool) -> None:
        """Large high-contrast type and no menu, status or tab bar (``on``), or back; the
        chain rule then fits the step in view without scrolling."""
        THEME.scale = presentation_scale() if on else 1.0
        THEME.high_contrast = on
        self.chain_rule.fit_height = on
        for bar in (self.menuBar(), self.statusBar(), self.tabs.tabBar()):
            bar.setVisible(not on)
        self.named_actions["present"].setChecked(on)
        self.named_actions["leave"].setEnabled(on)

    def view_state_raw(self) -> dict[str, Any]:
        """Where the canvas looks now: its zoom and the scene point at its centre."""
        centre = self.canvas.mapToScene(self.canvas.viewport().rect().center())
        return {"zoom": self.canvas.transform().m11(), "center": [centre.x(), centre.y()]}

    def _apply_theme(self) -> None:
        """Tell every view the theme changed (they read THEME when they paint)."""
        tabs = [self.tabs.widget(i) for i in range(self.tabs.count())]  # every panel, once
        panels: list[Any] = [self.canvas, self.player_bar, self.teaching.group_frames]
        panels += [t.panel if isinstance(t, LazyTab) else t for t in tabs]
        for panel in panels:
            apply = getattr(panel, "apply_theme", None) or getattr(panel, "refresh_theme", None)
            if callable(apply):
                apply()

    def choose_font_scale(self) -> None:
        value, ok = QInputDialog.getDouble(
            self, "Font scale", "Font scale in presentation mode:", presentation_scale(),
            0.5, 5.0, 2,
        )
        if ok:
            self.set_font_scale(value)

    def set_font_scale(self, value: float) -> None:
        QSettings().setValue(SCALE_KEY, float(value))
        if self.presenting:
            THEME.scale = float(value)
            self._apply_theme()

    # ------------------------------------------------------------------ help

    def show_shortcuts(self) -> None:
        from .shortcuts import ShortcutsDialog  # lazy: built when first asked for

        ShortcutsDialog(self.menuBar(), self).exec()

    def show_about(self) -> None:
        from .about import AboutDialog  # lazy: read the licences only when asked

        AboutDialog(self).exec()


def menu_of(window: MainWindow, title: str) -> QMenu | None:
    """The top-level menu whose title (without '&') is ``title`` (tests, scripting)."""
    for action in window.menuBar().actions():
        menu = action.menu()
        if isinstance(menu, QMenu) and menu.title().replace("&", "") == title:
            return menu
    return None
