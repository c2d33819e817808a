"""The ``.bpgraph`` file format, version 1: load, validate, save (atomically).

A graph file is JSON; ``docs/graph-format.md`` describes it and
``graph-format.schema.json`` (beside this module) is its JSON Schema. Loading
validates the *whole* file before anything uses it, in three passes, so a broken
file gives one readable line (naming the node) instead of a traceback deep in
the GUI or the engine:

1. JSON syntax, then the ``format``/``version`` header (so a wrong file says so
   first, rather than listing everything else that is wrong with it);
2. the JSON Schema, with a small built-in validator (the subset of draft 2020-12
   the schema uses) so the engine keeps numpy + networkx as its only
   dependencies, and so errors can be phrased around node ids;
3. what a schema cannot say: unique ids, operands that exist, no cycles,
   rectangular nested lists, operand counts, shapes that fit each op, the
   backward gradient's shape, and the size limits.

Every problem is a :class:`FileFormatError`, whose ``str`` is one line. Passes 1 and
2 and the size limits live in :mod:`engine.file_checks`, tensors (read and written) in
:mod:`engine.file_tensors`; this module builds the graph and saves it.

Non-finite numbers are not JSON; this format writes them as the strings
``"NaN"``, ``"Infinity"`` and ``"-Infinity"`` and reads those back (as well as
the bare ``NaN``/``Infinity`` tokens Python's ``json`` module emits).
"""

from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .atomic_write import is_read_only, write_atomic
from .autodiff import check_gradient
from .errors import GraphError, quoted, shape_text
from .file_checks import (
    FORMAT,
    MAX_DEPTH,
    VERSION,
    FileFormatError,
    check_header,
    check_limits,
    check_schema,
    check_text_and_depth,
    decode_number_attrs,
    parse_json,
)
from .file_limits import ElementBudget, string_problem
from .file_tensors import (
    MAX_ELEMENTS,
    MAX_NDIM,
    empty_shape,
    parse_tensor,
    plain,
    shaped,
    tensor_to_json,
)
from .graph import (
    MAX_ID_LENGTH,
    MAX_NODES,
    MAX_OPERANDS,
    Graph,
    Node,
    arity_problem,
    id_problem,
)
from .groups import GROUPS_MINOR_VERSION, Group, groups_from_json, groups_to_json
from .layout_keys import LayoutKeyError, check_file_keys, check_node_keys
from .links import topological_sort
from .ops import LEAF_OPS, OPS
from .ops.record import OpShapeError

if TYPE_CHECKING:
    from .train import TrainSpec

SUFFIX = ".bpgraph"
#: A captured trace's suffix (:mod:`engine.tracefile` reads those files): beside the
#: graph's, so that telling the two apart by name loads neither the trace reader nor its
#: classes (the app checks each file it opens, the first one before its first paint).
TRACE_SUFFIX = ".bptrace"

#: Files bigger than this are refused before they are read (50 MB, in MiB).
MAX_FILE_BYTES = 50 * 1024 * 1024


_TOP_KEYS = ("format", "version", "minor_version", "title", "description", "nodes", "backward",
             "groups", "train")
_NODE_KEYS = ("id", "op", "inputs", "attrs", "value", "shape", "requires_grad")
_BACKWARD_KEYS = ("output", "gradient", "gradient_shape")

#: The minor version that added explicit shapes of empty tensors (``shape`` beside a
#: node's ``value``, ``gradient_shape`` beside the gradient): a nested list cannot
#: spell (0, 3). Files without empty tensors of such shapes do not use it.
SHAPE_MINOR_VERSION = 2


class ReadOnlyTarget(FileFormatError):
    """Saving would replace a read-only file: the caller asks before passing
    ``replace_read_only=True``."""


@dataclass
class GraphFile:
    """Everything a ``.bpgraph`` file holds, ready for the engine and the GUI.

    ``extra``, ``node_extra`` and ``backward_extra`` keep the keys this reader does
    not know (the GUI's positions, labels, view, animation step, ...) so that
    loading and saving again never loses them.
    """

    graph: Graph = field(default_factory=Graph)
    output: str | None = None
    gradient: np.ndarray | None = None
    title: str = ""
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    node_extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    backward_extra: dict[str, Any] = field(default_factory=dict)
    groups: list[Group] = field(default_factory=list)  # minor version 1 (engine.groups)
    train: TrainSpec | None = None  # minor version 2 (engine.train)


