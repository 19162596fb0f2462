#!/bin/sh
# The install story (docs/guide/tool-safety.md), as a user would follow it:
#   install  meson install --destdir into a scratch root, then a program
#            built with `pkg-config --cflags --libs clscale` against that copy
#            (and the tool installed beside it) runs
#   uninstalled  the same program against the build tree's
#            meson-uninstalled/clscale-uninstalled.pc
#   subproject   a parent meson project with clscale in subprojects/ and a
#            plain dependency('clscale'): configures with clscale's tests
#            and tool off and without -Werror, builds, runs
# Usage: install.sh MODE SOURCE_ROOT BUILD_ROOT SCRATCH
set -eu
mode=$1 src=$2 build=$3 scratch=$4
cc=${CC:-cc}
rm -rf "$scratch"
mkdir -p "$scratch"
case $mode in
install)
    root=$scratch/root
    meson install -C "$build" --no-rebuild --quiet --destdir "$root" >/dev/null
    pc=$(find "$root" -name clscale.pc | head -1)
    [ -n "$pc" ] || { echo "no clscale.pc installed"; exit 1; }
    flags=$(PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs clscale)
    $cc "$src/tests/install/consumer.c" $flags -lm -o "$scratch/consumer"
    libdir=$(dirname "$(dirname "$pc")")
    LD_LIBRARY_PATH=$libdir "$scratch/consumer"
    tool=$(find "$root" -path '*/bin/clscale' | head -1)
    [ -x "$tool" ] || { echo "the tool was not installed"; exit 1; }
    LD_LIBRARY_PATH=$libdir "$tool" --version
    [ -f "$(dirname "$libdir")/../include/clscale.h" ] || [ -n "$(find "$root" -name clscale.h)" ]
    ;;
uninstalled)
    flags=$(PKG_CONFIG_PATH=$build/meson-uninstalled pkg-config --cflags --libs clscale)
    $cc "$src/tests/install/consumer.c" $flags -lm -o "$scratch/consumer"
    LD_LIBRARY_PATH=$build "$scratch/consumer"
    ;;
subproject)
    mkdir -p "$scratch/parent/subprojects"
    ln -s "$src" "$scratch/parent/subprojects/clscale"
    cp "$src/tests/install/consumer.c" "$scratch/parent/"
    cat > "$scratch/parent/meson.build" <<'MESON'
project('parent', 'c', default_options : ['werror=true'])
clscale = dependency('clscale')
m = meson.get_compiler('c').find_library('m', required : false)
executable('consumer', 'consumer.c', dependencies : [clscale, m])
MESON
    # no network: the subproject is already there
    meson setup "$scratch/parent/build" "$scratch/parent" --wrap-mode=nodownload > "$scratch/setup.log" 2>&1 \
        || { cat "$scratch/setup.log"; exit 1; }
    if grep -q "subprojects/clscale/tests/test_\|subprojects/clscale/tools/clscale" "$scratch/parent/build/build.ninja"; then
        echo "clscale's tests or tool are built as a subproject"; exit 1
    fi
    grep -q -- "-Wno-error" "$scratch/parent/build/build.ninja" || { echo "clscale keeps -Werror as a subproject"; exit 1; }
    ninja -C "$scratch/parent/build" > "$scratch/build.log" 2>&1 || { tail -30 "$scratch/build.log"; exit 1; }
    LD_LIBRARY_PATH=$scratch/parent/build/subprojects/clscale "$scratch/parent/build/consumer"
    ;;
esac
rm -rf "$scratch"
