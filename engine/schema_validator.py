"""The format's JSON Schema and the small validator that checks a document against it.

The engine keeps numpy + networkx as its only dependencies, so instead of the
``jsonschema`` package this module implements the subset of draft 2020-12 that
``graph-format.schema.json`` uses. It reports the *first* violation with its path,
so the loader can phrase it around the node it is in (see ``engine.fileformat``).
Tensors get a fast path: a file may hold 10^7 numbers, and walking each through the
generic keywords would take minutes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).resolve().with_name("graph-format.schema.json")

#: How the format spells the numbers JSON cannot (read back as these floats).
NONFINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


@cache
def schema() -> dict[str, Any]:
    """The format's JSON Schema (``graph-format.schema.json``), parsed once."""
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return json.load(fh)


@dataclass
class SchemaIssue:
    """One place where a document breaks the schema: where, which keyword, and why."""

    path: tuple[str | int, ...]
    keyword: str
    title: str
    instance: Any
    detail: str = ""


def validate_schema(instance: Any, sch: dict[str, Any] | None = None) -> SchemaIssue | None:
    """The first schema violation in ``instance`` (None if it conforms).

    Supports the keywords the format's schema uses: ``$ref`` (local), ``type``,
    ``const``, ``enum``, ``minLength``, ``required``, ``properties``, ``items``,
    ``anyOf``, ``allOf``, ``if``/``then``/``else`` and ``not``. Unknown keys are
    allowed, as JSON Schema allows them by default.
    """
    root = schema() if sch is None else sch
    if _checker(root, root)(instance):  # the common case: a file that conforms
        return None
    return first_issue(instance, root)


def first_issue(instance: Any, root: dict[str, Any]) -> SchemaIssue | None:
    """The walk that finds and describes the first violation (slower than the verdict
    :func:`validate_schema` asks for first, as it builds paths and titles)."""
    return next(_issues(instance, root, root, (), ""), None)


Check = Callable[[Any], bool]
_checkers: dict[tuple[int, int], tuple[dict[str, Any], dict[str, Any], Check]] = {}


def _checker(sch: dict[str, Any], root: dict[str, Any]) -> Check:
    """``sch`` compiled into a yes/no test that agrees with :func:`_issues` (no issue
    iff True) for the same keywords, without building paths or titles: a file of
    thousands of nodes is checked several times faster. Compiled once per schema
    object (schemas are never mutated)."""
    key = (id(sch), id(root))
    entry = _checkers.get(key)
    if entry is None or entry[0] is not sch or entry[1] is not root:
        entry = _checkers[key] = (sch, root, _compile(sch, root))  # kept alive: ids stay theirs
    return entry[2]


def _compile(sch: dict[str, Any], root: dict[str, Any]) -> Check:
    if sch.get("$ref") == _TENSOR_REF and root is schema():
        return lambda inst: _tensor_issue(inst, (), "") is None
    checks: list[Check] = []
    if "type" in sch:  # first: the cheapest test, and most values fail there if at all
        tests = [
            _TYPES[t] for t in (sch["type"] if isinstance(sch["type"], list) else [sch["type"]])
        ]
        checks.append(lambda inst: any(t(inst) for t in tests))
    if "$ref" in sch:
        target = _resolve(sch["$ref"], root)
        # looked up when first used: a schema may refer to itself
        checks.append(lambda inst: _checker(target, root)(inst))
    checks += _value_checks(sch) + _object_checks(sch, root) + _combined_checks(sch, root)
    if len(checks) == 1:
        return checks[0]

    def every(inst: Any) -> bool:
        for check in checks:
            if not check(inst):
                return False
        return True

    return every


def _value_checks(sch: dict[str, Any]) -> list[Check]:
    """``const``, ``enum`` and ``minLength``."""
    checks: list[Check] = []
    if "const" in sch:
        const = sch["const"]
        if isinstance(const, str):  # no other JSON value equals a string
            checks.append(lambda inst: inst == const)
        else:
            checks.append(lambda inst: _json_equal(inst, const))
    if "enum" in sch:
        enum = sch["enum"]
        checks.append(lambda inst: any(_json_equal(inst, e) for e in enum))
    if "minLength" in sch:
        least = sch["minLength"]
        checks.append(lambda inst: not isinstance(inst, str) or len(inst) >= least)
    return checks