# =========================================================================== loading


def load(path: str | os.PathLike[str], *, partial: bool = False) -> GraphFile:
    """Read and validate a graph file; any extension loads.

    ``partial=True`` accepts a graph that is still being built (empty operand
    ports, shapes that do not fit yet, a gradient of the wrong shape): the GUI
    shows those as badges on the nodes. Everything else is checked either way.
    """
    if not os.fspath(path):
        raise FileFormatError("no file name given")
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise FileFormatError("no such file") from None
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        raise FileFormatError("cannot read the file: it is a folder")
    if not stat.S_ISREG(info.st_mode):  # a pipe or device could block or never end
        raise FileFormatError("cannot read the file: not a regular file")
    size = info.st_size
    if size > MAX_FILE_BYTES:
        raise FileFormatError(_too_big(size))
    try:
        with open(p, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)  # a pipe or device may lie about its size
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileFormatError(_too_big(len(data)))
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileFormatError(
            f"not a graph file: byte {exc.start} is not UTF-8 text (is it a JSON file?)"
        ) from None
    return loads(text, partial=partial)


def _too_big(size: int) -> str:
    return f"the file is {size / 2**20:.1f} MB; the limit is {MAX_FILE_BYTES // 2**20} MB"


def loads(text: str, *, partial: bool = False) -> GraphFile:
    """Parse and validate a graph file's text (see :func:`load` for ``partial``)."""
    if len(text) > MAX_FILE_BYTES:
        raise FileFormatError(_too_big(len(text)))
    doc = parse_json(text)
    check_header(doc)
    check_text_and_depth(doc)
    check_limits(doc)
    problem = string_problem(doc)
    if problem is not None:
        raise FileFormatError(problem)
    decode_number_attrs(doc)
    check_schema(doc)
    return _build(doc, partial)


def _build(doc: dict[str, Any], partial: bool) -> GraphFile:
    """Pass 3: everything the schema cannot say, then the engine's Graph."""
    nodes: list[dict[str, Any]] = doc["nodes"]
    index = _unique_ids(nodes)
    values, inputs = _operands_and_values(nodes, index, partial)
    order = _topological(nodes, inputs, index)
    graph = _graph(nodes, index, order, inputs, values)
    shapes, needs_grad = _infer(graph, order, partial)
    gf = GraphFile(
        graph=graph,
        title=doc.get("title", ""),
        description=doc.get("description", ""),
        extra={k: v for k, v in doc.items() if k not in _TOP_KEYS},
        node_extra={
            n["id"]: {k: v for k, v in n.items() if k not in _NODE_KEYS}
            for n in nodes
            if any(k not in _NODE_KEYS for k in n)
        },
    )
    _check_layout_keys(gf)
    backward = doc.get("backward") or {}
    gf.backward_extra = {k: v for k, v in backward.items() if k not in _BACKWARD_KEYS}
    gf.output = backward.get("output")
    if backward.get("gradient") is not None:
        gradient = parse_tensor(backward["gradient"], "backward.gradient")
        gf.gradient = shaped(gradient, backward.get("gradient_shape"), "backward.gradient")
    if gf.output is not None:
        if gf.output not in index:
            raise FileFormatError(
                f"backward.output names node {quoted(gf.output)}, which does not exist"
            )
        if not partial:
            _check_gradient(gf.output, shapes[gf.output], gf.gradient, gf.output in needs_grad)
    if "groups" in doc:
        try:
            gf.groups = groups_from_json(doc["groups"], graph)
        except GraphError as exc:
            raise FileFormatError(str(exc)) from None
    if "train" in doc:
        gf.train = _train(doc["train"], graph)
    return gf


def _unique_ids(nodes: list[dict[str, Any]]) -> dict[str, int]:
    """Node id -> its place in the file; an id used twice, or one no node may have (the
    graph's own rule, :func:`~engine.graph.id_problem`), is an error."""
    index: dict[str, int] = {}
    for i, node in enumerate(nodes):
        nid = node["id"]
        problem = id_problem(nid)
        if problem is not None:
            raise FileFormatError(f"node {quoted(nid)}: {problem}")
        if nid in index:
            raise FileFormatError(
                f"node {quoted(nid)}: this id is used twice "
                f"(nodes {index[nid]} and {i} of the list)"
            )
        index[nid] = i
    return index


