#!/bin/sh
# The test suite on a fresh Debian 12 machine: set up, build, then run every
# test on PoCL, rusticl, Oclgrind and all three at once (arguments go to
# `meson test`, e.g. --suite pocl; the Python package's pytest runs are
# meson tests too, suite python), then the Python user guide's example
# with the package installed in .venv.
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh
meson test -C build --print-errorlogs "$@"
awk '/^```python$/ {on = 1; next} /^```$/ {on = 0} on' README.md > build/readme-example.py
OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd .venv/bin/python build/readme-example.py
