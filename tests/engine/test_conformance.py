"""The conformance table: every op against torch float64, and docs/conformance.md.

Per op, the cases compared with torch, by kind: an ordinary case's forward, VJP,
JVP and Jacobian; ties (maximum/minimum, max/min with and without dim, clamp at its
bounds, relu/abs at 0, where); empty tensors; NaN and ±inf; and inputs torch
refuses (we must refuse them too, and accept what it accepts). The test writes the
table, with the count that agree, and fails if any case disagrees.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine.ops import OPS, validate_attrs
from support import torch, torch_op

KINDS = ("forward", "VJP", "JVP", "Jacobian", "ties", "empty", "non-finite", "refusals")
TABLE = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"
INF, NAN = np.inf, np.nan
A = np.array


def _ordinary(op: str, rng: np.random.Generator) -> tuple[list[np.ndarray], dict[str, Any]]:
    """An ordinary case: values in (0.2, 0.8), inside every op's domain."""
    arity = OPS[op].arity or 2
    shapes = [(2, 3)] * arity
    attrs: dict[str, Any] = {}
    if op == "matmul":
        shapes = [(2, 3), (3, 2)]
    if op == "where":
        attrs = {"condition": [[True, False, True], [False, True, False]]}
    xs = [rng.uniform(0.2, 0.8, s) for s in shapes]
    if op == "cross_entropy":
        xs[1] = xs[1] / xs[1].sum(axis=1, keepdims=True)
    return xs, attrs