def _operands_and_values(
    nodes: list[dict[str, Any]], index: dict[str, int], partial: bool
) -> tuple[dict[str, np.ndarray], dict[str, list[str | None]]]:
    """Each leaf's value and each node's operand list, after the per-node checks: a leaf
    takes no operands, only inputs require grad, operands exist, the operand count fits."""
    values: dict[str, np.ndarray] = {}
    inputs: dict[str, list[str | None]] = {}
    for node in nodes:
        nid, op = node["id"], node["op"]
        ins: list[str | None] = list(node.get("inputs", []))
        inputs[nid] = ins
        if op in LEAF_OPS:
            if any(s is not None for s in ins):
                raise FileFormatError(f"node {quoted(nid)}: an {op} takes no operands")
            inputs[nid] = []
            where = f"node {quoted(nid)}: value"
            values[nid] = shaped(parse_tensor(node["value"], where), node.get("shape"), where)
            if op == "const" and node.get("requires_grad") is True:
                raise FileFormatError(f"node {quoted(nid)}: a const never requires grad")
            continue
        if "requires_grad" in node:
            raise FileFormatError(
                f"node {quoted(nid)}: requires_grad belongs on inputs; a {op} requires grad when "
                f"one of its operands does"
            )
        for src in ins:
            if src is not None and src not in index:
                raise FileFormatError(f"node {quoted(nid)}: operand {quoted(src)} does not exist")
        _check_arity(nid, op, ins, partial)
    return values, inputs


def _graph(
    nodes: list[dict[str, Any]],
    index: dict[str, int],
    order: list[str],
    inputs: dict[str, list[str | None]],
    values: dict[str, np.ndarray],
) -> Graph:
    """The engine's Graph, its nodes added in ``order`` (operands first), then put in
    the file's node order."""
    graph = Graph()
    for nid in order:
        node = nodes[index[nid]]
        try:
            graph.add_node(
                nid,
                node["op"],
                inputs=inputs[nid],
                attrs=node.get("attrs") or {},
                value=values.get(nid),
                requires_grad=node.get("requires_grad", True),
            )
        except GraphError as exc:
            raise FileFormatError(str(exc)) from None
    # Keep the file's node order: saving again should not shuffle a hand-written file.
    graph.nodes = {n["id"]: graph.nodes[n["id"]] for n in nodes}
    return graph


def _train(value: dict[str, Any], graph: Graph) -> TrainSpec:
    """The ``train`` block: its ranges, and that the nodes it names exist (whether the
    loss is a scalar is a question of values, asked when training starts)."""
    from .train import train_from_json  # with the first train block: start-up reads none

    try:
        spec = train_from_json(value)
    except GraphError as exc:
        raise FileFormatError(str(exc)) from None
    for name in [spec.loss, *(spec.params or [])]:
        if name not in graph.nodes:
            raise FileFormatError(f"train: names node {quoted(name)}, which does not exist")
    return spec


def minor_version(gf: GraphFile) -> int:
    """The lowest minor version holding what ``gf`` uses (0: a file as version 1.0 wrote it)."""
    if gf.train is not None:
        from .train import TRAIN_MINOR_VERSION

        return TRAIN_MINOR_VERSION
    shaped = [n.value for n in gf.graph.nodes.values() if n.is_leaf] + [gf.gradient]
    if any(empty_shape(v) is not None for v in shaped):
        return SHAPE_MINOR_VERSION
    return GROUPS_MINOR_VERSION if gf.groups else 0


def _check_layout_keys(gf: GraphFile) -> None:
    """The GUI's own keys (positions, view, autosave record): sane before anything uses them."""
    for nid, extra in gf.node_extra.items():
        try:
            check_node_keys(extra)
        except LayoutKeyError as exc:
            raise FileFormatError(f"node {quoted(nid)}: {exc}") from None
    try:
        check_file_keys(gf.extra)
    except LayoutKeyError as exc:
        raise FileFormatError(str(exc)) from None


