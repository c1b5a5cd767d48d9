#!/usr/bin/env python3
"""Deepest logic level of a Xilinx-mapped yosys netlist (`write_json` after
`synth_xilinx`), counted in LUT levels between timing start and end points.

yosys' `ltp` does not stop at the Xilinx flip-flop cells (it sees loops through
them), so this walks the netlist itself. Counting rules (one "level" is one
LUT plus the general-interconnect hop that feeds it):

* LUT1..LUT6: 1 level each. A LUTRAM read (RAM32M16, RAM64X1D, ..., address in
  to data out) and an SRL's address-to-Q path are LUT reads too: 1 level.
* MUXF7 / MUXF8 / MUXF9: 0 levels. They are the slice's dedicated muxes that
  join two LUT6 (or two MUXF7, MUXF8) outputs into a LUT7/LUT8/LUT9 without
  leaving the slice, a fraction of a LUT+route delay; the LUTs that feed them
  are counted. (Vivado's "Logic Levels" counts each MUXF as one; the path's
  cell counts below let a reader add them back.)
* CARRY4 / CARRY8: 1 level where a path enters a carry chain from general
  routing (S, DI, CYINIT, or CI driven by anything but a carry cell's CO),
  0 levels along the chain (CI driven by another carry cell's CO: the
  dedicated carry route, a few tens of ps per cell). A 64-bit compare is then
  its LUT level plus one, not plus eight as a per-cell count would say.
  Every input of a carry cell is taken to reach every output (conservative).
* INV, buffers, VCC/GND: 0 levels.
* DSP48E2 with PREG = 0: taken as combinational from every input to every
  output (its input registers, if any, ignored: conservative), one level,
  named in the path (a combinational DSP is much slower than a LUT); with
  PREG = 1 its inputs are end points and its outputs start points.

Start points: flip-flop outputs (FD*), latch outputs, block RAM / FIFO /
UltraRAM outputs, LUTRAM and SRL outputs (the stored word), DSP outputs with
PREG = 1, and the module's input ports. End points: the synchronous inputs of
those cells (D, CE, R, S of a flip-flop; every non-clock input of a BRAM, a
LUTRAM's write port, a DSP's inputs) and the output ports. Asynchronous
clear/preset (FDCE.CLR, FDPE.PRE) and clock pins are not end points.

Paths are reported per class: reg_to_reg (register or memory to register or
memory), in_to_reg, reg_to_out and in_to_out. A cell type outside these rules
is an error that names it, so an unknown primitive is never counted silently
as zero.

With --deep N, the register endpoints N or more levels deep are also traced
back along their deepest path: the registers those paths start from and the
named nets they pass through, and the (start, end) pairs, each with how many of
the deep endpoints it serves (`deep_cone`). That says where a register stage would cut the most.

Usage: depth.py NETLIST.json [--top MODULE] [--out FILE.json] [--deep N]
"""

import argparse
import json
import re
import sys
from collections import Counter

LUT = re.compile(r"LUT[1-6]$")
MUXF = re.compile(r"MUXF[789]$")
CARRY = re.compile(r"CARRY[48]$")
FF = re.compile(r"FD[RSCP]E(_1)?$")
LATCH = re.compile(r"LD[CP]E?(_1)?$")
# LUT RAMs and shift registers: asynchronous read (address to data out).
LUTRAM = re.compile(r"RAM(32|64|128|256|512)X\d+[SD](_1)?$|RAM(32|64)M(16|8)?$|RAM32X16DR8$|RAM64X8SW$|SRL(C)?(16|32)E$")
BLOCK = re.compile(r"RAMB(18|36)E[12]$|FIFO(18|36)E[12]$|URAM288(_BASE)?$")
DSP = re.compile(r"DSP48E[12]$")
ZERO = re.compile(r"INV$|BUF$|BUFG(CE)?$|IBUF$|OBUF$|VCC$|GND$")
CLOCK_PORTS = re.compile(r"C$|CLK$|WCLK$|CLKARDCLK$|CLKBWRCLK$|RDCLK$|WRCLK$|CLK[AB]$|G$")
ASYNC_PORTS = {"CLR", "PRE"}
LUTRAM_ADDR = re.compile(r"(A\d*|DPRA\d*|ADDR[A-H])$")


class NetlistError(Exception):
    """The netlist cannot be measured (unknown cell, loop, missing data)."""


def param_int(cell, name, default=0):
    v = cell.get("parameters", {}).get(name)
    if v is None:
        return default
    if isinstance(v, int):
        return v
    if re.fullmatch(r"[01]+", v):
        return int(v, 2)
    try:
        return int(v)
    except ValueError:
        return default


