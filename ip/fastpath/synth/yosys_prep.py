#!/usr/bin/env python3
"""Rewrite RTL for yosys 0.23, whose SystemVerilog frontend has packages but not `import`:
drop the import lines and qualify every package name as clio_pkg::NAME.
Usage: yosys_prep.py PKG.sv OUT_DIR FILE.sv..."""

import os
import re
import sys

pkg, out = sys.argv[1], sys.argv[2]
names = re.findall(r"localparam\s+(?:int|logic\s*\[\d+:0\])\s+(\w+)\s*=", open(pkg).read())
pat = re.compile(r"(?<![\w:'])(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b")
os.makedirs(out, exist_ok=True)
for f in sys.argv[3:]:
    text = open(f).read()
    if os.path.samefile(f, pkg):
        open(os.path.join(out, os.path.basename(f)), "w").write(text)
        continue
    text = re.sub(r"^\s*import\s+clio_pkg::[\w*]+;\s*$", "", text, flags=re.M)
    text = pat.sub(r"clio_pkg::\1", text)
    open(os.path.join(out, os.path.basename(f)), "w").write(text)
