#!/bin/sh
# Measures PNG file size and encode time at every --png-level and for every row filter on the
# sample photos, as they are and blurred with --box 30, and writes the tables to
# docs/performance/history/png-level-DATE.md, with the fastest level whose files are within 10%
# of level 6's. Times are one thread's (the encoder's strips on one core), medians of RUNS runs.
# (The reasons for the default level, written by hand, are in the report of 2026-11-24:
# docs/performance/history/png-level-2026-11-24-epyc-2c.md, "Choice".)
# Usage: scripts/bench-png-level.sh [--runs N] [--record DEVICE] [IMAGE|FOLDER...]
#   IMAGE, FOLDER    more photos (a folder: its *.jpg and *.png) besides samples/*.jpg and
#                    samples/*.png; files with the same bytes are measured once
#   --runs N         timed runs of each image and setting, default 3 (levels 8 and 9 take minutes)
#   --record DEVICE  also record the report as the png-level section of
#                    docs/performance/DEVICE.md (scripts/perf-record), e.g. pocl-2c
# Needs the build in build/ (cmake -S . -B build) and an OpenCL device for the blur.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
command="scripts/bench-png-level.sh${*:+ $*}"
runs=3
record=
while :; do
  case ${1:-} in
    --runs) runs=$2; shift 2 ;;
    --record) record=$2; shift 2 ;;
    *) break ;;
  esac
done

cmake --build "$root/build" --target blurtool encode_bench -j2 >/dev/null
work=$root/build/png-level
rm -rf "$work"
mkdir -p "$work"

# The photos, once each by content.
list=$work/inputs
: >"$list"
for arg in "$root"/samples/*.jpg "$root"/samples/*.png "$@"; do
  if [ -d "$arg" ]; then
    for f in "$arg"/*.jpg "$arg"/*.png; do [ -f "$f" ] && echo "$f" >>"$list"; done
  elif [ -f "$arg" ]; then
    echo "$arg" >>"$list"
  fi
done
photos=""
seen=" "
while IFS= read -r f; do
  sum=$(cksum <"$f" | cut -d' ' -f1,2 | tr ' ' '-')
  case $seen in *" $sum "*) continue ;; esac
  seen="$seen$sum "
  photos="$photos $f"
done <"$list"

# The same photos blurred with --box 30, written losslessly.
blurred=""
for f in $photos; do
  name=$(basename "$f")
  out=$work/${name%.*}-box30.png
  "$root/build/blurtool" --box 30 --quiet "$f" "$out"
  blurred="$blurred $out"
done

levels="0=paeth:0,1=paeth:rle,2=paeth:2:filtered,3=paeth:3:filtered,4=paeth:4:filtered"
levels="$levels,5=paeth:5:filtered,6=paeth:6:filtered,7=paeth:7:filtered,8=paeth:8:filtered"
levels="$levels,9=paeth:9:filtered,zlib 1=paeth:1,zlib 6=paeth:6"
filters=""
for level in 1 6; do
  for filter in none sub up average paeth adaptive; do
    if [ $level = 1 ]; then spec=$filter:rle; else spec=$filter:6:filtered; fi
    filters="$filters${filters:+,}$filter $level=$spec"
  done
done
bench=$root/build/encode_bench
out=$root/docs/performance/history/png-level-$(date +%F).md
mkdir -p "$(dirname "$out")"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
names=""
for f in $photos; do names="$names $(basename "$f")"; done
{
  echo "# PNG compression level and row filter"
  echo
  echo "Measured $(date +%F) by \`scripts/bench-png-level.sh --runs $runs\` on $(nproc) cores of"
  echo "$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), zlib" \
    "$(sed -n 's/^#define ZLIB_VERSION "\(.*\)"/\1/p' /usr/include/zlib.h)."
  echo "Images: the photos$names, as they are and blurred with \`blurtool --box 30\`"
  echo "(written as PNG), $(echo $photos $blurred | wc -w) files. Bytes: the PNG files' sizes,"
  echo "summed over all files. Time: blurtool's PNG encoder on one thread, the median of $runs"
  echo "runs of each file, summed over the files (Mpixel/s: all pixels over that time)."
  echo "The machine is shared: load averages (1, 5, 15 minutes) $load_before before the run"
  echo "and LOAD_AFTER after it; times are comparable within a table, not across machines."
  echo
  echo "## Levels"
  echo
  echo "\`--png-level\` N as blurtool encodes it (first column): every row filtered with Paeth;"
  echo "level 1 is zlib's run-length strategy Z_RLE, levels 2 to 9 are zlib's levels with its"
  echo "Z_FILTERED strategy (libpng's choice for filtered rows). Two rows for comparison:"
  echo "zlib's own level 1 and level 6 with the default strategy. Ratios are to level 6."
  echo
  "$bench" png-table --runs "$runs" --pick 1.10 --per-image --reference 6=paeth:6:filtered \
    "$levels" $photos $blurred
  echo
  echo "## Row filters"
  echo
  echo "Each PNG filter on every row, and libpng's adaptive choice per row (the filter whose"
  echo "bytes, read as signed, have the smallest sum of magnitudes), at level 1 (Z_RLE) and"
  echo "level 6 (Z_FILTERED). Ratios are to Paeth at level 6. \"up 1\" is the encoder's"
  echo "setting before this measurement (libpng's, with Up and Z_RLE; the same deflate input)."
  echo
  "$bench" png-table --runs "$runs" --per-image --reference "paeth 6=paeth:6:filtered" \
    "$filters" $photos $blurred
} >"$out.tmp"
sed "s|LOAD_AFTER|$(cut -d' ' -f1-3 /proc/loadavg)|" "$out.tmp" >"$out"
rm "$out.tmp"
echo "bench-png-level: wrote $out"
if [ -n "$record" ]; then
  python3 "$root/scripts/perf-record" "$record" png-level "$out" --command "$command" \
    --device "host only: $(nproc) cores of $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"
fi
