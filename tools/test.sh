#!/bin/sh
# The test suite on a fresh Debian 12 machine: set up, build, then run every
# test on PoCL, rusticl, Oclgrind and all three at once (arguments go to
# `meson test`, e.g. --suite pocl; the Python package's pytest runs and the
# README's examples, as printed, are meson tests too: suites python, readme).
# Every step runs even when one before it failed; the failed steps are listed
# at the end and the exit status is 1 if any failed.
set -u
cd "$(dirname "$0")/.."

failed=""
step() {
    name=$1
    shift
    echo "== $name"
    "$@" || failed="$failed
  $name (exit $?)"
}

step "set up and build (tools/setup.sh)" sh tools/setup.sh
step "meson test $*" meson test -C build --print-errorlogs "$@"
# the package as tools/setup.sh installed it (the tests above import the build tree's)
step "the Python package in .venv" env OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd \
    .venv/bin/python -c "import clscale; print(clscale.__file__, len(clscale.devices()), 'devices')"

if [ -n "$failed" ]; then
    echo "clscale tests: these steps failed:$failed" >&2
    exit 1
fi
echo "clscale tests: every step passed"
