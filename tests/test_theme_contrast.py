"""Every theme of the colour table reads: each (text, background) pair the app uses
has a WCAG 2 contrast of at least 4.5:1, computed from the table itself."""

from __future__ import annotations

import pytest

from gui.model import colours
from support import contrast

#: (text role, background role) for every place the app writes text on a colour; each
#: must read at least :data:`MIN_CONTRAST` to 1 in each theme (WCAG 2 AA for body text).
TEXT_PAIRS: tuple[tuple[str, str], ...] = (
    *((ink, ground) for ink in ("TEXT", "TEXT_MUTED", "ERROR_TEXT", "RIGHT", "GRAD_TEXT")
      for ground in ("PANEL", "PAPER")),  # the inspector's hint, panels, dialogs, boxes
    *(("TEXT", ground) for ground in (
        "PAGE", "HEADER", "BACKGROUND", "TITLE_OP", "TITLE_INPUT", "TITLE_CONST",
        "OUTPUT_FILL", "GRAD_ACTIVE_FILL", "GROUP_FILL", "CHECK_OK", "CHECK_CLOSE",
        "CHECK_BAD", "CHECK_KINK", "CHECK_UNDEFINED", "ERROR_MARK")),
    ("TEXT_MUTED", "BACKGROUND"),  # canvas hints
    ("TEXT_MUTED", "HEADER"),
    ("GRAD_TEXT", "GRAD_ACTIVE_FILL"),  # the active box's gradient line
    ("GRAD_TEXT", "GRAD_ACTIVE_MARK"),
    ("JACOBIAN", "PAPER"),
    ("TANGENT", "PAPER"),
    ("NOTE_TEXT", "NOTE_FILL"),
)
MIN_CONTRAST = 4.5


def test_the_contrast_formula_matches_wcag() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_every_theme_has_every_role() -> None:
    roles = set(colours.THEMES[colours.DEFAULT])
    assert set(colours.THEMES) == {"light", "dark", "projector"}
    for name, table in colours.THEMES.items():
        assert set(table) == roles, name
    for pair in TEXT_PAIRS:
        assert all(colours.ALIASES.get(r, r) in roles for r in pair), pair


@pytest.mark.parametrize("theme", sorted(colours.THEMES))
def test_every_text_pair_reads_in_every_theme(theme: str) -> None:
    assert ("TEXT_MUTED", "PANEL") in TEXT_PAIRS  # the inspector's hint
    low = [
        f"{ink} on {ground}: {ratio:.2f}"
        for ink, ground in TEXT_PAIRS
        if (ratio := contrast(colours.colour(ink, theme), colours.colour(ground, theme)))
        < MIN_CONTRAST
    ]
    assert not low, f"{theme}: " + "; ".join(low)


def test_a_role_reads_the_theme_in_use() -> None:
    try:
        colours.use("dark")
        assert colours.TEXT == colours.THEMES["dark"]["TEXT"]
        assert colours.ERROR_TEXT == colours.THEMES["dark"]["GRAD_TEXT"]
        with pytest.raises(ValueError, match="unknown theme 'neon'"):
            colours.use("neon")
        with pytest.raises(AttributeError):
            _ = colours.NOT_A_ROLE
    finally:
        colours.use(colours.DEFAULT)
    assert colours.TEXT == colours.THEMES["light"]["TEXT"]
