#!/bin/sh
# Makes a fresh Debian 12 machine ready for clscale: installs the Debian
# packages that are missing (apt-get as root, or through sudo), then
# configures and builds with meson into build/. Safe to run again.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="build-essential pkg-config meson ninja-build python3
ocl-icd-opencl-dev opencl-headers pocl-opencl-icd mesa-opencl-icd oclgrind clinfo
libcmocka-dev libjansson-dev libexpat1-dev clang libclang-rt-14-dev
liburing-dev"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""
    elif command -v sudo >/dev/null 2>&1; then sudo="sudo"
    else
        echo "clscale setup: missing Debian packages:$missing" >&2
        echo "run this script as root or install sudo" >&2
        exit 1
    fi
    echo "clscale setup: installing$missing"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends $missing
fi

if [ ! -f build/build.ninja ]; then
    meson setup build -Dbuildtype=debugoptimized
fi
ninja -C build
