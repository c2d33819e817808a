"""The node-name face's zero: a plain, narrow oval, derived from the bundled face's bytes.

JetBrains Mono draws 0 as its O (the same outline, the same width) with a dot inside.
At the size the canvas guarantees a name (about 12 px on a 1280x720 projector) that dot
is a pixel or two: it blurs into the ring (the 0 then looks like an 8, a 6 or a theta)
or fades (the 0 looks like O). What survives blur is the outline's shape, so the name
face draws 0 as most typefaces and textbooks do: a plain oval clearly narrower than the
round O (four fifths of its width; its strokes keep nearly all of the face's weight,
so it is no lighter than the letters beside it). The OCR of
``benchmarks/bench_legibility.py`` agrees: on sheets of compact boxes with names at
12-18 px, names ending in 0 (``acc0``, ``n1_0``) were read in 62 % of the boxes,
against 25 % with the dotted zero and 17 % with the face's slashed one.

The face has no OpenType feature that selects another zero (its ``zero.zero`` glyph is
the slashed one, and this cut has no substitution table), so :func:`plain_narrow_zero`
rewrites the glyph in the TrueType tables (``glyf``, ``loca``, ``hmtx``) of a copy of
the font's bytes, which the application then loads from memory. The file on disk stays
the upstream one (SIL Open Font License, which allows modified versions). No Qt and
no font library: the TrueType tables are read and written here.
"""

from __future__ import annotations

import struct

import numpy as np

#: The counter (the hole) keeps this share of its width, and each side stroke this
#: share of its own; with the face's 0 that makes the glyph 0.8 of O's width.
COUNTER_SHARE = 0.65
STROKE_SHARE = 0.90


def _tables(data: bytes) -> dict[str, tuple[int, int]]:
    """Each table's (offset, length) from the font's table directory."""
    (count,) = struct.unpack_from(">H", data, 4)
    out = {}
    for i in range(count):
        tag, _sum, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        out[tag.decode("latin-1")] = (offset, length)
    return out


def _glyph_of(cmap: bytes, char: str) -> int:
    """The glyph index of ``char`` in a ``cmap`` table's Windows Unicode (format 4) map."""
    code = ord(char)
    (n,) = struct.unpack_from(">H", cmap, 2)
    for i in range(n):
        platform, encoding, offset = struct.unpack_from(">HHI", cmap, 4 + 8 * i)
        if (platform, encoding) != (3, 1) or struct.unpack_from(">H", cmap, offset)[0] != 4:
            continue
        segs = struct.unpack_from(">H", cmap, offset + 6)[0] // 2
        ends_at = offset + 14
        starts_at = ends_at + 2 * segs + 2
        deltas_at, ranges_at = starts_at + 2 * segs, starts_at + 4 * segs
        for s in range(segs):
            (end,) = struct.unpack_from(">H", cmap, ends_at + 2 * s)
            (start,) = struct.unpack_from(">H", cmap, starts_at + 2 * s)
            if start <= code <= end:
                (delta,) = struct.unpack_from(">h", cmap, deltas_at + 2 * s)
                (rng,) = struct.unpack_from(">H", cmap, ranges_at + 2 * s)
                if rng == 0:
                    return (code + delta) & 0xFFFF
                at = ranges_at + 2 * s + rng + 2 * (code - start)
                return (struct.unpack_from(">H", cmap, at)[0] + delta) & 0xFFFF
    raise ValueError(f"the font has no glyph for {char!r}")


def _decode(glyph: bytes) -> tuple[list[int], list[int], list[int], list[int]]:
    """A simple TrueType glyph's contour ends, on-curve flags and x and y coordinates."""
    contours = struct.unpack_from(">h", glyph)[0]
    if contours <= 0:
        raise ValueError("not a simple glyph")
    ends = list(struct.unpack_from(f">{contours}H", glyph, 10))
    at = 10 + 2 * contours
    at += 2 + struct.unpack_from(">H", glyph, at)[0]  # skip the hinting instructions
    flags: list[int] = []
    while len(flags) < ends[-1] + 1:
        flag = glyph[at]
        at += 1
        flags.append(flag)
        if flag & 8:  # repeated
            flags += [flag] * glyph[at]
            at += 1

    def coords(short: int, same: int) -> list[int]:
        nonlocal at
        out, v = [], 0
        for flag in flags:
            if flag & short:
                v += glyph[at] if flag & same else -glyph[at]
                at += 1
            elif not flag & same:
                v += struct.unpack_from(">h", glyph, at)[0]
                at += 2
            out.append(v)
        return out

    xs = coords(2, 16)
    return ends, [f & 1 for f in flags], xs, coords(4, 32)


