"""Animated lessons: GIF, APNG and WebP through Pillow, MP4 (H.264) through PyAV, and a
numbered PNG sequence in a folder.

Frames are painted one at a time by a :class:`LessonRenderer` and handed to the
encoder in memory. MP4, APNG (:mod:`.apng`) and the PNG sequence are fully
streamed (one frame alive at a time); WebP is fed frame by frame to Pillow's
animation encoder, which keeps compressed frames only; Pillow's GIF writer keeps
each frame as an 8-bit palette image until the file is closed (it crops frames to
what changed), so a GIF costs about one byte per pixel per frame while writing.

GIF frames share one palette made from the title card, the last step and the end
card, without dithering, so text keeps hard, steady edges from frame to frame.
The MP4 has a variable frame rate: each picture is one video frame shown for its
own duration (yuv420p, even width and height: what slide software plays).

Every file names the app as its maker (:func:`engine.app_signature`, as the PNG,
PDF and HTML exports do) where its format has a place for it: the GIF comment, the
APNG's ``Software`` text chunk, the WebP's EXIF ``Software`` tag, the MP4's
``comment`` (ffmpeg overwrites ``encoder`` with its own name).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from PySide6.QtGui import QImage

from engine import app_signature

from ..model.lesson import Shot, ShotKind
from .apng import write_apng
from .atomic import atomic_file, atomic_folder
from .options import Kind
from .render import LessonRenderer

Progress = Callable[[int, int], None]

#: The EXIF tag naming the program that made the picture.
EXIF_SOFTWARE = 0x0131


def to_pil(image: QImage) -> Image.Image:
    """An RGB32 QImage as a Pillow RGB image (one copy of the pixels)."""
    w, h = image.width(), image.height()
    return Image.frombuffer(
        "RGB", (w, h), bytes(image.constBits()), "raw", "BGRX", image.bytesPerLine(), 1
    )


def to_array(image: QImage) -> np.ndarray:
    """An RGB32 QImage as an (h, w, 4) BGRA array (one copy of the pixels)."""
    w, h = image.width(), image.height()
    rows = np.frombuffer(bytes(image.constBits()), np.uint8).reshape(h, image.bytesPerLine())
    return rows[:, : w * 4].reshape(h, w, 4)


def _counted(renderer: LessonRenderer, progress: Progress | None) -> Iterator[tuple[Shot, QImage]]:
    total = len(renderer.shots)
    for i, pair in enumerate(renderer.images(), 1):
        yield pair
        if progress is not None:
            progress(i, total)


def write_animation(renderer: LessonRenderer, out: Path, progress: Progress | None = None) -> None:
    """Write the renderer's lesson to ``out`` in ``renderer.options.kind``."""
    kind = renderer.options.kind
    writer = {
        Kind.GIF: _write_gif,
        Kind.APNG: _write_apng,
        Kind.WEBP: _write_webp,
        Kind.MP4: _write_mp4,
        Kind.PNG_SEQUENCE: _write_png_sequence,
    }[kind]
    with (atomic_folder if kind == Kind.PNG_SEQUENCE else atomic_file)(out) as tmp:
        writer(renderer, tmp, progress)


# --------------------------------------------------------------------------- Pillow


def _palette(renderer: LessonRenderer) -> Image.Image:
    """One 256-colour palette for the whole GIF, from the pictures with the most colours."""
    shots = renderer.shots
    frames = [s for s in shots if s.kind is ShotKind.FRAME]
    picks = [shots[0], frames[-1], shots[-1]] if frames else [shots[0], shots[-1]]
    pictures = [to_pil(renderer.image(s)) for s in picks]
    w, h = pictures[0].size
    sheet = Image.new("RGB", (w, h * len(pictures)), "white")
    for i, p in enumerate(pictures):
        sheet.paste(p, (0, i * h))
    return sheet.quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)


def _write_gif(renderer: LessonRenderer, path: Path, progress: Progress | None) -> None:
    palette = _palette(renderer)
    frames = (
        to_pil(img).quantize(palette=palette, dither=Image.Dither.NONE)
        for _, img in _counted(renderer, progress)
    )
    first = next(frames)
    first.save(
        path,
        "GIF",
        save_all=True,
        append_images=frames,
        loop=0,
        comment=app_signature().encode(),
        optimize=False,
        disposal=1,
        duration=[s.duration_ms for s in renderer.shots],
    )


