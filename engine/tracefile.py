"""The ``.bptrace`` file format, version 2: a captured backward pass that replays
without PyTorch.

A trace file is gzip-compressed JSON (``docs/trace-format.md``;
``trace-format.schema.json`` beside this module is its JSON Schema; version 1 files,
plain JSON, still load). Arrays are ``{"shape": [...], "data": base64}`` of
little-endian float64, or float32 (``"dtype": "float32"``) where every value is one,
row-major: exact to the bit and quick to read, where a list of decimal numbers would
be neither for a model's worth of gradients (resnet18's is 11 million of them).

The file stores what cannot be recomputed and nothing that can, once: each node's
received gradient (a step's ``upstream`` is its consumer's), each leaf's earlier
``.grad`` (``earlier``), each step's vjp unless it is bit for bit its operand's
``grad`` (a leaf or a node with that one consumer) and its Jacobian when it has at most
:data:`~engine.trace.JACOBIAN_LIMIT` entries. ``before``/``accumulated`` are the
running sums, replayed in the same order with the same additions, so they come
back bitwise equal. Loading validates the whole file first, like graph files:
every problem is one :class:`~engine.fileformat.FileFormatError` line.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import math
import os
import stat
import zlib
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from . import APP_NAME
from .atomic_write import write_atomic
from .captured import CapturedNode, CapturedTrace, Shape, StoredContext
from .errors import shape_text
from .fileformat import TRACE_SUFFIX, FileFormatError
from .graph import bidi_problem
from .schema_validator import validate_schema
from .trace import JACOBIAN_LIMIT, Step

FORMAT = "backprop-studio-trace"
VERSION = 2
#: The versions this program reads: 1 is version 2 without its economies.
READS = (1, 2)
SUFFIX = TRACE_SUFFIX
#: zlib's fastest level: a resnet18 trace compresses 3x; the slower levels gain ~5%.
GZIP_LEVEL = 1
#: How ``data`` is stored: base64 of these little-endian types.
DTYPES = {"float64": "<f8", "float32": "<f4"}

#: Files bigger than this are refused before they are read.
MAX_FILE_BYTES = 512 * 1024 * 1024
#: At most this many nodes and this many steps.
MAX_NODES = 200_000
#: No array may hold more elements, nor more than 32 dims.
MAX_ELEMENTS = 10**7
MAX_NDIM = 32

SCHEMA_PATH = Path(__file__).resolve().with_name("trace-format.schema.json")


@cache
def schema() -> dict[str, Any]:
    """The trace format's JSON Schema, parsed once."""
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


# =========================================================================== saving


def encode(a: np.ndarray) -> dict[str, Any]:
    """Float64, or float32 where every value is one (a float32 model's: half the bytes,
    still exact). ``tobytes()`` is row-major whatever the layout."""
    a = np.asarray(a, dtype="<f8")
    with np.errstate(over="ignore"):
        narrow = a.astype("<f4")
    if np.array_equal(narrow, a):  # NaN never is: its payload might not survive
        return {"shape": list(a.shape), "dtype": "float32", "data": _b64(narrow)}
    return {"shape": list(a.shape), "data": _b64(a)}


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(a.tobytes()).decode("ascii")


def _same_bits(a: np.ndarray, b: np.ndarray | None) -> bool:
    if b is None or a.shape != b.shape:
        return False
    return np.array_equal(
        np.ascontiguousarray(a, "<f8").view("<u8"), np.ascontiguousarray(b, "<f8").view("<u8")
    )


