"""The exported slide uses its room: a wide graph gets the full width with the chain-rule
text under it (when that text fits there), and the camera fills the canvas it gets."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QApplication

from engine.examples import EXAMPLES_DIR
from engine.fileformat import load
from gui.document import GraphDocument
from gui.export.frame_sheet import PANEL_SHARE, STACK_GAIN, frame_sheet
from gui.export.options import View
from gui.model.camera import union


def example(stem: str) -> GraphDocument:
    path = EXAMPLES_DIR / f"{stem}.bpgraph"
    doc = GraphDocument()
    doc.load(load(path, partial=True), Path(path))
    return doc


def middle(sheet) -> int:  # noqa: ANN001
    tl = sheet.player.timeline
    return tl.position_of_step((len(tl.steps) + 1) // 2)


def text_fits(sheet) -> bool:  # noqa: ANN001
    browser = sheet.panel.browser
    return browser.document().size().height() <= browser.viewport().height() + 1


def test_wide_graph_slide_stacks_the_text_under_a_full_width_canvas(qapp) -> None:  # noqa: ANN001
    with frame_sheet(example("seed2_stack_vjp"), (1280, 720), View.SLIDE) as sheet:
        sheet.show_position(middle(sheet))
        QApplication.processEvents()
        assert sheet.stacked
        canvas, panel = sheet.canvas, sheet.panel
        assert canvas.width() == sheet.width() and panel.width() == sheet.width()
        assert panel.geometry().top() >= canvas.geometry().bottom()
        assert text_fits(sheet)  # the step's text is whole, at full size
        assert sheet.panel.fit == 1.0
        # the camera fills the canvas: the framed boxes span (almost) its width or height
        target = canvas.camera_target()
        rects = [canvas.node_item(n).scene_rect() for n in target.nodes]
        box = union([(r.x(), r.y(), r.width(), r.height()) for r in rects])
        on_screen = (box[2] * canvas.zoom(), box[3] * canvas.zoom())
        vp = canvas.viewport().size()
        assert on_screen[0] >= 0.85 * vp.width() or on_screen[1] >= 0.85 * vp.height()
        # and larger than beside the text, by the margin that made it stack
        body_h = sheet.height() - sheet.header.height()
        beside = canvas.camera_target(viewport=(sheet.width() * (1 - PANEL_SHARE), body_h))
        assert canvas.zoom() >= STACK_GAIN * beside.zoom * 0.95


def test_text_too_tall_to_go_under_keeps_it_beside(qapp) -> None:  # noqa: ANN001
    with frame_sheet(example("seed2_stack_vjp"), (1280, 720), View.SLIDE) as sheet:
        sheet.show_position(sheet.player.timeline.end)  # the end-to-end write-up is long
        QApplication.processEvents()
        assert not sheet.stacked
        assert sheet.panel.geometry().left() >= sheet.canvas.geometry().right()
        assert text_fits(sheet)


def test_graph_that_is_not_wide_and_canvas_view_stay_as_they_were(qapp) -> None:  # noqa: ANN001
    with frame_sheet(example("seed4_weighted_v"), (1280, 720), View.SLIDE) as sheet:
        sheet.show_position(middle(sheet))
        assert not sheet.stacked
        assert sheet.panel.geometry().left() >= sheet.canvas.geometry().right()
    with frame_sheet(example("seed2_stack_vjp"), (1280, 720), View.CANVAS) as sheet:
        sheet.show_position(middle(sheet))
        assert not sheet.stacked and sheet.panel.isHidden()
        assert sheet.canvas.width() == sheet.width() and sheet.canvas.height() == sheet.height()


def test_an_animation_keeps_one_arrangement(qapp) -> None:  # noqa: ANN001
    from gui.export.options import Kind, LessonOptions
    from gui.export.render import lesson_renderer
    from gui.model.lesson import ShotKind

    doc = example("seed2_stack_vjp")
    with lesson_renderer(doc, LessonOptions(Kind.PNG_SEQUENCE)) as renderer:
        sheet = renderer.sheet
        frames = [shot for shot in renderer.shots if shot.kind is ShotKind.FRAME]
        seen = set()
        for shot in frames[:: max(1, len(frames) // 8)] + frames[-2:]:
            renderer.image(shot)
            seen.add(sheet.stacked)
        assert seen == {False}  # the end-of-pass text does not fit under: beside throughout
    with frame_sheet(doc, (1280, 720), View.SLIDE) as sheet:
        sheet.keep_arrangement([middle(sheet)])  # a sequence whose text all fits under
        assert sheet.stacked
        sheet.show_position(sheet.player.timeline.end)
        assert sheet.stacked  # kept, even where a still frame would put the text beside
