#!/usr/bin/env bash
# Every variant of one operation (and every intermediate format of its two-pass variants) with
# --bench, on one image, on the chosen device: the measurements the box-blur and Gaussian issues
# ask for. Prints a summary per run and writes all of them to one CSV.
# Usage: scripts/bench-variants.sh box|gauss|bright [IMAGE] [OUTDIR] [RUNS]
#   box    --box $RADIUS (default 30) on IMAGE (default build/bench-3024x4032.jpg)
#   gauss  --gauss $SIGMA --radius $RADIUS (default 10 and 16, the write-up's 33x33 kernel)
#          on IMAGE (default build/bench-1920x1080.jpg)
#   bright --bright $THRESHOLD (default 0.5) on IMAGE (default build/bench-1920x1080.jpg); a
#          variant the device cannot run (subgroup without cl_khr_subgroups) is reported skipped
# Images: scripts/make-bench-image.sh [OUTPUT] [WxH].
# Environment: BLURTOOL (the binary; default: blurtool on PATH, else build/blurtool),
#              BLURTOOL_DEVICE (which device), SLOW_RUNS (runs for the one-pass variants whose
#              cost grows with R^2; default RUNS).
set -euo pipefail
op=${1:?usage: scripts/bench-variants.sh box|gauss|bright [IMAGE] [OUTDIR] [RUNS]}
ext=png
case $op in
  box)
    args=(--box "${RADIUS:-30}")
    one_pass=(single single-linear)
    two_pass=(double double-linear accumulated unrolled scan)
    image=${2:-build/bench-3024x4032.jpg} ;;
  gauss)
    args=(--gauss "${SIGMA:-10}" --radius "${RADIUS:-16}")
    one_pass=(naive naive-local fused-local)
    two_pass=(separable separable-linear separable-local)
    image=${2:-build/bench-1920x1080.jpg} ;;
  bright)
    args=(--bright "${THRESHOLD:-0.5}")
    one_pass=(serial per-thread tree hybrid subgroup)
    two_pass=()
    ext=csv
    image=${2:-build/bench-1920x1080.jpg} ;;
  *) echo "bench-variants: unknown operation '$op' (box, gauss or bright)" >&2; exit 2 ;;
esac
outdir=${3:-build/bench-$op}
runs=${4:-10}
slow_runs=${SLOW_RUNS:-$runs}
bin=${BLURTOOL:-$(command -v blurtool || echo build/blurtool)}
mkdir -p "$outdir"
csv="$outdir/$op.csv"
echo "variant,intermediate,kind,name,median_ms,min_ms,max_ms,bytes,gbps" > "$csv"

"$bin" --list-devices
run() {  # variant intermediate runs
  local out="$outdir/out-$1-$2.$ext" extra=()
  [ "$2" = none ] || extra=(--intermediate "$2")  # one-pass variants have no intermediate
  echo "== ${args[*]} $1 $2"
  if ! "$bin" "${args[@]}" --variant "$1" "${extra[@]}" "$image" "$out" --bench "$3" \
      --bench-format csv > "$outdir/run.csv" 2> "$outdir/run.err"; then
    echo "  skipped: $(cat "$outdir/run.err")"
    return
  fi
  tail -n +2 "$outdir/run.csv" | sed "s/^/$1,$2,/" >> "$csv"
  grep "^$1,$2," "$csv" | awk -F, '$3 != "host" {printf "  %-8s %-22s median %9.3f ms  %8.1f GB/s\n", $3, $4, $5, $9}'
  rm -f "$out"
}
for v in "${one_pass[@]}"; do run "$v" none "$slow_runs"; done
for v in ${two_pass[@]+"${two_pass[@]}"}; do
  for f in rgba8 rgba16f rgba32f; do run "$v" "$f" "$runs"; done
done
echo "wrote $csv"
