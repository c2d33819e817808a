"""The PDF handout and the HTML player, read back the way a reader meets them.

The PDF's text is extracted with pypdf: the handout holds every step's numbers;
the worksheet's step pages leave them blank and its answer key holds them. The
HTML player is opened in a real browser engine (Debian's ``chromium``, headless):
``#step=3`` and ``#step=5`` look different, the page's text is the write-up, and
the page asks the network for nothing (read from Chromium's net log, where the
browser's own background traffic is marked as having no page origin; a control
page that does load a remote image proves the check can fail); in a 1024-, a 600- and
a 400-px window the page never scrolls sideways, and neither does its write-up column.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import pypdf
import pytest
from PIL import Image

from engine import app_signature
from gui.export.html_player import icon_data_uri
from gui.export.options import LessonOptions
from gui.export.writers import write_lesson
from gui.model import labels
from gui.model.worksheet import answer_lines

ROOT = Path(__file__).resolve().parents[2]
SEED2 = ROOT / "assets" / "examples" / "seed2_stack_vjp.bpgraph"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def lesson(qapp, tmp_path_factory):  # noqa: ANN001, ANN201 - fixture
    """Seed example 2's document and its backward steps."""
    from gui.export.render import load_document

    doc = load_document(SEED2)
    return doc, list(doc.results.trace.steps)


def pdf_pages(path: Path) -> list[str]:
    return [page.extract_text() for page in pypdf.PdfReader(path).pages]


def flat(text: str) -> str:
    """pypdf separates words by tabs and breaks lines at sub/superscripts."""
    return " ".join(text.split())


def test_handout_holds_every_step(lesson, artifacts_dir: str) -> None:  # noqa: ANN001
    doc, steps = lesson
    out = Path(artifacts_dir) / "lesson_seed2.pdf"
    write_lesson(doc, out, LessonOptions("pdf"))
    pages = pdf_pages(out)
    assert len(pages) == 1 + (len(steps) + 1) // 2 + 1  # title, two steps a page, end
    assert pypdf.PdfReader(out).metadata.creator == app_signature()
    title = flat(pages[0])
    assert "y.backward(gradient=tensor([0.1, 0.2, 0.3]))" in title
    assert "x1 = 1" in title and "x3 = 3" in title
    body = flat(" ".join(pages[1:-1]))
    for k, step in enumerate(steps, 1):
        assert f"Step {k} of {len(steps)}" in body
        assert labels.inline_tensor(step.accumulated) in body
    end = flat(pages[-1])
    for line in ("x1.grad = 1.1", "x2.grad = 1.4", "x3.grad = 1"):
        assert line in end
    assert "6 3 2" in end  # the end-to-end Jacobian's first row


def test_worksheet_blanks_steps_and_keeps_the_answers_at_the_back(
    lesson,  # noqa: ANN001
    artifacts_dir: str,
) -> None:
    doc, steps = lesson
    out = Path(artifacts_dir) / "lesson_seed2_worksheet.pdf"
    write_lesson(doc, out, LessonOptions("pdf", worksheet=True))
    pages = [flat(p) for p in pdf_pages(out)]
    key_start = next(i for i, p in enumerate(pages) if p.startswith("Answer key"))
    questions, key = " ".join(pages[1:key_start]), " ".join(pages[key_start:])
    for k, step in enumerate(steps, 1):
        vjp_line, grad_line = answer_lines(step, k, doc.graph)
        assert vjp_line in key and grad_line in key
        assert vjp_line not in questions and grad_line not in questions
        assert f"Step {k} of {len(steps)}" in questions
    assert not re.search(r"vjp = upstream · J = [-\d\[]", questions)  # the boxes are empty


