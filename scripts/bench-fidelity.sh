#!/bin/bash
# The fidelity modes (issue 10) on one device: every box and Gaussian variant run at 16 bits
# (a 16-bit PNG), in premultiplied form (an RGBA PNG with transparency) and in linear light,
# written under OUTDIR/check/ so that two devices' outputs can be compared file by file
# (box and bright points: equal bytes expected; Gaussian: within a level, the devices' float
# arithmetic, more where alpha is a few levels: see the man page), and the
# kernel-time cost of the working space: box r=30 on 3024x4032 and Gaussian sigma 10 radius 16
# on 1920x1080, 8-bit as stored against --linear-light (RGBA16 in the working space, prepare and
# finish passes included), median of N runs after a warm-up (--bench N, profiling events).
#
# Usage: scripts/bench-fidelity.sh BLURTOOL INPUTS OUTDIR [N] [DEVICE]
#   INPUTS holds deep.png (16-bit), alpha.png (RGBA with transparency), box.jpg (3024x4032)
#   and gauss.jpg (1920x1080); scripts/make-fidelity-inputs.py makes them from samples/.
set -euo pipefail
bin=$1 in=$2 out=$3 runs=${4:-20} device=${5:-0}
mkdir -p "$out/check"
box_variants="single single-linear double double-linear accumulated unrolled scan segmented
  segmented-local tiled fused"
gauss_variants="naive naive-local separable separable-linear separable-local fused-local tiled fused"
# blur OP ARGS VARIANT: OP ARGS with VARIANT on each input mode, into check/OP-VARIANT-MODE.png.
blur() {
  local op=$1 arg=$2 v=$3 mode args
  for mode in deep alpha linear; do
    case $mode in
      deep) args=("$in/deep.png") ;;
      alpha) args=("$in/alpha.png") ;;
      linear) args=(--linear-light "$in/alpha.png") ;;
    esac
    "$bin" --device "$device" -q "--$op" "$arg" --variant "$v" "${args[@]}" \
      "$out/check/$op-$v-$mode.png" || echo "$op $v $mode: failed" >&2
  done
}
for v in $box_variants; do blur box 7 "$v"; done
for v in $gauss_variants; do blur gauss 3 "$v"; done
for v in serial per-thread tree hybrid subgroup buffer; do  # bright points: exact everywhere
  for mode in "" --linear-light; do
    "$bin" --device "$device" -q --bright 0.3 --variant "$v" $mode "$in/deep.png" \
      "$out/check/bright-$v${mode:+-linear}.csv" || echo "bright $v $mode: failed" >&2
  done
done
{
  for mode in "" --linear-light; do
    "$bin" --device "$device" --box 30 $mode --bench "$runs" --bench-format csv "$in/box.jpg" \
      "$out/box.png" | sed "s/^/box${mode:+ linear},/"
    "$bin" --device "$device" --gauss 10 --radius 16 $mode --bench "$runs" --bench-format csv \
      "$in/gauss.jpg" "$out/gauss.png" | sed "s/^/gauss${mode:+ linear},/"
  done
} > "$out/timings.csv"
