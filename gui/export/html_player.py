"""A self-contained web player: one ``.html`` file a teacher can post on a course page.

Everything is inline (no network, no external scripts or fonts): each frame is the
canvas as inline SVG (QSvgGenerator, the canvas's own painting), the chain-rule
write-up beside it is real HTML text (the same write-up the panel shows), and a
few lines of script step through the slides: buttons, the arrow / Page / Home /
End keys, a scrubber, Space to play. ``#step=K`` in the address opens backward
step K (0: forward done) and follows the player as it moves. The page re-fits a
narrower window (a laptop's, a phone's) instead of scrolling sideways: see
:data:`STACK_PX` and :data:`NARROW_PX`.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from pathlib import Path
from string import Template

from engine import app_signature

from ..desktop import ICON_FILE
from ..model import colours, labels
from ..model.gradient_flow_view import FlowDocument, final_view, flow_html, flow_svg
from ..model.lesson import ShotKind
from ..model.timeline import Timeline
from ..model.train_view import update_html
from .animation import Progress
from .atomic import atomic_file
from .frame_sheet import FrameSheet, svg_document
from .options import View
from .render import UPDATE_STATUS, LessonRenderer

#: Points of the write-up text (the page scales with the browser's zoom).
TEXT_PT = 12.0
#: The write-up's column (CSS pixels, inside its padding): an exported 1280x720 frame's,
#: at that frame's text size; each step is fitted to it as the frame's panel is (a wider
#: step had pushed the picture off the page); anything wider still scrolls, never cut.
TEXT_PX = 466
#: A card's text column (CSS pixels): a 1280-pixel-wide page's, less its paddings and some
#: slack; the end card is fitted to it (wider content scrolls, never cut).
CARD_PX = 1100
#: A window at most this wide (CSS pixels: a 1024-pixel laptop's) stacks the write-up
#: under the picture, full width: beside it, the picture had shrunk to half the window
#: (the column keeps the width it was fitted to), and narrower still pushed the page
#: sideways.
STACK_PX = 1100
#: A window at most this wide (a phone's, a half-screen window's) keeps its margins small,
#: and its player bar wraps: the status line goes on its own line instead of widening the
#: page. Prose wraps; a row wider than the column (a matrix, a tensor, an equation)
#: scrolls inside its own box (:data:`SCROLL_CUE_ALPHA`), never the column or the page.
NARROW_PX = 700
#: The shadow at a row's edge while more of it lies past that edge: a matrix or tensor
#: row wider than a phone's column scrolls inside its own box (the prose around it wraps),
#: and a phone shows no scroll bar until touched. The shadow rides the box (``scroll``)
#: and a cover of paper rides the content (``local``), so it shows only on the side that
#: holds more. How opaque the theme's shadow is there:
SCROLL_CUE_ALPHA = 0.35
#: The page puts the write-up beside the picture as text: its pictures are the canvas.
PLAYER_VIEW = View.CANVAS
#: The loss curve's slide in the player's status line.
LOSS_STATUS = "the loss per training step"
#: The gradient-flow slide's (a captured trace's last slide).
FLOW_STATUS = "gradient flow: each parameter's mean |gradient|"



def content_security_policy(script: str) -> str:
    """The page may load nothing and go nowhere: only its own inline style runs, and of
    scripts only the player's (by its hash: no inline handler such as ``onerror``, no
    other ``<script>``), no form is sent and no link followed (``navigate-to`` where a
    browser knows it)."""
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{digest}'; "
        "img-src data:; form-action 'none'; base-uri 'none'; navigate-to 'none'"
    )

STYLE = Template("""
body{margin:0;font-family:'DejaVu Sans',Verdana,sans-serif;color:$text;background:$page}
header{padding:8px 14px;background:$header;font-weight:bold}
main{display:flex;gap:12px;padding:10px;align-items:flex-start}
.slide{display:none;width:100%}
.slide.on{display:flex;gap:12px}
.picture{flex:1;min-width:0;background:$paper;border:1px solid $rule}
.picture svg{width:100%;height:auto;display:block}
.text{flex:0 0 auto;width:${text_px}px;overflow-x:auto;overflow-wrap:anywhere;
background:$paper;border:1px solid $rule;padding:8px}
.card{flex:1;min-width:0;overflow-x:auto;overflow-wrap:anywhere;background:$paper;
border:1px solid $rule;padding:24px 40px}
.text table:not(td table),.card table:not(td table){display:block;max-width:100%;
overflow-x:auto;background:
linear-gradient(to right,$paper 30%,transparent) left/24px 100% no-repeat local,
linear-gradient(to left,$paper 30%,transparent) right/24px 100% no-repeat local,
radial-gradient(farthest-side at 0 50%,$cue,transparent) left/10px 100% no-repeat scroll,
radial-gradient(farthest-side at 100% 50%,$cue,transparent) right/10px 100% no-repeat scroll}
.card svg{width:100%;height:auto;display:block}
nav{display:flex;gap:8px;align-items:center;padding:6px 14px}
nav input[type=range]{flex:1}
nav button{font-size:16px;min-width:44px}
#status{min-width:220px}
@media (max-width:${stack_px}px){
.slide.on{flex-direction:column}
.text{width:auto}
}
@media (max-width:${narrow_px}px){
main{padding:6px}
.card{padding:12px 14px}
nav{flex-wrap:wrap;padding:6px}
nav button{min-width:0}
#status{min-width:0;flex-basis:100%}
}
""").substitute(
    text=colours.TEXT,
    page=colours.PAGE,
    header=colours.HEADER,
    paper=colours.PAPER,
    rule=colours.RULE,
    cue=f"{colours.SHADOW}{round(SCROLL_CUE_ALPHA * 255):02x}",  # #rrggbbaa
    text_px=TEXT_PX,
    stack_px=STACK_PX,
    narrow_px=NARROW_PX,
)

SCRIPT = """
(function(){
  var slides=[].slice.call(document.querySelectorAll('.slide'));
  var scrub=document.getElementById('scrub'), status=document.getElementById('status');
  var at=0, timer=null;
  scrub.max=slides.length-1;
  function show(i){
    at=Math.max(0,Math.min(slides.length-1,i));
    slides.forEach(function(s,j){s.classList.toggle('on',j===at);});
    scrub.value=at;
    status.textContent=slides[at].getAttribute('data-status');
    var k=slides[at].getAttribute('data-step');
    if(k!==null){try{history.replaceState(null,'','#step='+k);}catch(e){}}
  }
  function fromHash(){
    var m=/step=(\\d+)/.exec(location.hash);
    if(!m){return false;}
    for(var j=0;j<slides.length;j++){
      if(slides[j].getAttribute('data-step')===m[1]){show(j);return true;}
    }
    return false;
  }
  function play(){
    if(timer){clearInterval(timer);timer=null;return;}
    timer=setInterval(function(){if(at>=slides.length-1){play();}else{show(at+1);}},HOLD);
  }
  document.getElementById('first').onclick=function(){show(0);};
  document.getElementById('prev').onclick=function(){show(at-1);};
  document.getElementById('next').onclick=function(){show(at+1);};
  document.getElementById('last').onclick=function(){show(slides.length-1);};
  document.getElementById('play').onclick=play;
  scrub.oninput=function(){show(parseInt(scrub.value,10));};
  document.addEventListener('keydown',function(e){
    var keys={ArrowRight:1,PageDown:1,ArrowLeft:-1,PageUp:-1};
    if(e.key in keys){show(at+keys[e.key]);e.preventDefault();}
    else if(e.key==='Home'){show(0);e.preventDefault();}
    else if(e.key==='End'){show(slides.length-1);e.preventDefault();}
    else if(e.key===' '){play();e.preventDefault();}
  });
  window.addEventListener('hashchange',fromHash);
  if(!fromHash()){show(0);}
})();
"""


def inline_svg(svg: bytes) -> str:
    """QSvgGenerator's document as an element to put inside HTML: no XML prologue, and
    sized by CSS (its viewBox keeps the aspect)."""
    text = svg.decode("utf-8")
    text = text[text.index("<svg") :]
    return re.sub(r'(<svg[^>]*?)\s(width|height)="[^"]*"', r"\1", text, count=2)


def icon_data_uri() -> str:
    """The app's icon as a ``data:`` URI: the page's favicon, loaded from the page itself
    (its CSP allows images only as ``data:``)."""
    return "data:image/svg+xml;base64," + base64.b64encode(ICON_FILE.read_bytes()).decode()


def _slide(kind: str, status: str, inner: str, step: int | None = None) -> str:
    data = f' data-step="{step}"' if step is not None else ""
    return (
        f'<section class="slide {kind}" data-status="{labels.esc(status, quote=True)}"{data}>'
        f"{inner}</section>\n"
    )


def write_player(renderer: LessonRenderer, out: Path, progress: Progress | None = None) -> None:
    """Write the renderer's lesson as one self-contained HTML page to ``out``."""
    sheet, doc = renderer.sheet, renderer.doc
    tl = sheet.player.timeline
    shots = [s for s in renderer.shots if s.held]  # a slide per held picture
    title = labels.esc(sheet.title, quote=True)
    hold_ms = max(400, int(renderer.options.timing.hold * 1000))
    script = f"var HOLD={json.dumps(hold_ms)};{SCRIPT}"
    with atomic_file(out) as tmp, open(tmp, "w", encoding="utf-8") as f:
        f.write(
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" '
            f'content="{content_security_policy(script)}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="generator" content="{html.escape(app_signature())}">'
            f'<link rel="icon" href="{icon_data_uri()}">'
            f"<title>{title}</title><style>{STYLE}</style></head><body>\n"
            f"<header>{title}</header>\n"
            '<nav><button id="first" title="First (Home)">«</button>'
            '<button id="prev" title="Back (Left)">‹ Back</button>'
            '<button id="play" title="Play / pause (Space)">Play</button>'
            '<button id="next" title="Next (Right)">Next ›</button>'
            '<button id="last" title="Last (End)">»</button>'
            '<input id="scrub" type="range" min="0" value="0" aria-label="Scrub">'
            '<span id="status"></span></nav>\n<main>\n'
        )
        for i, shot in enumerate(shots, 1):
            if shot.kind is ShotKind.FRAME:
                sheet.show_position(shot.position)
                step = tl.frame(shot.position).k if shot.position >= tl.forward_length else None
                inner = _picture_and_text(sheet, shot.position)
                f.write(_slide("frame", sheet.player.status_text(), inner, step))
            elif shot.kind is ShotKind.UPDATE:
                f.write(_update_slide(renderer))
            elif shot.kind is ShotKind.LOSS:
                picture = svg_document(renderer.size, sheet.title, LOSS_STATUS,
                                       lambda p: renderer.paint_whole_card(ShotKind.LOSS, p))
                inner = f'<div class="picture">{inline_svg(picture)}</div>'
                f.write(_slide("loss", LOSS_STATUS, inner))
            else:
                card = _body(renderer.card_html(shot.kind, TEXT_PT * 1.2, room=(CARD_PX, None)))
                status = "title" if shot.kind is ShotKind.TITLE else "backward done: vᵀJ"
                f.write(_slide("card-slide", status, f'<div class="card">{card}</div>'))
            if progress is not None:
                progress(i, len(shots))
        if doc.captured is not None:  # a captured model: where its gradient went
            f.write(_flow_slide(doc, tl))
        f.write(f"</main>\n<script>{script}</script>\n")
        f.write("</body></html>\n")


