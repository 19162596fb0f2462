#!/usr/bin/env python3
"""Build-time tool: copies the README's example program (the fenced ```c block
whose first line is `/* example.c ...`) into a file, so the tests compile and
run exactly what the README shows."""
import sys

readme, out = sys.argv[1], sys.argv[2]
lines = open(readme, encoding="utf-8").read().split("\n")
code, inside = [], False
for line in lines:
    if not inside and line.strip() == "```c":
        inside = True
        code = []
        continue
    if inside and line.strip() == "```":
        if code and code[0].startswith("/* example.c"):
            break
        inside = False
        continue
    if inside:
        code.append(line)
else:
    sys.exit("no ```c block starting with '/* example.c' in " + readme)
open(out, "w", encoding="utf-8").write("\n".join(code) + "\n")
