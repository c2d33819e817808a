"""Every theme of the colour table reads: each (text, background) pair the app uses
has a WCAG 2 contrast of at least 4.5:1, computed from the table itself."""

from __future__ import annotations

import pytest

from gui.model import colours


def test_the_contrast_formula_matches_wcag() -> None:
    assert colours.contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert colours.contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)


def test_every_theme_has_every_role() -> None:
    roles = set(colours.THEMES[colours.DEFAULT])
    assert set(colours.THEMES) == {"light", "dark", "projector"}
    for name, table in colours.THEMES.items():
        assert set(table) == roles, name
    for pair in colours.TEXT_PAIRS:
        assert all(colours.ALIASES.get(r, r) in roles for r in pair), pair


@pytest.mark.parametrize("theme", sorted(colours.THEMES))
def test_every_text_pair_reads_in_every_theme(theme: str) -> None:
    assert ("TEXT_MUTED", "PANEL") in colours.TEXT_PAIRS  # the inspector's hint
    low = [
        f"{ink} on {ground}: {ratio:.2f}"
        for ink, ground in colours.TEXT_PAIRS
        if (ratio := colours.contrast(colours.colour(ink, theme), colours.colour(ground, theme)))
        < colours.MIN_CONTRAST
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
