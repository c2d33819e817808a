"""``main.py run``: the table, the JSON, the steps, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from engine import cli
from engine.examples import EXAMPLES_DIR

ROOT = Path(__file__).resolve().parents[2]
SEED1 = EXAMPLES_DIR / "seed1_square_sum.bpgraph"
SEED2 = EXAMPLES_DIR / "seed2_stack_vjp.bpgraph"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def write(
    tmp_path: Path,
    nodes: list[dict[str, Any]],
    backward: dict[str, Any] | None = None,
    name: str = "g.bpgraph",
) -> Path:
    d: dict[str, Any] = {"format": "backprop-studio-graph", "version": 1, "nodes": nodes}
    if backward is not None:
        d["backward"] = backward
    p = tmp_path / name
    p.write_text(json.dumps(d), encoding="utf-8")
    return p


def strict_json(text: str) -> Any:
    """Parse as standard JSON: NaN/Infinity tokens are not allowed in our output."""
    return json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))


# --------------------------------------------------------------------------- text


def test_text_table_and_torch_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([SEED1], capsys)
    assert code == 0 and err == ""
    assert "x.grad = tensor([2., 4., 6.])" in out.splitlines()
    header = next(line for line in out.splitlines() if line.startswith("node"))
    for column in ("op", "shape", "value", "grad"):
        assert column in header
    row = next(line for line in out.splitlines() if line.startswith("x_sq "))
    assert "pow" in row and "(3,)" in row and "[1., 4., 9.]" in row  # 1., as PyTorch
    assert "z.backward()" in out


def test_text_seed2_scalars(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([SEED2], capsys)
    assert code == 0
    lines = out.splitlines()
    assert "x1.grad = tensor(1.1000)" in lines
    assert "x2.grad = tensor(1.4000)" in lines
    assert "x3.grad = tensor(1.)" in lines
    assert "y.backward(gradient=tensor([0.1000, 0.2000, 0.3000]))" in lines


def test_text_steps_are_numbered(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([SEED1, "--steps"], capsys)
    assert code == 0
    assert "  1. z -> y  (operand 0 of z = sum(y))" in out
    assert "  3. x_sq -> x  (operand 0 of x_sq = x ** two)" in out
    assert "jacobian     [[2., 0., 0.]," in out


def test_text_shows_requires_grad_false_and_accumulation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": 2.0},
            {"id": "w", "op": "input", "value": 3.0, "requires_grad": False},
            {"id": "a", "op": "mul", "inputs": ["x", "w"]},
            {"id": "b", "op": "mul", "inputs": ["x", "x"]},
            {"id": "y", "op": "add", "inputs": ["a", "b"]},
        ],
        {"output": "y"},
    )
    code, out, _ = run([p, "--steps"], capsys)
    assert code == 0
    assert "x.grad = tensor(7.)" in out
    assert "w.grad = None  (requires_grad=False)" in out
    assert "already there + vjp" in out  # x receives from a, then twice from b


# --------------------------------------------------------------------------- JSON


def test_json_shape_of_the_result(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([SEED1, "--json"], capsys)
    assert code == 0 and err == ""
    d = strict_json(out)
    assert set(d) == {"output", "gradient", "values", "grads"}
    assert d["output"] == "z" and d["gradient"] == 1.0
    assert d["values"]["x"] == [1.0, 2.0, 3.0] and d["values"]["z"] == 20.0
    assert d["grads"]["x"] == [2.0, 4.0, 6.0]
    assert d["grads"]["two"] is None  # a const: no gradient flows
    assert out.count("\n") == 1  # one JSON object, one line


def test_json_nulls_where_no_gradient_flows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": [1.0, 2.0]},
            {"id": "frozen", "op": "input", "value": [3.0, 4.0], "requires_grad": False},
            {"id": "unused", "op": "input", "value": 5.0},
            {"id": "c", "op": "const", "value": 2.0},
            {"id": "side", "op": "exp", "inputs": ["unused"]},
            {"id": "p", "op": "mul", "inputs": ["x", "frozen"]},
            {"id": "q", "op": "mul", "inputs": ["p", "c"]},
            {"id": "s", "op": "sum", "inputs": ["q"]},
        ],
        {"output": "s", "gradient": None},
    )
    code, out, _ = run([p, "--json"], capsys)
    assert code == 0
    g = strict_json(out)["grads"]
    assert g["x"] == [6.0, 8.0] and g["p"] == [2.0, 2.0]
    assert g["frozen"] is None and g["c"] is None
    assert g["unused"] is None and g["side"] is None  # not on a path to the output


def test_json_steps(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([SEED2, "--json", "--steps"], capsys)
    assert code == 0
    steps = strict_json(out)["steps"]
    keys = {"consumer", "operand", "operand_index", "upstream", "jacobian", "vjp", "accumulated"}
    assert all(set(s) == keys for s in steps)
    first = steps[0]
    assert (first["consumer"], first["operand"], first["operand_index"]) == ("y", "y1", 0)
    assert first["upstream"] == [0.1, 0.2, 0.3]
    assert first["jacobian"] == [[1.0], [0.0], [0.0]]
    assert first["vjp"] == pytest.approx(0.1)
    # One entry per edge that carries a gradient.
    assert len(steps) == 15


def test_json_jacobian_is_null_above_4096_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": [float(i) for i in range(100)]},
            {"id": "y", "op": "mul", "inputs": ["x", "x"]},
            {"id": "s", "op": "sum", "inputs": ["y"]},
        ],
        {"output": "s"},
    )
    code, out, _ = run([p, "--json", "--steps"], capsys)
    assert code == 0
    steps = {(s["consumer"], s["operand_index"]): s for s in strict_json(out)["steps"]}
    assert steps[("s", 0)]["jacobian"] is not None  # 1 x 100
    assert steps[("y", 0)]["jacobian"] is None  # 100 x 100 = 10,000 entries
    code, out, _ = run([p, "--steps"], capsys)
    assert "not printed: 10,000 entries" in out


def test_nan_and_inf_warn_but_still_print(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": [0.0, 1.0]},
            {"id": "l", "op": "log", "inputs": ["x"]},
            {"id": "d", "op": "div", "inputs": ["x", "x"]},
            {"id": "both", "op": "add", "inputs": ["l", "d"]},
            {"id": "s", "op": "sum", "inputs": ["both"]},
        ],
        {"output": "s"},
    )
    code, out, err = run([p, "--json"], capsys)
    assert code == 0
    assert err.count("\n") == 1 and err.startswith(f"warning: {p}: NaN or inf")
    d = strict_json(out)
    assert d["values"]["l"] == ["-Infinity", 0.0]
    assert d["values"]["d"][0] == "NaN"
    code, out, err = run([p], capsys)
    assert code == 0 and "warning" in err and "x.grad = tensor([nan, 1.])" in out


def test_numpy_warnings_stay_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": []},
            {"id": "m", "op": "mean", "inputs": ["x"]},
        ],
        {"output": "m"},
    )
    code, out, err = run([p, "--json"], capsys)
    assert code == 0 and err.count("\n") == 1 and err.startswith("warning:")
    assert strict_json(out)["values"]["m"] == "NaN"


def test_output_defaults_to_the_only_sink(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": 3.0},
            {"id": "y", "op": "mul", "inputs": ["x", "x"]},
        ],
    )
    code, out, _ = run([p, "--json"], capsys)
    assert code == 0 and strict_json(out)["grads"]["x"] == 6.0
    p = write(
        tmp_path,
        [
            {"id": "x", "op": "input", "value": 3.0},
            {"id": "y", "op": "exp", "inputs": ["x"]},
            {"id": "z", "op": "sin", "inputs": ["x"]},
        ],
    )
    code, _, err = run([p], capsys)
    assert code == 2 and "'y', 'z'" in err


# --------------------------------------------------------------------------- errors


BAD = [
    ("truncated", '{"format": "backprop-studio-graph", "version": 1, "nodes": [', "cut short"),
    ("not json", "nodes: []", "not valid JSON"),
    ("format", '{"format": "png", "version": 1, "nodes": []}', '"png"'),
    ("version", '{"format": "backprop-studio-graph", "version": 9, "nodes": []}', "version 9"),
    ("unknown op", [{"id": "y", "op": "frobnicate"}], "node 'y': unknown op 'frobnicate'"),
    ("operand", [{"id": "y", "op": "exp", "inputs": ["ghost"]}], "operand 'ghost' does not exist"),
    (
        "cycle",
        [{"id": "a", "op": "exp", "inputs": ["b"]}, {"id": "b", "op": "exp", "inputs": ["a"]}],
        "cycle through nodes 'a', 'b'",
    ),
    (
        "duplicate",
        [{"id": "x", "op": "input", "value": 1}, {"id": "x", "op": "input", "value": 2}],
        "node 'x': this id is used twice",
    ),
    (
        "arity",
        [{"id": "x", "op": "input", "value": 1}, {"id": "y", "op": "add", "inputs": ["x"]}],
        "node 'y': add needs 2 operands",
    ),
    (
        "shapes",
        [
            {"id": "x", "op": "input", "value": [1, 2]},
            {"id": "w", "op": "input", "value": [1, 2, 3]},
            {"id": "y", "op": "mul", "inputs": ["x", "w"]},
        ],
        "node 'y': cannot broadcast",
    ),
    ("ragged", [{"id": "x", "op": "input", "value": [[1, 2], [3]]}], "node 'x': value is a ragged"),
    ("non-numeric", [{"id": "x", "op": "input", "value": [1, "2"]}], "node 'x': value[1] must be"),
    (
        "no gradient",
        ([{"id": "x", "op": "input", "value": [1, 2]}], {"output": "x"}),
        "node 'x': grad can be implicitly created only for scalar outputs",
    ),
    (
        "gradient shape",
        ([{"id": "x", "op": "input", "value": [1, 2]}], {"output": "x", "gradient": [1, 2, 3]}),
        "node 'x': the gradient v has shape",
    ),
    (
        "huge",
        [
            {"id": "a", "op": "input", "value": [[1.0]] * 4000},
            {"id": "b", "op": "input", "value": [[1.0] * 4000]},
            {"id": "m", "op": "matmul", "inputs": ["a", "b"]},
        ],
        "16,000,000 elements",
    ),
]


@pytest.mark.parametrize(("content", "expected"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_is_exit_2_and_one_line(
    content: Any, expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if isinstance(content, str):
        p = tmp_path / "bad.bpgraph"
        p.write_text(content, encoding="utf-8")
    elif isinstance(content, tuple):
        p = write(tmp_path, *content)
    else:
        p = write(tmp_path, content)
    for flags in ([], ["--json"], ["--steps"]):
        code, out, err = run([p, *flags], capsys)
        assert code == 2 and out == ""
        assert err.endswith("\n") and err.count("\n") == 1, err
        assert err.startswith(f"error: {p}: ") and expected in err, err


def test_missing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([tmp_path / "nope.bpgraph"], capsys)
    assert code == 2 and out == "" and err == f"error: {tmp_path / 'nope.bpgraph'}: no such file\n"


def test_big_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "big.bpgraph"
    with open(p, "wb") as fh:
        fh.truncate(50 * 1024 * 1024 + 1)
    code, _, err = run([p], capsys)
    assert code == 2 and "50 MB" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv", [[], ["a", "b"], ["--frobnicate", "x"]])
def test_usage_errors_are_exit_2_one_line(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("main.py run: error")


def test_help_is_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--help"], capsys)
    assert code == 0 and out.startswith("usage: main.py run")


def test_through_main_py_in_a_subprocess(tmp_path: Path) -> None:
    """The real entry point: exit codes, and no traceback even for a bad file."""
    ok = subprocess.run(
        [sys.executable, "main.py", "run", str(SEED1), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ok.returncode == 0, ok.stderr
    assert strict_json(ok.stdout)["grads"]["x"] == [2.0, 4.0, 6.0]
    bad = tmp_path / "bad.bpgraph"
    bad.write_text("{", encoding="utf-8")
    res = subprocess.run(
        [sys.executable, "main.py", "run", str(bad)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr


# --------------------------------------------------------------------------- torch's repr


REPRS = [
    ([2.0, 4.0, 6.0], "tensor([2., 4., 6.])"),
    (1.1, "tensor(1.1000)"),
    (1.0, "tensor(1.)"),
    (0.0, "tensor(0.)"),
    (-0.5, "tensor(-0.5000)"),
    ([0.1, 0.2, 0.3], "tensor([0.1000, 0.2000, 0.3000])"),
    ([[1.5, 1.5], [1.5, 1.5]], "tensor([[1.5000, 1.5000],\n        [1.5000, 1.5000]])"),
    ([-1.0, 2.0], "tensor([-1.,  2.])"),
    ([1e-5, 1.0], "tensor([1.0000e-05, 1.0000e+00])"),
    ([float("nan"), 1.0, float("inf")], "tensor([nan, 1., inf])"),
    (float("nan"), "tensor(nan)"),
    ([], "tensor([])"),
    (np.zeros((3, 0)), "tensor([], size=(3, 0))"),
]


@pytest.mark.parametrize(("value", "expected"), REPRS)
def test_torch_repr_examples(value: Any, expected: str) -> None:
    assert cli.torch_repr(value) == expected


@pytest.fixture(scope="module")
def torch() -> Any:
    """PyTorch, the oracle for its own repr; skipped where it is not installed."""
    return pytest.importorskip("torch")


def _torch_repr(torch: Any, a: np.ndarray) -> str:
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)  # so torch prints no dtype suffix
    try:
        return repr(torch.tensor(a, dtype=torch.float64))
    finally:
        torch.set_default_dtype(old)


FLOATS = st.one_of(
    st.floats(-1e3, 1e3, allow_nan=False, width=64),
    st.integers(-50, 50).map(float),
    st.sampled_from([0.0, -0.0, 1e-6, 1e9, float("nan"), float("inf"), -float("inf"), 0.1]),
)


@settings(max_examples=150, deadline=None)
@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5), elements=FLOATS)
)
def test_torch_repr_matches_torch(torch: Any, a: np.ndarray) -> None:
    assert cli.torch_repr(a) == _torch_repr(torch, a)


@pytest.mark.parametrize("shape", [(2000,), (40, 50), (3, 400), (1001,), (7, 7, 30)])
def test_torch_repr_summarizes_like_torch(torch: Any, shape: tuple[int, ...]) -> None:
    a = np.arange(math.prod(shape), dtype=np.float64).reshape(shape) / 7.0
    assert cli.torch_repr(a) == _torch_repr(torch, a)


def test_table_prints_whole_numbers_and_signed_zero_as_pytorch() -> None:
    import torch

    from engine.cli import compact

    assert compact(np.array(-0.0)) == "-0." and repr(torch.tensor(-0.0)) == "tensor(-0.)"
    assert compact(np.array(0.0)) == "0." and compact(np.array([2.0, -0.5])) == "[2., -0.5]"
    assert compact(np.array(1.1)) == "1.1"