def _flow_slide(doc: FlowDocument, tl: Timeline) -> str:
    """The gradient-flow panel at the end of backward: its words over its chart (inline
    SVG, a tooltip per bar)."""
    view = final_view(doc, tl)
    chart = flow_svg(view, pt=TEXT_PT) if view.bars else ""
    inner = f'<div class="card">{_body(flow_html(view, TEXT_PT))}{chart}</div>'
    return _slide("flow", FLOW_STATUS, inner)


def _update_slide(renderer: LessonRenderer) -> str:
    """The first training step: the graph with each update on its box, beside the end
    of backward's write-up and the update rule with its numbers."""
    sheet = renderer.update_sheet()
    spec, state = sheet.doc.train, sheet.doc.train_state
    assert spec is not None and state is not None
    inner = _picture_and_text(sheet, sheet.player.timeline.end, update_html(spec, state))
    return _slide("update", UPDATE_STATUS.format(spec.optimizer), inner)


def _picture_and_text(sheet: FrameSheet, position: int, more: str = "") -> str:
    """The sheet's canvas as it stands beside the chain-rule write-up of ``position``
    (then ``more``)."""
    text = sheet.write_up(position, TEXT_PT, TEXT_PX, None)
    return (f'<div class="picture">{inline_svg(sheet.svg())}</div>'
            f'<div class="text">{_body(text)}{more}</div>')


def _body(rich_text: str) -> str:
    """The inside of a Qt rich-text document (its ``<body>`` element's content, kept with
    its style on a ``div``)."""
    m = re.search(r"<body([^>]*)>(.*)</body>", rich_text, re.S)
    if m is None:
        return rich_text
    return f"<div{m.group(1)}>{m.group(2)}</div>"
