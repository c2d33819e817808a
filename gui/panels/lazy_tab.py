"""A tab whose panel is built the first time it is shown (or asked for): panels drawn
with pyqtgraph cost start-up (0.2 s to import it), every panel built costs the first
paint its modules and widgets, and most sessions never open most tabs."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget


class LazyTab(QWidget):
    """A tab whose panel is built the first time it is shown (pyqtgraph costs start-up)."""

    def __init__(self, factory: Callable[[], QWidget]) -> None:
        super().__init__()
        self._factory = factory
        self.panel: QWidget | None = None
        QVBoxLayout(self).setContentsMargins(0, 0, 0, 0)

    def build(self) -> QWidget:
        if self.panel is None:
            self.panel = self._factory()
            self.layout().addWidget(self.panel)  # type: ignore[union-attr]
            # Shown now, as a page of the tabs is (a layout shows a new child later, in
            # the event loop): a panel that renders on its Show renders for this tab.
            self.panel.show()
        return self.panel
