#!/usr/bin/env bash
# Box-blur schedules on one image, one CSV line per configuration: the reference schedules
# (scan, double-linear), then 'segmented' over segment lengths, work-group shapes,
# intermediates and radii. Median kernel time of both passes (OpenCL profiling events) after a
# warm-up, and the floor (a device copy of the same bytes) measured in the same run.
# Usage: scripts/bench-box-sweep.sh [IMAGE] [RUNS] > sweep.csv
#   IMAGE  default build/bench-3024x4032.jpg (scripts/make-bench-image.sh)
#   RUNS   timed repetitions per configuration, default 20
# Environment: BLURTOOL (default build/blurtool), BLURTOOL_DEVICE (which device),
#   SEGMENTS, WGS, RADII (space-separated lists overriding the defaults below).
set -euo pipefail
image=${1:-build/bench-3024x4032.jpg}
runs=${2:-20}
bin=${BLURTOOL:-build/blurtool}
segments=${SEGMENTS:-"8 16 32 64 128"}
wgs=${WGS:-"default 1x64 4x16 8x8 16x4 64x1"}
radii=${RADII:-"1 8 16 30 45 63"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "variant,radius,intermediate,segment,wg,total_ms,floor_ms,total_over_floor"
run() {  # run VARIANT RADIUS INTERMEDIATE SEGMENT WG [blurtool options...]
  local variant=$1 radius=$2 inter=$3 segment=$4 wg=$5
  shift 5
  local csv
  if ! csv=$("$bin" --box "$radius" --variant "$variant" --intermediate "$inter" "$@" \
      --bench "$runs" --bench-format csv "$image" "$out/o.png" 2>&1); then
    echo "$variant,$radius,$inter,$segment,$wg,failed: $(echo "$csv" | tail -1),,"
    return
  fi
  echo "$csv" | awk -F, -v v="$variant" -v r="$radius" -v i="$inter" -v s="$segment" -v w="$wg" '
    $1 == "total" { t = $3 } $1 == "floor" { f = $3 }
    END { printf "%s,%s,%s,%s,%s,%.4f,%.4f,%.1f\n", v, r, i, s, w, t, f, t / f }'
}

for inter in rgba8 rgba32f; do
  run scan 30 "$inter" - default
  run double-linear 30 "$inter" - default
done
# Segment length and work-group shape at r = 30.
for seg in $segments; do
  for wg in $wgs; do
    opts=(--segment "$seg")
    [ "$wg" = default ] || opts+=(--wg "$wg")
    run segmented 30 rgba8 "$seg" "$wg" "${opts[@]}"
  done
done
# Intermediates and the radius sweep at the default segment and work-groups.
for inter in rgba8 rgba16f rgba32f; do
  for r in $radii; do run segmented "$r" "$inter" 32 default; done
done
