#!/bin/sh
# Makes a benchmark image from a real photograph: samples/dune_1680x1050.jpg scaled (Lanczos)
# just enough to cover the target size, then centre-cropped to exactly that size and written as
# a JPEG of quality 95. The default, 3024x4032 (portrait), is the size of the box-blur write-up's
# measurements ("Reverse Engineering Metal Performance Shaders (MPS) Box Blur"); 1920x1080 is
# the size for the Gaussian and bright-point ones. Needs ImageMagick's convert and identify (Debian package imagemagick; it is
# installed with apt-get, with sudo when not root, if convert is missing).
# Usage: scripts/make-bench-image.sh [OUTPUT] [WxH]
#   OUTPUT  the JPEG to write, relative to the current directory; default (also for ""):
#           build/bench-WxH.jpg in the project, i.e. build/bench-3024x4032.jpg
#   WxH     width x height in pixels, default 3024x4032
# Example: scripts/make-bench-image.sh build/bench-1920x1080.jpg 1920x1080
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)

size=${2:-3024x4032}
case $size in
  [1-9]*x[1-9]*) ;;
  *) echo "make-bench-image: size '$size' is not WxH (for example 3024x4032)" >&2; exit 2 ;;
esac
width=${size%x*}
height=${size#*x}
case $width$height in
  *[!0-9]*) echo "make-bench-image: size '$size' is not WxH (for example 3024x4032)" >&2; exit 2 ;;
esac
output=${1:-$root/build/bench-${size}.jpg}
source=$root/samples/dune_1680x1050.jpg

if ! command -v identify >/dev/null 2>&1 || ! convert -version 2>/dev/null | grep -q ImageMagick; then
  echo "make-bench-image: installing imagemagick" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends imagemagick
fi

[ -r "$source" ] || { echo "make-bench-image: cannot read $source" >&2; exit 1; }
mkdir -p "$(dirname "$output")"

# WxH^ scales so that both sides are at least the target (cover, aspect ratio kept); the crop
# then takes the centre; +repage drops the crop's virtual canvas offset. 4:2:0 chroma
# subsampling, as cameras write JPEGs (ImageMagick would keep full chroma at quality 95).
convert "$source" -filter Lanczos -resize "${width}x${height}^" \
  -gravity center -crop "${width}x${height}+0+0" +repage \
  -strip -sampling-factor 4:2:0 -quality 95 "$output"

got=$(identify -format '%wx%h' "$output")
if [ "$got" != "${width}x${height}" ]; then
  echo "make-bench-image: $output is $got, not ${width}x${height}" >&2
  exit 1
fi
echo "make-bench-image: wrote $output ($got, JPEG quality 95, from $source)"
