#!/usr/bin/env python3
"""Tests of depth.py on netlists whose depth is known by construction: Xilinx
primitives instantiated by hand (read by yosys against its Xilinx cell library,
so the JSON is the same format synth_xilinx writes), plus hand-made JSON for the
error cases. Run: python3 -m unittest ip/fastpath/synth/test_depth.py (or pytest);
ci/suites/35-synth.sh runs it."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import depth  # noqa: E402

FF = "FDRE {n}(.C(clk), .CE(1'b1), .R(1'b0), .D({d}), .Q({q}));"


def lut_chain(src, n, prefix):
    """n LUT1 (inverters) in series from src; returns (verilog, last net)."""
    lines, prev = [], src
    for i in range(n):
        lines.append(f"wire {prefix}{i}; LUT1 #(.INIT(2'b01)) {prefix}l{i}(.I0({prev}), .O({prefix}{i}));")
        prev = f"{prefix}{i}"
    return "\n".join(lines), prev


def chain_module(n):
    body, last = lut_chain("q0", n, "c")
    return f"""module chain{n}(input clk, input a, output q1);
wire q0; {FF.format(n="f0", d="a", q="q0")}
{body}
{FF.format(n="f1", d=last, q="q1")}
endmodule
"""


# LUT2 -> CARRY8 -> CARRY8 -> CARRY8 (CO[7] -> CI twice) -> LUT1 -> CARRY4 -> CARRY4 (CO[3] -> CI)
# -> FF: 1 + 1 + 0 + 0 + 1 + 1 + 0 = 4 levels.
CARRY = """module carry(input clk, input a, input b, output q1, output q2);
wire q0, qb; """ + FF.format(n="f0", d="a", q="q0") + FF.format(n="fb", d="b", q="qb") + """
wire s0; LUT2 #(.INIT(4'b0110)) x0(.I0(q0), .I1(qb), .O(s0));
wire [7:0] o0, co0, o1, co1, o2, co2;
CARRY8 c0(.CI(1'b0), .CI_TOP(1'b0), .DI(8'd0), .S({7'd0, s0}), .O(o0), .CO(co0));
CARRY8 c1(.CI(co0[7]), .CI_TOP(1'b0), .DI(8'd0), .S(8'hff), .O(o1), .CO(co1));
CARRY8 c2(.CI(co1[7]), .CI_TOP(1'b0), .DI(8'd0), .S(8'hff), .O(o2), .CO(co2));
wire t0; LUT1 #(.INIT(2'b01)) x1(.I0(o2[7]), .O(t0));
wire [3:0] o3, co3, o4, co4;
CARRY4 c3(.CI(1'b0), .CYINIT(1'b0), .DI(4'd0), .S({3'd0, t0}), .O(o3), .CO(co3));
CARRY4 c4(.CI(co3[3]), .CYINIT(1'b0), .DI(4'd0), .S(4'hf), .O(o4), .CO(co4));
""" + FF.format(n="f1", d="o4[3]", q="q1") + """
// A carry chain entered through CI from a LUT is one level more than the LUT.
wire u0; LUT1 #(.INIT(2'b01)) x2(.I0(q0), .O(u0));
wire [7:0] o5, co5;
CARRY8 c5(.CI(u0), .CI_TOP(1'b0), .DI(8'd0), .S(8'hff), .O(o5), .CO(co5));
""" + FF.format(n="f2", d="o5[7]", q="q2") + """
endmodule
"""

# Two LUT6 into a MUXF7, two MUXF7 into a MUXF8 (a LUT8): 1 level from the data inputs;
# the F7's select driven through two LUTs: 2 levels.
MUXF = """module muxf(input clk, input a, output q1);
wire q0; """ + FF.format(n="f0", d="a", q="q0") + """
wire l0, l1, l2, l3, m0, m1, m2;
LUT6 #(.INIT(64'h1)) x0(.I0(q0), .I1(q0), .I2(q0), .I3(q0), .I4(q0), .I5(q0), .O(l0));
LUT6 #(.INIT(64'h2)) x1(.I0(q0), .I1(q0), .I2(q0), .I3(q0), .I4(q0), .I5(q0), .O(l1));
wire s0, s1; LUT1 #(.INIT(2'b01)) y0(.I0(q0), .O(s0)); LUT1 #(.INIT(2'b01)) y1(.I0(s0), .O(s1));
MUXF7 m7a(.I0(l0), .I1(l1), .S(s1), .O(m0));
MUXF7 m7b(.I0(l1), .I1(l0), .S(q0), .O(m1));
MUXF8 m8(.I0(m0), .I1(m1), .S(q0), .O(m2));
""" + FF.format(n="f1", d="m2", q="q1") + """
endmodule
"""

# 3 LUTs into a BRAM address, 2 LUTs after its data out: the BRAM is a boundary, so 3 (not 5).
BRAM = """module bram(input clk, input a, output q1);
wire q0; """ + FF.format(n="f0", d="a", q="q0") + "\n" + lut_chain("q0", 3, "p")[0] + """
wire [31:0] dout;
RAMB36E2 r(.CLKARDCLK(clk), .ADDRARDADDR({14'd0, p2}), .ENARDEN(1'b1), .DOUTADOUT(dout));
""" + lut_chain("dout[0]", 2, "n")[0] + "\n" + FF.format(n="f1", d="n1", q="q1") + """
endmodule
"""

# DSP48E2 with PREG = 1 is a boundary (2 levels before it, 1 after: 2);
# with every register off it is one combinational level (LUT, DSP, LUT: 3).
DSP = """module dsp(input clk, input a, output q1, output q2);
wire q0; """ + FF.format(n="f0", d="a", q="q0") + "\n" + lut_chain("q0", 2, "p")[0] + """
wire [47:0] pr, pc;
DSP48E2 #(.PREG(1)) dr(.CLK(clk), .A({29'd0, p1}), .B(18'd1), .P(pr));
""" + lut_chain("pr[0]", 1, "r")[0] + "\n" + FF.format(n="f1", d="r0", q="q1") + """
wire k0; LUT1 #(.INIT(2'b01)) xk(.I0(q0), .O(k0));
DSP48E2 #(.AREG(0), .BREG(0), .ACASCREG(0), .BCASCREG(0), .CREG(0), .DREG(0), .ADREG(0), .MREG(0),
  .PREG(0)) dc(.CLK(clk), .A({29'd0, k0}), .B(18'd1), .P(pc));
""" + lut_chain("pc[0]", 1, "s")[0] + "\n" + FF.format(n="f2", d="s0", q="q2") + """
endmodule
"""

# LUTRAM read: LUT -> RAM32M16 address -> data out -> LUT -> FF = 3 levels; its write data
# comes straight from a flip-flop (0 levels).
LUTRAM = """module lutram(input clk, input a, output q1);
wire q0; """ + FF.format(n="f0", d="a", q="q0") + """
wire l0; LUT1 #(.INIT(2'b01)) x0(.I0(q0), .O(l0));
wire [1:0] doa;
RAM32M16 r(.WCLK(clk), .WE(q0), .ADDRA({4'd0, l0}), .ADDRH(5'd0), .DIA({q0, q0}), .DOA(doa));
wire l1; LUT1 #(.INIT(2'b01)) x1(.I0(doa[0]), .O(l1));
""" + FF.format(n="f1", d="l1", q="q1") + """
endmodule
"""

# Ports: in -> 2 LUTs -> FF; FF -> 1 LUT -> out; in -> 3 LUTs -> out. An FDCE's
# asynchronous clear behind 5 LUTs is not an end point: reg_to_reg is the 1-LUT D path.
PORTS = """module ports(input clk, input a, input b, output q1, output o1, output o2);
""" + lut_chain("a", 2, "i")[0] + """
wire q0; """ + FF.format(n="f0", d="i1", q="q0") + "\n" + lut_chain("q0", 1, "o")[0] + """
assign o1 = o0;
""" + lut_chain("b", 3, "w")[0] + """
assign o2 = w2;
""" + lut_chain("q0", 5, "z")[0] + """
FDCE f1(.C(clk), .CE(1'b1), .CLR(z4), .D(o0), .Q(q1));
endmodule
"""


def yosys_json(verilog, tmp):
    src = os.path.join(tmp, "t.v")
    out = os.path.join(tmp, "t.json")
    with open(src, "w") as f:
        f.write(verilog)
    subprocess.run(["yosys", "-q", "-p", "read_verilog -lib -specify +/xilinx/cells_sim.v; "
                    f"read_verilog -lib +/xilinx/cells_xtra.v; read_verilog {src}; proc; write_json {out}"],
                   check=True)
    with open(out) as f:
        return json.load(f)


@unittest.skipUnless(shutil.which("yosys"), "yosys is not installed")
class Constructed(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        tmp = tempfile.mkdtemp()
        try:
            verilog = "".join(chain_module(n) for n in (1, 4, 9)) + CARRY + MUXF + BRAM + DSP + LUTRAM + PORTS
            cls.doc = yosys_json(verilog, tmp)
        finally:
            shutil.rmtree(tmp)

    def measure(self, top):
        return depth.measure(depth.pick_top(self.doc, top)[1])

    def test_lut_chains(self):
        for n in (1, 4, 9):
            r = self.measure(f"chain{n}")["reg_to_reg"]
            self.assertEqual(r["levels"], n)
            self.assertEqual(r["cells"], {"LUT1": n})
            self.assertEqual((r["start"]["cell"], r["end"]["cell"], r["end"]["port"]), ("f0", "f1", "D"))

    def test_carry_chain_counts_entry_not_cascade(self):
        r = self.measure("carry")
        p = r["reg_to_reg"]
        self.assertEqual(p["levels"], 4)
        self.assertEqual(p["cells"], {"CARRY4": 2, "CARRY8": 3, "LUT1": 1, "LUT2": 1})
        self.assertEqual(p["end"]["cell"], "f1")
        # The CI-entered chain alone (f2) is LUT + carry = 2: the histogram has one D at 2.
        self.assertEqual(r["reg_to_reg_endpoint_histogram"].get("2"), 1)

    def test_muxf_adds_no_level(self):
        p = self.measure("muxf")["reg_to_reg"]
        self.assertEqual(p["levels"], 2)
        self.assertEqual(p["cells"], {"LUT1": 2, "MUXF7": 1, "MUXF8": 1})

    def test_bram_is_a_boundary(self):
        p = self.measure("bram")["reg_to_reg"]
        self.assertEqual(p["levels"], 3)
        self.assertEqual((p["end"]["cell"], p["end"]["port"]), ("r", "ADDRARDADDR"))
        self.assertEqual(p["start"]["cell"], "f0")

    def test_dsp(self):
        r = self.measure("dsp")
        p = r["reg_to_reg"]
        self.assertEqual(p["levels"], 3)
        self.assertEqual(p["cells"], {"DSP48E2": 1, "LUT1": 2})
        self.assertEqual(p["end"]["cell"], "f2")
        # The registered DSP splits LUT, LUT | DSP | LUT into 2 (its A input) and 1 (f1);
        # the combinational one's inputs are no end points.
        self.assertEqual(r["reg_to_reg_endpoint_histogram"], {"1": 1, "2": 1, "3": 1})

    def test_lutram_read_is_a_level(self):
        p = self.measure("lutram")["reg_to_reg"]
        self.assertEqual(p["levels"], 3)
        self.assertEqual(p["cells"], {"LUT1": 2, "RAM32M16": 1})
        self.assertEqual((p["start"]["cell"], p["end"]["cell"]), ("f0", "f1"))

    def test_ports_and_async_clear(self):
        r = self.measure("ports")
        self.assertEqual(r["in_to_reg"]["levels"], 2)
        self.assertEqual(r["reg_to_out"]["levels"], 1)
        self.assertEqual(r["in_to_out"]["levels"], 3)
        self.assertEqual(r["reg_to_reg"]["levels"], 1)
        self.assertEqual(r["in_to_reg"]["start"]["net"], "a")
        self.assertEqual(r["levels"], 3)  # the deepest of any class: in_to_out
        # Per register: q0 behind 2 LUTs from the port, q1 behind 1 from q0 (its clear is no path).
        self.assertEqual(r["deepest_registers"], [{"register": "q0", "levels": 2, "from": "in"},
                                                  {"register": "q1", "levels": 1, "from": "reg"}])
        # One instance (no hierarchy in the name): its deepest register.
        self.assertEqual(r["deepest_by_instance"], [{"instance": "(top)", "register": "q0", "levels": 2,
                                                     "from": "in"}])

    def test_deep_cone(self):
        # chain9: one register input 9 deep, from f0's q0 through the named c0..c8.
        r = depth.measure(depth.pick_top(self.doc, "chain9")[1], deep=5)["deep_cone"]
        self.assertEqual((r["levels_at_least"], r["endpoints"]), (5, 1))
        self.assertEqual(r["ends"], [{"name": "q1", "endpoints": 1}])
        self.assertEqual(r["starts"], [{"name": "q0", "endpoints": 1}])
        self.assertEqual({d["name"] for d in r["through"]}, {f"c{i}" for i in range(9)})
        # Nothing in chain4 is that deep.
        self.assertEqual(depth.measure(depth.pick_top(self.doc, "chain4")[1], deep=5)["deep_cone"]["endpoints"], 0)

    def test_deepest_registers_per_bus(self):
        # The carry netlist's three flip-flops: q1 (4 levels), q2 (the CI-entered chain, 2), and
        # q0 / qb straight from the ports (0).
        regs = {d["register"]: d["levels"] for d in self.measure("carry")["deepest_registers"]}
        self.assertEqual(regs, {"q1": 4, "q2": 2, "q0": 0, "qb": 0})


def cell(t, conns, dirs):
    return {"type": t, "parameters": {}, "connections": conns, "port_directions": dirs}


class Naming(unittest.TestCase):
    def test_chparam_module_found_by_its_name(self):
        doc = {"modules": {"$paramod\\m\\N=1": {"cells": {}}, "LUT1": {}}}
        self.assertEqual(depth.pick_top(doc, "m")[0], "$paramod\\m\\N=1")
        with self.assertRaisesRegex(depth.NetlistError, "not in the netlist"):
            depth.pick_top(doc, "n")


class Errors(unittest.TestCase):
    def test_unknown_cell_is_named(self):
        m = {"ports": {}, "netnames": {},
             "cells": {"d": cell("$_DFF_P_", {"D": [2], "C": [3], "Q": [4]},
                                 {"D": "input", "C": "input", "Q": "output"})}}
        with self.assertRaisesRegex(depth.NetlistError, r"\$_DFF_P_"):
            depth.measure(m)

    def test_loop_is_an_error(self):
        lut = {"I0": "input", "O": "output"}
        m = {"ports": {}, "netnames": {},
             "cells": {"a": cell("LUT1", {"I0": [2], "O": [3]}, lut), "b": cell("LUT1", {"I0": [3], "O": [2]}, lut)}}
        with self.assertRaisesRegex(depth.NetlistError, "loop"):
            depth.measure(m)


if __name__ == "__main__":
    unittest.main()
