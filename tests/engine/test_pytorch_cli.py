"""``main.py import`` (and later ``export-torch``): files in, files out, one-line refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.fileformat import load
from main import main


def test_import_writes_a_graph_file_that_loads(tmp_path: Path, capsys) -> None:
    snippet = tmp_path / "seed1.py"
    snippet.write_text(
        "import torch\nx = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)\n"
        "y = x ** 2 + 2\nz = torch.sum(y)\nz.backward()\nprint(x.grad)\n"
    )
    out = tmp_path / "seed1.bpgraph"
    assert main(["import", str(snippet), "--out", str(out)]) == 0
    gf = load(out)
    trace = backward(gf.graph, forward(gf.graph), gf.output, gf.gradient)
    np.testing.assert_array_equal(trace.grads["x"], [2.0, 4.0, 6.0])
    err = capsys.readouterr().err
    assert "warning:" in err and "line 6" in err


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("import torch\nfor i in range(2):\n    pass\n", "line 2, column 1: a for loop"),
        ("x = \xff", None),
    ],
)
def test_import_refusal_is_one_line_with_status_2(tmp_path: Path, capsys, text, words) -> None:
    snippet = tmp_path / "bad.py"
    if words is None:
        snippet.write_bytes(b"x = \xff\n")
        words = "not UTF-8"
    else:
        snippet.write_text(text)
    out = tmp_path / "bad.bpgraph"
    assert main(["import", str(snippet), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and words in err
    assert not out.exists()


def test_import_of_a_missing_file(tmp_path: Path, capsys) -> None:
    assert main(["import", str(tmp_path / "nope.py")]) == 2
    assert "no such file" in capsys.readouterr().err
