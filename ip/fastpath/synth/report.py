#!/usr/bin/env python3
"""Collect yosys `stat` output and depth.py's deepest logic level per module
into report.json and print it next to Clio's Fig. 19 (resource shares of a
ZU7EV), with one README table row per module."""

import json
import re
import sys

work, out, param_set, flags, modules = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
# XCZU7EV capacity (Zynq UltraScale+ product table).
ZU7EV = {"lut": 230400, "ff": 460800, "bram36": 312, "uram": 96, "dsp": 1728}
# Fig. 19 of the Clio paper: share of the ZU7EV's logic used by each part.
PAPER = {"VirtMem": 0.023, "NetStack": "small (a few percent)"}


def load(name):
    try:
        return open(f"{work}/{name}").read().strip()
    except OSError:
        return None


report = {"tool": f"yosys 0.23 synth_xilinx {flags}", "parameters": param_set,
          "load_average_start_end": [load("load.start"), load("load.end")],
          "device": "xczu7ev", "device_capacity": ZU7EV, "paper_fig19_share": PAPER, "modules": {}}
for m in modules:
    try:
        text = open(f"{work}/{m}.stat").read()
    except OSError:
        report["modules"][m] = {"error": "no result (failed or timed out)"}
        continue
    cells = {k: int(v) for k, v in re.findall(r"^\s+(\w+)\s+(\d+)\s*$", text, re.M)}
    lut = sum(v for k, v in cells.items() if re.fullmatch(r"LUT[1-6]", k))
    ff = sum(v for k, v in cells.items() if re.fullmatch(r"FD[A-Z]*", k))
    lutram = sum(v for k, v in cells.items() if k.startswith("RAM") and "M" in k[3:])
    bram = sum(v for k, v in cells.items() if k.startswith("RAMB36")) + 0.5 * sum(
        v for k, v in cells.items() if k.startswith("RAMB18"))
    dsp = sum(v for k, v in cells.items() if k.startswith("DSP"))
    carry = sum(v for k, v in cells.items() if k.startswith("CARRY"))
    try:
        seconds = int(open(f"{work}/{m}.seconds").read())
    except (OSError, ValueError):
        seconds = None
    # CPU time (user + system) of yosys and abc, as synth.sh timed them; from a
    # run without that file, yosys' own figure from its log, which leaves out
    # the abc processes (noted). On a shared host the wall time says more about
    # the load than about the design.
    cpu, cpu_note = None, None
    try:
        cpu = round(sum(float(x) for x in open(f"{work}/{m}.cpu").read().split()[-2:]), 1)
    except (OSError, ValueError):
        try:
            found = re.findall(r"CPU: user ([0-9.]+)s system ([0-9.]+)s", open(f"{work}/{m}.log").read())
            if found:
                cpu = round(float(found[-1][0]) + float(found[-1][1]), 1)
                cpu_note = "yosys process only (its log's figure): abc's CPU time not included"
        except OSError:
            pass
    report["modules"][m] = {"lut": lut, "ff": ff, "lutram": lutram, "bram36": bram, "dsp": dsp,
                            "carry": carry, "lut_share_of_zu7ev": round(lut / ZU7EV["lut"], 5),
                            "synth_seconds": seconds, "synth_cpu_seconds": cpu, "cells": cells}
    if cpu_note:
        report["modules"][m]["synth_cpu_note"] = cpu_note
    # Deepest logic level (synth/depth.py): LUT levels, the path's ends and its cell mix.
    try:
        d = json.load(open(f"{work}/{m}.depth.json"))
    except (OSError, ValueError):
        report["modules"][m]["depth"] = {"error": "not measured (depth.py failed or no netlist)"}
        continue
    paths = {}
    for key in ("reg_to_reg", "in_to_reg", "reg_to_out", "in_to_out"):
        if key in d:
            p = d[key]
            paths[key] = {"levels": p["levels"], "from": p["start"]["net"],
                          "to": p["end"].get("register", p["end"]["net"]),
                          "to_cell": f"{p['end']['type']}.{p['end']['port']}", "cells": p["cells"],
                          "nets": [st["net"] for st in p["steps"]]}
    report["modules"][m]["depth"] = {"levels": d["levels"], "rules": d["rules"], "paths": paths,
                                     "reg_to_reg_endpoint_histogram": d["reg_to_reg_endpoint_histogram"],
                                     "deepest_registers": d.get("deepest_registers", []),
                                     "deepest_by_instance": d.get("deepest_by_instance", [])}
    if "deep_cone" in d:
        report["modules"][m]["depth"]["deep_cone"] = d["deep_cone"]
