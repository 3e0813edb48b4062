#!/usr/bin/python3
"""Inputs of scripts/bench-fidelity.sh, made from the project's sample photos (needs
python3-opencv and python3-numpy): deep.png, a 256x160 crop of the coffee photo at 16 bits with
seeded noise in the low byte (so that no sample is a widened 8-bit one); alpha.png, the same photo as
RGBA8 with a transparent left third whose colour is pure red and an alpha ramp after it; box.jpg
(3024x4032) and gauss.jpg (1920x1080), the suite's benchmark images.
Usage: scripts/make-fidelity-inputs.py OUTDIR BENCH_3024x4032.jpg BENCH_1920x1080.jpg"""
import shutil
import sys

import cv2
import numpy as np

out, box, gauss = sys.argv[1:4]
photo = cv2.imread("samples/coffee_600x400.png", cv2.IMREAD_COLOR)[120:280, 172:428]
rng = np.random.default_rng(10)
deep = photo.astype(np.uint16) * 257 + rng.integers(0, 256, photo.shape, dtype=np.uint16) - 128
deep = np.clip(deep.astype(np.int32), 0, 65535).astype(np.uint16)
cv2.imwrite(f"{out}/deep.png", deep)
alpha = cv2.cvtColor(photo, cv2.COLOR_BGR2BGRA)
w = alpha.shape[1]
alpha[:, : w // 3, :3] = (0, 0, 255)  # BGR: red under the transparent part
alpha[:, : w // 3, 3] = 0
ramp = np.linspace(0, 255, w - w // 3).astype(np.uint8)
alpha[:, w // 3 :, 3] = ramp
cv2.imwrite(f"{out}/alpha.png", alpha)
shutil.copy(box, f"{out}/box.jpg")
shutil.copy(gauss, f"{out}/gauss.jpg")
