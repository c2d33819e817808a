"""``main.py export --all --train N`` (issue 30): the handout's last page is the update
with its numbers and the loss over N steps; other formats and graphs without a train
block are one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pypdf
import pytest

from engine.examples import EXAMPLES_DIR
from gui.export.cli import main as export_main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = export_main([str(a) for a in argv])
    return code, capsys.readouterr().err


def test_handout_ends_with_the_update(qapp, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "fit.pdf"
    code, err = run([EXAMPLES_DIR / "fit_line.bpgraph", "--all", "--train", "200",
                     "--out", out], capsys)
    assert code == 0, err
    pages = [" ".join(p.extract_text().split()) for p in pypdf.PdfReader(out).pages]
    last = pages[-1]
    assert last.startswith("After the backward pass, the update (sgd)")
    assert "w ← 0 − 0.1 · (−8.08) = 0.808" in last and "b ← 0 − 0.1 · (−6.08) = 0.608" in last
    assert "After 200 steps: loss = 0.0144 (target 0.02)" in last
    assert not any("the update" in p for p in pages[:-1])


@pytest.mark.parametrize(
    ("file", "extra", "message"),
    [
        ("seed1_square_sum", ["--out", "x.pdf"], "--train needs a graph with a train block"),
        ("fit_line", ["--out", "x.gif"], "--train is written into a .pdf handout only"),
        ("fit_line", ["--out", "x.pdf", "--train", "0"], "--train must be a number of steps"),
    ],
)
def test_train_refusals(qapp, tmp_path: Path, capsys, file: str, extra: list[str],  # noqa: ANN001
                        message: str) -> None:
    args = [EXAMPLES_DIR / f"{file}.bpgraph", "--all", "--train", "5", *extra]
    args = [str(tmp_path / a) if str(a).startswith("x.") else a for a in args]
    code, err = run(args, capsys)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())
