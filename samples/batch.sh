#!/usr/bin/env bash
# A worked example of blurtool's batch mode, to copy from. Run it from the repository root after
# building (scripts/setup.sh); it builds nothing:
#
#   samples/batch.sh [OUTDIR]
#
# OUTDIR (default: a new temporary folder) receives box/, box-jpg/ and gauss/. Use a new or
# empty one: a batch skips every output that exists already, which step 3 shows on purpose.
# BLURTOOL names the binary (default build/blurtool), BLURTOOL_DEVICE the OpenCL device.
# Each blurtool run ends with a summary line on stderr ("N done, N skipped, N failed ...").
# Exit status: 0 when every run succeeded, 1 as soon as one fails (set -e), 2 no binary.
set -euo pipefail

blurtool=${BLURTOOL:-build/blurtool}
if [[ ! -x $blurtool ]]; then
  echo "batch.sh: no blurtool at '$blurtool': build it (scripts/setup.sh) or set BLURTOOL" >&2
  exit 2
fi
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/blurtool-batch.XXXXXX")}

# Prints a command, quoted as a shell would need it, then runs it.
run() {
  printf '\n$'
  printf ' %q' "$@"
  printf '\n'
  "$@"
}

# 1. Box blur of radius 8 of every PNG and JPEG at the top of samples/ into $out/box/, created if
#    missing. Other files (SOURCES.md) are ignored. Each output keeps its input's name and so its
#    format: samples/coffee_600x400.png gives $out/box/coffee_600x400.png.
run "$blurtool" --box 8 samples -o "$out/box"

# 2. The same photos written as JPEG of quality 90 into $out/box-jpg/: --format jpg replaces
#    every output's extension (coffee_600x400.png gives coffee_600x400.jpg).
run "$blurtool" --box 8 --format jpg --quality 90 samples -o "$out/box-jpg"

# 3. Step 1 again: every output exists, so every image is skipped (the summary counts them) and
#    the exit status is still 0. Nothing in $out/box/ is rewritten, which the marker shows.
marker=$(mktemp "${TMPDIR:-/tmp}/blurtool-batch-marker.XXXXXX")
run "$blurtool" --box 8 samples -o "$out/box"
rewritten=$(find "$out/box" -type f -newer "$marker" | wc -l)
rm -f "$marker"
echo "files rewritten by the rerun: $rewritten"

# 4. --force replaces existing outputs: the same folder again, now with radius 30.
run "$blurtool" --box 30 --force samples -o "$out/box"

# 5. A Gaussian blur (sigma 3 pixels) of the JPEG photos into a second folder, given as several
#    input files and a last argument ending in '/' instead of -o.
run "$blurtool" --gauss 3 samples/*.jpg "$out/gauss/"

# What the batches wrote, with sizes in bytes.
printf '\nWritten under %s:\n' "$out"
(cd "$out" && find . -type f -printf '  %P  %s\n' | sort)
