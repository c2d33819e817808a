"""A streaming APNG writer: Pillow compresses each frame, this module only lays out chunks.

Pillow's own APNG writer reads the frames twice and keeps all of them until the
file is closed; a lesson of a thousand 1280x720 frames would not fit. Here each
frame is encoded as a PNG by Pillow, cropped to the rectangle that changed since
the previous frame, and its image data is copied into the animation's ``fdAT``
chunks at once (APNG specification: IHDR, acTL, then per frame fcTL + IDAT/fdAT).
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterable
from typing import BinaryIO

from PIL import Image, ImageChops

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(out: BinaryIO, kind: bytes, data: bytes) -> None:
    out.write(struct.pack(">I", len(data)) + kind + data)
    out.write(struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def _chunks(png: bytes) -> Iterable[tuple[bytes, bytes]]:
    pos = len(SIGNATURE)
    while pos < len(png):
        (length,) = struct.unpack(">I", png[pos : pos + 4])
        yield png[pos + 4 : pos + 8], png[pos + 8 : pos + 8 + length]
        pos += 12 + length


def _encode(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, "PNG", compress_level=3)
    return buf.getvalue()


def write_apng(
    out: BinaryIO, frames: Iterable[tuple[Image.Image, int]], count: int, software: str
) -> None:
    """Write ``count`` RGB frames, each with its duration in milliseconds, looping forever;
    ``software`` names the maker in a ``tEXt`` chunk (keyword ``Software``, Latin-1)."""
    sequence = 0
    previous: Image.Image | None = None
    written = 0
    for image, duration_ms in frames:
        if previous is None:
            header = _encode(image)
            out.write(SIGNATURE)
            for kind, data in _chunks(header):
                if kind == b"IHDR":
                    _chunk(out, kind, data)
                    _chunk(out, b"acTL", struct.pack(">II", count, 0))
                    text = software.encode("latin-1", "replace")
                    _chunk(out, b"tEXt", b"Software\x00" + text)
            box = (0, 0, *image.size)
        else:
            box = ImageChops.difference(previous, image).getbbox() or (0, 0, 1, 1)
        x0, y0, x1, y1 = box
        part = image if box == (0, 0, *image.size) else image.crop(box)
        _chunk(
            out,
            b"fcTL",
            struct.pack(">IIIIIHHBB", sequence, x1 - x0, y1 - y0, x0, y0, duration_ms, 1000, 0, 0),
        )
        sequence += 1
        for kind, data in _chunks(_encode(part)):
            if kind != b"IDAT":
                continue
            if written == 0:
                _chunk(out, b"IDAT", data)
            else:
                _chunk(out, b"fdAT", struct.pack(">I", sequence) + data)
                sequence += 1
        previous = image
        written += 1
    if written != count:
        raise ValueError(f"APNG: {written} frames written, {count} announced")
    _chunk(out, b"IEND", b"")
