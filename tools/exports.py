#!/usr/bin/env python3
"""The shared libraries export what their public headers declare, nothing
more and nothing less (issue 41: one front door, at most 30 functions).

    python3 tools/exports.py LIBRARY HEADER [LIBRARY HEADER ...]

For each pair: the functions the header declares with CLS_API, against the
dynamic symbols the library defines (nm -D --defined-only). Exit 1 when they
differ, 77 (a skip, for meson) when nm is missing.
"""
import re
import shutil
import subprocess
import sys

# A declaration: CLS_API, its return type, the function's name, "(".
DECL = re.compile(r"\bCLS_API\s+[^;(]*?\b(cls_\w+)\s*\(")


def declared(header):
    with open(header, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"^\s*#\s*define[^\n]*(\\\n[^\n]*)*", "", text, flags=re.M)
    return set(DECL.findall(text))


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        f = line.split()
        # "ADDRESS TYPE NAME": functions and data; the version node (A) is not a symbol of the code
        if len(f) == 3 and f[1] not in "Aa":
            names.add(f[2].split("@")[0])
    return names


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        print(__doc__, file=sys.stderr)
        return 2
    if not shutil.which("nm"):
        print("exports: no nm here: SKIP")
        return 77
    rc = 0
    for lib, header in zip(args[0::2], args[1::2]):
        want, have = declared(header), exported(lib)
        for name in sorted(have - want):
            print("%s exports %s, which %s does not declare" % (lib, name, header))
        for name in sorted(want - have):
            print("%s declares %s, which %s does not export" % (header, name, lib))
        if want != have:
            rc = 1
        else:
            print("%s: %d exports, the %d functions of %s" % (lib, len(have), len(want), header))
    return rc


if __name__ == "__main__":
    sys.exit(main())
