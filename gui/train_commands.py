"""Train mode's edits as undo commands (document methods only): the train block's
settings, one training step, and Reset.

A step is one command: undo puts back the parameters' values and the run's state
(optimizer, ``.grad``, loss history) together, so stepping back through a run is
undo and nothing about it is lost.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from engine.errors import GraphError
from engine.train import TrainSpec, check_hyper, params_of

from .commands import EditCommand, SwapEdit
from .document import GraphDocument
from .model.train_view import TrainState, propose, start


class SetTrain(SwapEdit):
    """Replace the train block (optimizer, hyper-parameters, parameters, loss)."""

    def __init__(self, doc: GraphDocument, spec: TrainSpec | None, text: str) -> None:
        super().__init__(doc, text)
        self.old, self.new = doc.train, spec

    def check(self) -> None:
        if self.new is not None:
            check_hyper(self.new)

    def put(self, state: TrainSpec | None) -> None:
        self.doc.set_train(state)


def set_trainable(doc: GraphDocument, nid: str, flag: bool) -> SetTrain:
    """The inspector's "trainable" switch: ``nid`` joins or leaves the parameters."""
    assert doc.train is not None
    params = [p for p in params_of(doc.graph, doc.train) if p != nid]
    if flag:
        params = [p for p in doc.graph.nodes if p in {*params, nid}]  # in node order
    spec = dataclasses.replace(doc.train, params=params)
    return SetTrain(doc, spec, f"{'Train' if flag else 'Stop training'} {nid!r}")


class TrainStep(EditCommand):
    """One zero_grad + forward + backward + update; checked (computed) before it is pushed."""

    def __init__(self, doc: GraphDocument) -> None:
        super().__init__(doc, "Training step")
        self.before = doc.train_state
        self.after: TrainState | None = None
        self.old: dict[str, np.ndarray] = {}
        self.new: dict[str, np.ndarray] = {}

    def check(self) -> None:
        spec = self.doc.train
        if spec is None:
            raise GraphError("this graph has no train block: choose a loss first")
        graph = self.doc.graph
        state = self.before or start(graph, spec)
        self.after = propose(graph, spec, state)
        assert self.after.last is not None
        self.old = {p: u.old for p, u in self.after.last.updates.items()}
        self.new = {p: u.new for p, u in self.after.last.updates.items()}
        self.setText(f"Training step {self.after.t}")

    def _do(self) -> None:
        self.doc.set_training(self.new, self.after)

    def _undo(self) -> None:
        self.doc.set_training(self.old, self.before)


class ResetTraining(EditCommand):
    """Back to the values the run started from, and no run."""

    def __init__(self, doc: GraphDocument) -> None:
        super().__init__(doc, "Reset training")
        self.before = doc.train_state
        self.current: dict[str, np.ndarray] = {}

    def check(self) -> None:
        if self.before is None:
            raise GraphError("nothing to reset: no training step has run")
        graph = self.doc.graph
        missing = [p for p in self.before.initial if p not in graph.nodes]
        if missing:
            raise GraphError("a parameter of this run was deleted", missing[0])
        self.current = {p: graph.nodes[p].value for p in self.before.initial}  # type: ignore[misc]

    def _do(self) -> None:
        assert self.before is not None
        self.doc.set_training(dict(self.before.initial), None)

    def _undo(self) -> None:
        self.doc.set_training(self.current, self.before)