def to_document(trace: CapturedTrace, limit: int = JACOBIAN_LIMIT) -> dict[str, Any]:
    """The JSON document of ``trace``; Jacobians up to ``limit`` entries are kept."""
    earlier = {}
    for s in trace.steps:  # a leaf's first step starts from its earlier .grad
        info = trace.nodes[s.operand]
        if info.is_leaf and s.operand not in earlier:
            earlier[s.operand] = s.before
    nodes = []
    for info in trace.nodes.values():
        node: dict[str, Any] = {
            "id": info.id,
            "kind": info.kind,
            "shapes": [list(s) for s in info.shapes],
            "inputs": [list(i) if i is not None else None for i in info.inputs],
            "module": info.module,
        }
        grad = trace.grads.get(info.id)
        node["grad"] = encode(grad) if grad is not None else None
        held = earlier.get(info.id)
        if held is not None:
            node["earlier"] = encode(held)
        if info.value is not None:
            node["value"] = encode(info.value)
        nodes.append(node)
    steps = []
    for s in trace.steps:
        step: dict[str, Any] = {"consumer": s.consumer, "index": s.operand_index}
        operand = trace.nodes[s.operand]
        if len(operand.shapes) != 1 or not _same_bits(s.vjp, trace.grads.get(s.operand)):
            step["vjp"] = encode(s.vjp)  # else it is the operand's grad: stored once, there
        jac = s.jacobian(limit)
        if jac is not None:
            step["jacobian"] = encode(jac)
        steps.append(step)
    return {
        "format": FORMAT,
        "version": VERSION,
        "output": trace.output,
        "gradient": encode(trace.gradient),
        "nodes": nodes,
        "steps": steps,
        "modules": dict(trace.module_classes),
    }


def save(path: str | os.PathLike[str], trace: CapturedTrace) -> None:
    """Write atomically: a crash mid-save never leaves half a file."""
    text = json.dumps(to_document(trace), separators=(",", ":")).encode("utf-8")
    data = gzip.compress(text, compresslevel=GZIP_LEVEL, mtime=0)
    try:
        write_atomic(Path(path), data)
    except OSError as exc:
        raise FileFormatError(f"cannot write the file: {exc.strerror or exc}") from None


# =========================================================================== loading


def load(path: str | os.PathLike[str]) -> CapturedTrace:
    """Read and validate a trace file."""
    p = Path(path)
    try:
        info = p.stat()
        if not stat.S_ISREG(info.st_mode):
            raise FileFormatError("cannot read the file: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise FileFormatError(_too_big(info.st_size))
        with open(p, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise FileFormatError("no such file") from None
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}") from None
    if len(data) > MAX_FILE_BYTES:
        raise FileFormatError(_too_big(len(data)))
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data)
    try:
        return loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise FileFormatError(f"not a trace file: byte {exc.start} is not UTF-8 text") from None


def _gunzip(data: bytes) -> bytes:
    """The JSON inside, refused past :data:`MAX_FILE_BYTES` however small the file is."""
    inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    try:
        text = inflate.decompress(data, MAX_FILE_BYTES + 1)
    except zlib.error:
        raise FileFormatError("not a trace file: the gzip data is damaged") from None
    if len(text) > MAX_FILE_BYTES:
        raise FileFormatError(
            f"the file unpacks to more than {MAX_FILE_BYTES // 2**20} MB, the limit"
        )
    if not inflate.eof:
        raise FileFormatError("not a trace file: the gzip data is cut short")
    return text


def _too_big(size: int) -> str:
    return f"the file is {size / 2**20:.1f} MB; the limit is {MAX_FILE_BYTES // 2**20} MB"


def loads(text: str) -> CapturedTrace:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FileFormatError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except (RecursionError, ValueError) as exc:
        raise FileFormatError(f"not usable JSON: {type(exc).__name__}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise FileFormatError(f'not a {APP_NAME} trace: there is no "format": "{FORMAT}"')
    if doc.get("version") not in READS or isinstance(doc.get("version"), bool):
        raise FileFormatError(
            f"unsupported trace version {doc.get('version')!r}: this program reads "
            + " and ".join(map(str, READS))
        )
    for key in ("nodes", "steps"):
        if isinstance(doc.get(key), list) and len(doc[key]) > MAX_NODES:
            raise FileFormatError(
                f"{len(doc[key]):,} {key}; a trace may have at most {MAX_NODES:,}"
            )
    try:
        return _build(doc)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError):
        # Something is not the shape the schema gives it: let the schema say what.
        # (Walking the whole schema up front would cost more than the load itself.)
        issue = validate_schema(doc, schema())
        if issue is None:
            raise FileFormatError("the file's structure is not a trace's") from None
        where = "/".join(str(p) for p in issue.path) or "the file"
        what = (
            f"needs {issue.detail!r}" if issue.keyword == "required" else f"must be {issue.title}"
        )
        raise FileFormatError(f"{where}: {what}") from None


