#!/usr/bin/env python3
"""Writes the body textures of assets/textures: eight greyscale 128x128 PNG patterns that stay
distinguishable when tinted with any body colour (and in grey print). Deterministic; uses only
the standard library. Run from the repository root: python3 scripts/make-textures.py"""
import math
import pathlib
import struct
import zlib

SIZE = 128


def png(path, pixel):
    rows = []
    for y in range(SIZE):
        row = bytes([0]) + bytes(max(0, min(255, int(round(255 * pixel(x / SIZE, y / SIZE))))) for x in range(SIZE))
        rows.append(row)
    raw = zlib.compress(b"".join(rows), 9)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 0, 0, 0, 0)  # 8-bit greyscale
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", raw) + chunk(b"IEND", b""))


# u runs around the sphere (longitude), v from pole to pole; each pattern repeats seamlessly in u.
PATTERNS = {
    "plain": lambda u, v: 1.0,
    "stripes": lambda u, v: 1.0 if int(v * 8) % 2 == 0 else 0.45,
    "bands": lambda u, v: 1.0 if int(u * 8) % 2 == 0 else 0.45,
    "checks": lambda u, v: 1.0 if (int(u * 8) + int(v * 4)) % 2 == 0 else 0.45,
    "dots": lambda u, v: 0.45 if math.hypot((u * 8) % 1 - 0.5, (v * 4) % 1 - 0.5) < 0.28 else 1.0,
    "diagonal": lambda u, v: 1.0 if int((u * 8 + v * 4) * 1.0) % 2 == 0 else 0.45,
    "waves": lambda u, v: 0.72 + 0.28 * math.sin(2 * math.pi * (v * 6 + 0.5 * math.sin(2 * math.pi * u * 4))),
    "grid": lambda u, v: 0.45 if min((u * 8) % 1, (v * 4) % 1) < 0.14 else 1.0,
}

if __name__ == "__main__":
    folder = pathlib.Path(__file__).resolve().parent.parent / "assets" / "textures"
    folder.mkdir(parents=True, exist_ok=True)
    for index, (name, pattern) in enumerate(PATTERNS.items()):
        png(folder / f"{index:02d}-{name}.png", pattern)
