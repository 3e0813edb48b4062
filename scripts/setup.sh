#!/usr/bin/env bash
# Installs what blurtool needs from Debian's archive (only the packages that are missing; with
# sudo when not root), then configures and builds it in build/. Safe to run again.
# Usage: scripts/setup.sh [extra cmake arguments]
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake g++ make pkg-config ocl-icd-opencl-dev opencl-headers opencl-clhpp-headers
  pocl-opencl-icd libclblast-dev libstb-dev libpng-dev libturbojpeg0-dev libjpeg62-turbo-dev
  libexif-dev liblcms2-dev icc-profiles-free libtiff-dev libwebp-dev libcxxopts-dev libgtest-dev
  nlohmann-json3-dev python3 parallel)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: built build/blurtool"
