"""A tab whose panel is built the first time it is shown: panels drawn with pyqtgraph
cost start-up (0.2 s to import it) and most sessions never open them."""

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
        return self.panel
