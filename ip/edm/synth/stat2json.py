#!/usr/bin/env python3
"""Turn a yosys `stat` report into the JSON resource report of synth.sh.

Usage: stat2json.py STAT OUT.json MODULE TARGET PORTS DEPTH LANES SECONDS [PEAK_KB]
(LANES 0: the module has no LANES parameter)

The totals are taken from the last cell table of the report: the whole design (the
"design hierarchy" section when the hierarchy is kept, else the one flattened module).
"""

import json
import re
import sys


def cell_table(text):
    """(total cells, {cell type: count}) of the last `Number of cells:` table in `text`."""
    blocks = list(re.finditer(r"Number of cells:\s+(\d+)\n((?:\s+\S+\s+\d+\n)*)", text))
    if not blocks:
        raise SystemExit("stat2json: no 'Number of cells' table in the yosys report")
    last = blocks[-1]
    cells = {}
    for line in last.group(2).splitlines():
        name, count = line.split()
        cells[name.lstrip("$")] = int(count)
    return int(last.group(1)), cells


def last_number(text, label):
    found = re.findall(label + r":\s+(\d+)", text)
    return int(found[-1]) if found else None


def summary(cells):
    """Resource classes: flip-flops, LUTs, block/ultra/LUT RAM, carry and mux cells."""

    def total(pred):
        return sum(n for c, n in cells.items() if pred(c.upper()))

    return {
        "flip_flops": total(lambda c: "DFF" in c or c.startswith("FD") or c.startswith("_DFF")),
        "luts": total(lambda c: re.fullmatch(r"LUT\d", c) is not None),
        "bram36": total(lambda c: c.startswith("RAMB36")),
        "bram18": total(lambda c: c.startswith("RAMB18")),
        "uram": total(lambda c: c.startswith("URAM")),
        "lutram": total(lambda c: re.match(r"RAM(32|64|128|256)", c) is not None),
        "carry": total(lambda c: c.startswith("CARRY")),
        "muxf": total(lambda c: c.startswith("MUXF")),
        "dsp": total(lambda c: c.startswith("DSP")),
        "memories_left_as_cells": total(lambda c: c.startswith("MEM")),
    }


def main():
    stat, out, module, target, ports, depth, lanes, secs = sys.argv[1:9]
    peak_kb = int(sys.argv[9]) if len(sys.argv) > 9 and sys.argv[9] else None
    text = open(stat).read()
    total, cells = cell_table(text)
    rep = {
        "module": module,
        "target": target,
        "ports": int(ports),
        "depth": int(depth),
        "lanes": int(lanes) or None,
        "cells": total,
        "wire_bits": last_number(text, "Number of wire bits"),
        **summary(cells),
        "cell_types": cells,
        "seconds": int(secs),
        "peak_rss_mb": peak_kb // 1024 if peak_kb else None,
    }
    with open(out, "w") as f:
        json.dump(rep, f, indent=2)
        f.write("\n")
    keys = ("module", "target", "ports", "depth", "lanes", "cells", "flip_flops", "luts", "bram36", "bram18", "uram", "lutram", "seconds")
    print(json.dumps({k: rep[k] for k in keys}))


if __name__ == "__main__":
    main()
