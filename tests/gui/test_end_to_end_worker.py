"""The end-to-end product is computed off the UI thread (issue 25, item 12).

A 4096-element output is 4096 backward passes; the summary panel must not freeze
the window for them. Here the worker is held until the test lets it go: the panel
has answered "computing…" before any result exists, then shows the engine's
Jacobian, and a result for older results is dropped.
"""

from __future__ import annotations

import gc
import threading

import numpy as np

import gui.player as player_module
from engine.autodiff import end_to_end_jacobian
from engine.fileformat import GraphFile
from gui.document import GraphDocument
from gui.model.end_to_end import COMPUTING, end_to_end
from gui.panels.summary import SummaryPanel
from gui.player import Player
from support import seed2_graph


def test_summary_says_computing_then_shows_the_workers_jacobian(qtbot, monkeypatch):  # noqa: ANN001
    gates: list[threading.Event] = []

    def held(*args):  # noqa: ANN002, ANN202 - the real computation, once its gate opens
        gate = threading.Event()
        gates.append(gate)
        assert gate.wait(20)
        return end_to_end(*args)

    monkeypatch.setattr(player_module, "INLINE_WORK", -1)  # seed 2 goes to the worker too
    monkeypatch.setattr(player_module, "end_to_end", held)
    doc = GraphDocument()
    doc.load(GraphFile(graph=seed2_graph(), output="y", gradient=np.ones(3)), None)
    player = Player(doc)
    panel = SummaryPanel(doc, player)
    qtbot.addWidget(panel)
    panel.show()

    assert "End-to-end Jacobian: computing…" in panel.text()  # returned, no result yet
    qtbot.waitUntil(lambda: len(gates) == 1)
    doc.set_backward("y", np.array([1.0, 2.0, 3.0]))  # newer results while it works
    assert player.end_to_end_or_computing() is COMPUTING
    qtbot.waitUntil(lambda: len(gates) == 2)

    gates[1].set()  # the newer result arrives first
    qtbot.waitUntil(lambda: "computing…" not in panel.text())
    gates[0].set()  # the older one afterwards: dropped
    qtbot.wait(100)
    e2e = player.end_to_end_or_computing()
    assert e2e is not None and e2e is not COMPUTING
    assert np.array_equal(e2e.gradient, [1.0, 2.0, 3.0])
    fwd = doc.results.forward
    expected = end_to_end_jacobian(doc.graph, fwd, "y", list(e2e.leaves))
    assert np.array_equal(e2e.jacobian, expected)
    text = panel.text()
    assert "End-to-end Jacobian J" in text
    assert f"{expected.flat[1]:g}" in text


def test_the_worker_never_collects_cycles_off_the_ui_thread(qtbot, monkeypatch):  # noqa: ANN001
    """A collection triggered by the worker's allocations would take apart Qt objects
    waiting in cycles (a closed window's) on the worker thread; it never runs there."""
    collected_on: list[int] = []

    def note(phase: str, _info: dict) -> None:
        if phase == "start":
            collected_on.append(threading.get_ident())

    def allocating(*args):  # noqa: ANN002, ANN202 - enough tracked objects to trigger
        junk = [[i] for i in range(20_000)]
        del junk
        return end_to_end(*args)

    monkeypatch.setattr(player_module, "INLINE_WORK", -1)
    monkeypatch.setattr(player_module, "end_to_end", allocating)
    doc = GraphDocument()
    doc.load(GraphFile(graph=seed2_graph(), output="y", gradient=np.ones(3)), None)
    player = Player(doc)
    done: list[bool] = []
    player.endToEndReady.connect(lambda: done.append(True))
    ui = threading.get_ident()
    gc.callbacks.append(note)
    try:
        assert player.end_to_end_or_computing() is COMPUTING
        qtbot.waitUntil(lambda: bool(done), timeout=20_000)
    finally:
        gc.callbacks.remove(note)
    assert all(ident == ui for ident in collected_on), "a collection ran on the worker"
