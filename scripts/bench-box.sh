#!/usr/bin/env bash
# The box-blur benchmark of issue 2: `--box 30 --bench` for every variant and intermediate
# format on one image (default: the 3024x4032 photo made by scripts/make-bench-image.sh), on the
# chosen device. Prints each --bench table and writes one CSV of all of them.
# Usage: scripts/bench-box.sh [IMAGE] [OUTDIR] [RUNS]
# Environment: BLURTOOL (the binary; default: blurtool on PATH, else build/blurtool),
#              BLURTOOL_DEVICE (which device), RADIUS (default 30),
#              SLOW_RUNS (runs for the one-pass variants, whose cost grows with R^2; default RUNS).
set -euo pipefail
image=${1:-build/bench-3024x4032.jpg}
outdir=${2:-build/bench-box}
runs=${3:-10}
radius=${RADIUS:-30}
slow_runs=${SLOW_RUNS:-$runs}
bin=${BLURTOOL:-$(command -v blurtool || echo build/blurtool)}
mkdir -p "$outdir"
csv="$outdir/box-r$radius.csv"
echo "variant,intermediate,kind,name,median_ms,min_ms,max_ms,bytes,gbps" > "$csv"

"$bin" --list-devices
run() {  # variant intermediate runs
  local out="$outdir/out-$1-$2.png" format=$2
  [ "$format" = none ] && format=rgba32f  # one-pass variants have no intermediate
  "$bin" --box "$radius" --variant "$1" --intermediate "$format" "$image" "$out" \
    --bench "$3" --bench-format csv | tail -n +2 | sed "s/^/$1,$2,/" >> "$csv"
  echo "== $1 $2"
  grep "^$1,$2," "$csv" | awk -F, '{printf "  %-8s %-22s median %9.3f ms  %8.1f GB/s\n", $3, $4, $5, $9}'
  rm -f "$out"
}
for v in single single-linear; do run "$v" none "$slow_runs"; done
for v in double double-linear accumulated unrolled scan; do
  for f in rgba8 rgba16f rgba32f; do run "$v" "$f" "$runs"; done
done
echo "wrote $csv"
