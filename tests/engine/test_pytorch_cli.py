"""``main.py import`` (and later ``export-torch``): files in, files out, one-line refusals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.examples import EXAMPLES_DIR
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


def test_export_torch_writes_a_script_that_imports_back(tmp_path: Path, capsys) -> None:
    script = tmp_path / "seed2.py"
    src = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"
    assert main(["export-torch", str(src), "--out", str(script), "--retain-grads"]) == 0
    text = script.read_text()
    assert "y.retain_grad()" in text and 'print("x1.grad =", x1.grad)' in text
    assert "y.backward(gradient=torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64))" in text
    back = tmp_path / "back.bpgraph"
    assert main(["import", str(script), "--out", str(back)]) == 0
    assert list(load(back).graph.nodes) == list(load(src).graph.nodes)
    assert main(["export-torch", str(src)]) == 0
    # the title follows the two fixed lines Python reads an encoding cookie from
    assert capsys.readouterr().out.splitlines()[2].startswith("# Seed 2")


def test_export_torch_of_a_bad_file_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.bpgraph"
    bad.write_text("{not json")
    assert main(["export-torch", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {bad}: ")
