"""PyTorch code -> graph with torch blocked: seeds, stored torch fixtures, refusals, hostile code.

Every test here runs with ``sys.modules["torch"] = None``, so an accidental
``import torch`` anywhere on the import path fails loudly. The expected numbers
of the non-seed fixtures were computed once with PyTorch (float64) and stored.
"""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from engine.autodiff import backward, forward
from engine.examples import EXAMPLES_DIR
from engine.fileformat import load
from engine.pytorch_import import MAX_NODES, CodeError, Imported, import_code


@pytest.fixture(autouse=True)
def no_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)


def grads(im: Imported) -> dict[str, np.ndarray]:
    fwd = forward(im.graph)
    trace = backward(im.graph, fwd, im.output, im.gradient)
    return {leaf: trace.grads[leaf] for leaf in trace.leaves}


def refused(source: str) -> CodeError:
    with pytest.raises(CodeError) as info:
        import_code(source)
    message = str(info.value)
    assert "\n" not in message
    return info.value


SEED1 = """\
import torch
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x ** 2 + 2
z = torch.sum(y)
z.backward()
print(x.grad)
"""

# Seed 2's code exactly as the tutorial prints it.
SEED2 = """\
import torch
x1 = torch.tensor(1, requires_grad=True, dtype=torch.float)
x2 = torch.tensor(2, requires_grad=True, dtype=torch.float)
x3 = torch.tensor(3, requires_grad=True, dtype=torch.float)
x = torch.tensor([x1, x2, x3])
y = torch.randn(3)
y[0] = x1 * x2 * x3
y[1] = x1 + x2 + x3
y[2] = x1 + x2 * x3
y.backward(torch.tensor([0.1, 0.2, 0.3], dtype=torch.float))
print(x1.grad, x2.grad, x3.grad)
"""


def test_seed1_code_gives_x_grad_2_4_6() -> None:
    im = import_code(SEED1)
    assert im.output == "z" and im.gradient is None
    assert list(im.graph.nodes) == ["x", "two", "x_sq", "y", "z"]
    np.testing.assert_array_equal(grads(im)["x"], [2.0, 4.0, 6.0])
    assert any("line 6" in w for w in im.warnings)  # print after backward


def test_seed2_code_gives_the_vjp_with_the_examples_15_steps_and_no_random_node() -> None:
    im = import_code(SEED2)
    g = grads(im)
    np.testing.assert_allclose([g["x1"], g["x2"], g["x3"]], [1.1, 1.4, 1.0], rtol=1e-12)
    fwd = forward(im.graph)
    ours = backward(im.graph, fwd, im.output, im.gradient)
    example = load(EXAMPLES_DIR / "seed2_stack_vjp.bpgraph")
    theirs = backward(example.graph, forward(example.graph), example.output, example.gradient)
    assert len(ours.steps) == len(theirs.steps) == 15
    for a, b in zip(ours.steps, theirs.steps, strict=True):
        assert a.operand_index == b.operand_index
        assert im.graph.nodes[a.consumer].op == example.graph.nodes[b.consumer].op
        np.testing.assert_allclose(a.vjp, b.vjp, rtol=1e-12)
    ops = sorted(n.op for n in im.graph.nodes.values())
    assert ops == sorted(n.op for n in example.graph.nodes.values())
    assert all(not n.op == "const" for n in im.graph.nodes.values())  # randn(3) is gone
    assert im.graph.nodes["y"].inputs == ["y0", "y1", "y2"]
    assert not any("random" in w for w in im.warnings)
    assert any("line 5" in w and "copy without history" in w for w in im.warnings)


