#!/bin/sh
# Makes a fresh Debian 12 machine ready for clscale: installs the Debian
# packages that are missing (apt-get as root, or through sudo), then
# configures and builds with meson into build/, and installs the Python
# package into .venv (reinstalled only when a source it is built from
# changed). Safe to run again.
set -eu
cd "$(dirname "$0")/.."

PACKAGES="build-essential pkg-config meson ninja-build python3
ocl-icd-opencl-dev opencl-headers pocl-opencl-icd mesa-opencl-icd oclgrind clinfo
libcmocka-dev libjansson-dev libexpat1-dev clang libclang-rt-14-dev
libopenmpi-dev openmpi-bin liburing-dev valgrind

python3-dev python3-venv python3-pip python3-numpy python3-scipy python3-sklearn python3-mesonpy python3-pytest
python3-pyopencl python3-mpi4py python3-dask python3-astropy"

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

# The Python package: a venv that sees Debian's numpy and scikit-learn
# (Debian's pip refuses system installs, PEP 668), built by meson-python in
# build-py/ (kept, so a rebuild compiles only what changed). Debian's own
# interpreter: another python3 may come first on PATH without numpy.
if [ ! -x .venv/bin/python ]; then
    /usr/bin/python3 -m venv --system-site-packages .venv
fi
stamp=.venv/.clscale-installed
if [ ! -f "$stamp" ] || [ -n "$(find pyproject.toml meson.build meson_options.txt include src cl python/meson.build python/clscale \
        -type f \( -name '*.[ch]' -o -name '*.py' -o -name '*.cl' -o -name '*.build' -o -name '*.txt' \
        -o -name '*.toml' \) -newer "$stamp" -print | head -n 1)" ]; then
    echo "clscale setup: installing the Python package into .venv"
    # a configure that failed half-way leaves a folder meson-python will not reuse
    [ -f build-py/build.ninja ] || rm -rf build-py .mesonpy-native-file.ini
    .venv/bin/python -m pip install --quiet --no-build-isolation --no-deps \
        --config-settings builddir="$PWD/build-py" .
    touch "$stamp"
fi
