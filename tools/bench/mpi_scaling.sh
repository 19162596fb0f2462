#!/bin/sh
# Strong scaling of clscale across MPI ranks on this machine: seed-A
# (18 x 60 x 98450 float64, min-max) in batch scope (statistics combined with
# one allreduce of 5.5 MB) and matrix scope (no statistics move), run by
# clscale-mpi-bench (tools/bench/mpi_bench.c) as
#   one process on all C cores (PoCL pthread, C threads), cls_fit_transform
#   one process on one core (PoCL basic), cls_fit_transform
#   N = 1..MAX ranks, one PoCL basic device (one thread) each, cls_mpi_fit_transform
# The configurations alternate within each round, so that a change in the
# machine's load hits all of them; compare ratios within one round.
#
# usage: tools/bench/mpi_scaling.sh [BUILD_DIR] [MAX_RANKS] [ROUNDS] [SIZE] [BENCH_ARGS]
#        (defaults: build, 4, 2, 1.0, none); prints the bench's lines and,
#        per round and scope, each configuration's time over the one-process
#        time on the same cores. BENCH_ARGS go to every run, e.g.
#        "--quantiles --cols 2048": exact quantiles (cls_mpi_quantiles
#        against one process's cls_quantiles), batch scope only.
set -eu
build=${1:-build}
max=${2:-4}
rounds=${3:-2}
size=${4:-1.0}
extra=${5:-}
scopes="batch matrix"
case "$extra" in *--quantiles*) scopes=batch ;; esac
bench="$build/tools/clscale-mpi-bench"
cores=$(nproc)
[ -x "$bench" ] || { echo "mpi_scaling.sh: $bench not built (meson -Dmpi=enabled)" >&2; exit 1; }
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors/pocl.icd}
mpirun="mpirun --oversubscribe --allow-run-as-root --bind-to none"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() { # NAME RANKS ENV... -- ARGS...
    name=$1 n=$2
    shift 2
    envs=""
    while [ "$1" != "--" ]; do envs="$envs -x $1"; shift; done
    shift
    # shellcheck disable=SC2086
    $mpirun $envs -n "$n" "$bench" --size "$size" --json "$out/$name.json" $extra "$@"
}

for r in $(seq 1 "$rounds"); do
    for scope in $scopes; do
        echo "== round $r, scope $scope, $cores cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
        run "one-$cores" 1 POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT="$cores" -- \
            --scope "$scope" --single --label "PoCL pthread, $cores threads"
        run one-1 1 POCL_DEVICES=basic -- --scope "$scope" --single --label "PoCL basic, 1 thread"
        for n in $(seq 1 "$max"); do
            run "ranks-$n" "$n" POCL_DEVICES=basic -- --scope "$scope" --label "PoCL basic per rank"
        done
        base=$(sed -n 's/.*"slowest_call_s": \([0-9.]*\).*/\1/p' "$out/one-$cores.json")
        for f in "one-$cores" one-1 $(seq -f 'ranks-%g' 1 "$max"); do
            t=$(sed -n 's/.*"slowest_call_s": \([0-9.]*\).*/\1/p' "$out/$f.json")
            awk -v f="$f" -v t="$t" -v b="$base" -v c="$cores" \
                'BEGIN { printf "  %-10s %8.4f s  %5.2fx the one process on %s cores\n", f, t, t / b, c }'
        done
    done
done