def _write_apng(renderer: LessonRenderer, path: Path, progress: Progress | None) -> None:
    frames = ((to_pil(img), shot.duration_ms) for shot, img in _counted(renderer, progress))
    with open(path, "wb") as out:
        write_apng(out, frames, len(renderer.shots), app_signature())


def _write_webp(renderer: LessonRenderer, path: Path, progress: Progress | None) -> None:
    from PIL import _webp  # Pillow's own WebP animation encoder, fed one frame at a time

    w, h = renderer.size
    white = 0xFFFFFFFF
    enc = _webp.WebPAnimEncoder((w, h), white, 0, False, 9, 17, False, False)
    t = 0
    for shot, img in _counted(renderer, progress):
        frame = to_pil(img).convert("RGBA")
        enc.add(frame.getim(), t, True, 0.0, 100.0, 0)  # lossless: crisp text
        t += shot.duration_ms
    enc.add(None, t, True, 0.0, 100.0, 0)
    exif = Image.Exif()
    exif[EXIF_SOFTWARE] = app_signature()
    data = enc.assemble(b"", exif.tobytes().removeprefix(b"Exif\x00\x00"), b"")
    if data is None:
        raise OSError("the WebP encoder returned nothing")
    path.write_bytes(data)


# --------------------------------------------------------------------------- PyAV


def even_size(size: tuple[int, int]) -> tuple[int, int]:
    """H.264 in yuv420p needs even sides: drop a pixel from an odd one."""
    w, h = size
    return w - w % 2, h - h % 2


def h264_stream(container: Any, size: tuple[int, int], fps: float) -> Any:
    """The MP4's video stream in ``container`` (a PyAV output): H.264, yuv420p, times in
    milliseconds (each picture keeps its own duration)."""
    stream = container.add_stream("libx264", rate=max(1, round(fps)))
    stream.width, stream.height = even_size(size)
    stream.pix_fmt = "yuv420p"
    stream.codec_context.time_base = Fraction(1, 1000)
    stream.options = {"preset": "veryfast", "crf": "20", "tune": "stillimage"}
    return stream


def _write_mp4(renderer: LessonRenderer, path: Path, progress: Progress | None) -> None:
    import av  # lazy: PyAV loads only for an MP4

    w, h = even_size(renderer.size)
    with av.open(str(path), mode="w", format="mp4") as container:
        container.metadata["comment"] = app_signature()
        stream = h264_stream(container, renderer.size, renderer.options.timing.fps)
        durations: dict[int, int] = {}  # pts -> how long that picture stays (ms)

        def mux(pixels: np.ndarray | None, pts: int = 0) -> None:
            frame = None
            if pixels is not None:
                frame = av.VideoFrame.from_ndarray(pixels, format="bgra")
                frame.pts, frame.time_base = pts, Fraction(1, 1000)
            for packet in stream.encode(frame):
                packet.duration = durations.pop(packet.pts, 0) if packet.pts is not None else 0
                container.mux(packet)

        # H.264 encodes a picture while the next one is painted (PyAV lets go of the
        # GIL in the encoder): one worker, in order, at most two pictures waiting, so
        # frames stay streamed.
        t = 0
        with ThreadPoolExecutor(max_workers=1) as encoder:
            waiting: deque[Future[None]] = deque()
            try:
                for shot, img in _counted(renderer, progress):
                    durations[t] = shot.duration_ms
                    pixels = np.ascontiguousarray(to_array(img)[:h, :w])
                    waiting.append(encoder.submit(mux, pixels, t))
                    t += shot.duration_ms
                    while len(waiting) > 2 or (waiting and waiting[0].done()):
                        waiting.popleft().result()  # an encoder error surfaces here
                while waiting:
                    waiting.popleft().result()
            finally:
                for job in waiting:  # cancelled or failed: nothing more is encoded
                    job.cancel()
            encoder.submit(mux, None).result()


# --------------------------------------------------------------------------- PNG folder


def _write_png_sequence(renderer: LessonRenderer, folder: Path, progress: Progress | None) -> None:
    digits = max(4, len(str(len(renderer.shots))))
    for i, (_, img) in enumerate(_counted(renderer, progress), 1):
        name = folder / f"frame_{i:0{digits}d}.png"
        if not img.save(str(name), "PNG"):  # type: ignore[call-overload]
            raise OSError(f"cannot write {name.name}")
