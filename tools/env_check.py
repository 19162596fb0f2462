#!/usr/bin/env python3
"""The library's environment: it reads only the CLSCALE_* variables below
and never changes its caller's environment (issue 41; docs/ENGINE.md).
Tests and experiments reach the engine's switches through src/testing.h.

    python3 tools/env_check.py SOURCE_ROOT BUILD_DIR    # exit 1 on a finding

Checks
  1. the sources of the library (src/, python/clscale/_ext/): no call of
     setenv, putenv, unsetenv or clearenv; every getenv's argument a string
     literal, a CLSCALE_* one among ALLOWED;
  2. the built libraries (libclscale, libclscale_mpi, the Python extension):
     no setenv, putenv, unsetenv or clearenv among their undefined symbols
     (nm -D), no CLSCALE_* name outside ALLOWED in their bytes.
"""
import glob
import os
import re
import subprocess
import sys

# The user's: the device selector, the kernel cache, the streaming buffer.
ALLOWED = {"CLSCALE_DEVICES", "CLSCALE_CACHE_DIR", "CLSCALE_STREAM_BUFFER"}
WRITERS = ("setenv", "putenv", "unsetenv", "clearenv")
SOURCE_DIRS = ("src", "python/clscale/_ext")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def check_sources(root):
    found = []
    for d in SOURCE_DIRS:
        for path in sorted(glob.glob(os.path.join(root, d, "**", "*.[ch]"), recursive=True)):
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as f:
                code = strip_comments(f.read())
            for n, line in enumerate(code.split("\n"), 1):
                for w in WRITERS:
                    if re.search(r"\b%s\s*\(" % w, line):
                        found.append("%s:%d: calls %s" % (rel, n, w))
                for m in re.finditer(r"\b(?:secure_)?getenv\s*\(\s*([^)]*)\)", line):
                    arg = m.group(1).strip()
                    lit = re.fullmatch(r'"([^"]*)"', arg)
                    if not lit:
                        found.append("%s:%d: getenv(%s): not a literal name" % (rel, n, arg))
                    elif lit.group(1).startswith("CLSCALE_") and lit.group(1) not in ALLOWED:
                        found.append("%s:%d: reads %s" % (rel, n, lit.group(1)))
    return found


def check_binaries(build):
    libs = sorted(p for p in set(glob.glob(os.path.join(build, "libclscale*.so.*.*.*")) +
                                 glob.glob(os.path.join(build, "python", "clscale", "_clscale*.so")))
                  if os.path.isfile(p) and not p.endswith(".p"))
    found = []
    for lib in libs:
        rel = os.path.relpath(lib, build)
        out = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True, check=True)
        for sym in out.stdout.split():
            if sym.split("@")[0] in WRITERS:
                found.append("%s: imports %s" % (rel, sym))
        with open(lib, "rb") as f:
            data = f.read()
        for name in sorted(set(re.findall(rb"CLSCALE_[A-Z0-9_]+", data))):
            if name.decode() not in ALLOWED:
                found.append("%s: holds the name %s" % (rel, name.decode()))
    if not any("libclscale.so" in lib for lib in libs):
        found.append("no libclscale.so.* in %s" % build)
    return found, len(libs)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    found = check_sources(sys.argv[1])
    bin_found, nlibs = check_binaries(sys.argv[2])
    found += bin_found
    for f in found:
        print(f)
    if found:
        print("env_check: the library may read only %s and never set a variable" % ", ".join(sorted(ALLOWED)))
        return 1
    print("env_check: sources and %d built libraries clean" % nlibs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
