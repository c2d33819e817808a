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
