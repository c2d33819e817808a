"""``import backprop_studio as bps``: the names the issue spells out, each doing what its
docstring's example says (the examples run here), exports with the command line's options."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

import backprop_studio as bps
import backprop_studio.objects
from engine import capture as engine_capture
from gui.export.cli import lesson_options
from gui.export.options import ExportError, Kind, LessonOptions, View
from gui.model.lesson import Timing
from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", [bps, backprop_studio.objects])
def test_docstring_examples_run(module: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples load assets/examples/...
    result = doctest.testmod(module, raise_on_error=False, verbose=False)  # type: ignore[arg-type]
    assert result.attempted > 5 and result.failed == 0


def tiny() -> tuple[torch.nn.Module, torch.Tensor]:
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Tanh()).double()
    with bps.tracking(model):
        loss = model(torch.ones(2, 3, dtype=torch.float64)).sum()
    return model, loss


def test_capture_save_load_and_export_like_the_command_line(tmp_path: Path) -> None:
    model, loss = tiny()
    trace = bps.capture(loss, names=model)
    assert isinstance(trace, bps.Trace) and isinstance(trace, engine_capture.TorchTrace)
    assert trace.leaf_grads["0.weight"].tolist() == model[0].weight.grad.tolist()
    trace.save(tmp_path / "t.bptrace")
    loaded = bps.load(tmp_path / "t.bptrace")
    assert isinstance(loaded, bps.Trace) and list(loaded.nodes) == list(trace.nodes)
    assert [r.name for r in loaded.gradient_flow()] == ["0.weight", "0.bias"]

    trace.export(f"{tmp_path}/frames/", size="320x240", view="canvas")  # "/": a folder
    assert sorted(p.suffix for p in (tmp_path / "frames").iterdir())[:1] == [".png"]
    loaded.export(tmp_path / "lesson.gif", size=(320, 240), fps=2)
    assert (tmp_path / "lesson.gif").read_bytes()[:3] == b"GIF"
    with pytest.raises(ExportError, match="unrecognized arguments: --colour"):
        trace.export(tmp_path / "x.gif", colour="red")
    with pytest.raises(ExportError, match="--worksheet is for a .pdf"):
        trace.export(tmp_path / "x.gif", worksheet=True)
    assert not (tmp_path / "x.gif").exists()


def test_keywords_read_as_the_flags() -> None:
    got = lesson_options("a.webp", size=(640, 360), fps=5, hold="2", forward=True, view="canvas")
    want = LessonOptions(
        Kind.WEBP, (640, 360), Timing(hold=2.0, fps=5.0), forward=True, view=View.CANVAS
    )
    assert got == want


def test_recording_and_the_engine_names_still_work() -> None:
    model, loss = tiny()
    with bps.recording(names=model) as traces:
        loss.backward()
    assert len(traces) == 1 and isinstance(traces[0], bps.Trace)
    _, again = tiny()
    plain = engine_capture.capture(again, names=model)
    assert type(plain) is engine_capture.TorchTrace


def test_a_graph_loads_with_its_flow(tmp_path: Path) -> None:
    graph = bps.load(ROOT / "assets/examples/classifier_head.bpgraph")
    assert isinstance(graph, bps.Graph)
    rows = graph.gradient_flow()
    assert rows and all(r.norm > 0 for r in rows)
    graph.export(tmp_path / "g.pdf")
    assert (tmp_path / "g.pdf").read_bytes()[:4] == b"%PDF"
