"""Hostile graph files, by class, for the fuzz tests of run, export, File > Open and Paste.

Each is (name, text). The classes are issue 15's: wrong types at every key the GUI
or the engine reads, non-finite and absurd numbers everywhere a number is read,
huge arity, huge ids, deep nesting and lone surrogates, plus a few files at the
limits that must load. Deterministic, so a failure names its input.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

from engine.graph import MAX_NODES
from engine.layout_keys import MAX_COORD

WRONG = [None, True, "s", 0, -3, 1.5, [], {}, [1], ["a", "b"], [[1], 2], [None, None],
         {"a": 1}]
NONFINITE = ["NaN", "Infinity", "-Infinity", 1e400, -1e400, float("nan")]
DEPTHS = [49, 600, 20_000]


def base() -> dict[str, Any]:
    """A small graph using every kind of key: y = x * x, s = sum(y), v on s implicit."""
    return {
        "format": "backprop-studio-graph",
        "version": 1,
        "title": "t",
        "description": "d",
        "view": {"zoom": 1.0, "center": [10.0, 20.0]},
        "nodes": [
            {"id": "x", "op": "input", "value": [1.0, 2.0, 3.0], "requires_grad": True,
             "position": [0, 0]},
            {"id": "k", "op": "const", "value": 2.0, "position": [0, 100]},
            {"id": "y", "op": "mul", "inputs": ["x", "k"], "position": [200, 50]},
            {"id": "s", "op": "sum", "inputs": ["y"], "attrs": {"dim": None},
             "position": [400, 50]},
        ],
        "backward": {"output": "s", "gradient": None},
    }


#: Where a value can be put: (name, path of keys from the document root).
SLOTS: list[tuple[str, tuple[Any, ...]]] = [
    ("title", ("title",)),
    ("description", ("description",)),
    ("view", ("view",)),
    ("view.zoom", ("view", "zoom")),
    ("view.center", ("view", "center")),
    ("autosave", ("autosave",)),
    ("autosave.source", ("autosave", "source")),
    ("autosave.pid", ("autosave", "pid")),
    ("nodes", ("nodes",)),
    ("node", ("nodes", 0)),
    ("id", ("nodes", 0, "id")),
    ("op", ("nodes", 2, "op")),
    ("inputs", ("nodes", 2, "inputs")),
    ("operand", ("nodes", 2, "inputs", 0)),
    ("attrs", ("nodes", 3, "attrs")),
    ("attrs.dim", ("nodes", 3, "attrs", "dim")),
    ("attrs.keepdim", ("nodes", 3, "attrs", "keepdim")),
    ("value", ("nodes", 0, "value")),
    ("value element", ("nodes", 0, "value", 1)),
    ("const value", ("nodes", 1, "value")),
    ("requires_grad", ("nodes", 0, "requires_grad")),
    ("position", ("nodes", 0, "position")),
    ("position x", ("nodes", 0, "position", 0)),
    ("backward", ("backward",)),
    ("backward.output", ("backward", "output")),
    ("backward.gradient", ("backward", "gradient")),
]
NUMBER_SLOTS = ["view.zoom", "value element", "const value", "position x", "attrs.dim"]


def put(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    """A copy of ``doc`` with ``value`` at ``path`` (missing objects are created)."""
    doc = copy.deepcopy(doc)
    node: Any = doc
    for key in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(key, {})
        else:
            node = node[key]
    node[path[-1]] = value
    return doc


def dump(doc: Any) -> str:
    return deep(json.dumps(doc, allow_nan=True))


def nested(depth: int, leaf: Any = 1, key: str | None = None) -> str:
    """A marker that :func:`deep` replaces with ``leaf`` nested ``depth`` lists (or
    objects under ``key``) deep: too deep for ``json.dumps`` to write itself."""
    return f"@DEEP:{depth}:{json.dumps(leaf)}:{key or ''}@"


def deep(text: str) -> str:
    """``text`` with every :func:`nested` marker written out."""
    while "@DEEP:" in text:
        start = text.index('"@DEEP:')
        end = text.index('@"', start + 1) + 2
        depth, leaf, key = text[start + 7 : end - 2].split(":")
        n = int(depth)
        opener, closer = (f'{{"{key}": ', "}") if key else ("[", "]")
        text = text[:start] + opener * n + leaf + closer * n + text[end:]
    return text


def hostile_files() -> Iterator[tuple[str, str]]:
    """Every hostile input as (name, file text)."""
    slot = dict(SLOTS)
    for name, path in SLOTS:  # wrong types at every key
        for k, value in enumerate(WRONG):
            yield f"wrong type {k} at {name}", dump(put(base(), path, value))
    for name in NUMBER_SLOTS:  # non-finite and absurd numbers wherever a number is read
        for k, value in enumerate([*NONFINITE, 1e300, -1e300, 10**30]):
            yield f"number {k} at {name}", dump(put(base(), slot[name], value))
    for k, value in enumerate(NONFINITE):
        yield f"non-finite {k} in view.center", dump(put(base(), slot["view.center"], [value, 0]))
        yield f"non-finite {k} in position", dump(put(base(), slot["position"], [0, value]))
    for n in (3, 257, 100_000):  # huge arity
        doc = put(base(), ("nodes", 3, "op"), "stack")
        doc = put(doc, ("nodes", 3, "inputs"), ["y"] * n)
        doc["nodes"][3].pop("attrs")
        yield f"stack of {n}", dump(doc)
    yield "add of 3", dump(put(base(), slot["inputs"], ["x", "k", "x"]))
    for n in (201, 2**20):  # huge ids, also where they are quoted
        big = "q" * n
        yield f"id of {n}", dump(put(base(), slot["id"], big))
        yield f"operand of {n}", dump(put(base(), slot["operand"], big))
        yield f"output of {n}", dump(put(base(), slot["backward.output"], big))
        yield f"op of {n}", dump(put(base(), slot["op"], big))
    for depth in DEPTHS:  # deep nesting, in places read and not read
        yield f"unknown key {depth} deep", dump(put(base(), ("notes",), nested(depth)))
        yield f"node key {depth} deep", dump(put(base(), ("nodes", 0, "label"), nested(depth)))
        yield f"value {depth} deep", dump(put(base(), slot["value"], nested(depth, 1.0)))
        yield f"attrs {depth} deep", dump(put(base(), slot["attrs.dim"], nested(depth, 0)))
        yield f"objects {depth} deep", dump(put(base(), ("view", "x"), nested(depth, 1, "k")))
    for name in ("title", "description", "id", "operand", "backward.output", "op",
                 "autosave.source", "view.zoom"):  # lone surrogates
        text = dump(put(base(), slot[name], "SURROGATE"))
        yield f"surrogate at {name}", text.replace('"SURROGATE"', '"a\\ud800b"')
    yield "surrogate key", dump(base()).replace('"requires_grad"', '"\\udfff"', 1)
    chain = base()  # past the node limit
    chain["nodes"] = [{"id": "n0", "op": "input", "value": 1.0}] + [
        {"id": f"n{i}", "op": "neg", "inputs": [f"n{i - 1}"]} for i in range(1, MAX_NODES + 1)
    ]
    chain["backward"] = {"output": f"n{MAX_NODES}"}
    yield "one node past the limit", dump(chain)
    yield "huge empty shape", dump(put(put(put(base(), slot["op"], "reshape"), slot["inputs"],
                                           ["x"]), ("nodes", 2, "attrs"),
                                       {"shape": [4294967297, 0]}))


def loadable_files() -> Iterator[tuple[str, str]]:
    """Files at or near the limits that must load, run and export."""
    yield "base", dump(base())
    doc = put(base(), ("nodes", 0, "position"), [-MAX_COORD, MAX_COORD])
    yield "positions at the limit", dump(doc)
    yield "zoom 1e-9", dump(put(base(), ("view", "zoom"), 1e-9))
    yield "unknown key 40 deep", dump(put(base(), ("notes",), nested(40)))
    yield "no view", dump({k: v for k, v in base().items() if k != "view"})


def window_state(win: Any) -> dict[str, Any]:
    """What a refused load must not change in a MainWindow: file, title, undo history,
    the graph, the layout and the view."""
    doc = win.doc
    return {
        "path": doc.path,
        "title": win.windowTitle(),
        "modified": doc.modified,
        "undo": (doc.undo_stack.count(), doc.undo_stack.index()),
        "text": doc.undo_stack.undoText(),
        "nodes": {n: (v.op, list(v.inputs)) for n, v in doc.graph.nodes.items()},
        "positions": dict(doc.positions),
        "transform": win.canvas.transform(),
    }


__all__ = ["base", "hostile_files", "loadable_files", "put", "window_state"]