def pick_top(doc, top):
    mods = doc.get("modules", {})
    if top:
        if top in mods:
            return top, mods[top]
        # chparam renames a module to $paramod\NAME\PARAM=VALUE...
        named = [n for n in mods if n.startswith(f"$paramod\\{top}\\")]
        if len(named) == 1:
            return named[0], mods[named[0]]
        raise NetlistError(f"module {top!r} not in the netlist (has {sorted(mods)[:8]})")
    tops = [n for n, m in mods.items() if param_int({"parameters": m.get("attributes", {})}, "top")]
    if len(tops) == 1:
        return tops[0], mods[tops[0]]
    real = [n for n, m in mods.items() if not param_int({"parameters": m.get("attributes", {})}, "blackbox")
            and m.get("cells")]
    if len(real) != 1:
        raise NetlistError(f"cannot tell the top module among {real or sorted(mods)}; pass --top")
    return real[0], mods[real[0]]


class Graph:
    """Cells classified by role, with the driver of every net bit."""

    def __init__(self, module):
        self.cells = module.get("cells", {})
        self.ports = module.get("ports", {})
        self.names = {}
        for name, net in module.get("netnames", {}).items():
            hidden = net.get("hide_name", 0)
            bits = net.get("bits", [])
            for i, b in enumerate(bits):
                if isinstance(b, str):
                    continue
                label = name if len(bits) == 1 else f"{name}[{i + net.get('offset', 0)}]"
                # Public names first, the longest (an alias like `o` for `out_ptr_reg`, or
                # a flattened instance path, says less); among internal ones the shortest.
                key = (hidden, len(label) if hidden else -len(label))
                if b not in self.names or key < self.names[b][0]:
                    self.names[b] = (key, label)
        self.driver = {}  # bit -> (cell name or None for an input port, port)
        for p, d in self.ports.items():
            if d["direction"] in ("input", "inout"):
                for b in d["bits"]:
                    if not isinstance(b, str):
                        self.driver[b] = (None, p)
        for cname, c in self.cells.items():
            kind = self.classify(cname, c)
            c["_kind"] = kind
            dirs = c.get("port_directions")
            if dirs is None:
                raise NetlistError(f"cell {cname} ({c['type']}) has no port directions")
            for p, bits in c.get("connections", {}).items():
                if dirs.get(p) == "output":
                    for b in bits:
                        if not isinstance(b, str):
                            self.driver[b] = (cname, p)

    @staticmethod
    def classify(cname, c):
        t = c["type"]
        if LUT.match(t):
            return "lut"
        if MUXF.match(t):
            return "muxf"
        if CARRY.match(t):
            return "carry"
        if ZERO.match(t):
            return "zero"
        if FF.match(t) or LATCH.match(t) or BLOCK.match(t):
            return "seq"
        if LUTRAM.match(t):
            return "lutram"
        if DSP.match(t):
            return "seq" if param_int(c, "PREG", 1) else "dsp"
        raise NetlistError(f"cell {cname}: type {t} has no depth rule (not a Xilinx-mapped netlist, or a primitive "
                           "depth.py does not know yet)")

    def name(self, bit):
        if isinstance(bit, str):
            return f"constant {bit}"
        return self.names.get(bit, (None, f"bit {bit}"))[1]


def bus_name(name):
    """A net's name without its bit index (`a.b[3]` -> `a.b`)."""
    return re.sub(r"\[\d+\]$", "", name)


def through_inputs(c):
    """(port, bits) of the inputs whose value reaches the cell's outputs in the same cycle."""
    kind, dirs = c["_kind"], c["port_directions"]
    for p, bits in c.get("connections", {}).items():
        if dirs.get(p) != "input":
            continue
        if kind == "lutram" and not LUTRAM_ADDR.match(p):
            continue
        yield p, bits


def endpoint_inputs(c):
    """(port, bits) of the inputs checked against a clock edge (setup) at this cell."""
    dirs = c["port_directions"]
    for p, bits in c.get("connections", {}).items():
        if dirs.get(p) != "input" or CLOCK_PORTS.match(p) or p in ASYNC_PORTS:
            continue
        yield p, bits


