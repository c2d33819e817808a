"""One way to fill a Qt box layout, so a panel's build reads as the list of what it
shows, top to bottom (or left to right), instead of one ``addWidget`` line each."""

from __future__ import annotations

from typing import TypeVar

from PySide6.QtWidgets import QBoxLayout, QLayout, QWidget

Box = TypeVar("Box", bound=QBoxLayout)
#: A widget or a layout, with a stretch factor in a pair; an int alone is a stretch.
Item = QWidget | QLayout | int | tuple[QWidget | QLayout, int]


def fill(layout: Box, *items: Item, margins: tuple[int, int, int, int] | None = None) -> Box:
    """``layout`` with ``items`` added in order (see :data:`Item`), and its contents
    ``margins`` (left, top, right, bottom) when given."""
    if margins is not None:
        layout.setContentsMargins(*margins)
    for item in items:
        thing, stretch = item if isinstance(item, tuple) else (item, 0)
        if isinstance(thing, int):
            layout.addStretch(thing)
        elif isinstance(thing, QLayout):
            layout.addLayout(thing, stretch)
        else:
            layout.addWidget(thing, stretch)
    return layout
