"""How a panel keeps up with changes: one render per change, none while hidden.

A panel that re-rendered on every signal did it twice per change (``frameChanged``
and ``timelineChanged``), and while nobody could see it (a tab behind another one
rebuilt itself on every edit). :class:`WhenVisible` renders on a change while its
widget is visible, and once when a widget that missed changes is shown again;
:class:`FollowPlayer` does that for every frame the player shows.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget

from ..player import Player


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

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        # Qt may deliver events while Python is still (or no longer) building this object.
        widget = getattr(self, "_widget", None)
        if watched is widget and event.type() == QEvent.Type.Show and self.dirty:
            self.render_now()
        return False


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
