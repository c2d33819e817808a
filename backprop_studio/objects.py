"""What ``backprop_studio`` hands out: a captured trace and a loaded graph that also
export, show themselves and draw inline in a notebook.

They are the engine's own classes (:class:`engine.capture.TorchTrace`,
:class:`engine.fileformat.GraphFile`) with the GUI's exports added here, because the
engine never imports the GUI. Qt is imported only when one of those methods runs.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.capture import TorchTrace
from engine.captured import CapturedTrace
from engine.fileformat import GraphFile
from engine.gradient_flow import FlowRow, graph_flow

if TYPE_CHECKING:
    from gui.document import GraphDocument


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython already imported and running a kernel)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and getattr(shell, "kernel", None) is not None


def _export(doc: GraphDocument, path: str | os.PathLike[str], options: dict[str, Any]) -> None:
    from gui.export.cli import lesson_options
    from gui.export.options import ExportError
    from gui.export.writers import write_lesson

    settings = lesson_options(os.fspath(path), **options)
    if settings.train and doc.train is None:
        raise ExportError("train= needs a graph with a train block")
    write_lesson(doc, Path(path), settings)


def _iframe(doc: GraphDocument) -> str:
    from gui.export.notebook import player_iframe

    return player_iframe(doc)


class Trace(TorchTrace):
    """A captured backward pass (what :func:`backprop_studio.capture` returns).

    >>> import torch, backprop_studio as bps
    >>> model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh())
    >>> trace = bps.capture(model(torch.ones(1, 3)).sum(), names=model)
    >>> [row.name for row in trace.gradient_flow()]
    ['0.weight', '0.bias']
    """

    @classmethod
    def of(cls, trace: CapturedTrace) -> Trace:
        """The same pass (sharing its data) as this class, e.g. a loaded ``.bptrace``."""
        return cls(**{f.name: getattr(trace, f.name) for f in dataclasses.fields(trace)})

    def document(self) -> GraphDocument:
        """The read-only document the app shows for this pass (modules collapsed)."""
        from gui.export.render import trace_document

        return trace_document(self)

    def export(self, path: str | os.PathLike[str], **options: Any) -> None:
        """Write the whole lesson as ``main.py export --all --out PATH`` would: the suffix
        picks the format (.gif .apng .webp .mp4 .pdf .html, or a folder ending in /) and
        the keywords are its flags (``size="640x360"``, ``fps=``, ``hold=``,
        ``transition=``, ``forward=True``, ``worksheet=True``, ``view="canvas"``); bad
        options raise ``gui.export.options.ExportError``.

        >>> trace.export("mlp.html")                          # doctest: +SKIP
        >>> trace.export("mlp.gif", size="640x360", fps=5)    # doctest: +SKIP
        """
        _export(self.document(), path, options)

    def show(self) -> subprocess.Popen[bytes] | None:
        """In a notebook, the player inline in the cell's output; else the app opens on
        this pass in a separate process (returned).

        >>> trace.show()                                       # doctest: +SKIP
        """
        if in_notebook():
            from IPython.display import display

            display(self)
            return None
        return super().show()

    def _repr_html_(self) -> str:
        """Jupyter's picture of the pass: the self-contained HTML player, modules collapsed."""
        return _iframe(self.document())


class Graph(GraphFile):
    """A loaded graph file (what :func:`backprop_studio.load` returns for a graph).

    >>> import backprop_studio as bps
    >>> graph = bps.load("assets/examples/classifier_head.bpgraph")
    >>> rows = graph.gradient_flow()                          # one per leaf, depth order
    >>> graph.export("classifier_head.html")                  # doctest: +SKIP
    """

    path: Path | None = None

    @classmethod
    def of(cls, gf: GraphFile, path: Path | None = None) -> Graph:
        graph = cls(**{f.name: getattr(gf, f.name) for f in dataclasses.fields(gf)})
        graph.path = path
        return graph

    def document(self) -> GraphDocument:
        """The document the app shows for this graph."""
        from gui.export.render import graph_document

        return graph_document(self, self.path)

    def gradient_flow(self) -> list[FlowRow]:
        """Each leaf's gradient figures after ``output.backward(gradient)``, in depth order."""
        return graph_flow(self)

    def export(self, path: str | os.PathLike[str], **options: Any) -> None:
        """The whole lesson, as :meth:`Trace.export` (``train=N`` too, with a train block)."""
        _export(self.document(), path, options)

    def _repr_html_(self) -> str:
        """Jupyter's picture of the graph: the self-contained HTML player."""
        return _iframe(self.document())
