"""Where a view opens (gui.model.camera.opening_view, headless): the whole graph when
its text can be read, else a readable part around the output, never past the graph."""

from __future__ import annotations

from gui.model.camera import fit_zoom, opening_view

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
