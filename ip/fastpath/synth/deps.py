#!/usr/bin/env python3
"""The source files a module needs: its own file and, transitively, the files
defining every module it names (found by `module NAME` declarations), so a
per-module synthesis run reads a few files instead of every source (reading all
of them took most of a small module's yosys time: the parser's and the
builder's constant CRC matrices). The package comes first.
Usage: deps.py SRC_DIR PKG.sv TOP_MODULE"""

import os
import re
import sys

src, pkg, top = sys.argv[1:]
defs = {}
for f in sorted(os.listdir(src)):
    if f.endswith(".sv"):
        text = open(os.path.join(src, f)).read()
        for name in re.findall(r"^\s*module\s+(\w+)", text, re.M):
            defs[name] = (f, text)
if top not in defs:
    sys.exit(f"deps.py: no source in {src} defines module {top}")
files, todo, seen = [], [top], set()
while todo:
    m = todo.pop()
    if m in seen:
        continue
    seen.add(m)
    f, text = defs[m]
    if f not in files:
        files.append(f)
    todo += [w for w in set(re.findall(r"\b(\w+)\b", text)) if w in defs and w not in seen]
print(" ".join([pkg] + sorted(f for f in files if f != pkg)))