def chromium(*args: str, user_data: Path) -> subprocess.CompletedProcess[str]:
    assert Path(CHROMIUM).exists(), "the HTML player test needs Debian's chromium installed"
    return subprocess.run(
        [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself asked for (the browser's own traffic has no page origin)."""
    log = json.loads(netlog.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    urls = []
    for event in log["events"]:
        params = event.get("params", {})
        if event["type"] != start or "url" not in params:
            continue  # the job's end event carries no request
        if params.get("initiator") != "not an origin" and not params["url"].startswith("file:"):
            urls.append(params["url"])
    return urls


def screenshot(url: str, folder: Path, name: str) -> tuple[bytes, list[str]]:
    shot, netlog = folder / f"{name}.png", folder / f"{name}.json"
    done = chromium(
        f"--screenshot={shot}",
        "--window-size=1280,800",
        f"--log-net-log={netlog}",
        url,
        user_data=folder / f"profile-{name}",
    )
    assert shot.exists(), done.stderr
    return shot.read_bytes(), page_requests(netlog)


class Browser:
    """Headless chromium on one page, driven over DevTools on a pipe (it reads fd 3 and
    writes fd 4, messages end in NUL): real mouse and key events, screenshots."""

    def __init__(self, url: str, profile: Path) -> None:
        to_chrome, from_chrome = os.pipe(), os.pipe()

        def wire() -> None:
            os.dup2(to_chrome[0], 3)
            os.dup2(from_chrome[1], 4)

        self.proc = subprocess.Popen(
            [
                CHROMIUM,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={profile}",
                "--remote-debugging-pipe",
                "--window-size=1280,800",
                url,
            ],
            pass_fds=(3, 4, to_chrome[0], from_chrome[1]),
            preexec_fn=wire,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome[0])
        os.close(from_chrome[1])
        self.out, self.inp = os.fdopen(to_chrome[1], "wb"), os.fdopen(from_chrome[0], "rb")
        self.sent, self.buffer, self.session = 0, b"", None
        page = next(t for t in self.call("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.call("Target.attachToTarget", targetId=page["targetId"], flatten=True)[
            "sessionId"
        ]
        for _ in range(200):
            state = self.call("Runtime.evaluate", expression="document.readyState")
            if state["result"]["value"] == "complete":
                break
            time.sleep(0.05)

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        self.sent += 1
        message = {"id": self.sent, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        self.out.write(json.dumps(message).encode() + b"\0")
        self.out.flush()
        while True:
            while b"\0" not in self.buffer:
                chunk = self.inp.read1(65536)
                assert chunk, "chromium closed the DevTools pipe"
                self.buffer += chunk
            raw, _, self.buffer = self.buffer.partition(b"\0")
            reply = json.loads(raw)
            if reply.get("id") == self.sent:
                assert "error" not in reply, reply
                return reply["result"]

    def click(self, x: int, y: int) -> None:
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)

    def key(self, name: str, code: int) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call(
                "Input.dispatchKeyEvent", type=kind, key=name, code=name, windowsVirtualKeyCode=code
            )

    def picture(self) -> bytes:
        return base64.b64decode(self.call("Page.captureScreenshot")["data"])

    def settled(self, unlike: bytes = b"") -> bytes:
        """The picture once it stops changing (and differs from ``unlike``), within 10 s."""
        last = self.picture()
        for _ in range(50):
            time.sleep(0.2)
            now = self.picture()
            if now == last and now != unlike:
                return now
            last = now
        return last

    def value(self, expression: str) -> Any:  # noqa: ANN401 - whatever the page's script returns
        """What ``expression`` evaluates to in the page (DevTools runs it whatever the
        page's CSP allows)."""
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"][
            "value"
        ]

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def test_html_player_in_a_real_browser(lesson, artifacts_dir: str, tmp_path: Path) -> None:  # noqa: ANN001
    doc, steps = lesson
    out = Path(artifacts_dir) / "lesson_seed2.html"
    write_lesson(doc, out, LessonOptions("html"))
    page = out.read_text(encoding="utf-8")
    assert "<script src" not in page and "http://" not in page.split("<main>")[0]
    assert page.count("<svg") == len(steps) + 1  # one inline picture per step, k = 0..n
    assert f'<link rel="icon" href="{icon_data_uri()}">' in page.split("</head>")[0]

    step3, requests3 = screenshot(f"{out.as_uri()}#step=3", tmp_path, "step3")
    step5, requests5 = screenshot(f"{out.as_uri()}#step=5", tmp_path, "step5")
    assert step3 != step5
    assert requests3 == [] and requests5 == []
    shutil.copy(tmp_path / "step3.png", Path(artifacts_dir) / "lesson_seed2_html_step3.png")

    dom = chromium("--dump-dom", f"{out.as_uri()}#step=5", user_data=tmp_path / "dom").stdout
    shown = re.search(r'<section class="slide frame on"[^>]*data-step="(\d+)"', dom)
    assert shown is not None and shown.group(1) == "5"
    assert "Step 5 of 15" in dom  # the write-up is text, not a picture


def test_network_check_catches_a_page_that_loads_something(tmp_path: Path) -> None:
    page = tmp_path / "remote.html"
    page.write_text('<html><body><img src="http://127.0.0.1:9/x.png"></body></html>')
    _, requests = screenshot(page.as_uri(), tmp_path, "control")
    assert requests == ["http://127.0.0.1:9/x.png"]


def _text_sizes(page: pypdf.PageObject) -> list[tuple[str, float]]:
    """Every piece of text on ``page`` with its size on paper in points."""
    found: list[tuple[str, float]] = []

    def visit(text: str, cm: list, tm: list, font: object, size: float) -> None:  # noqa: ARG001
        if text.strip():
            scale = (abs(cm[0] * cm[3] - cm[1] * cm[2]) * abs(tm[0] * tm[3] - tm[1] * tm[2])) ** 0.5
            found.append((text, size * scale))

    page.extract_text(visitor_text=visit)
    return found


def test_worksheet_states_no_answer_and_prints_at_10_pt_or_more(lesson, tmp_path: Path) -> None:  # noqa: ANN001
    """Rehearsal fixes 2 and 4: the title page printed the example's notes, which state
    x1.grad = 1.1, x2.grad = 1.4, x3.grad = 1.0; the questions' subscripts printed at
    about 6 pt. Every question page's text, subscripts included, is at least 10 pt."""
    doc, steps = lesson
    out = tmp_path / "worksheet.pdf"
    write_lesson(doc, out, LessonOptions("pdf", worksheet=True))
    reader = pypdf.PdfReader(out)
    texts = [flat(p.extract_text()) for p in reader.pages]
    key_start = next(i for i, p in enumerate(texts) if p.startswith("Answer key"))
    assert not re.search(r"1\.1|1\.4|\.grad", texts[0])  # the title page: no final gradient
    assert "x1 = 1" in texts[0]  # the givens stay
    sizes = [s for page in reader.pages[:key_start] for _, s in _text_sizes(page)]
    assert sizes and min(sizes) >= 10.0, sorted(sizes)[:5]


def test_worksheet_of_a_collapsed_group(lesson, tmp_path: Path) -> None:  # noqa: ANN001
    """Rehearsal fix 11: a collapsed group's step crashed the worksheet (GroupStep has
    no consumer); it is asked as one question and answered in the key."""
    from engine.groups import Group
    from gui.export.render import load_document

    doc = load_document(SEED2)
    doc.set_groups([Group("g1", ["x1x2", "y1", "x1_plus_x2", "y2", "x2x3", "y3"], "the sums")])
    out = tmp_path / "group_worksheet.pdf"
    write_lesson(doc, out, LessonOptions("pdf", worksheet=True))
    texts = [flat(p) for p in pdf_pages(out)]
    key_start = next(i for i, p in enumerate(texts) if p.startswith("Answer key"))
    questions, key = " ".join(texts[1:key_start]), texts[key_start]
    assert "Step 4 of 4: the sums as one step" in questions
    assert "Step 4 (the sums): vjp = [1.1, 1.4, 1]" in key
    assert "[1.1, 1.4, 1]" not in questions


def test_worksheet_pages_render_to_png_for_a_look(lesson, artifacts_dir: str) -> None:  # noqa: ANN001
    """The worksheet as it prints: poppler's pdftoppm (Debian's poppler-utils, installed
    by .ci/run) renders its first question page to a PNG in the artifacts folder, and the
    page holds ink (text and the canvas picture), not an empty sheet."""
    doc, _steps = lesson
    out = Path(artifacts_dir) / "lesson_seed2_worksheet.pdf"
    write_lesson(doc, out, LessonOptions("pdf", worksheet=True))
    stem = Path(artifacts_dir) / "worksheet_page"
    subprocess.run(
        ["pdftoppm", "-png", "-r", "60", "-f", "2", "-l", "2", "-singlefile", str(out), str(stem)],
        check=True,
        capture_output=True,
        timeout=60,
    )
    with Image.open(f"{stem}.png") as im:
        grey = np.asarray(im.convert("L"))
    assert grey.shape[0] > grey.shape[1]  # a portrait page
    assert (grey < 128).mean() > 0.005  # dark pixels: text and the picture are there


#: Shows each slide in turn and measures it: how far the page reaches past the window's
#: right edge (CSS pixels), how far the write-up column or card scrolls inside itself, and
#: each row that scrolls inside its own box: whether it says so (a shadow of a radial
#: gradient at its edge) and whether the box lets it scroll (``overflow-x: auto``).
MEASURE = """(function(){
var slides=[].slice.call(document.querySelectorAll('.slide')), out=[];
slides.forEach(function(s){
  slides.forEach(function(t){t.classList.toggle('on',t===s);});
  var cols=[].slice.call(s.querySelectorAll('.text,.card'));
  var rows=[].slice.call(s.querySelectorAll('.text table,.card table')).filter(function(t){
    return t.scrollWidth>t.clientWidth+1;});
  out.push({page:document.scrollingElement.scrollWidth-window.innerWidth,
    column:Math.max.apply(null,cols.map(function(c){return c.scrollWidth-c.clientWidth;})),
    rows:rows.map(function(t){var st=getComputedStyle(t);
      return {overflow:st.overflowX,cue:st.backgroundImage.indexOf('radial-gradient')>=0};})});
});
return {width:window.innerWidth,slides:out};
})()"""


@pytest.mark.parametrize("width", [1024, 600, 400])
def test_html_player_never_scrolls_sideways_in_a_narrow_window(
    lesson, width: int, tmp_path: Path  # noqa: ANN001
) -> None:
    """A student's laptop (1024 px), a half-screen window (600 px) and a phone (400 px):
    the page re-fits (the write-up under the picture, the player bar wrapping, prose
    wrapping) instead of scrolling sideways; the status line had widened the page 35 px
    past a 600-px window, and on a phone the write-up column scrolled sideways as a whole
    (a matrix cut at its edge, with nothing saying more lay past it). Now only a row too
    wide for the column scrolls, inside its own box, with a shadow at the edge that hides
    more. The window is DevTools' (headless chromium's own is never narrower than 500)."""
    doc, steps = lesson
    out = tmp_path / "lesson.html"
    write_lesson(doc, out, LessonOptions("html"))
    slides = out.read_text(encoding="utf-8").count('<section class="slide ')
    assert slides == len(steps) + 3  # title, forward done, each step, end card
    browser = Browser(out.as_uri(), tmp_path / "profile")
    try:
        browser.call("Emulation.setDeviceMetricsOverride", width=width, height=800,
                     deviceScaleFactor=1, mobile=False)
        for _ in range(200):  # the page (2 MB of inline pictures) parsed to its end
            if browser.value("document.readyState==='complete' && "
                             "document.querySelectorAll('.slide').length") == slides:
                break
            time.sleep(0.05)
        found = browser.value(MEASURE)
    finally:
        browser.close()
    assert found["width"] == width
    measured = found["slides"]
    assert len(measured) == slides
    assert max(m["page"] for m in measured) <= 0, measured
    assert max(m["column"] for m in measured) <= 0, measured
    rows = [r for m in measured for r in m["rows"]]
    assert all(r == {"overflow": "auto", "cue": True} for r in rows), rows
    if width == 400:
        assert rows, "the end card's vᵀJ row is wider than a phone: it should scroll alone"