def _strings(raw: Any, *keys: str) -> None:
    """Non-empty strings where a wrong type would not fail by itself."""
    for key in keys:
        if type(raw[key]) is not str or not raw[key]:
            raise TypeError(key)


def _shapes(raw: Any) -> list[Shape]:
    shapes = raw["shapes"]
    for shape in shapes:
        if type(shape) is not list or any(type(n) is not int or n < 0 for n in shape):
            raise TypeError("shapes")
    return [tuple(s) for s in shapes]


def decode(value: dict[str, Any], where: str) -> np.ndarray:
    """An array object's values, as float64 (read-only: nothing replaying a trace
    changes them)."""
    shape = value["shape"]
    data = value["data"]
    dtype = DTYPES.get(value.get("dtype", "float64"))
    if dtype is None:
        raise FileFormatError(f"{where}: the dtype must be {' or '.join(DTYPES)}")
    if type(data) is not str or type(shape) is not list:
        raise TypeError("array")
    if len(shape) > MAX_NDIM or (shape and (min(shape) < 0 or not _ints(shape))):
        raise FileFormatError(
            f"{where}: the shape {shape} is not a list of at most {MAX_NDIM} non-negative integers"
        )
    count = math.prod(shape)
    if count > MAX_ELEMENTS:
        raise FileFormatError(
            f"{where} has {count:,} elements; an array may have at most {MAX_ELEMENTS:,}"
        )
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise FileFormatError(f"{where}: the data is not base64") from None
    width = np.dtype(dtype).itemsize
    if len(raw) != width * count:
        raise FileFormatError(
            f"{where}: the data holds {len(raw) // width:,} {value.get('dtype', 'float64')} "
            f"values, the shape {shape_text(tuple(shape))} needs {count:,}"
        )
    out = np.frombuffer(raw, dtype=dtype).reshape(shape)
    if width == 8:
        return out
    wide = out.astype(np.float64)  # exact: every float32 is a float64
    wide.flags.writeable = False
    return wide


def _ints(shape: list[Any]) -> bool:
    return all(type(n) is int for n in shape)


def _inputs(
    pairs: list[Any], nodes: dict[str, CapturedNode], where: str
) -> list[tuple[str, int] | None]:
    """A node's inputs: each [operand id, output slot] of an earlier node, or null."""
    inputs: list[tuple[str, int] | None] = []
    for k, pair in enumerate(pairs):
        if pair is None:
            inputs.append(None)
            continue
        if len(pair) != 2 or not isinstance(pair[0], str) or not isinstance(pair[1], int):
            raise FileFormatError(f"{where}: input {k} must be [operand id, output slot]")
        src, slot = pair
        if src not in nodes:
            raise FileFormatError(f"{where}: input {k} is {src!r}, which is not an earlier node")
        if not 0 <= slot < len(nodes[src].shapes):
            raise FileFormatError(f"{where}: input {k}: {src!r} has no output slot {slot}")
        inputs.append((src, slot))
    return inputs