# Groups as in Fig. 19 (sums of the units; clio_fault_unit contains clio_free_pa_fifo,
# clio_ring_dma contains clio_desc_check).
GROUPS = {"VirtMem": ["clio_tlb", "clio_bucket_hash", "clio_pt_fetch", "clio_perm_check", "clio_fault_unit"],
          "NetStack ingress (parse + CRC)": ["clio_rx_parser"],
          "Sync + dedup": ["clio_sync_unit", "clio_dedup"],
          "Rings (ARM link)": ["clio_ring_dma"],
          "NetStack egress (response builder + CRC)": ["clio_resp_builder"],
          "Top level (flattened, everything)": ["clio_fastpath_top"]}
report["groups"] = {}
for g, ms in GROUPS.items():
    if not all(m in modules for m in ms):
        continue
    got = [report["modules"].get(m, {}) for m in ms]
    if any("lut" not in r for r in got):
        report["groups"][g] = {"error": "a member did not synthesize"}
        continue
    lut = sum(r["lut"] for r in got)
    report["groups"][g] = {"modules": ms, "lut": lut, "ff": sum(r["ff"] for r in got),
                           "lut_share_of_zu7ev": round(lut / ZU7EV["lut"], 5)}
json.dump(report, open(out, "w"), indent=1, sort_keys=True)
print(f"{'module':22} {'LUT':>8} {'FF':>8} {'LUTRAM':>7} {'BRAM36':>7} {'DSP':>5} {'LUT%ZU7EV':>10} {'levels':>6}")
for m, r in report["modules"].items():
    if "error" in r:
        print(f"{m:22} {r['error']}")
        continue
    print(f"{m:22} {r['lut']:8} {r['ff']:8} {r['lutram']:7} {r['bram36']:7} {r['dsp']:5} "
          f"{100 * r['lut_share_of_zu7ev']:9.2f}% {r['depth'].get('levels', '?'):>6} "
          f"(CPU {r['synth_cpu_seconds']} s{' without abc' if 'synth_cpu_note' in r else ''}, "
          f"wall {r['synth_seconds']} s)")
for g, r in report["groups"].items():
    if "error" in r:
        print(f"group {g}: {r['error']}")
    else:
        print(f"group {g:30} {r['lut']:8} LUT {r['ff']:8} FF {100 * r['lut_share_of_zu7ev']:6.2f}% of the ZU7EV LUTs")

def worst(r):
    """The module's deepest path of any class (first of equals in reg_to_reg, in_to_reg, ... order)."""
    ps = [(p["levels"], -i, k, p) for i, (k, p) in enumerate(r["depth"].get("paths", {}).items())]
    if not ps:
        return None
    _, _, k, p = max(ps, key=lambda t: t[:2])
    return dict(p, cls=k)


print("\nREADME rows (module | LUT | FF | LUT-RAM | BRAM36 | DSP | levels | deepest path):")
for m, r in report["modules"].items():
    if "error" in r:
        continue
    p = worst(r)
    path = "not measured" if p is None else (
        f"{p['cls'].replace('_', ' ')}: `{p['from']}` → `{p['to']}` ({p['to_cell']}; "
        + ", ".join(f"{n} {t}" for t, n in p["cells"].items()) + ")")
    levels = "?" if p is None else p["levels"]
    print(f"| {m} | {r['lut']} | {r['ff']} | {r['lutram']} | {r['bram36']} | {r['dsp']} | {levels} | {path} |")
print(f"load average (1, 5, 15 min) at start / end: {report['load_average_start_end']}")
print(f"paper (Fig. 19): VirtMem {100 * PAPER['VirtMem']:.1f}% of the ZU7EV, NetStack small; parameters: {param_set}")
print(f"wrote {out}")
