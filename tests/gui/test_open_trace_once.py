"""Opening a captured trace is one command: the edges inside its collapsed modules are
worked out once (the load announces the structure, then the groups; each had hidden
them again), and expanding a module works them out once more."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import tracefile
from support import captured_mlp, torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")


def test_opening_a_trace_hides_the_modules_edges_once(
    make_window: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gui.canvas import scene as scene_module
    from gui.group_commands import set_collapsed

    path = captured_mlp(tmp_path / "mlp.bptrace")
    win = make_window(size=(1280, 720))
    calls = []
    real = scene_module.inside_collapsed
    monkeypatch.setattr(
        scene_module, "inside_collapsed", lambda *a: calls.append(1) or real(*a)
    )
    win.files.open_loaded(tracefile.load(path), path)
    assert len(calls) == 1
    scene = win.canvas.canvas
    assert scene._inside  # the modules' own edges are hidden
    assert all(not scene.edges[key].isVisible() for key in scene._inside)

    module = next(g for g in win.doc.groups if g.collapsed)
    calls.clear()
    win.doc.undo_stack.push(set_collapsed(win.doc, module.id, False))
    assert len(calls) == 1
    assert not any(m in module.members and n in module.members for m, n, _ in scene._inside)
