"""User text is data wherever it becomes markup (issue 25, items 1 and 3).

A graph file whose every string field (node ids, the output's id that becomes the
chain rule's objective, title, description, group titles) holds markup-and-script
is exported as the HTML player and opened in headless Chromium: no script of the
file's runs (nothing marks the DOM) and the page asks for nothing and goes nowhere
(Chromium's net log). The Qt chain-rule text shows the markup as text, and an SVG
frame with control characters in its title is well-formed XML.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from test_export_documents import chromium, page_requests

from engine.errors import BIDI_CONTROLS
from gui.export.options import LessonOptions
from gui.export.render import load_document
from gui.export.writers import write_lesson
from gui.model import labels
from gui.model.chain_rule import chain_rule_html

#: Each payload, if it ran or rendered, would mark the DOM or ask 127.0.0.1:9.
CORPUS = [
    "<img src=x onerror=\"document.body.setAttribute('data-pwned','img');"
    "location='http://127.0.0.1:9/img'\">",
    '<meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/refresh">',
    "<script>document.body.setAttribute('data-pwned','script')</script>",
    "<svg onload=\"location='http://127.0.0.1:9/svg'\"></svg>",
    '"><a id=pwn href="http://127.0.0.1:9/a">x.grad = 999 (INJECTED)</a>',
    "<style>@import 'http://127.0.0.1:9/css';</style>",
    '</section><iframe src="http://127.0.0.1:9/frame"></iframe>',
]


def hostile_file(folder: Path) -> Path:
    """A scalar output seeded with v = 1 (its id is the objective), every string hostile."""
    x, w, out = CORPUS[0], CORPUS[2], CORPUS[1]
    doc = {
        "format": "backprop-studio-graph",
        "version": 1,
        "minor_version": 1,
        "title": CORPUS[3],
        "description": CORPUS[4] + CORPUS[5],
        "nodes": [
            {"id": x, "op": "input", "value": [1.0, 2.0], "requires_grad": True},
            {"id": w, "op": "input", "value": [3.0, 4.0], "requires_grad": True},
            {"id": CORPUS[6], "op": "mul", "inputs": [x, w]},
            {"id": out, "op": "sum", "inputs": [CORPUS[6]]},
        ],
        "groups": [{"id": "g", "members": [CORPUS[6]], "title": CORPUS[4]}],
        "backward": {"output": out},
    }
    path = folder / "hostile.bpgraph"
    path.write_text(json.dumps(doc))
    return path


def test_no_script_runs_and_nothing_is_requested_in_the_exported_player(
    qapp,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    doc = load_document(hostile_file(tmp_path))
    assert doc.results.trace is not None
    out = tmp_path / "lesson.html"
    write_lesson(doc, out, LessonOptions("html"))
    page = out.read_text(encoding="utf-8")
    assert "'unsafe-inline'; img-src" not in page and "script-src 'sha256-" in page
    for payload in CORPUS:
        assert payload not in page
    netlog = tmp_path / "net.json"
    urls = []
    for step in ("1", "2", "3"):
        dom = chromium(
            "--dump-dom",
            f"--log-net-log={netlog}",
            "--virtual-time-budget=3000",
            f"{out.as_uri()}#step={step}",
            user_data=tmp_path / f"profile{step}",
        ).stdout
        assert not re.search(r"<body[^>]*data-pwned", dom)  # no script of the file ran
        assert 'id="pwn"' not in dom and "<iframe" not in dom and "<img src" not in dom
        assert "Step 1 of" in dom or step != "1"  # the page did render
        urls += page_requests(netlog)
    assert urls == []


def test_the_control_payload_is_caught_when_it_is_not_escaped(tmp_path: Path) -> None:
    page = tmp_path / "raw.html"
    page.write_text(f"<html><body>{CORPUS[0]}</body></html>")
    netlog = tmp_path / "net.json"
    dom = chromium(
        "--dump-dom",
        f"--log-net-log={netlog}",
        "--virtual-time-budget=3000",
        page.as_uri(),
        user_data=tmp_path / "profile",
    ).stdout
    ran = re.search(r"<body[^>]*data-pwned", dom)
    assert ran or "http://127.0.0.1:9/img" in page_requests(netlog)


def test_the_objective_shows_as_text_in_the_chain_rule_html(qapp, tmp_path: Path) -> None:  # noqa: ANN001
    doc = load_document(hostile_file(tmp_path))
    from gui.model.timeline import Timeline

    tl = Timeline(doc.results)
    for position in (tl.forward_length, tl.position_of_step(1), tl.end):
        text = chain_rule_html(doc.graph, tl, tl.frame(position), lambda: None, 12.0)
        for payload in CORPUS:
            assert payload not in text
        assert "<meta" not in text and "<img" not in text and "<script" not in text


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=30))
def test_any_output_id_is_escaped_wherever_it_is_the_objective(node: str) -> None:
    import numpy as np

    objective = labels.objective_name(node, np.ones(1))
    html_text = labels.start_html(node, np.ones(1), objective, 3)
    # strip our own markup: what is left of the id must be its escaped text
    assert "<" not in re.sub(r"</?[a-z]+[^<>]*>", "", html_text.replace(labels.esc(node), ""))


def test_an_svg_frame_with_control_characters_in_the_title_is_well_formed(
    qapp,
    tmp_path: Path,  # noqa: ANN001
) -> None:
    from gui.export.frame_sheet import save_frame
    from gui.export.options import View
    from gui.model.timeline import Timeline

    path = tmp_path / "g.bpgraph"
    doc = json.loads(Path("assets/examples/seed1_square_sum.bpgraph").read_text())
    doc["title"] = "bell\x07 esc\x1b[2J nul-free\x01\x0b\x0c <b>&"
    hostile = json.dumps("x\x1b]0;owned\x07")
    doc["nodes"] = json.loads(json.dumps(doc["nodes"]).replace('"x"', hostile))
    path.write_text(json.dumps(doc))
    gdoc = load_document(path)
    out = tmp_path / "frame.svg"
    save_frame(gdoc, Timeline(gdoc.results).end, out, (1280, 720), View.SLIDE)
    ET.parse(out)  # raises on a character XML forbids


def test_run_escapes_control_characters_in_titles_and_ids(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    from engine.cli import main as run_main

    doc = json.loads(Path("assets/examples/seed1_square_sum.bpgraph").read_text())
    doc["title"] = "\x1b]0;owned\x07\x1b[2J\x1b[8m hidden"
    doc["nodes"] = json.loads(json.dumps(doc["nodes"]).replace('"x"', json.dumps("x\x1b[2J")))
    path = tmp_path / "t\x1b[2J.bpgraph"
    path.write_text(json.dumps(doc))
    assert run_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out
    assert "\\x1b]0;owned\\x07" in out and "x\\x1b[2J.grad = " in out


#: Every bidirectional control, as a title might hold them (the issue's "Trojan Source").
BIDI = "".join(sorted(BIDI_CONTROLS))


def test_bidi_controls_in_titles_are_written_out_wherever_they_are_shown(
    qapp, tmp_path: Path, capsys  # noqa: ANN001
) -> None:
    """Issue 24: a title, description or group title holding U+202E and its kin reordered
    the write-up, the canvas, the web page around it. Each shows the control written out
    (‹U+202E›) in the chain-rule text, a collapsed group's canvas caption, the status line,
    the HTML player (its text and inline pictures), an exported frame's header, an SVG frame
    and the PDF's title; the terminal and the exported PyTorch script write its backslash
    escape. None holds a raw control."""
    from pypdf import PdfReader

    from engine.cli import main as run_main
    from engine.groups import GroupStep
    from engine.pytorch_cli import export_main as torch_main
    from gui.canvas.group_frames import group_caption
    from gui.export.frame_sheet import frame_sheet, save_frame
    from gui.export.options import View
    from gui.model.timeline import timeline_of

    doc = json.loads(Path("assets/examples/seed2_stack_vjp.bpgraph").read_text())
    doc["title"] = f"Seed 2 {BIDI} title"
    doc["description"] = f"evil {BIDI} description"
    doc["groups"] = [{"id": "g", "members": ["x1x2", "y1"], "title": f"the {BIDI} products",
                      "collapsed": True}]
    path = tmp_path / "bidi.bpgraph"
    path.write_text(json.dumps(doc))
    gdoc = load_document(path)
    tl = timeline_of(gdoc.graph, gdoc.results, gdoc.groups)
    group_step = tl.forward_length + 1 + next(
        i for i, step in enumerate(tl.steps) if isinstance(step, GroupStep))
    shown = {
        "caption": group_caption(gdoc, gdoc.groups[0], interactive=False),
        "status": tl.frame(group_step).status,
        "write-up": chain_rule_html(gdoc.graph, tl, tl.frame(group_step), lambda: None, 12.0),
        "esc": labels.esc(doc["title"]),
    }
    out = tmp_path / "lesson.html"
    write_lesson(gdoc, out, LessonOptions("html"))
    shown["page"] = out.read_text(encoding="utf-8")
    save_frame(gdoc, group_step, tmp_path / "frame.svg", (1280, 720), View.SLIDE)
    shown["svg"] = (tmp_path / "frame.svg").read_text(encoding="utf-8")
    with frame_sheet(gdoc) as sheet:
        sheet.show_position(group_step)
        shown["frame header"] = sheet.header.text()
    write_lesson(gdoc, tmp_path / "lesson.pdf", LessonOptions("pdf"))
    shown["pdf title"] = str(PdfReader(tmp_path / "lesson.pdf").metadata.title)
    for where, text in shown.items():
        assert BIDI_CONTROLS.isdisjoint(text), where
        assert not re.search(r"&#(x0*(202[a-e]|206[6-9]|200[ef]|61c)|8234|8238);", text, re.I)
        assert "‹U+202E›" in text, where
    assert "Seed 2 ‹U+061C›‹U+200E›‹U+200F›‹U+202A›" in shown["page"]

    assert run_main([str(path), "--steps"]) == 0
    assert torch_main([str(path), "--out", str(tmp_path / "g.py")]) == 0
    for where, text in (("run", capsys.readouterr().out),
                        ("script", (tmp_path / "g.py").read_text(encoding="utf-8"))):
        assert BIDI_CONTROLS.isdisjoint(text), where
        assert "\\u202e" in text, where
