"""A captured trace in a real Jupyter kernel: the cell's last line draws the HTML player
(a sandboxed ``iframe srcdoc``), ``trace.show()`` displays the same inline, and the
output, opened in headless chromium, renders, asks the network for nothing and steps
with real key presses and clicks (DevTools over a pipe: no port, no extra package)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from test_export_documents import Browser, screenshot

from support import torch

pytestmark = pytest.mark.skipif(torch is None, reason="torch is not installed")
ROOT = Path(__file__).resolve().parents[2]

CELLS = [
    f"import sys; sys.path.insert(0, {str(ROOT)!r})  # this worktree's package",
    """import torch, backprop_studio as bps
model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh(), torch.nn.Linear(2, 1))
with bps.tracking(model):
    loss = model(torch.ones(1, 2)).sum()
trace = bps.capture(loss, names=model)
trace""",
    "shown = trace.show()\nshown is None",
]


#: The player's "Next ›" button in a 1280x800 window (its toolbar's layout is fixed).
NEXT = (227, 60)


def html_output(cell: nbformat.NotebookNode, kind: str) -> str:
    found = [o["data"]["text/html"] for o in cell.outputs if o["output_type"] == kind]
    assert len(found) == 1, cell.outputs
    return found[0]


def test_a_trace_draws_itself_in_a_notebook(
    tmp_path: Path, artifacts_dir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")  # the kernel inherits it
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
    NotebookClient(nb, timeout=120, kernel_name="python3").execute(cwd=str(tmp_path))

    cell = html_output(nb.cells[1], "execute_result")
    shown = html_output(nb.cells[2], "display_data")
    assert shown == cell
    assert nb.cells[2].outputs[-1]["data"]["text/plain"] == "True"  # no app was started
    m = re.fullmatch(r'<iframe sandbox="allow-scripts" [^>]*srcdoc="([^"]*)"></iframe>', cell)
    assert m is not None, cell[:300]
    page = html.unescape(m.group(1))
    assert page.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in page
    assert "0 · Linear" in page  # modules collapsed, titled by path and class

    out = tmp_path / "cell.html"
    out.write_text(f"<!DOCTYPE html><html><body>{cell}</body></html>", encoding="utf-8")
    picture, requests = screenshot(out.as_uri(), tmp_path, "cell")
    assert requests == []
    blank = tmp_path / "blank.html"
    blank.write_text("<!DOCTYPE html><html><body></body></html>", encoding="utf-8")
    assert picture != screenshot(blank.as_uri(), tmp_path, "blank")[0]

    browser = Browser(out.as_uri(), tmp_path / "profile-steps")
    try:
        first = browser.settled()
        browser.click(*NEXT)  # the player's own buttons, in its frame
        browser.click(*NEXT)
        step2 = browser.settled(unlike=first)
        browser.key("ArrowRight", 39)  # the focus is in the frame now: its keys step too
        step3 = browser.settled(unlike=step2)
    finally:
        browser.close()
    assert first != step2, "the Next button did not step"
    assert step3 != step2, "the right arrow key did not step"
    (Path(artifacts_dir) / "notebook_cell_step2.png").write_bytes(step2)
    shutil.copy(tmp_path / "cell.png", Path(artifacts_dir) / "notebook_cell.png")
