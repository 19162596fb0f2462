#!/bin/sh
# The test suite on a fresh Debian 12 machine: set up, build, then run every
# test on PoCL, rusticl, Oclgrind and all three at once (arguments go to
# `meson test`, e.g. --suite pocl).
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
meson test -C build --print-errorlogs "$@"
