"""Backprop Studio's public package: ``import backprop_studio as bps``.

Capture a real PyTorch backward pass, then save, show, export it or read its gradient
flow; or load a graph or trace file. Everything here re-exports ``engine`` (the maths)
and ``gui.export`` (the pictures; Qt is imported only when a picture is asked for).
PyTorch is imported only when a capture runs.

>>> import torch, backprop_studio as bps
>>> model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
>>> with bps.tracking(model):                 # optional: module paths and forward values
...     loss = model(torch.ones(2, 3)).sum()
>>> trace = bps.capture(loss, names=model)    # runs loss.backward() once, recording it
>>> trace.save("mlp.bptrace")                 # doctest: +SKIP
>>> trace.show()                              # doctest: +SKIP
>>> trace.export("mlp.html")                  # doctest: +SKIP
>>> [row.module for row in trace.gradient_flow()]
['0', '0', '2', '2']
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engine import app_version
from engine import capture as _capture
from engine.capture import CaptureError, tracking
from engine.gradient_flow import EXPLODING, VANISHING, FlowRow
from engine.tracefile import SUFFIX as TRACE_SUFFIX

from .objects import Graph, Trace

__version__ = app_version()


def capture(
    output: Any, gradient: Any = None, names: Any = None, *, keep_graph: bool = True
) -> Trace:
    """Run ``output.backward(gradient)`` once and return it as a :class:`Trace`
    (:func:`engine.capture.capture`; ``names``: the model, to name the parameters).
    What cannot be captured raises :class:`CaptureError`, one line naming the node.

    >>> import torch, backprop_studio as bps
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> trace = bps.capture((w * w).sum(), names={"w": w})
    >>> trace.leaf_grads["w"].tolist()
    [2.0, 4.0]
    """
    return _capture.capture(output, gradient, names, keep_graph=keep_graph, kind=Trace)


@contextmanager
def recording(names: Any = None, *, keep_graph: bool = True) -> Iterator[list[Trace]]:
    """Capture every ``backward()`` run inside (:func:`engine.capture.recording`).

    >>> import torch, backprop_studio as bps
    >>> w = torch.tensor([3.0], requires_grad=True)
    >>> with bps.recording(names={"w": w}) as traces:
    ...     (w * w).sum().backward()
    >>> len(traces), traces[0].leaf_grads["w"].tolist()
    (1, [6.0])
    """
    with _capture.recording(names, keep_graph=keep_graph, kind=Trace) as traces:
        yield traces


def load(path: str | os.PathLike[str]) -> Graph | Trace:
    """A ``.bptrace`` file as its :class:`Trace`, any other file as a :class:`Graph`; a
    bad file raises ``engine.fileformat.FileFormatError`` with a one-line message.

    >>> import backprop_studio as bps
    >>> bps.load("assets/examples/classifier_head.bpgraph").output is not None
    True
    """
    if Path(path).suffix.lower() == TRACE_SUFFIX:
        from engine.tracefile import load as load_trace

        return Trace.of(load_trace(path))
    from engine.fileformat import load as load_graph

    return Graph.of(load_graph(path), Path(path))


__all__ = [
    "EXPLODING",
    "CaptureError",
    "VANISHING",
    "FlowRow",
    "Graph",
    "Trace",
    "__version__",
    "capture",
    "load",
    "recording",
    "tracking",
]