def _check_arity(nid: str, op: str, ins: list[str | None], partial: bool) -> None:
    problem = arity_problem(op, ins, complete=not partial)
    if problem is not None:
        raise FileFormatError(f"node {quoted(nid)}: {problem}")


def _topological(
    nodes: list[dict[str, Any]], inputs: dict[str, list[str | None]], index: dict[str, int]
) -> list[str]:
    """The engine's one topological order (:func:`engine.links.topological_sort`) over the
    file's node order; a cycle is an error naming its nodes.

    Adding nodes to the Graph in this order keeps each cycle check O(1) (a new
    node has no consumers yet), so a file with many nodes cannot make loading slow.
    """
    order = topological_sort({n["id"]: inputs.get(n["id"], []) for n in nodes})
    if len(order) == len(nodes):
        return order
    # Every node left waits on another node left: walking operands must come round
    # (networkx's find_cycle walks them, from the earliest such node in the file).
    import networkx as nx  # only here, on a refused file: networkx costs start-up 0.2 s

    left = {n["id"] for n in nodes} - set(order)
    waits_on = nx.DiGraph((n, s) for n in left for s in inputs[n] if s in left)
    start = min(left, key=index.__getitem__)
    cycle = [s for _, s in nx.find_cycle(waits_on, source=start)][::-1]  # operand -> consumer
    first = min(range(len(cycle)), key=lambda i: index[cycle[i]])
    cycle = cycle[first:] + cycle[:first]
    names = ", ".join(quoted(c) for c in cycle[:8]) + (", …" if len(cycle) > 8 else "")
    raise FileFormatError(
        f"node {quoted(cycle[0])}: cycle through nodes {names} "
        f"(each needs the next one's value, round to the first)"
    )


def _spend(budget: ElementBudget, nid: str, count: int) -> None:
    try:
        budget.add(nid, count)
    except GraphError as exc:
        raise FileFormatError(str(exc)) from None


def _infer(
    graph: Graph, order: list[str], partial: bool
) -> tuple[dict[str, tuple[int, ...]], set[str]]:
    """Every node's shape without computing anything, so bad shapes and huge results
    are refused before a forward pass could try to allocate them."""
    shapes: dict[str, tuple[int, ...]] = {}
    needs_grad: set[str] = set()
    budget = ElementBudget()
    for nid in order:
        node = graph.nodes[nid]
        if node.is_leaf:
            assert node.value is not None
            shapes[nid] = node.value.shape
            _spend(budget, nid, node.value.size)
            if node.wants_grad:
                needs_grad.add(nid)
            continue
        if any(s is None or s not in shapes for s in node.inputs) or not node.inputs:
            continue  # only in partial mode: an empty port, or blocked upstream
        try:
            operands = [shapes[s] for s in node.inputs if s is not None]  # all (above)
            shape = tuple(OPS[node.op].check(operands, node.attrs))
            count = math.prod(shape)
        except OpShapeError as exc:
            if partial:
                continue
            raise FileFormatError(f"node {quoted(nid)}: {exc}") from None
        except (ValueError, TypeError, OverflowError, IndexError) as exc:
            if partial:
                continue
            raise FileFormatError(
                f"node {quoted(nid)}: invalid attributes for {node.op}: {exc}"
            ) from None
        if count > MAX_ELEMENTS:
            raise FileFormatError(
                f"node {quoted(nid)}: its result would have shape {shape_text(shape)}, {count:,} "
                f"elements; a tensor may have at most {MAX_ELEMENTS:,}"
            )
        if math.prod(d for d in shape if d) > MAX_ELEMENTS:  # empty, but not small
            raise FileFormatError(
                f"node {quoted(nid)}: its result would have shape {shape_text(shape)}; its "
                f"dimensions may multiply to at most {MAX_ELEMENTS:,} even when one is 0"
            )
        _spend(budget, nid, count)
        shapes[nid] = shape
        if any(s in needs_grad for s in node.inputs):
            needs_grad.add(nid)
    return shapes, needs_grad


def _check_gradient(
    output: str, shape: tuple[int, ...], gradient: np.ndarray | None, requires_grad: bool
) -> None:
    """The checks ``output.backward(gradient)`` would make: the engine's, from shapes."""
    try:
        check_gradient(output, shape, None if gradient is None else gradient.shape, requires_grad)
    except GraphError as exc:
        raise FileFormatError(str(exc)) from None


