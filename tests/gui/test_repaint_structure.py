"""What a player step and a whole-window repaint draw again (issue 10), counted, not timed.

The chain-rule text is drawn once per step however often the window repaints, and looks
exactly as QTextBrowser draws it; widgets that did not change blit their last painting.
Zoomed out, the boxes are drawn once each in a call per look, and a zoom step counts the
edges in view at once instead of asking the grid about each.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QImage, QPainter, QPaintEvent, QRegion
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QGraphicsView, QTextBrowser, QWidget

from engine.examples import example_path
from gui.canvas import scene as scene_module
from gui.canvas.node_item import FAR_LOD
from gui.canvas.scene import RectGrid
from gui.paint_cache import PaintCache
from gui.panels.text_cache import ADOPT_MS, CachedTextBrowser
from gui.theme import THEME
from support import laid_out_ahead


def _stepped(make_window):  # noqa: ANN001, ANN202
    win = make_window()
    win.player.to_start()
    win.player.step_forward()
    QApplication.processEvents()
    win.repaint()
    return win


def _scrubber_at_step_one(make_window):  # noqa: ANN001, ANN202
    """A window painted at backward step 1: it, its scrubber's cache and the scrubber's
    area in window coordinates."""
    win = make_window()
    win.player.seek(win.player.timeline.position_of_step(1))
    QApplication.processEvents()
    win.repaint()
    scrubber = win.player_bar.scrubber
    cache = scrubber.findChild(PaintCache)
    assert cache is not None
    return win, cache, QRect(scrubber.mapTo(win, QPoint(0, 0)), scrubber.size())


def _three_steps_blit(win, caches: list[PaintCache]) -> None:  # noqa: ANN001
    """Three steps, each with a repaint of each cached widget (a whole-window repaint
    leaves the bars and docks alone: ``test_painted_alone``): every cache blits, none
    paints."""
    QApplication.processEvents()
    win.repaint()
    before = [(c.hits, c.misses) for c in caches]
    for _ in range(3):
        win.player.step_forward()
        QApplication.processEvents()
        for cache in caches:
            cache.parent().repaint()
    for cache, (hits, misses) in zip(caches, before, strict=True):
        assert cache.misses == misses and cache.hits >= hits + 3


def _as_qt_draws(browser: CachedTextBrowser) -> QImage:
    """The same document in a plain QTextBrowser of the same size, style and scroll."""
    plain = QTextBrowser()
    plain.setStyleSheet(browser.styleSheet())
    plain.document().setDocumentMargin(browser.document().documentMargin())
    plain.setHorizontalScrollBarPolicy(browser.horizontalScrollBarPolicy())
    plain.setVerticalScrollBarPolicy(browser.verticalScrollBarPolicy())
    plain.resize(browser.size())
    plain.setHtml(browser.document().toHtml())
    plain.show()
    QApplication.processEvents()
    plain.verticalScrollBar().setValue(browser.verticalScrollBar().value())
    image = _pixels(plain.viewport())
    plain.close()
    return image


def _pixels(widget: QWidget) -> QImage:
    """What ``widget`` shows, in one pixel format (an opaque viewport grabs without alpha)."""
    return widget.grab().toImage().convertToFormat(QImage.Format.Format_ARGB32_Premultiplied)


def test_a_step_draws_the_chain_rule_text_once_however_often_the_window_repaints(
    make_window,  # noqa: ANN001
) -> None:
    win = _stepped(make_window)
    browser = win.chain_rule.browser
    for _ in range(3):
        before = browser.draws
        win.player.step_forward()
        QApplication.processEvents()
        win.repaint()
        win.repaint()
        assert browser.draws == before + 1
    assert browser.draws > 0


def test_the_chain_rule_text_looks_as_qt_draws_it(make_window) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    browser = win.chain_rule.browser
    for _ in range(3):
        win.player.step_forward()
        QApplication.processEvents()
        shown = _pixels(browser.viewport())
        assert shown == _as_qt_draws(browser)
    win.enter_presentation()  # bigger text, another size: drawn again, still the same
    QApplication.processEvents()
    shown = _pixels(browser.viewport())
    assert shown == _as_qt_draws(browser)


def _bar(browser: CachedTextBrowser) -> tuple[int, int, int, int]:
    bar = browser.verticalScrollBar()
    return bar.minimum(), bar.maximum(), bar.pageStep(), bar.value()


def test_a_step_laid_out_ahead_shows_its_drawing_and_the_browser_takes_it_soon(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    """In idle time the next step is laid out and drawn; the step shows that drawing at
    once, with the scroll bar as the new document will have it, and the browser takes
    the document a moment later: then nothing on screen changes, and it is what a plain
    QTextBrowser shows for it."""
    win = _stepped(make_window)
    browser = win.chain_rule.browser
    for _ in range(3):
        laid_out_ahead(qtbot, win.chain_rule)
        draws = browser.draws
        win.player.step_forward()
        QApplication.processEvents()
        win.repaint()
        assert browser.draws == draws  # drawn ahead, not while the user waits
        assert browser._pending is not None  # shown from its drawing
        shown, bar = _pixels(browser.viewport()), _bar(browser)
        qtbot.waitUntil(lambda: browser._pending is None, timeout=ADOPT_MS + 1000)
        QApplication.processEvents()
        assert _bar(browser) == bar
        assert _pixels(browser.viewport()) == shown == _as_qt_draws(browser)


def test_a_drawing_shown_is_taken_before_the_user_or_a_caller_touches_the_text(
    make_window, qtbot,  # noqa: ANN001
) -> None:
    win = _stepped(make_window)
    panel, browser = win.chain_rule, win.chain_rule.browser
    def keys() -> None:
        QTest.keyClick(browser.viewport(), Qt.Key.Key_Down)

    for touch in (keys, browser.selectAll, lambda: browser.find("flows")):
        laid_out_ahead(qtbot, panel)
        win.player.step_forward()
        QApplication.processEvents()
        assert browser._pending is not None
        touch()
        assert browser._pending is None
        assert QTextBrowser.document(browser).toPlainText() == panel.text()
        assert f"Step {win.player.frame.k}" in panel.text()
        cursor = browser.textCursor()
        assert cursor.hasSelection() == (touch is not keys)  # in the step's own text
        cursor.clearSelection()  # (a selection shows the usual way: no drawing ahead)
        browser.setTextCursor(cursor)


def test_a_selection_in_the_chain_rule_text_is_drawn(make_window, qtbot) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    # The next step is drawn ahead in idle time (100 ms on): that drawing is not the
    # selection's, so it is let happen first (on a slow machine it fell inside the check).
    qtbot.waitUntil(lambda: not win.chain_rule._ahead_timer.isActive())
    browser = win.chain_rule.browser
    before = browser.viewport().grab().toImage()
    draws = browser.draws
    browser.selectAll()
    QApplication.processEvents()
    selected = browser.viewport().grab().toImage()
    assert selected != before  # the highlight shows: QTextBrowser painted it
    corner = (selected.width() - 1, selected.height() - 1)  # on paper, as before
    assert selected.pixelColor(*corner) == before.pixelColor(*corner) == THEME.paper
    assert browser.draws == draws
    cursor = browser.textCursor()
    cursor.clearSelection()
    browser.setTextCursor(cursor)
    QApplication.processEvents()
    assert browser.viewport().grab().toImage() == before


def test_a_step_does_not_paint_the_player_toolbar_again(make_window) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    cache = win.player_bar.findChild(PaintCache)
    assert cache is not None
    QApplication.processEvents()  # the first painting is kept
    win.repaint()
    misses = cache.misses
    hits = cache.hits
    for _ in range(3):
        win.player.step_forward()  # new status text: the toolbar lays out its children
        QApplication.processEvents()
        win.player_bar.repaint()  # (the window's repaint leaves it alone)
    assert cache.misses == misses and cache.hits >= hits + 3
    win.resize(1500, 1000)  # a new size: painted again, then kept again
    QApplication.processEvents()
    assert cache.misses > misses
    QApplication.processEvents()  # the event loop comes back: the painting is kept
    misses, hits = cache.misses, cache.hits
    win.player_bar.repaint()
    assert (cache.misses, cache.hits) == (misses, hits + 1)


def test_a_toolbar_blit_looks_as_the_toolbar_paints(make_window) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    bar = win.player_bar
    cache = bar.findChild(PaintCache)
    QApplication.processEvents()
    hits = cache.hits
    blitted = bar.grab().toImage()
    assert cache.hits == hits + 1
    cache.invalidate()
    painted = bar.grab().toImage()
    assert painted == blitted
    assert bar.testAttribute(Qt.WidgetAttribute.WA_WState_Visible)


def test_a_step_does_not_paint_the_dock_titles_again(make_window) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    docks = [win.palette_dock, win.inspector_dock, win.notes_dock]
    caches = [dock.findChild(PaintCache) for dock in docks]
    _three_steps_blit(win, caches)
    for dock, cache in zip(docks, caches, strict=True):
        blitted = dock.grab().toImage()
        cache.invalidate()
        assert dock.grab().toImage() == blitted  # the title as the style paints it
    dock, cache = docks[0], caches[0]
    misses = cache.misses
    dock.setWindowTitle("Operations")  # a new title: painted again
    dock.repaint()
    assert cache.misses == misses + 1
    dock.setFloating(True)  # a floating dock paints its frame too: as usual, not blitted
    QApplication.processEvents()
    QApplication.processEvents()
    hits = cache.hits
    dock.repaint()
    assert cache.hits == hits
    dock.setFloating(False)


def test_far_boxes_paint_each_box_once_grouped_by_look(far_view, monkeypatch) -> None:  # noqa: ANN001
    scene = far_view.canvas
    nodes = list(scene.nodes)
    far_view.select_ids(nodes[:2])
    calls: list[int] = []
    original = QPainter.drawRects
    monkeypatch.setattr(
        QPainter, "drawRects", lambda self, rects: (calls.append(len(rects)), original(self, rects))
    )
    far_view.resize(1600, 1000)  # every box in view, still far away
    centre = scene.nodes_rect().center()
    far_view.look_at((centre.x(), centre.y()), FAR_LOD * 0.8)
    assert scene.far and far_view.visible_scene_rect().contains(scene.nodes_rect())
    scene.far_boxes.update()
    far_view.viewport().repaint()
    colours = {scene.nodes[n].far_look()[5].rgba() for n in nodes}
    assert calls[:2] == [len(nodes) - 2, 2]  # plain boxes, then the selected ones
    assert sum(calls[2:]) == len(nodes) and len(calls) == 2 + len(colours)  # a call a colour


def test_a_zoom_step_counts_the_edges_in_view_without_asking_each(far_view, monkeypatch) -> None:  # noqa: ANN001
    asked: list[QRectF] = []
    original = RectGrid.query
    monkeypatch.setattr(RectGrid, "query", lambda self, r: (asked.append(r), original(self, r))[1])
    monkeypatch.setattr(scene_module, "BATCH_EDGES", 4)  # seed 2 has a few edges
    far_view.resize(1600, 1000)
    centre = far_view.canvas.nodes_rect().center()
    far_view.look_at((centre.x(), centre.y()), FAR_LOD * 0.8)
    far_view.viewport().repaint()
    anchor = far_view.mapToScene(far_view.viewport().rect().center())
    asked.clear()
    far_view.zoom_by(1.15)
    far_view.viewport().repaint()
    edges = far_view.canvas.edge_grid
    assert not any(r.contains(QRectF(*_extent(edges))) for r in asked)  # all in view: counted
    centre = far_view.mapToScene(far_view.viewport().rect().center())
    assert abs(centre.x() - anchor.x()) < 2 and abs(centre.y() - anchor.y()) < 2
    minimal = QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate
    assert far_view.viewportUpdateMode() == minimal  # the full repaint was for that step only


def _extent(grid: RectGrid) -> tuple[float, float, float, float]:
    b = grid.bounds_array()
    left, top = b[:, 0].min(), b[:, 1].min()
    return left, top, b[:, 2].max() - left, b[:, 3].max() - top


def test_a_new_page_blits_the_chain_rule_scroll_bar_that_looks_the_same(
    make_window,  # noqa: ANN001
) -> None:
    """A step empties the chain-rule page and fills it again: the scroll bar's range
    goes to 0 and back, and Qt repainted it (as well as in a repaint of its own)
    although it looks the same."""
    win = make_window(size=(1280, 720))  # a short panel: the text scrolls
    win.player.seek(win.player.timeline.position_of_step(1))
    QApplication.processEvents()
    bar = win.chain_rule.browser.verticalScrollBar()
    cache = bar.findChild(PaintCache)
    assert cache is not None and bar.isVisible() and bar.maximum() > 0
    QApplication.processEvents()
    win.repaint()
    misses, hits = cache.misses, cache.hits
    for _ in range(3):
        # the same step written again (a render that does not know the text is the same
        # as shown: a new page, same range)
        win.chain_rule._shown = None
        win.chain_rule.refresh()
        QApplication.processEvents()
        bar.repaint()
    assert cache.misses == misses and cache.hits >= hits + 6
    area = QRect(bar.mapTo(win, QPoint(0, 0)), bar.size())
    blitted = win.grab(area).toImage()
    assert cache.hits > hits + 6
    cache.invalidate()
    painted = win.grab(area).toImage()
    assert cache.misses == misses + 1
    assert painted == blitted  # the bar as the style paints it, over what is behind it
    drawn = cache.misses + cache.captures
    bar.setValue(10)  # scrolled: another state, drawn again (not the old pixmap blitted)
    QApplication.processEvents()
    bar.repaint()
    assert cache.misses + cache.captures > drawn
    scrolled = win.grab(area).toImage()
    assert scrolled != blitted
    cache.invalidate()
    assert win.grab(area).toImage() == scrolled  # as the style paints the new state



def test_the_chain_rule_scroll_bar_blits_a_range_it_had_as_the_style_paints_it(
    make_window,  # noqa: ANN001
) -> None:
    """An edit at the end of backward lengthens the summary (the bar gets another range),
    and undoing it brings the range back: each range's bar is drawn once and blitted
    when it comes back, looking as the style paints it over its backdrop."""
    win = make_window(size=(1280, 720))  # a short panel: the text scrolls
    win.player.to_end()
    QApplication.processEvents()
    win.repaint()
    bar = win.chain_rule.browser.verticalScrollBar()
    cache = bar.findChild(PaintCache)
    assert cache is not None and bar.isVisible() and bar.maximum() > 0
    area = QRect(bar.mapTo(win, QPoint(0, 0)), bar.size())
    centre = win.canvas.mapToScene(win.canvas.viewport().rect().center())
    looks: dict[int, QImage] = {}
    drawn = 0
    for cycle in range(3):
        for edit in ("add", "undo"):
            if edit == "add":
                assert win.canvas.add_node_at("input", centre) is not None
            else:
                win.doc.undo_stack.undo()
            QApplication.processEvents()
            win.repaint()
            QApplication.processEvents()
            blitted = win.grab(area).toImage()
            if cycle == 0:  # drawn: the style's own
                looks[bar.maximum()] = blitted
            assert blitted == looks[bar.maximum()]
            if cycle == 2:
                cache.invalidate()
                assert win.grab(area).toImage() == blitted  # as the style paints it
        if cycle == 0:
            drawn = cache.misses + cache.captures + cache.parts
        elif cycle == 1:  # the two ranges came back: blitted, not drawn
            assert cache.misses + cache.captures + cache.parts == drawn
    assert len(looks) == 2  # the range changed and came back



def test_the_chain_rule_scroll_bar_drawn_around_its_handle_end_looks_as_the_style_paints_it(
    make_window,  # noqa: ANN001
) -> None:
    """Step by step through backward (and back) the bar gets new ranges: only around the
    handle's end is drawn again, into a copy of the bar kept, and what it then shows is
    the bar the style paints whole, over its backdrop."""
    win = make_window(example_path("xor_mlp"), size=(1280, 720))  # its steps scroll
    win.player.seek(win.player.timeline.position_of_step(1))
    QApplication.processEvents()
    win.repaint()
    bar = win.chain_rule.browser.verticalScrollBar()
    cache = bar.findChild(PaintCache)
    assert cache is not None
    area = QRect(bar.mapTo(win, QPoint(0, 0)), bar.size())
    parts, ranges = cache.parts, set()
    player = win.player
    positions = list(range(player.position + 1, player.timeline.end + 1))
    for position in [*positions, *positions[-2::-2]]:  # forward, then back
        player.seek(position)
        QApplication.processEvents()
        win.repaint()
        if not bar.isVisible():  # (a short step)
            continue
        ranges.add(bar.maximum())
        blitted = win.grab(area).toImage()
        cache.invalidate()  # the next paint is the style's own, of the whole bar
        assert win.grab(area).toImage() == blitted
        QApplication.processEvents()  # (and is kept, as after any paint)
    assert len(ranges) > 3  # the handle's length changed
    assert cache.parts > parts  # drawn around the handle's end


def test_a_step_draws_the_scrubber_once_and_a_repaint_blits_it(
    make_window,  # noqa: ANN001
) -> None:
    """Each step moves the scrubber's handle: its new look is drawn once, into the
    pixmap, as the window is about to paint, and both that paint and a repaint right
    after blit it (it was painted, then captured, then painted again)."""
    win, cache, area = _scrubber_at_step_one(make_window)
    QApplication.processEvents()
    before = win.grab(area).toImage()
    misses, drawn, parts, hits = cache.misses, cache.captures + cache.parts, cache.parts, cache.hits
    for _ in range(3):
        win.player.step_forward()
        QApplication.processEvents()
        win.player_bar.scrubber.repaint()
    # (drawn whole again only when the slider is laid out anew: a longer status text beside it)
    assert cache.misses == misses and 3 <= cache.captures + cache.parts - drawn <= 4
    assert cache.parts >= parts + 2  # the handle moved: only around it
    assert cache.hits >= hits + 6
    blitted = win.grab(area).toImage()
    assert blitted != before  # the handle moved
    cache.invalidate()
    assert win.grab(area).toImage() == blitted  # as the style paints it, over its backdrop


class _PaintRegions(QObject):
    """The regions of the paint events ``widget`` receives, with the size ``sized`` had
    at each."""

    def __init__(self, widget: QWidget, sized: QWidget) -> None:
        super().__init__(widget)
        self.sized = sized
        self.regions: list[tuple[QRegion, QSize]] = []
        widget.installEventFilter(self)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if isinstance(event, QPaintEvent):
            self.regions.append((QRegion(event.region()), self.sized.size()))
        return False


def test_a_step_repaints_the_scrubber_and_what_is_behind_it_only_around_its_handle(
    make_window,  # noqa: ANN001
) -> None:
    """The slider and the toolbar behind it (the slider is see-through) paint only the
    part around the handle's two places, not the whole groove, on each step (but the
    first after the slider was laid out anew: a longer status text beside it)."""
    win, _cache, area = _scrubber_at_step_one(make_window)
    win.player.step_forward()  # (the first step after the slider was laid out: whole)
    QApplication.processEvents()
    scrubber, bar = win.player_bar.scrubber, win.player_bar
    area = QRect(area.topLeft(), scrubber.size())
    painted = [_PaintRegions(scrubber, scrubber), _PaintRegions(bar, scrubber)]
    for _ in range(4):
        win.player.step_forward()
        QApplication.processEvents()
    for seen in painted:
        groove = QRegion(QRect(scrubber.mapTo(bar, QPoint(0, 0)), scrubber.size()))
        if seen.parent() is scrubber:
            groove = QRegion(scrubber.rect())
        widths = [(region & groove).boundingRect().width() for region, size in seen.regions
                  if size == area.size() and not (region & groove).isEmpty()]
        assert len(widths) >= 2 and max(widths) < area.width() / 4


def test_the_scrubber_drawn_in_parts_looks_as_the_style_paints_it(
    make_window,  # noqa: ANN001
) -> None:
    """Steps on and back, a jump back and one to the end: each time only the part of the
    scrubber around its handle's two places is drawn again, into the pixmap kept, and
    what it then shows is the slider the style paints whole, over its backdrop."""
    win, cache, area = _scrubber_at_step_one(make_window)
    moves = [win.player.step_forward] * 4 + [win.player.step_back] * 2
    moves += [lambda: win.player.seek(2), win.player.to_end]
    parts, seen = cache.parts, set()
    for move in moves:
        move()
        QApplication.processEvents()
        win.repaint()
        blitted = win.grab(area).toImage()
        seen.add(blitted.cacheKey())
        cache.invalidate()  # the next paint is the style's own, of the whole slider
        assert win.grab(area).toImage() == blitted
        QApplication.processEvents()  # (and is kept, as after any paint)
    assert cache.parts >= parts + len(moves) - 1
    assert len(seen) == len(moves)


def test_a_repaint_of_their_own_blits_the_tab_and_menu_bars(make_window) -> None:  # noqa: ANN001
    win = _stepped(make_window)
    bars = [win.tabs.tabBar(), win.menuBar()]
    caches = [bar.findChild(PaintCache) for bar in bars]
    _three_steps_blit(win, caches)
    for bar, cache in zip(bars, caches, strict=True):
        area = QRect(bar.mapTo(win, QPoint(0, 0)), bar.size())
        blitted = win.grab(area).toImage()
        cache.invalidate()
        assert win.grab(area).toImage() == blitted  # as the style paints it, over its backdrop
    tabs, cache = bars[0], caches[0]
    QApplication.processEvents()
    misses = cache.misses
    win.tabs.setCurrentIndex(1)  # another tab: painted again
    QApplication.processEvents()
    win.repaint()
    assert cache.misses > misses
    QApplication.processEvents()
    misses = cache.misses
    tabs.setTabText(2, "Heatmap")  # a new tab text: painted again
    win.repaint()
    assert cache.misses > misses


def test_an_edit_at_the_end_blits_the_scrubber_whose_handle_stays(make_window) -> None:  # noqa: ANN001
    """A node added at the end of backward gives the scrubber another range with its
    handle where it was (at the end): the slider blits what it showed, as the style
    paints it; a step back moves the handle, and it paints again."""
    win = make_window()
    win.player.to_end()
    QApplication.processEvents()
    win.repaint()
    scrubber = win.player_bar.scrubber
    cache = scrubber.findChild(PaintCache)
    assert cache is not None
    QApplication.processEvents()  # the first painting is kept
    misses, hits, end = cache.misses, cache.hits, scrubber.maximum()
    centre = win.canvas.mapToScene(win.canvas.viewport().rect().center())
    for _ in range(2):
        assert win.canvas.add_node_at("input", centre) is not None
        QApplication.processEvents()
        win.repaint()
    assert scrubber.maximum() == end + 2 and scrubber.value() == scrubber.maximum()
    assert cache.misses == misses and cache.hits >= hits + 2
    area = QRect(scrubber.mapTo(win, QPoint(0, 0)), scrubber.size())
    blitted = win.grab(area).toImage()
    cache.invalidate()
    assert win.grab(area).toImage() == blitted  # as the style paints it, over its backdrop
    QApplication.processEvents()
    drawn = cache.misses + cache.captures + cache.parts
    win.player.seek(0)  # the handle moves: drawn again (not the old pixmap blitted)
    QApplication.processEvents()
    win.repaint()
    assert cache.misses + cache.captures + cache.parts > drawn
    assert win.grab(area).toImage() != blitted
