"""Where a view opens (gui.model.camera.opening_view, headless): the whole graph when
its text can be read, else a readable part around the output, never past the graph."""

from __future__ import annotations

from gui.model.camera import camera_target, fit_zoom, opening_view

VIEW = (1280.0, 720.0)


def test_a_graph_legible_whole_opens_whole_and_no_closer_than_the_cap() -> None:
    world = (0.0, 0.0, 800.0, 300.0)
    centre, zoom = opening_view(world, (700.0, 100.0, 100.0, 60.0), VIEW, 0.5, 1.25)
    assert centre == (400.0, 150.0) and zoom == 1.25
    wide = (0.0, 0.0, 2000.0, 300.0)
    centre, zoom = opening_view(wide, (1900.0, 100.0, 100.0, 60.0), VIEW, 0.5, 1.25)
    assert centre == (1000.0, 150.0) and zoom == fit_zoom(wide, VIEW, 0.0) == 0.64


def test_a_graph_unreadable_whole_opens_readable_on_its_output_inside_the_graph() -> None:
    world = (0.0, 0.0, 20000.0, 3000.0)  # a resnet18: 0.064 px per unit fitted whole
    output = (19800.0, 1400.0, 150.0, 80.0)
    centre, zoom = opening_view(world, output, VIEW, 0.5, 1.25)
    assert zoom == 0.5
    x0, y0 = centre[0] - VIEW[0] / zoom / 2, centre[1] - VIEW[1] / zoom / 2
    x1, y1 = centre[0] + VIEW[0] / zoom / 2, centre[1] + VIEW[1] / zoom / 2
    assert x0 <= output[0] and output[0] + output[2] <= x1  # the output is in view
    assert y0 <= output[1] and output[1] + output[3] <= y1
    assert x1 <= world[2] + 16.0 / zoom  # no paper shown past the graph's right end


def test_no_step_active_on_a_graph_unreadable_whole_the_camera_looks_at_the_output() -> None:
    """Presentation's follow camera between passes (the backward pass done): not the
    whole resnet18 at a few pixels per name, but its output, at the zoom steps use."""
    boxes = {f"n{k}": (k * 300.0, (k % 7) * 200.0, 200.0, 80.0) for k in range(134)}
    edges = [(f"n{k}", f"n{k + 1}") for k in range(133)]
    whole = camera_target(boxes, edges, None, VIEW, 1.0)
    assert whole is not None and len(whole.nodes) == 134  # no anchor: the whole graph
    target = camera_target(boxes, edges, None, VIEW, 1.0, anchor=boxes["n133"])
    assert target is not None and target.zoom >= 1.0
    x, y, w, h = target.visible_rect(VIEW)
    bx, by, bw, bh = boxes["n133"]
    assert x <= bx and bx + bw <= x + w and y <= by and by + bh <= y + h
    small = {k: boxes[k] for k in ("n0", "n1")}  # legible whole: still shown whole
    shown = camera_target(small, edges[:1], None, VIEW, 1.0, anchor=boxes["n1"])
    assert shown is not None and shown.nodes == ("n0", "n1")


def _shown_whole(win, ids) -> list[str]:  # noqa: ANN001
    """The boxes of ``ids`` not wholly in the canvas's view."""
    seen = win.canvas.visible_scene_rect()
    return [n for n in ids if not seen.contains(win.canvas.canvas.nodes[n].scene_rect())]


def test_a_small_captured_model_opens_whole_a_big_one_on_a_readable_part(
    make_window, tmp_path  # noqa: ANN001
) -> None:
    """The two-layer MLP fits the window with every box's compact name legible: it opens
    whole (it opened on its output, zoomed to full-box text); a ten-layer one does not
    fit readably and opens on a part around its output, its names legible there."""
    import pytest

    from support import captured_mlp, deep_mlp_trace, torch

    if torch is None:
        pytest.skip("torch is not installed")
    win = make_window(captured_mlp(tmp_path / "mlp.bptrace"), size=(1280, 720))
    view, known = win.canvas, win.canvas.canvas.camera_boxes.refresh()
    assert not _shown_whole(win, win.doc.graph.nodes)
    assert all(view.zoom() >= z - 1e-9 for z in known.names.values())
    deep = tmp_path / "deep.bptrace"
    deep_mlp_trace("Tanh").save(deep)
    assert win.files.load_path(deep)
    known = win.canvas.canvas.camera_boxes.refresh()
    hidden = _shown_whole(win, win.doc.graph.nodes)
    assert hidden and not _shown_whole(win, [win.canvas._last_node()])
    assert all(view.zoom() >= z - 1e-9 for z in known.numbers.values())