# =========================================================================== saving


def to_document(gf: GraphFile) -> dict[str, Any]:
    """The JSON document for ``gf``: known keys first, then the preserved unknown ones."""
    doc: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    minor = minor_version(gf)
    if minor:  # a file using no newer feature stays byte-for-byte what minor version 0 wrote
        doc["minor_version"] = minor
    if gf.title:
        doc["title"] = gf.title
    if gf.description:
        doc["description"] = gf.description
    extra = gf.node_extra
    doc["nodes"] = [_node_entry(nid, n, extra.get(nid, {})) for nid, n in gf.graph.nodes.items()]
    backward: dict[str, Any] = {"output": gf.output, "gradient": tensor_to_json(gf.gradient)}
    if (shape := empty_shape(gf.gradient)) is not None:
        backward["gradient_shape"] = shape
    for key, val in gf.backward_extra.items():
        if key not in _BACKWARD_KEYS:
            backward[key] = plain(val)
    doc["backward"] = backward
    if gf.groups:
        doc["groups"] = groups_to_json(gf.groups)
    if gf.train is not None:
        doc["train"] = plain(gf.train.to_json())
    for key, val in gf.extra.items():
        if key not in _TOP_KEYS:
            doc[key] = plain(val)
    return doc


def _node_entry(nid: str, node: Node, extra: dict[str, Any]) -> dict[str, Any]:
    """One node's entry: a leaf's value (and empty shape, and requires_grad for an
    input), an op's operands and attributes, then the preserved unknown keys."""
    entry: dict[str, Any] = {"id": nid, "op": node.op}
    if node.is_leaf:
        entry["value"] = tensor_to_json(node.value)
        if (shape := empty_shape(node.value)) is not None:
            entry["shape"] = shape
        if node.op == "input":
            entry["requires_grad"] = bool(node.requires_grad)
    else:
        entry["inputs"] = list(node.inputs)
        if node.attrs:
            entry["attrs"] = plain(dict(node.attrs))
    for key, val in extra.items():
        if key not in _NODE_KEYS:
            entry[key] = plain(val)
    return entry


def dumps(gf: GraphFile) -> str:
    """The file text: one key per line, one node per line, so diffs stay readable."""
    doc = to_document(gf)

    def compact(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(", ", ": "))

    try:
        lines = []
        for key, val in doc.items():
            if key == "nodes":
                body = ",\n".join(f"    {compact(n)}" for n in val)
                text = f"[\n{body}\n  ]" if val else "[]"
            else:
                text = compact(val)
            lines.append(f"  {json.dumps(key, ensure_ascii=False)}: {text}")
    except (TypeError, ValueError) as exc:
        raise FileFormatError(f"cannot write the graph as JSON: {exc}") from None
    return "{\n" + ",\n".join(lines) + "\n}\n"


def save(path: str | os.PathLike[str], gf: GraphFile, *, replace_read_only: bool = False) -> None:
    """Write ``gf`` atomically (see :func:`engine.atomic_write.write_atomic`).

    If anything fails (the JSON, the disk), the previous file is untouched; the error
    is a :class:`FileFormatError`, or :class:`ReadOnlyTarget` when ``path`` is a
    read-only file and ``replace_read_only`` is False (the GUI asks first).
    """
    target = Path(path)
    data = dumps(gf).encode("utf-8")  # fails before the disk is touched
    if not replace_read_only and is_read_only(target):
        raise ReadOnlyTarget(f"cannot save {target}: the file is read-only")
    try:
        write_atomic(target, data)
    except OSError as exc:
        raise FileFormatError(f"cannot save {target}: {exc.strerror or exc}") from None


__all__ = [
    "FORMAT",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MAX_ID_LENGTH",
    "MAX_NDIM",
    "MAX_NODES",
    "MAX_OPERANDS",
    "MAX_FILE_BYTES",
    "SUFFIX",
    "TRACE_SUFFIX",
    "VERSION",
    "FileFormatError",
    "GraphFile",
    "ReadOnlyTarget",
    "dumps",
    "load",
    "loads",
    "save",
    "tensor_to_json",
]
