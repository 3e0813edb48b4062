#!/usr/bin/python3
"""Checks that blurtool's PNG output reads the same in libpng (through OpenCV), Pillow and
ImageMagick, and holds the pixels blurtool computed: inputs of 1-4 channels at 8 and 16 bits, of
odd sizes (1x1, 1xN, Nx1, primes) and of sizes that make several deflate strips, are blurred with
--box 3 at several --png-level values and --jobs counts; every output is decoded by each reader,
and by blurtool's own decoder (a --box 0 copy of it, written back as a stored PNG, level 0), and
all must agree sample for sample. OpenCV and Pillow check the zlib stream's Adler-32 and the
chunks' CRCs. With REFERENCE, another blurtool build (the one before an encoder change), its
outputs of the same inputs must read the same too.
Needs python3-numpy, python3-opencv, python3-pil and ImageMagick's convert.
Usage: scripts/check-png-readers.py [BLURTOOL [REFERENCE]]   (default: build/blurtool)"""
import os
import struct
import subprocess
import sys
import tempfile
import zlib

import cv2
import numpy as np
from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BLURTOOL = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "blurtool")
REFERENCE = sys.argv[2] if len(sys.argv) > 2 else None
COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}


def write_png(path, pixels):
    """A plain PNG of `pixels` (height x width x channels, uint8 or uint16), filter None."""
    h, w, c = pixels.shape
    depth = 16 if pixels.dtype == np.uint16 else 8
    rows = pixels.astype(">u2" if depth == 16 else "u1").reshape(h, -1).view(np.uint8)
    raw = np.hstack([np.zeros((h, 1), np.uint8), rows]).tobytes()

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data)))

    ihdr = struct.pack(">IIBBBBB", w, h, depth, COLOR_TYPE[c], 0, 0, 0)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) +
                chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def as_rgba16(pixels):
    """Any reader's array (h x w x c, 8 or 16 bits) as 16-bit RGBA, grey replicated."""
    p = pixels.astype(np.uint32) * (257 if pixels.dtype == np.uint8 else 1)
    if p.ndim == 2:
        p = p[:, :, None]
    c = p.shape[2]
    grey = p[:, :, :1]
    alpha = np.full_like(grey, 65535)
    if c == 1:
        return np.concatenate([grey, grey, grey, alpha], axis=2)
    if c == 2:
        return np.concatenate([grey, grey, grey, p[:, :, 1:2]], axis=2)
    if c == 3:
        return np.concatenate([p, alpha], axis=2)
    return p


def read_opencv(path):
    p = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if p is None:
        raise RuntimeError("OpenCV cannot read " + path)
    if p.ndim == 3 and p.shape[2] == 3:
        p = p[:, :, ::-1]
    elif p.ndim == 3 and p.shape[2] == 4:
        p = p[:, :, [2, 1, 0, 3]]
    return as_rgba16(p)


def read_pillow(path):
    with Image.open(path) as im:
        im.load()
        mode = im.mode
        a = np.asarray(im)
    if mode in ("I;16", "I;16B", "I"):
        a = a.astype(np.uint16)
    return as_rgba16(a), mode


def read_imagemagick(path, w, h):
    raw = subprocess.run(["convert", path, "-depth", "16", "-endian", "MSB", "rgba:-"], check=True,
                         capture_output=True).stdout
    return np.frombuffer(raw, ">u2").reshape(h, w, 4).astype(np.uint32)


def main():
    rng = np.random.default_rng(7)
    sizes = [(1, 1), (1, 29), (29, 1), (37, 23), (131, 3), (1500, 1000), (997, 1009)]
    failures = 0
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        for w, h in sizes:
            for depth in (8, 16):
                for c in (1, 2, 3, 4):
                    big = w * h > 100000
                    if big and (depth, c) not in ((8, 3), (16, 4), (8, 1)):
                        continue
                    dtype = np.uint16 if depth == 16 else np.uint8
                    top = 65535 if depth == 16 else 255
                    # Smooth ramps with noise: what a blur leaves, with something to compress.
                    y, x = np.mgrid[0:h, 0:w]
                    base = (x * 7 + y * 3)[:, :, None] + np.arange(c) * 40
                    noise = rng.integers(0, 16, (h, w, c))
                    pixels = ((base + noise) * (top // 255) % (top + 1)).astype(dtype)
                    src = os.path.join(tmp, f"in_{w}x{h}_{depth}_{c}.png")
                    write_png(src, pixels)
                    for level, jobs in ((1, None), (0, "1"), (6, "3"), (9, None)):
                        if big and level == 9:
                            continue
                        out = os.path.join(tmp, f"out_{w}x{h}_{depth}_{c}_{level}.png")
                        args = [BLURTOOL, "--box", "3", "--quiet", "--png-level", str(level)]
                        if jobs:
                            args += ["--jobs", jobs]
                        subprocess.run(args + [src, out], check=True)
                        # blurtool's own reading: copied through --box 0 into a stored PNG.
                        copy = out + ".copy.png"
                        subprocess.run([BLURTOOL, "--box", "0", "--quiet", "--png-level", "0",
                                        "--straight-alpha", out, copy], check=True)
                        own = read_opencv(copy)
                        if REFERENCE and level == 1:
                            ref = out + ".ref.png"
                            subprocess.run([REFERENCE, "--box", "3", "--quiet", src, ref],
                                           check=True)
                            if not np.array_equal(read_opencv(ref), own):
                                print(f"FAIL {out}: differs from {REFERENCE}'s output")
                                failures += 1
                        readers = {"OpenCV (libpng)": read_opencv(out),
                                   "ImageMagick": read_imagemagick(out, w, h)}
                        pil, mode = read_pillow(out)
                        if depth == 16 and c != 1:
                            # Pillow reads 16-bit colour and grey+alpha at 8 bits (high byte).
                            own8 = (own >> 8) * 257
                            ok = np.array_equal(pil, own8)
                        else:
                            ok = np.array_equal(pil, own)
                        if not ok:
                            print(f"FAIL {out}: Pillow ({mode}) differs")
                            failures += 1
                        for name, got in readers.items():
                            if not np.array_equal(got, own):
                                print(f"FAIL {out}: {name} differs")
                                failures += 1
                        checked += 1
    print(f"check-png-readers: {checked} outputs, {failures} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
