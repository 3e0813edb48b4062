#!/bin/sh
# Encoder timings, every variant in the same run, interleaved, medians of RUNS runs:
# - JPEG, quality 95, 4:2:0, of a 1920x1080 and a 3024x4032 photo blurred with --box 30:
#   blurtool's encode path (encode_rgba from the RGBA result, as encode_output calls it) against
#   bare tjCompress2 calls on the same pixels (RGB, and the RGBA read as RGBX; into a reused
#   buffer with TJFLAG_NOREALLOC and into one TurboJPEG allocates), and the encode path it
#   replaced (from_rgba, then a compressor and a buffer made per call); the same for the R plane
#   as a greyscale JPEG;
# - JPEG of the same two in one piece against restart strips (the default layout and other strip
#   sizes) on 1 and all hardware threads, and the bytes the restart markers cost;
# - PNG of the 3024x4032 photo, blurred and as it is, at the default --png-level on 1 to all
#   hardware threads, against the libpng encoder it replaced (filter Up, Z_RLE), and with
#   strips of 256 KiB to 16 MiB against one deflate stream (bytes and time).
# The photos are made by scripts/make-bench-image.sh (ImageMagick) and blurred by blurtool.
# Usage: scripts/bench-encode.sh [--record DEVICE] [RUNS]   (default 21)
#   --record DEVICE  also record the output as the encode section of docs/performance/DEVICE.md
#                    (scripts/perf-record), e.g. pocl-2c on the project's 2-core VM
# Needs the build in build/ (cmake -S . -B build) and an OpenCL device for the blur.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
command="scripts/bench-encode.sh${*:+ $*}"
record=
if [ "${1:-}" = "--record" ]; then
  record=$2
  shift 2
fi
runs=${1:-21}
cmake --build "$root/build" --target blurtool encode_bench -j2 >/dev/null
work=$root/build/bench-encode
mkdir -p "$work"
for size in 1920x1080 3024x4032; do
  [ -f "$work/bench-$size.jpg" ] || "$root/scripts/make-bench-image.sh" "$work/bench-$size.jpg" "$size"
  "$root/build/blurtool" --box 30 --quiet "$work/bench-$size.jpg" "$work/bench-$size-box30.png"
done
cpu="$(nproc) cores of $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
bench=$root/build/encode_bench
{
  echo "bench-encode: $cpu, $runs runs, $(date +%F)"
  "$bench" jpeg --runs "$runs" "$work/bench-1920x1080-box30.png" "$work/bench-3024x4032-box30.png"
  "$bench" jpeg-strips --runs "$runs" "$work/bench-1920x1080-box30.png" "$work/bench-3024x4032-box30.png"
  "$bench" png --runs "$runs" "$work/bench-3024x4032-box30.png" "$work/bench-3024x4032.jpg"
  "$bench" png-strips --runs "$runs" "$work/bench-3024x4032-box30.png" "$work/bench-3024x4032.jpg"
} >"$work/report.txt"
cat "$work/report.txt"
if [ -n "$record" ]; then
  python3 "$root/scripts/perf-record" "$record" encode "$work/report.txt" --text \
    --date "$(date +%F)" --command "$command" --device "host only: $cpu"
fi
