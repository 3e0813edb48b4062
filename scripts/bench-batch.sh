#!/bin/sh
# Batch throughput: COUNT photos of WxH blurred by one blurtool batch run (one OpenCL context,
# programs compiled once, decoding and encoding overlapping the device) against a shell loop
# that starts blurtool once per image. Prints images/s of each and their ratio; wall time,
# decoding and encoding included.
#
# The photos are 10 distinct JPEGs (quality 95) made from samples/ with ImageMagick
# (scripts/make-bench-image.sh, then flipped, rotated and re-toned), copied to COUNT files. On
# a machine without ImageMagick give a folder of ready JPEGs in SOURCES.
#
# Usage: scripts/bench-batch.sh [COUNT] [WxH] [WORKDIR]
#   COUNT    images, default 100
#   WxH      their size, default 1920x1080
#   WORKDIR  scratch folder, default build/bench-batch (emptied first)
# Environment: BLURTOOL (default build/blurtool), OP (default "--box 30"), SOURCES (see above),
#   EXTRA (more blurtool options for both runs, e.g. "--device 0")
# Example: scripts/bench-batch.sh 100 1920x1080
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
count=${1:-100}
size=${2:-1920x1080}
work=${3:-$root/build/bench-batch}
blurtool=${BLURTOOL:-$root/build/blurtool}
op=${OP:---box 30}
extra=${EXTRA:-}

case $count in *[!0-9]* | "" | 0) echo "bench-batch: COUNT '$count' is not a whole number above 0" >&2; exit 2 ;; esac
[ -x "$blurtool" ] || { echo "bench-batch: no blurtool at $blurtool (build it, or set BLURTOOL)" >&2; exit 2; }

rm -rf "$work"
mkdir -p "$work/sources" "$work/in" "$work/out-batch" "$work/out-loop"
if [ -n "${SOURCES:-}" ]; then
  cp "$SOURCES"/*.jpg "$work/sources/"
else
  base="$work/sources/base.jpg"
  "$root/scripts/make-bench-image.sh" "$base" "$size" >/dev/null
  i=0
  for change in "" "-flop" "-flip" "-rotate 180" "-modulate 90,120" "-modulate 110,80" \
                "-flop -modulate 95,110" "-flip -modulate 105,90" "-negate" "-flop -negate"; do
    # shellcheck disable=SC2086 # $change holds several words on purpose
    convert "$base" $change -quality 95 "$work/sources/photo-$i.jpg"
    i=$((i + 1))
  done
  rm "$base"
fi
n_sources=$(ls "$work/sources" | wc -l)
i=0
while [ "$i" -lt "$count" ]; do
  src=$(ls "$work/sources" | sed -n "$((i % n_sources + 1))p")
  cp "$work/sources/$src" "$(printf '%s/in/img-%04d.jpg' "$work" "$i")"
  i=$((i + 1))
done
mb=$(du -sm "$work/in" | cut -f1)

now() { date +%s.%N; }
rate() { awk -v n="$1" -v a="$2" -v b="$3" 'BEGIN { printf "%.2f", n / (b - a) }'; }

echo "bench-batch: $count images of $size ($mb MB of JPEG), blurtool $op $extra"
"$blurtool" --version | sed 's/^/  /'

# shellcheck disable=SC2086 # $op and $extra hold several words on purpose
t0=$(now)
"$blurtool" $op $extra --quiet "$work/in" "$work/out-batch"
t1=$(now)
for f in "$work"/in/*.jpg; do
  "$blurtool" $op $extra --quiet "$f" "$work/out-loop/$(basename "$f")"
done
t2=$(now)

done_batch=$(ls "$work/out-batch" | wc -l)
done_loop=$(ls "$work/out-loop" | wc -l)
batch=$(rate "$done_batch" "$t0" "$t1")
loop=$(rate "$done_loop" "$t1" "$t2")
awk -v t0="$t0" -v t1="$t1" -v t2="$t2" -v nb="$done_batch" -v nl="$done_loop" \
    -v b="$batch" -v l="$loop" 'BEGIN {
  printf "  batch run:  %d images in %6.2f s = %s images/s\n", nb, t1 - t0, b
  printf "  shell loop: %d images in %6.2f s = %s images/s\n", nl, t2 - t1, l
  printf "  batch / loop: %.2fx\n", b / l
}'
cmp -s "$work/out-batch/img-0000.jpg" "$work/out-loop/img-0000.jpg" &&
  echo "  outputs of both runs are identical (img-0000.jpg compared)" ||
  { echo "bench-batch: batch and loop outputs differ" >&2; exit 1; }
