"""How a panel keeps up with changes: one render per change, none while hidden.

A panel that re-rendered on every signal did it twice per change (``frameChanged``
and ``timelineChanged``), and while nobody could see it (a tab behind another one
rebuilt itself on every edit). :class:`WhenVisible` renders on a change while its
widget is visible, and once when a widget that missed changes is shown again;
:class:`FollowPlayer` does that for every frame the player shows.

A widget shown before its parent was laid out (a tab page: a tab widget sizes its pages
only after their Show event) has a size that is about to change; it renders at the
resize that gives it its real size. At the window's first show the chain-rule panel
laid its write-up out six times at a 256x192 stand-in size, then once at its own.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QWidget

from ..player import Player
from ..qt_override import reported_or


class WhenVisible(QObject):
    """Calls ``render()`` for ``widget`` on :meth:`request` while it is visible, else on
    its next show (see the module)."""

    def __init__(self, widget: QWidget, render: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget, self._render = widget, render
        self.dirty = True
        self.renders = 0  # how often it rendered (tests count it)
        widget.installEventFilter(self)

    def request(self, *_args: object) -> None:
        """Render now if the widget is visible, else on its next show."""
        if not self._widget.isVisible():
            self.dirty = True
            return
        self.render_now()

    def render_now(self) -> None:
        self.dirty = False
        self.renders += 1
        self._render()

    def flush(self) -> None:
        """Render if a change was missed (someone reads the panel while it is hidden)."""
        if self.dirty:
            self.render_now()

    @reported_or(bool)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        # Qt may deliver events while Python is still (or no longer) building this object.
        if watched is not getattr(self, "_widget", None) or not self.dirty:
            return False
        widget, kind = self._widget, event.type()
        if kind == QEvent.Type.Show:
            if _sized(widget):
                self.render_now()
            else:  # the resize comes before the first paint; if none does (same size):
                QTimer.singleShot(0, self, self.flush)
        elif kind == QEvent.Type.Resize and widget.isVisible():
            self.render_now()  # shown unsized: this is its real size
        return False


def _sized(widget: QWidget) -> bool:
    """Whether ``widget``'s size is its own: its parent (whose layout gives it its
    geometry) has been given a size (see the module)."""
    parent = widget.parentWidget()
    return parent is None or parent.testAttribute(Qt.WidgetAttribute.WA_Resized)


class FollowPlayer(WhenVisible):
    """Renders ``widget`` when the player's frame changes, only while it is visible.

    ``new_timeline`` (optional) runs on new results, before their first frame arrives:
    it only drops caches; the frame change that follows renders.
    """

    def __init__(
        self,
        widget: QWidget,
        player: Player,
        render: Callable[[], None],
        new_timeline: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(widget, render)
        player.frameChanged.connect(self.request)
        if new_timeline is not None:
            player.timelineChanged.connect(new_timeline)
