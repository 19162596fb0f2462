#!/bin/sh
# The main job on a fresh Debian 12 machine: set up, build, then run the
# benchmark on every OpenCL device (arguments go to `clscale bench`, e.g.
# --workload seed-a --json out.json --timeline out.svg).
set -eu
cd "$(dirname "$0")/.."
sh tools/setup.sh >/dev/null
exec build/tools/clscale bench "$@"
