"""Pasted code that would exhaust the stack or memory, or trip an op's own check, is a
``line L, column C`` refusal; and the spellings whose dims torch picks for itself
(``F.softmax(x)``, ``.T``, ``.t()``, ``.mT``, ``.transpose``, ``.permute``) import as torch
computes them (float64 torch as the oracle)."""

from __future__ import annotations

import dataclasses
import re
import warnings

import numpy as np
import pytest
import torch

import engine.pytorch_import.core as import_core
from engine.autodiff import backward, forward
from engine.pytorch_import import CodeError, import_code

PLACE = re.compile(r"^line \d+, column \d+: \S")


def refused(source: str) -> CodeError:
    with pytest.raises(CodeError) as info:
        import_code(source)
    assert PLACE.match(str(info.value)) and "\n" not in str(info.value)
    return info.value


def test_three_thousand_chained_calls_are_refused_at_their_place() -> None:
    error = refused("import torch\nx = torch.ones(2)\ny = x" + ".abs()" * 3000 + "\n")
    assert error.line == 3 and "calls, indexes and attributes" in error.detail


def test_three_thousand_unary_minuses_are_refused() -> None:
    error = refused("x = " + "-" * 3000 + "1.0\n")
    assert error.line == 1 and "operators" in error.detail


def test_doubling_a_list_is_refused_before_it_is_built() -> None:
    source = "import torch\na = [1.0]\n" + "a = a + a\n" * 34 + "x = torch.tensor(a)\n"
    error = refused(source)
    assert "list of" in error.detail and 3 <= error.line <= 36


def test_lists_of_shared_lists_are_bounded_by_what_they_hold_and_how_deep() -> None:
    error = refused("a = [1.0]\n" + "a = [a, a]\n" * 40)
    assert "nested more than" in error.detail or "list of" in error.detail


def test_an_id_comment_longer_than_an_id_may_be_is_refused_at_the_comment() -> None:
    source = f'import torch\nx = torch.ones(2)  # id: "{"n" * 300}"\n'
    error = refused(source)
    assert error.line == 2 and error.column > 1 and "200" in error.detail


def test_an_op_failing_its_own_check_is_a_refusal_not_a_value_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(xs: list[np.ndarray], attrs: dict) -> np.ndarray:
        raise ValueError("zero-size array to reduction operation")

    ops = dict(import_core.OPS)
    ops["exp"] = dataclasses.replace(ops["exp"], forward=broken)
    monkeypatch.setattr(import_core, "OPS", ops)
    error = refused("import torch\nx = torch.ones(2)\ny = torch.exp(x)\n")
    assert (error.line, error.column) == (3, 5) and error.detail.startswith("exp: zero-size")


def test_a_very_long_variable_name_still_makes_a_graph() -> None:
    name = "v" * 400
    im = import_code(f"import torch\n{name} = torch.ones(2, requires_grad=True)\n")
    assert len(im.graph.nodes) == 1


# ------------------------------------------------------------------ dims torch picks


def values_of(source: str) -> dict[str, np.ndarray]:
    im = import_code(source)
    return forward(im.graph).values


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (2, 1, 3, 2)])
@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_functional_softmax_without_a_dim_uses_torchs_legacy_dim(op: str, shape: tuple) -> None:
    x = np.random.default_rng(len(shape)).standard_normal(shape)
    source = (
        "import torch\nimport torch.nn.functional as F\n"
        f"x = torch.tensor({x.tolist()!r}, dtype=torch.float64, requires_grad=True)\n"
        f"y = F.{op}(x)\n"
    )
    im = import_code(source)
    with pytest.warns(UserWarning):
        want = getattr(torch.nn.functional, op)(torch.tensor(x))
    np.testing.assert_allclose(forward(im.graph).values["y"], want.numpy(), rtol=1e-13)
    dim = 0 if len(shape) in (0, 1, 3) else 1
    assert any(n.startswith("line 4:") and f"dim={dim}" in n for n in im.notes)


def test_softmax_method_without_a_dim_is_refused_as_torch_refuses_it() -> None:
    assert "needs a dim" in refused("import torch\nx = torch.ones(3)\ny = x.softmax()\n").detail


TRANSPOSES = {
    "x.T": lambda x: x.T,
    "x.mT": lambda x: x.mT,
    "x.transpose(0, 2)": lambda x: x.transpose(0, 2),
    "torch.transpose(x, -1, 1)": lambda x: torch.transpose(x, -1, 1),
    "x.permute(2, 0, 1)": lambda x: x.permute(2, 0, 1),
    "x.permute((1, 2, 0))": lambda x: x.permute((1, 2, 0)),
    "torch.permute(x, (0, 2, 1))": lambda x: torch.permute(x, (0, 2, 1)),
}


CASES = [(s, shape) for s in TRANSPOSES for shape in [(2, 3, 4), (2, 3, 4, 5), (3, 4)]]
CASES = [(s, shape) for s, shape in CASES if len(shape) == 3 or "permute" not in s]
CASES = [(s, shape) for s, shape in CASES if len(shape) > 2 or s in ("x.T", "x.mT")]


@pytest.mark.parametrize(("spelling", "shape"), CASES)
def test_transposes_and_permutes_import_as_torch_computes_them(spelling: str, shape: tuple) -> None:
    x = np.random.default_rng(7).standard_normal(shape)
    torch_x = torch.tensor(x, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # x.T on 3 or more dims: deprecated, still computed
        want = TRANSPOSES[spelling](torch_x)
    g = np.random.default_rng(8).standard_normal(tuple(want.shape))
    want.backward(torch.tensor(g))
    source = (
        "import torch\n"
        f"x = torch.tensor({x.tolist()!r}, dtype=torch.float64, requires_grad=True)\n"
        f"y = {spelling}\n"
        f"y.backward(torch.tensor({g.tolist()!r}, dtype=torch.float64))\n"
    )
    im = import_code(source)
    fwd = forward(im.graph)
    np.testing.assert_array_equal(fwd.values[im.output], want.detach().numpy())
    trace = backward(im.graph, fwd, im.output, im.gradient)
    np.testing.assert_array_equal(trace.grads["x"], torch_x.grad.numpy())


@pytest.mark.parametrize(
    "spelling",
    ["x.t()", "torch.t(x)", "x.permute(2, 0, 1)", "x.permute(0, 0, 1, 2)", "x.transpose()"],
)
def test_transposes_torch_refuses_are_refused(spelling: str) -> None:
    x = torch.ones(2, 3, 4, 5)
    with pytest.raises((RuntimeError, TypeError)):
        eval(spelling, {"x": x, "torch": torch})  # the test's own literal, not user code
    refused(f"import torch\nx = torch.ones(2, 3, 4, 5)\ny = {spelling}\n")


def test_a_vector_T_is_the_vector_itself() -> None:
    im = import_code("import torch\nx = torch.ones(3, requires_grad=True)\ny = x.T * 2\n")
    assert [n.op for n in im.graph.nodes.values()].count("transpose") == 0