def _object_checks(sch: dict[str, Any], root: dict[str, Any]) -> list[Check]:
    """``required``, ``properties`` and ``items``."""
    checks: list[Check] = []
    required = sch.get("required", [])
    props = [(k, _checker(sub, root)) for k, sub in sch.get("properties", {}).items()]
    if required or props:

        def object_ok(inst: Any) -> bool:
            if not isinstance(inst, dict):
                return True
            for k in required:
                if k not in inst:
                    return False
            for k, check in props:
                if k in inst and not check(inst[k]):
                    return False
            return True

        checks.append(object_ok)
    if "items" in sch:
        item = _checker(sch["items"], root)
        checks.append(lambda inst: not isinstance(inst, list) or all(map(item, inst)))
    return checks


def _combined_checks(sch: dict[str, Any], root: dict[str, Any]) -> list[Check]:
    """``anyOf``, ``allOf``, ``if``/``then``/``else`` and ``not``."""
    checks: list[Check] = []
    if "anyOf" in sch:
        options = [_checker(sub, root) for sub in sch["anyOf"]]
        checks.append(lambda inst: any(o(inst) for o in options))
    checks += _all_of(sch.get("allOf", []), root)
    if "if" in sch:
        cond = _checker(sch["if"], root)
        then = _checker(sch["then"], root) if "then" in sch else None
        other = _checker(sch["else"], root) if "else" in sch else None

        def if_ok(inst: Any) -> bool:
            branch = then if cond(inst) else other
            return branch is None or branch(inst)

        checks.append(if_ok)
    if "not" in sch:
        negated = _checker(sch["not"], root)
        checks.append(lambda inst: not negated(inst))
    return checks


def _all_of(subs: list[dict[str, Any]], root: dict[str, Any]) -> list[Check]:
    """Checks for ``allOf``; branches ``{"if": {"properties": {K: {"const": "x"}}},
    "then": ...}`` on the same key ``K`` (each op's attributes) become one lookup by the
    value of ``K``: a node was asked about every op's branch, 19 tests a node."""
    checks: list[Check] = []
    by_key: dict[str, dict[str, list[Check]]] = {}
    for sub in subs:
        key = _dispatch_key(sub)
        if key is None:
            checks.append(_checker(sub, root))
        else:
            const = sub["if"]["properties"][key]["const"]
            by_key.setdefault(key, {}).setdefault(const, []).append(_checker(sub["then"], root))
    for key, thens in by_key.items():
        every_then = [c for cs in thens.values() for c in cs]

        def dispatch(inst: Any, key: str = key, thens: dict[str, list[Check]] = thens,
                     every_then: list[Check] = every_then) -> bool:
            # the "if" holds for a non-object or an object without the key (vacuous
            # "properties"): every branch's "then" applies; else only the one matching
            if not isinstance(inst, dict) or key not in inst:
                return all(c(inst) for c in every_then)
            value = inst[key]
            chosen = thens.get(value, ()) if isinstance(value, str) else ()
            return all(c(inst) for c in chosen)

        checks.append(dispatch)
    return checks


def _dispatch_key(sub: dict[str, Any]) -> str | None:
    """``K`` when ``sub`` is exactly ``{"if": {"properties": {K: {"const": <str>}}},
    "then": ...}`` (see :func:`_all_of`), else None."""
    cond = sub.get("if")
    if set(sub) != {"if", "then"} or not isinstance(cond, dict) or set(cond) != {"properties"}:
        return None
    props = cond["properties"]
    if not isinstance(props, dict) or len(props) != 1:
        return None
    ((key, test),) = props.items()
    if not isinstance(test, dict) or set(test) != {"const"} or not isinstance(test["const"], str):
        return None
    return key