def test_seed4_code_with_ones_v() -> None:
    im = import_code(
        "import torch\n"
        "x1=torch.tensor(1, requires_grad=True, dtype = torch.float)\n"
        "x2=torch.tensor(2, requires_grad=True, dtype = torch.float)\n"
        "x3=torch.tensor(3, requires_grad=True, dtype = torch.float)\n"
        "y=torch.randn(3) # produce a random vector for vector function define\n"
        "y[0]=x1**2+2*x2+x3 # define each vector function\n"
        "y[1]=x1+x2**3+x3**2\n"
        "y[2]=2*x1+x2**2+x3**3\n"
        "y.backward(torch.ones(3))\n"
    )
    g = grads(im)
    assert [float(g[k]) for k in ("x1", "x2", "x3")] == [5.0, 18.0, 34.0]


def test_sigmoid_of_affine_with_v_matches_stored_torch_numbers() -> None:
    im = import_code(
        "import torch\n"
        "w = torch.tensor([[0.5, -0.3, 0.8], [0.1, 0.2, -0.4]], requires_grad=True)\n"
        "x = torch.tensor([1.0, 2.0, -1.0], requires_grad=True)\n"
        "b = torch.tensor([0.1, -0.2], requires_grad=True)\n"
        "y = torch.sigmoid(w @ x + b)\n"
        "y.backward(torch.tensor([1.0, 0.5]))\n"
    )
    g = grads(im)
    # torch 2.13, float64
    expected = {
        "w": [
            [0.21390969652029443, 0.42781939304058886, -0.21390969652029443],
            [0.11085643664655452, 0.22171287329310904, -0.11085643664655452],
        ],
        "x": [0.11804049192480266, -0.04200162162677742, 0.12678518255761373],
        "b": [0.21390969652029443, 0.11085643664655452],
    }
    for leaf, value in expected.items():
        np.testing.assert_allclose(g[leaf], value, rtol=1e-12)


def test_mean_of_square_matches_stored_torch_numbers() -> None:
    im = import_code(
        "import torch\n"
        "x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)\n"
        "out = (x ** 2).mean()\n"
        "out.backward()\n"
    )
    np.testing.assert_allclose(grads(im)["x"], [[0.5, 1.0], [1.5, 2.0]], rtol=1e-12)


def test_broadcasting_sum_matches_stored_torch_numbers() -> None:
    im = import_code(
        "import torch\n"
        "a = torch.tensor([[1.0], [2.0], [3.0]], requires_grad=True)\n"
        "c = torch.tensor([10.0, 20.0], requires_grad=True)\n"
        "s = (a * c).sum()\n"
        "s.backward()\n"
    )
    g = grads(im)
    np.testing.assert_allclose(g["a"], [[30.0], [30.0], [30.0]], rtol=1e-12)
    np.testing.assert_allclose(g["c"], [6.0, 6.0], rtol=1e-12)


# --------------------------------------------------------------------------- naming and subset


def test_rebinding_gives_y_2_and_temporaries_avoid_assigned_names() -> None:
    im = import_code(
        "import torch\n"
        "x = torch.ones(3, requires_grad=True)\n"
        "y = x * 2\n"
        "y = y + 1\n"
        "x_times_two = y.sum()\n"
        "x_times_two.backward()\n"
    )
    assert list(im.graph.nodes) == ["x", "two", "y", "one", "y_2", "x_times_two"]
    assert im.graph.nodes["y_2"].inputs == ["y", "one"]


def test_factories_methods_indexing_and_requires_grad_spellings() -> None:
    im = import_code(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "from torch.autograd import Variable\n"
        "a = torch.zeros(2, 3)\n"
        "a.requires_grad_()\n"
        "b = torch.arange(6.0).view(2, 3)\n"
        "b.requires_grad = True\n"
        "c = Variable(torch.eye(3), requires_grad=True)\n"
        "d = torch.linspace(0, 1, 3)\n"
        "h = F.relu(a + b) @ c\n"
        "k = h[:, 1] + h[0].T.mean(dim=0, keepdim=True) * torch.full((2,), 0.5)\n"
        "m = torch.stack([k, k.exp()], dim=1).reshape(-1).sum() + d.sum()\n"
        "m.backward()\n"
    )
    nodes = im.graph.nodes
    assert nodes["a"].op == nodes["b"].op == nodes["c"].op == "input"
    assert nodes["d"].op == "const"
    selects = [n.attrs for n in nodes.values() if n.op == "select"]
    assert {"dim": 1, "index": 1} in selects and {"dim": 0, "index": 0} in selects
    g = grads(im)
    assert set(g) == {"a", "b", "c"}
    # b = arange(6).view(2, 3) has no history: a leaf holding its values
    np.testing.assert_array_equal(nodes["b"].value, [[0, 1, 2], [3, 4, 5]])