def _build(doc: dict[str, Any]) -> CapturedTrace:
    nodes: dict[str, CapturedNode] = {}
    earlier: dict[str, np.ndarray] = {}
    grads: dict[str, np.ndarray | None] = {}
    for raw in doc["nodes"]:
        _strings(raw, "id", "kind")
        if type(raw.get("module", "")) is not str:
            raise TypeError("module")
        nid = raw["id"]
        where = f"node {nid!r}"
        if nid in nodes:
            raise FileFormatError(f"{where}: the id is used twice")
        problem = bidi_problem(nid)
        if problem is not None:
            raise FileFormatError(f"{where}: {problem}")
        inputs = _inputs(raw.get("inputs", []), nodes, where)
        shapes = _shapes(raw)
        if not shapes:
            raise FileFormatError(f"{where}: a node has at least one output shape")
        node = CapturedNode(nid, raw["kind"], shapes, inputs, raw.get("module", ""))
        if "value" in raw:
            node.value = decode(raw["value"], f"{where}'s value")
        nodes[nid] = node
        if raw.get("grad") is not None:
            grad = decode(raw["grad"], f"{where}'s grad")
            if grad.shape != _upstream_shape(node):
                raise FileFormatError(
                    f"{where}: grad has shape {shape_text(grad.shape)}, the node's output "
                    f"{shape_text(_upstream_shape(node))}"
                )
            grads[nid] = grad
        else:
            grads[nid] = None
        if "earlier" in raw:
            earlier[nid] = decode(raw["earlier"], f"{where}'s earlier grad")
            if earlier[nid].shape != shapes[0]:
                raise FileFormatError(f"{where}: the earlier grad's shape is not the node's")
    _strings(doc, "output")
    output = doc["output"]
    if output not in nodes:
        raise FileFormatError(f"the output {output!r} is not a node")
    gradient = decode(doc["gradient"], "the gradient")
    if gradient.shape != nodes[output].shapes[0]:
        raise FileFormatError(
            f"the gradient has shape {shape_text(gradient.shape)}, the output "
            f"{shape_text(nodes[output].shapes[0])}"
        )
    classes = doc.get("modules", {})
    if not isinstance(classes, dict) or not all(type(c) is str for c in classes.values()):
        raise TypeError("modules")
    trace = CapturedTrace(output=output, gradient=gradient, nodes=nodes, grads=grads)
    trace.module_classes = dict(classes)
    trace.leaves = [n for n, info in nodes.items() if info.is_leaf]
    sums: dict[tuple[str, int], np.ndarray] = {(n, 0): g for n, g in earlier.items()}
    for k, raw in enumerate(doc["steps"]):
        trace.steps.append(_step(k, raw, nodes, grads, sums))
    return trace


def _upstream_shape(node: CapturedNode) -> Shape:
    if len(node.shapes) == 1:
        return node.shapes[0]
    return (sum(math.prod(s) for s in node.shapes),)


def _step(
    k: int,
    raw: dict[str, Any],
    nodes: dict[str, CapturedNode],
    grads: dict[str, np.ndarray | None],
    sums: dict[tuple[str, int], np.ndarray],
) -> Step:
    where = f"step {k}"
    _strings(raw, "consumer")
    if type(raw["index"]) is not int:
        raise TypeError("index")
    consumer = nodes.get(raw["consumer"])
    if consumer is None:
        raise FileFormatError(f"{where}: the consumer {raw['consumer']!r} is not a node")
    index = raw["index"]
    if not 0 <= index < len(consumer.inputs) or consumer.inputs[index] is None:
        raise FileFormatError(f"{where}: node {consumer.id!r} has no operand {index}")
    upstream = grads.get(consumer.id)
    if upstream is None:
        raise FileFormatError(f"{where}: node {consumer.id!r} has no grad to pass back")
    key = consumer.inputs[index]
    assert key is not None  # checked above
    operand_shape = nodes[key[0]].shapes[key[1]]
    held = grads.get(key[0]) if len(nodes[key[0]].shapes) == 1 else None
    if "vjp" in raw:
        vjp = decode(raw["vjp"], f"{where}'s vjp")
    elif held is not None:
        vjp = held  # saved once, as the operand's grad
    else:
        raise FileFormatError(
            f"{where}: there is no vjp, and operand {key[0]!r} has no grad that is it"
        )
    if vjp.shape != operand_shape:
        raise FileFormatError(
            f"{where}: the vjp has shape {shape_text(vjp.shape)}, operand {key[0]!r} "
            f"{shape_text(operand_shape)}"
        )
    matrix = None
    if "jacobian" in raw:
        matrix = decode(raw["jacobian"], f"{where}'s jacobian")
        want = (upstream.size, vjp.size)
        if matrix.shape != want:
            raise FileFormatError(
                f"{where}: the jacobian has shape {shape_text(matrix.shape)}, expected "
                f"{shape_text(want)}"
            )
    before = sums.get(key)
    after = vjp if before is None else before + vjp
    sums[key] = after
    ctx = StoredContext(consumer, operand_shape, matrix)
    return Step(consumer.id, key[0], index, upstream, vjp, before, after, ctx)
