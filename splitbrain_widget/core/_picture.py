"""A picture of a target's page: a PNG checked before it is kept, shown as an image in a notebook.

The page takes it inside its sandbox (``js/page/target_api.js``, ``snapshot``); what comes back is a
page's word, so the base64, the PNG signature and the size its header states are checked against the
reply's ``width`` and ``height`` and the bounds of :mod:`splitbrain_widget.protocol`.
"""

from __future__ import annotations

import base64
import binascii
import struct
from pathlib import Path

from ..protocol import MAX_PICTURE_BYTES, MAX_PICTURE_SIDE, PictureData, ToolResult

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class PictureError(ValueError):
    """A picture that is not the PNG it claims to be."""


class SnapshotError(RuntimeError):
    """No picture could be taken; the message says why (no view, a page with no canvas, ...), and
    ``result`` is the call's result where the call failed."""

    def __init__(self, message: str, result: ToolResult | None = None) -> None:
        super().__init__(message)
        self.result = result


class Picture(bytes):
    """A PNG of a target's page: the bytes themselves, with its size, shown as an image in a notebook.

    ``alt`` is the page in words (:meth:`TargetWidget.describe`), for readers who cannot see it.
    """

    width: int
    height: int
    alt: str

    def __new__(cls, data: bytes, width: int, height: int, alt: str = "") -> Picture:
        picture = super().__new__(cls, data)
        picture.width, picture.height, picture.alt = width, height, alt
        return picture

    def _repr_png_(self) -> bytes:
        return bytes(self)

    def __repr__(self) -> str:
        return f"<Picture {self.width}x{self.height} PNG, {len(self):,} bytes>"

    def base64(self) -> str:
        """The PNG in base64 (as a notebook output's ``image/png`` and an MCP image carry it)."""
        return base64.b64encode(self).decode("ascii")

    def data_url(self) -> str:
        """The picture as a ``data:image/png;base64,...`` URL."""
        return "data:image/png;base64," + self.base64()

    def save(self, path: str | Path) -> Path:
        """Write the PNG to ``path``; returns the path."""
        out = Path(path)
        out.write_bytes(self)
        return out


def png_size(data: bytes) -> tuple[int, int]:
    """The width and height a PNG's header states; :class:`PictureError` when ``data`` is no PNG."""
    if not data.startswith(PNG_SIGNATURE) or len(data) < 24 or data[12:16] != b"IHDR":
        raise PictureError("not a PNG (no PNG signature and IHDR header)")
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


def picture_from(data: PictureData, alt: str = "") -> Picture:
    """Decode and check a reply's picture: base64, a PNG, of the size it claims, within the bounds."""
    try:
        raw = base64.b64decode(data.png, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise PictureError(f"the picture is not base64: {exc}") from None
    return checked_picture(raw, alt, claimed=(data.width, data.height))


def checked_picture(raw: bytes, alt: str = "", claimed: tuple[int, int] | None = None) -> Picture:
    """``raw`` as a :class:`Picture` once checked: a PNG, of the size ``claimed`` where a size was
    claimed, within the bounds (a page's reply, or Chromium's screenshot)."""
    if len(raw) > MAX_PICTURE_BYTES:
        raise PictureError(f"the picture has {len(raw):,} bytes, more than {MAX_PICTURE_BYTES:,}")
    width, height = png_size(raw)
    if claimed is not None and (width, height) != claimed:
        raise PictureError(f"the PNG is {width}x{height}, the reply says {claimed[0]}x{claimed[1]}")
    if max(width, height) > MAX_PICTURE_SIDE:
        raise PictureError(f"the PNG is {width}x{height}, more than {MAX_PICTURE_SIDE} pixels a side")
    return Picture(raw, width, height, alt)