def _encode(ends: list[int], on: list[int], xs: list[int], ys: list[int]) -> bytes:
    """A simple glyph (no instructions, every coordinate a 16-bit delta)."""
    out = struct.pack(">hhhhh", len(ends), min(xs), min(ys), max(xs), max(ys))
    out += struct.pack(f">{len(ends)}HH", *ends, 0) + bytes(on)
    dx = [x - p for x, p in zip(xs, [0, *xs[:-1]], strict=True)]
    dy = [y - p for y, p in zip(ys, [0, *ys[:-1]], strict=True)]
    return out + struct.pack(f">{len(dx)}h", *dx) + struct.pack(f">{len(dy)}h", *dy)


def _narrow_zero(glyph: bytes) -> tuple[bytes, int]:
    """The zero without its dot, narrowed about its centre; and its new left edge."""
    ends, on, xs, ys = _decode(glyph)
    if len(ends) != 3:
        raise ValueError("the zero is not a ring with a dot")
    ring = ends[1] + 1  # outer and inner contour first, the dot last
    ends, on, xs, ys = ends[:2], on[:ring], xs[:ring], ys[:ring]
    centre = (min(xs) + max(xs)) / 2
    hole = max(xs[ends[0] + 1 :]) - centre  # the counter's half width

    def squeeze(x: int) -> int:
        u = abs(x - centre)
        u = u * COUNTER_SHARE if u <= hole else hole * COUNTER_SHARE + (u - hole) * STROKE_SHARE
        return round(centre + (u if x >= centre else -u))

    xs = [squeeze(x) for x in xs]
    return _encode(ends, on, xs, ys), min(xs)


def _checksum(table: bytes) -> int:
    padded = table + b"\0" * (-len(table) % 4)
    return int(np.frombuffer(padded, ">u4").sum(dtype=np.uint64)) & 0xFFFFFFFF


def plain_narrow_zero(data: bytes) -> bytes:
    """The TrueType font ``data`` with its 0 drawn as a plain oval narrower than its O
    (see the module docstring). ValueError when ``data`` is not a TrueType font whose 0
    is a ring with a dot inside."""
    try:
        return _rewrite(data)
    except (struct.error, IndexError, KeyError) as exc:
        raise ValueError(f"not a TrueType font with a dotted zero ({exc})") from None


def _rewrite(data: bytes) -> bytes:
    tables = _tables(data)

    def table(tag: str) -> bytes:
        offset, length = tables[tag]
        return data[offset : offset + length]

    head, glyf = bytearray(table("head")), table("glyf")
    unit = 1 if struct.unpack_from(">h", head, 50)[0] == 1 else 2  # long or short offsets
    (glyphs,) = struct.unpack_from(">H", table("maxp"), 4)
    fmt = f">{glyphs + 1}{'I' if unit == 1 else 'H'}"
    loca = [o * unit for o in struct.unpack_from(fmt, table("loca"))]
    zero = _glyph_of(table("cmap"), "0")
    glyph, left = _narrow_zero(glyf[loca[zero] : loca[zero + 1]])
    glyph += b"\0" * (-len(glyph) % 4)
    shift = len(glyph) - (loca[zero + 1] - loca[zero])
    loca[zero + 1 :] = [o + shift for o in loca[zero + 1 :]]
    new = {
        "glyf": glyf[: loca[zero]] + glyph + glyf[loca[zero + 1] - shift :],
        "loca": struct.pack(fmt, *(o // unit for o in loca)),
    }
    hmtx = bytearray(table("hmtx"))
    (metrics,) = struct.unpack_from(">H", table("hhea"), 34)
    lsb_at = 4 * zero + 2 if zero < metrics else 4 * metrics + 2 * (zero - metrics)
    struct.pack_into(">h", hmtx, lsb_at, left)
    new["hmtx"] = bytes(hmtx)
    struct.pack_into(">I", head, 8, 0)  # checkSumAdjustment, set below
    new["head"] = bytes(head)

    # The same tables in the same order (``tables`` keeps the directory's), each 4-byte
    # aligned, with fresh checksums.
    directory = bytearray(data[: 12 + 16 * len(tables)])
    body, at, head_at = b"", len(directory), 0
    for i, tag in enumerate(tables):
        content = new.get(tag, table(tag))
        record = (tag.encode("latin-1"), _checksum(content), at, len(content))
        struct.pack_into(">4sIII", directory, 12 + 16 * i, *record)  # as _tables reads it
        head_at = at if tag == "head" else head_at
        content += b"\0" * (-len(content) % 4)
        body += content
        at += len(content)
    font = bytearray(directory + body)
    struct.pack_into(">I", font, head_at + 8, (0xB1B0AFBA - _checksum(bytes(font))) & 0xFFFFFFFF)
    return bytes(font)