def measure(module, deep=None):
    """Longest paths per class; returns a dict ready for JSON. With `deep`, the
    cone of the register endpoints at least that deep (`deep_cone`)."""
    g = Graph(module)
    comb = {n for n, c in g.cells.items() if c["_kind"] in ("lut", "muxf", "carry", "zero", "dsp", "lutram")}
    # Kahn's order over the combinational cells (a LUTRAM's output depends on its address only).
    users = {}
    indeg = {n: 0 for n in comb}
    for n in comb:
        c = g.cells[n]
        preds = set()
        for _, bits in through_inputs(c):
            for b in bits:
                d = g.driver.get(b)
                if d and d[0] in comb:
                    preds.add(d[0])
        indeg[n] = len(preds)
        for p in preds:
            users.setdefault(p, []).append(n)
    order = [n for n in comb if indeg[n] == 0]
    i = 0
    while i < len(order):
        for u in users.get(order[i], ()):
            indeg[u] -= 1
            if indeg[u] == 0:
                order.append(u)
        i += 1
    if len(order) != len(comb):
        loop = sorted(n for n in comb if indeg[n] > 0)[:6]
        raise NetlistError(f"combinational loop through {len(comb) - len(order)} cells, e.g. {loop}")

    # arrival[cls][cell] = (levels at the cell's outputs, input bit that set it)
    classes = ("reg", "in")
    arrival = {k: {} for k in classes}

    def bit_arrival(cls, b):
        if isinstance(b, str):
            return None
        d = g.driver.get(b)
        if d is None:
            return None
        cname, _ = d
        if cname is None:
            return 0 if cls == "in" else None
        c = g.cells[cname]
        if c["_kind"] == "seq":
            return 0 if cls == "reg" else None
        got = arrival[cls].get(cname)
        if c["_kind"] == "lutram" and cls == "reg":
            return max(0, got[0]) if got else 0
        return got[0] if got else None

    def weight(c, port, b):
        kind = c["_kind"]
        if kind in ("lut", "lutram", "dsp"):
            return 1
        if kind == "carry":
            d = g.driver.get(b) if not isinstance(b, str) else None
            chained = port == "CI" and d and d[0] is not None and g.cells[d[0]]["_kind"] == "carry" \
                and d[1].startswith("CO")
            return 0 if chained else 1
        return 0

    for n in order:
        c = g.cells[n]
        for cls in classes:
            best = None
            for p, bits in through_inputs(c):
                for b in bits:
                    a = bit_arrival(cls, b)
                    if a is None:
                        continue
                    a += weight(c, p, b)
                    if best is None or a > best[0]:
                        best = (a, b)
            if best is not None:
                arrival[cls][n] = best

    def trace(cls, b):
        steps = []
        while True:
            cname, _ = g.driver[b]
            if cname is None:
                return {"cell": None, "type": "input port", "net": g.name(b)}, steps
            c = g.cells[cname]
            # A LUTRAM/SRL output starts a path unless its address path was longer.
            if c["_kind"] == "seq" or cname not in arrival[cls]:
                return {"cell": cname, "type": c["type"], "net": g.name(b)}, steps
            steps.append({"type": c["type"], "cell": cname, "net": g.name(b)})
            b = arrival[cls][cname][1]

    def endpoints():
        for cname, c in g.cells.items():
            if c["_kind"] in ("seq", "lutram"):
                for p, bits in endpoint_inputs(c):
                    for b in bits:
                        yield ("reg", cname, c["type"], p, b)
        for p, d in g.ports.items():
            if d["direction"] in ("output", "inout"):
                for i, b in enumerate(d["bits"]):
                    yield ("out", None, "output port", p if len(d["bits"]) == 1 else f"{p}[{i}]", b)

    best = {}
    hist = Counter()
    # Deepest path into each register (its Q net's name without the bit index),
    # from a register or an input port: where a module's depth lies beyond its one deepest path.
    by_reg = {}
    for to, cname, ctype, port, b in endpoints():
        for cls in classes:
            a = bit_arrival(cls, b)
            if a is None:
                continue
            key = f"{cls}_to_{to}"
            if key == "reg_to_reg":
                hist[a] += 1
            if key not in best or a > best[key][0]:
                best[key] = (a, cname, ctype, port, b)
            q = g.cells[cname].get("connections", {}).get("Q") if cname else None
            if q:
                reg = bus_name(g.name(q[0]))
                if reg not in by_reg or a > by_reg[reg][0]:
                    by_reg[reg] = (a, cls)
    out = {}
    for key in ("reg_to_reg", "in_to_reg", "reg_to_out", "in_to_out"):
        if key not in best:
            continue
        a, cname, ctype, port, b = best[key]
        start, steps = trace(key.split("_")[0], b)
        steps.reverse()
        # An output port is named by itself (two ports may share one net).
        end = {"cell": cname, "type": ctype, "port": port, "net": g.name(b) if cname else port}
        q = g.cells[cname].get("connections", {}).get("Q") if cname else None
        if q:  # a flip-flop: name the register it loads, not only its D net
            end["register"] = g.name(q[0])
        out[key] = {"levels": a, "start": start, "end": end,
                    "cells": dict(sorted(Counter(s["type"] for s in steps).items())),
                    "steps": steps}
    # The module's depth: its deepest path of any class (a unit without
    # registers has only in_to_out; the top's ports are its interfaces).
    out["levels"] = max((out[k]["levels"] for k in ("reg_to_reg", "in_to_reg", "reg_to_out", "in_to_out")
                         if k in out), default=0)
    out["reg_to_reg_endpoint_histogram"] = {str(k): hist[k] for k in sorted(hist)}
    out["deepest_registers"] = [{"register": r, "levels": a, "from": cls}
                                for r, (a, cls) in sorted(by_reg.items(), key=lambda kv: (-kv[1][0], kv[0]))[:12]]
    # The deepest register of each instance (the name's first component): in
    # the flattened top one block's many deep registers would otherwise hide
    # every other block from the list above.
    by_inst = {}
    for r, (a, cls) in by_reg.items():
        inst = r.split(".")[0] if "." in r else "(top)"
        if inst not in by_inst or (-a, r) < (-by_inst[inst][0], by_inst[inst][1]):
            by_inst[inst] = (a, r, cls)
    out["deepest_by_instance"] = [{"instance": i, "register": r, "levels": a, "from": cls}
                                  for i, (a, r, cls) in sorted(by_inst.items(), key=lambda kv: (-kv[1][0], kv[0]))]
    if deep is not None:
        out["deep_cone"] = deep_cone(g, endpoints, bit_arrival, trace, deep)
    out["rules"] = "LUT/LUTRAM read 1, MUXF 0, carry chain 1 on entry and 0 along CO->CI, DSP (PREG=0) 1"
    return out