def test_composites_expand_with_a_note() -> None:
    im = import_code(
        "import torch\n"
        "import torch.nn.functional as F\n"
        "x = torch.tensor([[1.0, 2.0, 0.5]], requires_grad=True)\n"
        "W = torch.tensor([[0.1, 0.2, 0.3], [0.0, -0.1, 0.2]], requires_grad=True)\n"
        "z = F.linear(x, W, torch.tensor([0.5, -0.5]))\n"
        "loss = F.mse_loss(z, torch.tensor([[1.0, 0.0]]))\n"
        "loss.backward()\n"
    )
    assert any("linear" in n for n in im.notes)
    g = grads(im)
    # d/dW of mean((xWᵀ + b - t)²): 2/2 · (z - t)ᵀ x
    z = np.array([[1.0, 2.0, 0.5]]) @ np.array([[0.1, 0.2, 0.3], [0.0, -0.1, 0.2]]).T + [0.5, -0.5]
    np.testing.assert_allclose(g["W"], (z - [1.0, 0.0]).T @ [[1.0, 2.0, 0.5]], rtol=1e-12)


def test_main_guard_is_read_and_skipped_statements_warn() -> None:
    im = import_code(
        "import torch\n"
        "import matplotlib.pyplot as plt\n"
        'if __name__ == "__main__":\n'
        "    x = torch.ones(2, requires_grad=True)\n"
        "    print(x)\n"
        "    plt.plot([1, 2])\n"
        "    x.sum()\n"
        "    y = (x * x).sum()\n"
        "    y.backward()\n"
        "    x.grad.zero_()\n"
    )
    assert im.output == "y"
    lines = " ".join(im.warnings)
    for n in (5, 6, 7, 10):
        assert f"line {n}:" in lines


def test_random_factories_warn_that_their_numbers_are_seeded() -> None:
    im = import_code(
        "import torch\nw = torch.randn(2, 2, requires_grad=True)\n(w * w).sum().backward()\n"
    )
    assert any("line 2" in w and "random" in w for w in im.warnings)
    assert im.graph.nodes["w"].value.shape == (2, 2)


