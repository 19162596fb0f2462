#!/usr/bin/env python3
"""The README's examples, as the tests run them. An example is a fenced block
whose info string names it after the language: ```sh example:tool. GitHub
shows only the language; the tests (tests/readme_examples.py, and the meson
target that compiles the C program) take the block's text as it stands, so
the README and what the tests run cannot drift.

usage: extract_example.py README OUT NAME   (writes example NAME to OUT)"""
import re
import sys

FENCE = re.compile(r"^```(\w+)\s+example:([\w-]+)\s*$")


def examples(readme_path):
    """{name: (language, text)} of every example block in the README."""
    found, name, lang, code = {}, None, None, []
    with open(readme_path, encoding="utf-8") as f:
        for n, line in enumerate(f.read().split("\n"), 1):
            if name is None:
                m = FENCE.match(line)
                if m:
                    lang, name, code = m.group(1), m.group(2), []
                    if name in found:
                        sys.exit(f"{readme_path}:{n}: a second example named {name}")
            elif line.strip() == "```":
                found[name] = (lang, "\n".join(code) + "\n")
                name = None
            else:
                code.append(line)
    if name is not None:
        sys.exit(f"{readme_path}: example {name} is not closed")
    return found


def example(readme_path, name):
    got = examples(readme_path)
    if name not in got:
        sys.exit(f"{readme_path}: no block ```LANG example:{name} (there are: {', '.join(sorted(got))})")
    return got[name][1]


if __name__ == "__main__":
    readme, out, name = sys.argv[1:4]
    text = example(readme, name)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