def deep_cone(g, endpoints, bit_arrival, trace, deep, top=25):
    """Where the deep register endpoints' deepest paths start and what named
    nets they pass through, counted over the endpoints (a net shared by many
    deep paths is a place to cut)."""
    starts, through, ends, pairs = Counter(), Counter(), Counter(), Counter()
    n = 0
    for to, cname, _, _, b in endpoints():
        if to != "reg":
            continue
        a = bit_arrival("reg", b)
        if a is None or a < deep:
            continue
        n += 1
        q = g.cells[cname].get("connections", {}).get("Q") if cname else None
        end = bus_name(g.name(q[0]) if q else g.name(b))
        ends[end] += 1
        start, steps = trace("reg", b)
        starts[bus_name(start["net"])] += 1
        pairs[f"{bus_name(start['net'])} -> {end}"] += 1
        seen = set()
        for st in steps:
            name = st["net"]
            if name.startswith("$") or name.startswith("bit "):
                continue
            nm = bus_name(name)
            if nm not in seen:
                seen.add(nm)
                through[nm] += 1

    def most(c):
        return [{"name": k, "endpoints": v} for k, v in c.most_common(top)]

    return {"levels_at_least": deep, "endpoints": n, "ends": most(ends), "starts": most(starts),
            "through": most(through), "pairs": most(pairs)}


def summary(r):
    """One line per class: levels, start net, end net, cell mix."""
    lines = []
    for key in ("reg_to_reg", "in_to_reg", "reg_to_out", "in_to_out"):
        if key in r:
            p = r[key]
            mix = ", ".join(f"{t} {n}" for t, n in p["cells"].items())
            end = p["end"].get("register", p["end"]["net"])
            lines.append(f"{key:10} {p['levels']:3} levels: {p['start']['net']} ({p['start']['type']}) -> "
                         f"{end} ({p['end']['type']}.{p['end']['port']}) [{mix}]")
    if r.get("deepest_registers"):
        lines.append("deepest registers: " + ", ".join(
            f"{d['register']} {d['levels']}" + (" (from an input)" if d["from"] == "in" else "")
            for d in r["deepest_registers"]))
    if len(r.get("deepest_by_instance", [])) > 1:
        lines.append("deepest per instance: " + ", ".join(
            f"{d['instance']} {d['levels']} ({d['register']})" for d in r["deepest_by_instance"]))
    dc = r.get("deep_cone")
    if dc:
        lines.append(f"deep cone: {dc['endpoints']} register inputs at {dc['levels_at_least']}+ levels")
        for key in ("ends", "starts", "through", "pairs"):
            lines.append(f"  {key}: " + ", ".join(f"{d['name']} {d['endpoints']}" for d in dc[key]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("netlist")
    ap.add_argument("--top")
    ap.add_argument("--out", help="write the result as JSON here")
    ap.add_argument("--deep", type=int, help="trace the register inputs this many levels deep or more")
    args = ap.parse_args()
    try:
        with open(args.netlist) as f:
            doc = json.load(f)
        top, module = pick_top(doc, args.top)
        r = measure(module, args.deep)
    except (OSError, ValueError, NetlistError) as e:
        sys.exit(f"depth.py: {args.netlist}: {e}")
    r["module"] = top
    if args.out:
        with open(args.out, "w") as f:
            json.dump(r, f, indent=1)
    print(f"{top}: deepest {r['levels']} levels")
    print(summary(r))


if __name__ == "__main__":
    main()