def test_no_backward_leaves_the_output_unset() -> None:
    im = import_code("import torch\nx = torch.ones(2)\n")
    assert im.output is None and "x" in im.graph.nodes


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("source", "line", "column", "words"),
    [
        ("import torch\nfor i in range(3):\n    pass\n", 2, 1, "for loop"),
        ("import torch\nx = 1\ndef f(x):\n    return x\n", 3, 1, "function definition"),
        ("class A:\n    pass\n", 1, 1, "class definition"),
        ("import torch\nwith torch.no_grad():\n    pass\n", 2, 1, "with block"),
        ("import torch\nx = torch.ones(3, requires_grad=True)\nx += 1\n", 3, 1, "in-place"),
        ("import torch\nx = torch.ones(3, requires_grad=True)\nx[0] = 2.0\n", 3, 1, "in-place"),
        ("import torch\nx = torch.ones(3, requires_grad=True)\nx.add_(1)\n", 3, 1, "in-place"),
        ("import torch\nx = torch.ones(3)\ny = x[1:]\n", 3, 7, "slices other than ':'"),
        ("import torch\nx = torch.ones(3)\ny = torch.cumsum(x, 0)\n", 3, 5, "op table"),
        (
            "import torch\na = torch.ones(3)\nb = torch.ones(2)\ny = a + b\n",
            4,
            5,
            "add: cannot broadcast shapes (3,) and (2,)",
        ),
        ("import torch\nif True:\n    x = 1\n", 2, 1, "if statement"),
        ("import torch\nx = y + 1\n", 2, 5, "name 'y' is not defined"),
        ("import torch\nx = torch.ones(3\n", 2, 15, "syntax error"),
        ("import torch\nys = [i for i in range(3)]\n", 2, 6, "list comprehension"),
        (
            "import torch\nx = torch.ones(3, requires_grad=True)\ny = x * 2\ny.backward()\n",
            4,
            1,
            "implicitly created only for scalar outputs",
        ),
        (
            "import torch\nx = torch.ones(3, requires_grad=True)\n(x * 2).backward("
            "torch.ones(2))\n",
            3,
            1,
            "the gradient v has shape (2,)",
        ),
        ("import torch\nx = torch.ones(3)\nx.sum().backward()\n", 3, 1, "does not require grad"),
        ("import torch\nx = torch.tensor([1, 2], requires_grad=True)\n", 2, 5, "floating"),
    ],
)
def test_each_refusal_class_names_its_line_and_column(
    source: str, line: int, column: int, words: str
) -> None:
    err = refused(source)
    assert (err.line, err.column) == (line, column), str(err)
    assert words in str(err)
    assert str(err).startswith(f"line {line}, column {column}: ")


# --------------------------------------------------------------------------- hostile code


def test_dunder_import_and_exec_are_refused_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    for source in (
        f"__import__('os').system('touch {marker}')\n",
        f"exec(\"open('{marker}', 'w')\")\n",
        f"import os\nos.system('touch {marker}')\n",
        f"import torch\nx = torch.ones(2)\ny = exec(\"open('{marker}', 'w')\")\n",
    ):
        err = refused(source)
        assert "outside the supported subset" in str(err)
    assert not marker.exists()


def test_twenty_thousand_chained_additions_are_refused_before_parsing() -> None:
    source = "import torch\nx = torch.ones(1)\ny = " + " + ".join(["x"] * 20_000) + "\n"
    err = refused(source)
    assert err.line == 3 and "operators in one statement" in str(err)


def test_a_null_byte_is_refused_with_its_place() -> None:
    err = refused("import torch\nx = 1\0\n")
    assert (err.line, err.column) == (2, 6)


def test_ten_billion_ones_are_refused_without_allocating() -> None:
    tracemalloc.start()
    try:
        err = refused("import torch\nx = torch.ones(10**10, requires_grad=True)\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "10,000,000,000 elements" in str(err) and err.line == 2
    assert peak < 5_000_000


def test_node_and_nesting_limits() -> None:
    lines = ["import torch", "x = torch.ones(1)"]
    lines += [f"x = x * {k % 7 + 1}" for k in range(MAX_NODES)]
    err = refused("\n".join(lines) + "\n")
    assert f"more than {MAX_NODES:,} nodes" in str(err)
    err = refused("x = " + "(" * 100 + "1" + ")" * 100 + "\n")
    assert "nested" in str(err) and err.line == 1


def test_the_generic_rule_reads_each_records_torch_args() -> None:
    """select's positional order is PyTorch's (dim, index), reshape takes ``*sizes`` and
    a reduction's dtype is ignored: the records say so, the walker reads them."""
    im = import_code(
        "import torch\n"
        "x = torch.ones(2, 3, requires_grad=True)\n"
        "a = torch.select(x, 1, 2)\n"
        "b = x.reshape(3, 2)\n"
        "c = x.sum(0, dtype=torch.float64)\n"
    )
    nodes = im.graph.nodes
    assert nodes["a"].attrs == {"dim": 1, "index": 2}
    assert nodes["b"].attrs == {"shape": [3, 2]}
    assert nodes["c"].attrs == {"dim": 0, "keepdim": False}
