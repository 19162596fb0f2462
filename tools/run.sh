#!/bin/sh
# The main job on a fresh Debian 12 machine: set up, build, then run the
# benchmark on every OpenCL device (arguments go to `clscale bench`, e.g.
# --workload seed-a --json out.json --timeline out.svg).
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh >/dev/null
# numpy from the venv tools/setup.sh made (it sees Debian's python3-numpy)
exec build/tools/clscale bench --numpy "$PWD/.venv/bin/python" "$@"
