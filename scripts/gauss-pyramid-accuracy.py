#!/usr/bin/python3
"""The pyramid Gaussian's difference from the exact Gaussian on a photo, 8-bit, clamp edges.

Both in double precision with numpy, transcribing gauss_separable_reference (ceil(3 sigma) taps,
normalised) and gauss_pyramid_reference (filters/gauss/gauss_reference.cpp; the factor and
coarse sigma of gauss_pyramid() in filters/gauss/gauss_weights.cpp), each rounded once at the
end. Prints one markdown row: the photo, then "max / mean" absolute difference in levels at each
sigma. docs/notes/gauss.md, "the pyramid method", has the table of the shared photos.
Usage: scripts/gauss-pyramid-accuracy.py PHOTO 8,10,16,30,60,120
"""
import math
import sys

import numpy as np
from PIL import Image
def weights(sigma):
    R = int(math.ceil(3*sigma)); x = np.arange(-R, R+1); w = np.exp(-x*x/(2*sigma*sigma)); return x, w/w.sum()
def gauss1d(a, sigma, axis):
    x, w = weights(sigma); a = np.moveaxis(a, axis, 0); n = a.shape[0]
    out = np.zeros_like(a, dtype=np.float64)
    for k, wk in zip(x, w): out += wk*a[np.clip(np.arange(n)+k, 0, n-1)]
    return np.moveaxis(out, 0, axis)
def pyramid(sigma, smin=2.0):  # kGaussPyramidCoarseSigma
    f = 1
    while sigma/(2*f) >= smin: f *= 2
    ph = sum(((2*j+1-f)/(2*f) - math.floor((2*j+1-f)/(2*f)))*(1-((2*j+1-f)/(2*f) - math.floor((2*j+1-f)/(2*f)))) for j in range(f))
    up = f*f*ph/f; box = (f*f-1)/12
    return f, math.sqrt(max(sigma*sigma - box - up, 1e-6))/f
def pyr1d(a, sigma, axis):
    f, sc = pyramid(sigma); x, w = weights(sc); Rc = len(x)//2
    a = np.moveaxis(a, axis, 0); n = a.shape[0]; P = Rc + 2; m = (n + f - 1)//f
    cells = np.arange(-P, m + P); C = np.zeros((len(cells),)+a.shape[1:])
    for j in range(f): C += a[np.clip(cells*f + j, 0, n-1)]
    C /= f; B = np.zeros_like(C)
    for k, wk in zip(x, w): B[Rc:len(cells)-Rc] += wk*C[np.arange(Rc, len(cells)-Rc)+k]
    num = 2*np.arange(n)+1-f; i0 = np.floor_divide(num, 2*f); t = ((num - 2*f*i0)/(2*f)).reshape((n,)+(1,)*(a.ndim-1))
    return np.moveaxis((1-t)*B[i0+P] + t*B[i0+1+P], 0, axis)
img = np.asarray(Image.open(sys.argv[1]).convert('RGB')).astype(np.float64)
row = []
for sigma in [float(s) for s in sys.argv[2].split(',')]:
    ex = np.floor(gauss1d(gauss1d(img, sigma, 0), sigma, 1) + 0.5)
    py = np.floor(pyr1d(pyr1d(img, sigma, 0), sigma, 1) + 0.5)
    d = np.abs(ex - py); row.append(f"{d.max():.0f} / {d.mean():.2f}")
print(f"| {sys.argv[1].split('/')[-1]} | " + " | ".join(row) + " |", flush=True)
