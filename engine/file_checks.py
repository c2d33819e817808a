"""The checks a graph file passes before a graph is built from it: JSON syntax, the
``format``/``version`` header, text and nesting depth, the size limits a small file
could exceed, and the JSON Schema (its first issue phrased around node ids).

Every problem is a :class:`FileFormatError`, whose ``str`` is one line.
"""

from __future__ import annotations

import json
import math
from typing import Any

from . import APP_NAME
from .errors import brief, quoted
from .graph import MAX_ID_LENGTH, MAX_NODES, MAX_OPERANDS
from .ops import OPS
from .ops.record import ATTR_KINDS
from .schema_validator import SchemaIssue, validate_schema

FORMAT = "backprop-studio-graph"
VERSION = 1

#: Lists and objects nested deeper than this anywhere in a file (a 32-dim tensor
#: sits 36 deep); beyond it saving again would recurse past Python's limit.
MAX_DEPTH = 48


class FileFormatError(Exception):
    """A graph file that cannot be loaded or saved; ``str`` is one line for the user.

    The CLI prints it as ``error: FILE: <message>``; the GUI shows it in a dialog.
    One exception type means callers need exactly one ``except``.
    """

    def __init__(self, message: str) -> None:
        # One line, always: a message built from numpy or OS text must not wrap.
        super().__init__(message.replace("\r", " ").replace("\n", " "))


_NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def decode_number_attrs(doc: dict[str, Any]) -> None:
    """Saving writes a non-finite number attribute (a clamp bound of NaN) as "NaN",
    "Infinity" or "-Infinity", as it does tensors: read those back, so that what the
    app saves, it opens."""
    nodes = doc.get("nodes")
    for node in nodes if isinstance(nodes, list) else ():
        if not isinstance(node, dict) or not isinstance(node.get("op"), str):
            continue  # the schema check that follows refuses it
        attrs, op = node.get("attrs"), OPS.get(node["op"])
        if op is None or not isinstance(attrs, dict):
            continue
        for spec in op.attrs:
            value = attrs.get(spec.name)
            floats = ATTR_KINDS[spec.kind].floats
            if floats and isinstance(value, str) and value in _NONFINITE:
                attrs[spec.name] = _NONFINITE[value]


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if not text.strip():
            raise FileFormatError("not JSON: the file is empty") from None
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            raise FileFormatError(
                f"not valid JSON: the text ends too early (cut short?): {exc.msg} "
                f"(line {exc.lineno}, column {exc.colno})"
            ) from None
        raise FileFormatError(
            f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise FileFormatError("not usable JSON: lists or objects are nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal with thousands of digits
        raise FileFormatError(f"not usable JSON: {exc}") from None


def check_text_and_depth(doc: dict[str, Any]) -> None:
    """No lone surrogate in any string or key (it could never be saved or printed) and
    no nesting deeper than :data:`MAX_DEPTH` (saving walks the nesting recursively)."""
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise FileFormatError(f"lists or objects are nested more than {MAX_DEPTH} levels deep")
        if isinstance(value, dict):
            for key, item in value.items():
                _check_text(key)
                if isinstance(item, dict | list | str):
                    stack.append((item, depth + 1))
        elif isinstance(value, list):
            if _NUMBERS.issuperset(map(type, value)):  # C speed for tensors
                continue
            stack.extend((item, depth + 1) for item in value if isinstance(item, dict | list | str))
        else:
            _check_text(value)


_NUMBERS = frozenset((int, float))


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FileFormatError(
            f"the text {quoted(text)} holds a lone surrogate ({text[exc.start]!a}), which is "
            f"not a character and cannot be saved"
        ) from None


def check_limits(doc: dict[str, Any]) -> None:
    """Sizes that make a small file hang or exhaust memory, refused before any work."""
    nodes = doc.get("nodes")
    if not isinstance(nodes, list):
        return  # the schema says what is wrong
    if len(nodes) > MAX_NODES:
        raise FileFormatError(
            f"the file has {len(nodes):,} nodes; a graph may have at most {MAX_NODES:,}"
        )
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            continue
        nid = node.get("id")
        if isinstance(nid, str) and len(nid) > MAX_ID_LENGTH:
            raise FileFormatError(
                f"node {quoted(nid)} (nodes[{i}]): the id has {len(nid):,} characters; an id "
                f"may have at most {MAX_ID_LENGTH}"
            )
        inputs = node.get("inputs")
        if isinstance(inputs, list) and len(inputs) > MAX_OPERANDS:
            name = quoted(nid) if isinstance(nid, str) else f"nodes[{i}]"
            raise FileFormatError(
                f"node {name}: {len(inputs):,} operands; a node may have at most {MAX_OPERANDS}"
            )


def check_header(doc: Any) -> None:
    """The file's identity first: a wrong file should say so, not list every other problem."""
    if not isinstance(doc, dict):
        raise FileFormatError(
            f"not a {APP_NAME} graph: the file holds {_json_kind(doc)}, not a JSON object"
        )
    if "format" not in doc:
        raise FileFormatError(f'not a {APP_NAME} graph: there is no "format": "{FORMAT}" key')
    if doc["format"] != FORMAT:
        raise FileFormatError(
            f'not a {APP_NAME} graph: "format" is {brief(doc["format"])}, expected "{FORMAT}"'
        )
    if "version" not in doc:
        raise FileFormatError('the file has no "version" (this program reads version 1)')
    version = doc["version"]
    if isinstance(version, bool) or not isinstance(version, int | float) or version != VERSION:
        raise FileFormatError(
            f"unsupported format version {brief(version)}: this program reads version {VERSION}"
        )


def check_schema(doc: dict[str, Any]) -> None:
    try:
        issue = validate_schema(doc)
    except RecursionError:
        raise FileFormatError("lists are nested too deeply to be a tensor") from None
    if issue is not None:
        raise FileFormatError(_issue_message(doc, issue))


def _issue_message(doc: dict[str, Any], issue: SchemaIssue) -> str:
    """Phrase a schema violation around the node it is in, as the engine's errors are."""
    path = issue.path
    where = ".".join(str(p) for p in path) if path else "the file"
    rest: tuple[str | int, ...] = ()
    node_id: str | None = None
    if len(path) >= 2 and path[0] == "nodes":
        node = doc["nodes"][path[1]]
        if isinstance(node, dict) and isinstance(node.get("id"), str) and node["id"]:
            node_id, rest = node["id"], path[2:]
            where = f"node {quoted(node_id)}" + (f": {_fmt_path(rest)}" if rest else "")
        else:
            where = f"nodes[{path[1]}]" + (f".{_fmt_path(path[2:])}" if path[2:] else "")
    if issue.keyword == "required":
        return f"{where} has no {issue.detail!r}"
    if rest == ("op",) and issue.keyword == "enum":
        op = issue.instance
        shown = quoted(op) if isinstance(op, str) else brief(op)
        return f"{where.split(':')[0]}: unknown op {shown}"
    if node_id is not None and not rest and issue.keyword == "not":
        op = doc["nodes"][path[1]].get("op")
        return (
            f'node {quoted(node_id)}: a {op} node computes its value, so it cannot have a "value"'
        )
    return f"{where} must be {issue.title or 'something else'}, got {brief(issue.instance)}"


def _fmt_path(parts: tuple[str | int, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else p)
    return out


def _json_kind(v: Any) -> str:
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return "a string"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    return "a number"
