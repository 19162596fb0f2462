#!/bin/sh
# Groups larger than the stream buffer: robust scaling and sigma clipping
# streamed through their passes over the file, against min-max streamed (one
# pass of statistics, one of scaling), against the same calls on a mapping
# of the file (CLSCALE_STREAM=0, the tool's own switch). Rows alternate within
# each round; prints every run and, per row, the median and its ratio to
# min-max streamed. The file stays in the page cache (a file larger than
# memory needs a machine with the disk to spare and hours).
#
# usage: tools/bench/stream_clean.sh [BUILD_DIR] [FILE] [ROUNDS]
#        (defaults: build, a new 4,000,000 x 8 float64 file in $TMPDIR, 3)
set -eu
build=${1:-build}
file=${2:-}
rounds=${3:-3}
tool="$build/tools/clscale"
[ -x "$tool" ] || { echo "stream_clean.sh: $tool not built" >&2; exit 1; }
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors/pocl.icd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -z "$file" ]; then
    file="$tmp/in.npy"
    /usr/bin/python3 -c "
import numpy as np
r = np.random.default_rng(7)
x = r.standard_normal((4000000, 8)) * 3 + 7
x[r.random(x.shape) < 0.01] = np.nan
x[r.random(x.shape) < 0.001] *= 50
np.save('$file', x)"
fi
out="$tmp/out.npy"

# NAME ENV... -- ARGS...
row() {
    name=$1
    shift
    envs=""
    while [ "$1" != "--" ]; do envs="$envs $1"; shift; done
    shift
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    env $envs "$tool" "$@" "$file" "$out"
    t1=$(date +%s.%N)
    dt=$(awk "BEGIN { print $t1 - $t0 }")
    echo "$name $dt" >> "$tmp/times"
    echo "  $name $dt s"
}

echo "file: $file ($(stat -c %s "$file") bytes); $(uptime)"
"$tool" normalize --method minmax "$file" "$out"   # warm the kernels and the page cache
for r in $(seq "$rounds"); do
    echo "== round $r"
    row minmax-streamed CLSCALE_STREAM=1 -- normalize --method minmax
    row robust-streamed CLSCALE_STREAM=1 -- normalize --method robust
    row robust-mapped CLSCALE_STREAM=0 -- normalize --method robust
    row clip-median-streamed CLSCALE_STREAM=1 -- clean --sigma-clip 3 --impute median
    row clip-median-mapped CLSCALE_STREAM=0 -- clean --sigma-clip 3 --impute median
    row clip-mean-streamed CLSCALE_STREAM=1 -- clean --sigma-clip 3,10 --clip-center mean --impute mean
    row clip-mean-mapped CLSCALE_STREAM=0 -- clean --sigma-clip 3,10 --clip-center mean --impute mean
done
echo "$(uptime)"
echo "== medians of $rounds, ratio to minmax-streamed"
/usr/bin/python3 - "$tmp/times" <<'PY'
import sys, statistics
t = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    t.setdefault(k, []).append(float(v))
base = statistics.median(t["minmax-streamed"])
for k, v in t.items():
    m = statistics.median(v)
    print(f"  {k:28s} {m:8.3f} s  {m / base:5.2f}x")
PY
