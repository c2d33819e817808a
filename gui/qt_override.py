"""An exception never leaves a Python override of a Qt virtual into C++: it is reported
there and then.

shiboken6 6.11 keeps an exception that escapes an override called by C++ while Python
is further up the stack (``window.show()``, ``processEvents()``, a ``super().resizeEvent``)
to raise it when that outer call returns. Until then, the first look-up of any other
Python override (``Sbk_GetPyOverride``, for each new widget or item, each virtual) sees
the pending error and decrefs the function it only borrowed from its class: that function
is freed while its class still lists it. The garbage collector later read the freed
memory (a segfault in ``gc.collect()``: ``ChainRulePanel.resizeEvent`` freed while a new
window was first shown and ``CanvasView.scrollContentsBy`` had raised); and the exception
itself was lost. An override that returns a value to C++ (``eventFilter``, ``event``,
``sizeHint``, ``boundingRect``) does the same when it raises: a widget's ``sizeHint``
raising while its window was first shown freed its neighbour's ``moveEvent``. An override
guarded here hands its exception to ``sys.excepthook`` (a traceback, as Qt's event loop
reports one; under pytest-qt, a failed test) and returns to C++ with no error pending:
nothing (:func:`reported`), or a safe answer (:func:`reported_or`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


def reported(override: Callable[P, None]) -> Callable[P, None]:
    """``override`` (one returning nothing), its exceptions reported instead of raised."""
    return _guarded(override, lambda _args: None)


def reported_or(default: Callable[[], R]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """An override returning a value, its exceptions reported instead of raised and
    ``default()`` answered in their place: ``bool`` for an event filter or ``event`` (not
    handled: Qt goes on delivering it), ``QSize`` for a size hint (none), ``QRectF`` for
    a bounding rect (empty). Made anew each time: Qt copies it, Python may change it."""

    def guard(override: Callable[P, R]) -> Callable[P, R]:
        return _guarded(override, lambda _args: default())

    return guard


def reported_or_unchanged(override: Callable[P, R]) -> Callable[P, R]:
    """``itemChange``, its exceptions reported instead of raised and its last argument
    (``value``) answered unchanged in their place, as ``QGraphicsItem.itemChange`` itself
    answers (``None`` would move the item to the origin, or take it out of its scene)."""
    return _guarded(override, lambda args: args[-1])


def _guarded(override: Callable[P, R], answer: Callable[[tuple[Any, ...]], R]) -> Callable[P, R]:
    @functools.wraps(override)
    def guarded(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return override(*args, **kwargs)
        except Exception as exc:  # a bug: its traceback now, never an error pending in C++
            sys.excepthook(type(exc), exc, exc.__traceback__)
            return answer(args)

    return guarded