#: (op, kind, operands, attrs): the ties, empty tensors, non-finite values and refusals.
SPECIAL: list[tuple[str, str, list[Any], dict[str, Any]]] = [
    ("maximum", "ties", [A([1.0, 2.0, 5.0]), A([1.0, 3.0, 5.0])], {}),
    ("minimum", "ties", [A([1.0, 2.0, 5.0]), A([1.0, 3.0, 5.0])], {}),
    ("max", "ties", [A([[3.0, 1.0, 3.0], [2.0, 2.0, 0.0]])], {}),
    ("max", "ties", [A([[3.0, 1.0, 3.0], [2.0, 2.0, 0.0]])], {"dim": 1}),
    ("min", "ties", [A([[0.0, 1.0, 0.0], [2.0, 2.0, 5.0]])], {}),
    ("min", "ties", [A([[0.0, 1.0, 0.0], [2.0, 2.0, 5.0]])], {"dim": 1, "keepdim": True}),
    ("clamp", "ties", [A([-1.0, 0.0, 1.0, 2.0])], {"min": -1.0, "max": 1.0}),
    ("clamp", "ties", [A([0.5, 0.5])], {"min": 0.5, "max": 0.5}),
    ("relu", "ties", [A([-1.0, 0.0, 1.0])], {}),
    ("abs", "ties", [A([-1.0, 0.0, 1.0])], {}),
    ("where", "ties", [A([1.0, 2.0]), A([1.0, 3.0])], {"condition": [True, False]}),
    ("softplus", "non-finite", [A([-INF, INF, NAN, 30.0, -1.0])], {}),
    ("softplus", "non-finite", [A([INF, 0.6, 0.4])], {"beta": 2.0, "threshold": 1.0}),
    ("mean", "empty", [np.zeros((0, 3))], {}),
    ("mean", "empty", [np.zeros((0, 3))], {"dim": 0}),
    ("sum", "empty", [np.zeros((0, 3))], {}),
    ("mse_loss", "empty", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("softmax", "empty", [np.zeros((0, 3))], {"dim": 0}),
    ("softmax", "empty", [np.zeros((2, 0))], {"dim": 1}),
    ("log_softmax", "empty", [np.zeros((0, 3))], {"dim": 0}),
    ("cross_entropy", "empty", [np.zeros((2, 0)), np.zeros((2, 0))], {}),
    ("cross_entropy", "empty", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("logsumexp", "empty", [np.zeros((2, 0))], {"dim": 0}),
    ("add", "empty", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("logsumexp", "non-finite", [A(1000.0)], {"dim": 0}),
    ("logsumexp", "non-finite", [A(-1000.0)], {"dim": 0}),
    ("logsumexp", "non-finite", [A([INF, 1.0])], {"dim": 0}),
    ("logsumexp", "non-finite", [A([-INF, -INF])], {"dim": 0}),
    ("softmax", "non-finite", [A(INF)], {"dim": 0}),
    ("softmax", "non-finite", [A(-INF)], {"dim": 0}),
    ("softmax", "non-finite", [A(NAN)], {"dim": 0}),
    ("softmax", "non-finite", [A([INF, 1.0])], {"dim": 0}),
    ("log_softmax", "non-finite", [A(INF)], {"dim": 0}),
    ("exp", "non-finite", [A([INF, -INF, NAN])], {}),
    ("log", "non-finite", [A([0.0, INF])], {}),
    ("sqrt", "non-finite", [A([0.0, INF])], {}),
    ("relu", "non-finite", [A([NAN, -INF, INF])], {}),
    ("maximum", "non-finite", [A([NAN, 1.0]), A([1.0, NAN])], {}),
    ("cross_entropy", "non-finite", [A([[INF, 1.0]]), A([[0.5, 0.5]])], {}),
    ("cross_entropy", "non-finite", [A([[NAN, 1.0]]), A([[1.0, 0.0]])], {}),
    ("binary_cross_entropy", "refusals", [A([NAN]), A([0.5])], {}),
    ("binary_cross_entropy", "refusals", [A([0.5]), A([NAN])], {}),
    ("binary_cross_entropy", "refusals", [A([1.5]), A([0.5])], {}),
    ("binary_cross_entropy", "refusals", [A([0.0, 1.0]), A([0.0, 1.0])], {}),
    ("transpose", "refusals", [np.zeros((2, 3, 4))], {"dim0": 0, "dim1": 3}),
    ("matmul", "refusals", [np.zeros((2, 3)), np.zeros((2, 3))], {}),
    ("add", "refusals", [np.zeros((2, 3)), np.zeros((3, 2))], {}),
    ("select", "refusals", [np.zeros((2, 3))], {"index": 2, "dim": 0}),
    ("reshape", "refusals", [np.zeros((2, 3))], {"shape": [4, -1]}),
    ("cross_entropy", "refusals", [np.zeros(()), np.zeros(())], {}),
    ("transpose", "refusals", [np.arange(24.0).reshape(2, 3, 4)], {"dim0": -2, "dim1": -1}),
    ("transpose", "refusals", [np.arange(24.0).reshape(2, 3, 4)], {"dim0": 0, "dim1": 2}),
]


def _engine(op: str, xs: list[np.ndarray], attrs: dict[str, Any], v: Any):  # noqa: ANN202
    """(value, VJPs) from the op table, or the refusal."""
    rule = OPS[op]
    attrs = validate_attrs(op, attrs)
    rule.check([x.shape for x in xs], attrs)
    with np.errstate(all="ignore"):
        out = np.asarray(rule.forward(xs, attrs), dtype=np.float64)
        g = np.ones(out.shape) if v is None else v
        return out, [np.asarray(rule.vjp(i, g, xs, out, attrs)) for i in range(len(xs))]


def _torch(op: str, xs: list[np.ndarray], attrs: dict[str, Any], v: Any):  # noqa: ANN202
    ts = [torch.tensor(x, dtype=torch.float64, requires_grad=True) for x in xs]
    out = torch_op(op, ts, attrs)
    g = torch.ones_like(out) if v is None else torch.tensor(v, dtype=torch.float64)
    grads = torch.autograd.grad(out, ts, g, allow_unused=True)
    return out.detach().numpy(), [
        np.zeros(x.shape) if d is None else d.numpy() for d, x in zip(grads, xs, strict=True)
    ]


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return False
    return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))


def _outcome(fn, *args):  # noqa: ANN001, ANN202
    """The result, or the exception (an internal error where torch answers disagrees)."""
    try:
        return fn(*args), None
    except Exception as exc:  # noqa: BLE001
        return None, exc


def _agrees(op: str, xs: list[np.ndarray], attrs: dict[str, Any], part: str) -> bool:
    """Engine and torch agree on this case: both refuse, or both give these numbers."""
    ours, our_error = _outcome(_engine, op, xs, attrs, None)
    theirs, their_error = _outcome(_torch, op, xs, attrs, None)
    if our_error or their_error:
        return bool(our_error) and bool(their_error)
    if part == "forward":
        return _same(ours[0], theirs[0])
    return _same(ours[0], theirs[0]) and all(
        _same(a, b) for a, b in zip(ours[1], theirs[1], strict=True)
    )


def _jvp_agrees(op: str, xs: list[np.ndarray], attrs: dict[str, Any]) -> bool:
    rng = np.random.default_rng(1)
    tangents = [rng.normal(size=x.shape) for x in xs]
    attrs = validate_attrs(op, attrs)
    out = OPS[op].forward(xs, attrs)
    ours = OPS[op].jvp(tangents, xs, out, attrs)
    t64 = [torch.tensor(x, dtype=torch.float64) for x in xs]
    _, theirs = torch.func.jvp(
        lambda *a: torch_op(op, list(a), attrs),
        tuple(t64),
        tuple(torch.tensor(t, dtype=torch.float64) for t in tangents),
    )
    return _same(ours, theirs.numpy())


def _jacobian_agrees(op: str, xs: list[np.ndarray], attrs: dict[str, Any]) -> bool:
    attrs = validate_attrs(op, attrs)
    out = OPS[op].forward(xs, attrs)
    t64 = tuple(torch.tensor(x, dtype=torch.float64) for x in xs)
    theirs = torch.autograd.functional.jacobian(lambda *a: torch_op(op, list(a), attrs), t64)
    for i, x in enumerate(xs):
        rows = []
        for r in range(out.size):
            basis = np.zeros(out.size)
            basis[r] = 1.0
            rows.append(np.ravel(OPS[op].vjp(i, basis.reshape(out.shape), xs, out, attrs)))
        if not _same(np.array(rows), theirs[i].reshape(out.size, x.size).numpy()):
            return False
    return True


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_every_op_conforms_to_torch_and_the_table_is_written():
    rng = np.random.default_rng(31)
    counts: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    failures = []

    def record(op: str, kind: str, ok: bool, what: Any) -> None:
        counts[op][kind][0] += ok
        counts[op][kind][1] += 1
        if not ok:
            failures.append(f"{op} {kind}: {what}")

    for op, rule in OPS.items():
        if rule.is_leaf:
            continue
        xs, attrs = _ordinary(op, rng)
        record(op, "forward", _agrees(op, xs, attrs, "forward"), attrs)
        record(op, "VJP", _agrees(op, xs, attrs, "VJP"), attrs)
        record(op, "JVP", _jvp_agrees(op, xs, attrs), attrs)
        record(op, "Jacobian", _jacobian_agrees(op, xs, attrs), attrs)
    for op, kind, xs, attrs in SPECIAL:
        operands = [np.asarray(x, dtype=np.float64) for x in xs]
        record(op, kind, _agrees(op, operands, attrs, kind), (xs, attrs))

    lines = [
        "# Conformance with PyTorch",
        "",
        "Written by `tests/engine/test_conformance.py` (do not edit): every op of the table",
        "against torch float64, cases that agree / cases compared. Ordinary cases check the",
        "forward value, the VJP (`v` of ones), the JVP (a random tangent) and the dense",
        "Jacobian; ties, empty tensors and non-finite values check the value and the VJP;",
        "refusals check that we refuse exactly what torch refuses.",
        "",
        "| op | " + " | ".join(KINDS) + " | agree |",
        "|---|" + "---|" * (len(KINDS) + 1),
    ]
    total = [0, 0]
    for op in (n for n, r in OPS.items() if not r.is_leaf):
        cells, row = [], [0, 0]
        for kind in KINDS:
            ok, n = counts[op].get(kind, [0, 0])
            cells.append(f"{ok}/{n}" if n else "")
            row = [row[0] + ok, row[1] + n]
        total = [total[0] + row[0], total[1] + row[1]]
        lines.append(f"| `{op}` | " + " | ".join(cells) + f" | {row[0]}/{row[1]} |")
    lines += ["", f"All ops: {total[0]} of {total[1]} cases agree with torch.", ""]
    TABLE.write_text("\n".join(lines), encoding="utf-8")
    assert not failures, failures


def test_the_default_transpose_on_3_dims_is_refused_with_the_attrs_to_write():
    with pytest.raises(ValueError, match=r"dim0=-2, dim1=-1 .*x\.mT.*dim0=0, dim1=2"):
        _engine("transpose", [np.zeros((2, 3, 4))], {}, None)
    out, _ = _engine("transpose", [np.zeros((2, 3))], {}, None)  # a matrix's .T stays
    assert out.shape == (3, 2)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
def test_a_boolean_v_in_a_file_is_read_as_torch_casts_it():
    import json

    from engine.autodiff import backward, forward
    from engine.examples import EXAMPLES_DIR
    from engine.fileformat import loads

    doc = json.loads((EXAMPLES_DIR / "seed2_stack_vjp.bpgraph").read_text(encoding="utf-8"))
    doc["backward"]["gradient"] = [True, False, True]
    gf = loads(json.dumps(doc))
    trace = backward(gf.graph, forward(gf.graph), gf.output, gf.gradient)
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    y = torch.stack([x * 2, x + 1, x**2])[:, 0]  # any output of three elements
    y.backward(gradient=torch.tensor([True, False, True]))  # torch accepts a boolean v
    assert gf.gradient.tolist() == [1.0, 0.0, 1.0]
    floats = backward(gf.graph, forward(gf.graph), gf.output, [1.0, 0.0, 1.0])
    for leaf, grad in floats.leaf_grads.items():
        np.testing.assert_array_equal(trace.leaf_grads[leaf], grad)
