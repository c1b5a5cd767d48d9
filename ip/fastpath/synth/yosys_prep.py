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
    # A module's own parameter of a package name's spelling (the top's
    # GATE_ENTRIES, defaulting to clio_pkg::GATE_ENTRIES) shadows the package
    # name in that file: its uses stay unqualified.
    own = set(re.findall(r"\b(?:parameter|localparam)\b[^=;,()]*?\b(\w+)\s*=", text))
    text = pat.sub(lambda m: m.group(1) if m.group(1) in own else "clio_pkg::" + m.group(1), text)
    open(os.path.join(out, os.path.basename(f)), "w").write(text)
