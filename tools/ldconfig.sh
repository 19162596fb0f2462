#!/bin/sh
# meson install's last step (skipped under DESTDIR): refresh the loader's
# cache so that a program built with `pkg-config --libs clscale` runs
# without LD_LIBRARY_PATH. Not root (a prefix of one's own): say the line
# that does it instead.  Usage: ldconfig.sh LIBDIR (relative to the prefix)
libdir=$MESON_INSTALL_PREFIX/$1
case $1 in /*) libdir=$1 ;; esac
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
if [ "$(id -u)" = 0 ] && [ -x "$ldconfig" ]; then
    "$ldconfig" && exit 0
fi
if ! "$ldconfig" -p 2>/dev/null | grep -q "libclscale.so.0 .*=> $libdir/"; then
    echo "clscale: the loader does not know $libdir yet: run ldconfig as root," >&2
    echo "  or export LD_LIBRARY_PATH=$libdir" >&2
fi
exit 0