_TYPES = {
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "string": lambda v: isinstance(v, str),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise ValueError(f"only local $ref is supported, not {ref!r}")
    node: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _json_equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _issues(
    inst: Any, sch: dict[str, Any], root: dict[str, Any], path: tuple[str | int, ...], title: str
) -> Iterator[SchemaIssue]:
    """Yield violations, the most useful first; the caller takes only the first."""
    title = sch.get("title", title)
    if sch.get("$ref") == _TENSOR_REF and root is schema():
        # The format's own tensors can hold 10^7 numbers; walking each through the
        # generic keywords costs ~30 µs a number. Same verdict, same first issue.
        issue = _tensor_issue(inst, path, _resolve(_TENSOR_REF, root).get("title", title))
        if issue is not None:
            yield issue
        return
    if "$ref" in sch:
        yield from _issues(inst, _resolve(sch["$ref"], root), root, path, title)
    if "type" in sch:
        types = sch["type"] if isinstance(sch["type"], list) else [sch["type"]]
        if not any(_TYPES[t](inst) for t in types):
            yield SchemaIssue(path, "type", title, inst)
            return
    if "const" in sch and not _json_equal(inst, sch["const"]):
        yield SchemaIssue(path, "const", title, inst)
    if "enum" in sch and not any(_json_equal(inst, e) for e in sch["enum"]):
        yield SchemaIssue(path, "enum", title, inst)
    if "minLength" in sch and isinstance(inst, str) and len(inst) < sch["minLength"]:
        yield SchemaIssue(path, "minLength", title, inst)
    yield from _inner_issues(inst, sch, root, path, title)
    yield from _combined_issues(inst, sch, root, path, title)


def _inner_issues(
    inst: Any, sch: dict[str, Any], root: dict[str, Any], path: tuple[str | int, ...], title: str
) -> Iterator[SchemaIssue]:
    """An object's required keys and properties, a list's items."""
    if isinstance(inst, dict):
        for key in sch.get("required", []):
            if key not in inst:
                yield SchemaIssue(path, "required", title, inst, key)
        for key, sub in sch.get("properties", {}).items():
            if key in inst:
                yield from _issues(inst[key], sub, root, (*path, key), "")
    if isinstance(inst, list) and "items" in sch:
        for i, item in enumerate(inst):
            yield from _issues(item, sch["items"], root, (*path, i), "")


def _combined_issues(
    inst: Any, sch: dict[str, Any], root: dict[str, Any], path: tuple[str | int, ...], title: str
) -> Iterator[SchemaIssue]:
    """``anyOf`` (the branch that got furthest), ``allOf``, ``if``/``then``/``else``, ``not``."""
    if "anyOf" in sch:
        found = []
        for sub in sch["anyOf"]:
            first = next(_issues(inst, sub, root, path, ""), None)
            if first is None:
                break
            found.append(first)
        else:
            # Report the branch that got furthest into the value: for a list
            # holding one bad number, that is the number, not the whole list.
            deepest = max(found, key=lambda i: len(i.path))
            if len(deepest.path) > len(path):
                yield deepest
            else:
                yield SchemaIssue(path, "anyOf", title, inst)
    for sub in sch.get("allOf", []):
        yield from _issues(inst, sub, root, path, title)
    if "if" in sch:
        ok = next(_issues(inst, sch["if"], root, path, ""), None) is None
        branch = sch.get("then" if ok else "else")
        if branch is not None:
            yield from _issues(inst, branch, root, path, title)
    if "not" in sch and next(_issues(inst, sch["not"], root, path, ""), None) is None:
        yield SchemaIssue(path, "not", title, inst)


_TENSOR_REF = "#/$defs/tensor"
_PLAIN_NUMBER = (int, float)  # exact types: JSON's true/false are bool, which is excluded
_NUMBER_TYPES = frozenset(_PLAIN_NUMBER)


def _tensor_issue(inst: Any, path: tuple[str | int, ...], title: str) -> SchemaIssue | None:
    """``#/$defs/tensor`` checked directly: the first element (depth first) that is
    neither a number, "NaN"/"Infinity"/"-Infinity", nor a list, as the generic walk
    through ``anyOf`` would report it."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(inst, path)]
    while stack:
        value, at = stack.pop()
        if isinstance(value, list):
            if _NUMBER_TYPES.issuperset(map(type, value)):  # C speed for the common case
                continue
            stack.extend((value[i], (*at, i)) for i in reversed(range(len(value))))
        elif type(value) not in _PLAIN_NUMBER and not (
            isinstance(value, str) and value in NONFINITE
        ):
            return SchemaIssue(at, "anyOf", title, value)
    return None


__all__ = ["NONFINITE", "SCHEMA_PATH", "SchemaIssue", "first_issue", "schema", "validate_schema"]
