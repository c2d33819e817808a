"""Colours are written in one place, gui/model/colours.py (gui.theme builds its QColors from it).

Scans the source: a hex colour or ``rgb(`` in a string, a named colour in a style
sheet, a literal passed to QColor / pyqtgraph's colour functions or as ``color=``,
or a ``Qt.white``-style global colour anywhere else fails this test, naming the
file and line.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

from gui.model import colours

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "gui" / "model" / "colours.py"

HEX = re.compile(r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b")
FUNCTIONAL = re.compile(r"\b(?:rgba?|hsla?)\(")
NAMES = (
    "white|black|red|green|blue|gray|grey|yellow|orange|purple|pink|brown|silver|navy|"
    "maroon|teal|olive|lime|aqua|fuchsia|cyan|magenta|darkred|darkgray|lightgray"
)
#: A named colour as a style-sheet (CSS) value: ``background: white``, ``color:red``.
STYLE_NAME = re.compile(rf"(?:color|background|border[-\w]*)\s*:[^;{{}}\"']*\b(?:{NAMES})\b")
#: A bare colour name or pyqtgraph's one-letter codes as a whole string.
BARE_NAME = re.compile(rf"(?:{NAMES}|[rgbcmykw])")
#: Calls whose literal arguments would be colours.
COLOUR_CALLS = {"QColor", "mkColor", "mkPen", "mkBrush", "ColorMap", "setBackground"}
GLOBAL_COLOURS = set(NAMES.split("|")) | {"darkGray", "lightGray", "darkRed", "darkBlue"}


def _literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float | str) and not isinstance(node.value, bool)
    if isinstance(node, ast.Tuple | ast.List):
        return any(_literal(e) for e in node.elts)
    return False


def _call_name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def colour_literals(source: str) -> list[tuple[int, str]]:
    """(line, what) for every colour written in ``source``."""
    found: list[tuple[int, str]] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.STRING:
            continue
        for pattern in (HEX, FUNCTIONAL, STYLE_NAME):
            found += [(tok.start[0], m.group(0)) for m in pattern.finditer(tok.string)]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _call_name(node)
            args = [*node.args, *(k.value for k in node.keywords if k.arg != "pos")]
            if name == "ColorMap":  # its first argument is the stops' positions
                args = args[1:]
            if name in COLOUR_CALLS and any(_literal(a) for a in args):
                found.append((node.lineno, f"{name}(<literal>)"))
            for k in node.keywords:
                value = k.value
                if (
                    k.arg in ("color", "colour")
                    and isinstance(value, ast.Constant)
                    and isinstance(value.value, str)
                    and BARE_NAME.fullmatch(value.value)
                ):
                    found.append((node.lineno, f"{k.arg}={value.value!r}"))
        elif isinstance(node, ast.Attribute) and node.attr in GLOBAL_COLOURS:
            base = node.value
            owner = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
            if owner in ("Qt", "GlobalColor"):
                found.append((node.lineno, f"{owner}.{node.attr}"))
    return found


def _sources() -> list[Path]:
    files = [ROOT / "main.py"]
    for package in ("engine", "gui", "benchmarks"):
        files += sorted((ROOT / package).rglob("*.py"))
    return [f for f in files if f != TABLE]


def test_colours_are_written_only_in_the_colour_table() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {what}"
        for path in _sources()
        for line, what in colour_literals(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "colours outside gui/model/colours.py:\n" + "\n".join(offenders)


def test_the_scan_finds_each_way_of_writing_a_colour() -> None:
    source = "\n".join(
        [
            'A = "#b3261e"',
            'B = f"color: {x}; background: #fff"',
            'C = "border: 1px solid rgb(1, 2, 3)"',
            'D = "QLabel { background: white; }"',
            "E = QColor(0, 0, 0, 22)",
            'F = pg.TextItem("1", color="w")',
            "G = Qt.GlobalColor.white",
            'H = plots.setBackground("k")',
            "I = pg.ColorMap([0.0, 1.0], [(0, 0, 255), (255, 0, 0)])",
            'ok = open(path, "w"); s = "#status"; t = f"#{n} of {m}"; u = QColor(THEME.pulse)',
            "v = pg.ColorMap([0.0, 1.0], list(THEME.diverging))",
        ]
    )
    assert sorted(line for line, _ in colour_literals(source)) == [1, 2, 3, 4, 5, 6, 7, 8, 9]


def test_the_table_is_hex_strings() -> None:
    values = [*colours.DIVERGING, *colours.SERIES]
    flat = values + [x for table in colours.THEMES.values() for x in table.values()]
    assert flat and all(re.fullmatch(r"#[0-9a-f]{6}", x) for x in flat), flat
