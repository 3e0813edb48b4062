#!/usr/bin/env bash
# Box-blur schedules on one image, one CSV line per configuration: the reference schedules
# (scan, double-linear), then 'segmented' and 'segmented-local' over segment lengths,
# work-group shapes, intermediates and radii, then the one-pass 'fused' over tile rows,
# work-group shapes and radii (its rows_ms is the whole blur, cols_ms 0). Median kernel time of each pass and of both
# (OpenCL profiling events) after a warm-up, and the floor (a device copy of the same bytes)
# measured in the same run.
# Usage: scripts/bench-box-sweep.sh [IMAGE] [RUNS] > sweep.csv
#   IMAGE  default build/bench-3024x4032.jpg (scripts/make-bench-image.sh)
#   RUNS   timed repetitions per configuration, default 20
# Environment: BLURTOOL (default build/blurtool), BLURTOOL_DEVICE (which device),
#   SEGMENTS, WGS, UNROLLS, LOCAL_SEGMENTS, LOCAL_WGS, FUSED_SEGMENTS, FUSED_WGS, RADII
#   (space-separated lists overriding the defaults below), PARTS (which of: reference
#   segmented segmented-local fused; default all).
set -euo pipefail
image=${1:-build/bench-3024x4032.jpg}
runs=${2:-20}
bin=${BLURTOOL:-build/blurtool}
segments=${SEGMENTS:-"16 32 64 128"}
wgs=${WGS:-"default 2x32 4x16 8x8"}
unrolls=${UNROLLS:-"1 4 8 16"}
local_segments=${LOCAL_SEGMENTS:-"2 4 8 16 32"}
local_wgs=${LOCAL_WGS:-"default 32x1 64x1 256x1"}
fused_segments=${FUSED_SEGMENTS:-"32 64 128 256"}
fused_wgs=${FUSED_WGS:-"16x8 16x4 8x8 32x4 8x16 16x16"}
radii=${RADII:-"1 8 16 30 45 63"}
parts=" ${PARTS:-reference segmented segmented-local fused} "
want() { [[ $parts == *" $1 "* ]]; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "variant,radius,intermediate,segment,wg/unroll,rows_ms,cols_ms,total_ms,floor_ms,total_over_floor"
run() {  # run VARIANT RADIUS INTERMEDIATE SEGMENT WG [blurtool options...]
  local variant=$1 radius=$2 inter=$3 segment=$4 wg=$5
  shift 5
  local csv
  if ! csv=$("$bin" --box "$radius" --variant "$variant" --intermediate "$inter" "$@" \
      --bench "$runs" --bench-format csv "$image" "$out/o.png" 2>&1); then
    echo "$variant,$radius,$inter,$segment,$wg,failed: $(echo "$csv" | tail -1),,,,"
    return
  fi
  echo "$csv" | awk -F, -v v="$variant" -v r="$radius" -v i="$inter" -v s="$segment" -v w="$wg" '
    $1 == "kernel" { k[n++] = $3 } $1 == "total" { t = $3 } $1 == "floor" { f = $3 }
    END { printf "%s,%s,%s,%s,%s,%.4f,%.4f,%.4f,%.4f,%.1f\n", v, r, i, s, w, k[0], k[1], t, f,
                 t / f }'
}

want reference && for inter in rgba8 rgba32f; do
  run scan 30 "$inter" - default
  run double-linear 30 "$inter" - default
  run unrolled 30 "$inter" - default
done
# Segment length and work-group shape at r = 30.
want segmented && for seg in $segments; do
  for wg in $wgs; do
    opts=(--segment "$seg")
    [ "$wg" = default ] || opts+=(--wg "$wg")
    run segmented 30 rgba8 "$seg" "$wg" "${opts[@]}"
  done
done
# Pixels fetched per loop iteration, at each segment length with the default work-groups.
want segmented && for seg in $segments; do
  for u in $unrolls; do
    run segmented 30 rgba8 "$seg" "x$u" --segment "$seg" --unroll "$u"
  done
done
want segmented-local && for seg in $local_segments; do
  for wg in $local_wgs; do
    opts=(--segment "$seg")
    [ "$wg" = default ] || opts+=(--wg "$wg")
    run segmented-local 30 rgba8 "$seg" "$wg" "${opts[@]}"
  done
done
# Intermediates and the radius sweep at the default segments and work-groups.
for variant in segmented segmented-local; do
  want "$variant" || continue
  for inter in rgba8 rgba16f rgba32f; do
    for r in $radii; do run "$variant" "$r" "$inter" default default; done
  done
done
# fused: tile rows and work-group shapes at r = 30, then the radius sweep at the defaults.
if want fused; then
  for seg in $fused_segments; do
    for wg in $fused_wgs; do run fused 30 rgba8 "$seg" "$wg" --segment "$seg" --wg "$wg"; done
  done
  for r in $radii; do run fused "$r" rgba8 default default; done
fi
