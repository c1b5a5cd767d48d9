#!/usr/bin/env python3
"""Side-by-side Fig. 8 tables for ip/edm-sim/README.md, from the two --fig8 JSON reports:

    python3 ip/edm-sim/results/side_by_side.py ip/edm-sim/results/fig8-published.json \
        ip/edm-sim/results/fig8.json

Prints Markdown: per published row, the label, its data load under the published definition,
the published mean, ours under --metric published (and the ratio), and ours under the steady
metric at data load = the label (mean ± 95 % CI over seeds). Application traces are compared
by rank (the published values are in rank order)."""
import json
import sys

APPS = ["hadoop", "spark", "sparksql", "graphlab", "memcached"]
pub = json.load(open(sys.argv[1]))["rows"]
std = json.load(open(sys.argv[2]))["rows"]


def series(s):
    return "edm" if s.startswith("edm") else s


def fmt_ci(m, c):
    return f"{m:.2f}" + (f" ± {c:.2f}" if c is not None else "")


def std_row(w, x, scheme):
    for r in std:
        if r["workload"] == w and series(r["scheme"]) == scheme:
            key = r["write_ratio"] if w == "mixed" else r["load"]
            if abs(key - x) < 1e-9:
                return r
    return None


def table(w, schemes, title):
    print(f"**{title}** — published / ours, published metric (ratio) / ours, steady metric at data load = label (± 95 % CI)")
    print()
    print("| label | data load (published def.) | " + " | ".join(schemes) + " |")
    print("|---:|---:|" + "---|" * len(schemes))
    labels = sorted({r["label"] for r in pub if r["workload"] == w})
    for lab in labels:
        cells = []
        dl = None
        for s in schemes:
            p = next((r for r in pub if r["workload"] == w and r["scheme"] == s and abs(r["label"] - lab) < 1e-9), None)
            st = std_row(w, lab, s)
            if p is None:
                cells.append("–")
                continue
            dl = p["data_load"]
            pv = p["published"]
            ratio = f" ({p['mean'] / pv:.2f})" if pv else ""
            cells.append(
                f"{pv:.2f} / {p['mean']:.2f}{ratio} / " if pv else f"– / {p['mean']:.2f} / "
            )
            cells[-1] += fmt_ci(st["all"]["mean"], st.get("ci95")) if st else "–"
        print(f"| {lab} | {dl:.3f} | " + " | ".join(cells) + " |")
    print()


table("write", ["edm", "ird", "pfabric", "pfc", "dctcp", "cxl", "fastpass"], "Write-only, 64 B")
# Only EDM, IRD and CXL are published for reads and mixed traffic.
table("read", ["edm", "ird", "cxl"], "Read-only, 64 B")
table("mixed", ["edm", "ird", "cxl"], "Mixed at label 0.8 (label = write share)")

print("**Application traces at label 0.4, by rank** — published at this rank / ours, published metric (application) / ours, steady metric (application)")
print()
print("| scheme | rank 1 | rank 2 | rank 3 | rank 4 | rank 5 |")
print("|---|---|---|---|---|---|")
ranks = json.load(open(sys.argv[1])).get("app_ranks", [])
for scheme, v in ranks:
    if scheme not in ("edm", "cxl", "pfc"):
        continue
    st = sorted(
        (r for r in std if r["workload"] in APPS and series(r["scheme"]) == scheme),
        key=lambda r: r["all"]["mean"],
    )
    cells = []
    for i, (app, m, p) in enumerate(v):
        s = st[i] if i < len(st) else None
        sc = f"{fmt_ci(s['all']['mean'], s.get('ci95'))} ({s['workload']})" if s else "–"
        cells.append(f"{p:.2f} / {m:.2f} ({app}) / {sc}" if p else f"– / {m:.2f} ({app}) / {sc}")
    print(f"| {scheme} | " + " | ".join(cells) + " |")
