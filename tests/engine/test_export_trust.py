"""Exported PyTorch scripts are data, not a way in (issue 25, item 2).

An id or title of any Unicode gives a script that compiles as UTF-8 bytes (so an
encoding cookie in a title would be honoured if it reached the first two lines),
holds no NUL, assigns only ASCII names (Python's NFKC folding cannot merge two
nodes or rebind ``torch``), imports nothing but torch and gives our gradients.
"""

from __future__ import annotations

import ast
import math
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_pytorch_export import assert_same_graph, check_against_torch

from engine.errors import BIDI_CONTROLS, GraphError
from engine.graph import Graph
from engine.pytorch_check import run_with_torch
from engine.pytorch_export import export_script, python_names
from engine.pytorch_import import import_code
from support import torch


def _square(a: str, b: str) -> Graph:
    g = Graph()
    g.add_node(a, "input", value=2.5)
    g.add_node(b, "input", value=2.0)
    g.add_node("p", "mul", [a, b])
    return g


def _compile_as_file(script: str) -> ast.Module:
    """Parse the script the way ``python g.py`` reads it: as bytes, cookie honoured."""
    data = script.encode("utf-8")
    assert b"\x00" not in data
    compile(data, "<exported>", "exec")
    return ast.parse(data)


def _imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "__import__":
            names.add("__import__")
    return names


def test_a_coding_cookie_in_the_title_stays_a_comment() -> None:
    g = _square("x", "y")
    title = "coding: utf-7\n+AF8-+AF8-import+AF8-+AF8-(+ACI-os+ACI-).system(+ACI-true+ACI-)"
    script = export_script(g, "p", None, title=title)
    lines = script.splitlines()
    assert lines[:2] == ["# -*- coding: utf-8 -*-", "# PyTorch script exported by Backprop Studio"]
    tree = _compile_as_file(script)
    assert _imports(tree) == {"torch"}
    assert not any(isinstance(n, ast.Attribute) and n.attr == "system" for n in ast.walk(tree))


def test_fullwidth_ids_are_not_folded_into_other_variables() -> None:
    g = Graph()
    g.add_node("x", "input", value=5.0)
    g.add_node("\uff58", "input", value=1.0)  # fullwidth x: NFKC folds it to x
    g.add_node("\uff54\uff4f\uff52\uff43\uff48", "mul", ["x", "\uff58"])  # fullwidth torch
    g.add_node("x\u00b2", "mul", ["\uff54\uff4f\uff52\uff43\uff48", "x"])
    names = python_names(g)
    assert all(n.isascii() and n.isidentifier() for n in names.values())
    assert len(set(names.values())) == len(names)
    script = export_script(g, "x\u00b2", None, retain_grads=True)
    _compile_as_file(script)
    assert_same_graph(g, import_code(script).graph)
    if torch is not None:
        check_against_torch(script, g, "x\u00b2", None)


def test_a_nul_and_a_line_separator_in_a_title_are_escaped() -> None:
    script = export_script(_square("x", "y"), "p", None, title="a\x00b\u2028import os\u202e")
    assert "\x00" not in script and "\u2028" not in script and "\u202e" not in script
    assert "# a\\x00b\n# import os\\u202e\n" in script
    assert _imports(_compile_as_file(script)) == {"torch"}


def test_a_nan_clamp_bound_is_written_as_float_nan() -> None:
    g = Graph()
    g.add_node("x", "input", value=[1.0, -2.0])
    g.add_node("c", "clamp", ["x"], attrs={"min": float("nan"), "max": float("inf")})
    script = export_script(g, None, None)
    assert 'min=float("nan"), max=float("inf")' in script
    back = import_code(script).graph.nodes["c"].attrs
    assert math.isnan(back["min"]) and back["max"] == math.inf


@pytest.mark.skipif(torch is None, reason="needs torch (the test extra)")
def test_check_with_torch_survives_a_node_named_json_and_a_torch_py_nearby(
    tmp_path, monkeypatch
) -> None:
    (tmp_path / "torch.py").write_text("raise SystemExit('the wrong torch was imported')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    g = _square("json", "y")
    grads = run_with_torch(g, "p", None)
    np.testing.assert_allclose(grads["json"], 2.0)
    np.testing.assert_allclose(grads["y"], 2.5)


def test_an_id_with_a_lone_surrogate_is_refused_like_the_loader_does() -> None:
    g = Graph()
    with pytest.raises(GraphError, match="lone surrogate"):
        g.add_node("x\ud800", "input", value=1.0)
    g.add_node("x", "input", value=1.0)
    with pytest.raises(GraphError, match="lone surrogate"):
        g.rename("x", "\udfff")
    assert list(g.nodes) == ["x"]


#: Any id a node may have (no lone surrogate, no bidirectional control: the loader refuses both).
_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters=BIDI_CONTROLS),
                min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ids=st.lists(_TEXT, min_size=3, max_size=3, unique=True), title=st.text(max_size=40))
def test_any_unicode_ids_and_title_give_a_safe_script_with_our_gradients(ids, title) -> None:
    a, b, out = ids
    g = Graph()
    g.add_node(a, "input", value=[1.5, -2.0])
    g.add_node(b, "input", value=[3.0, 0.5])
    g.add_node(out, "mul", [a, b])
    v = np.array([1.0, 2.0])
    script = export_script(g, out, v, retain_grads=True, title=title)
    tree = _compile_as_file(script)
    assert _imports(tree) == {"torch"}
    assigned = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) for t in n.targets}
    assert all(unicodedata.normalize("NFKC", n) == n and n.isascii() for n in assigned)
    assert len(assigned) == 3
    im = import_code(script)
    assert_same_graph(g, im.graph)
    if torch is not None:
        check_against_torch(script, g, out, v)
