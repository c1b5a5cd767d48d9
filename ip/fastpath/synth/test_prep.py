#!/usr/bin/env python3
"""Tests of yosys_prep.py (package names qualified for yosys 0.23, which has no
`import`). Run: python3 -m unittest ip/fastpath/synth/test_prep.py;
ci/suites/35-synth.sh runs it."""

import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

PKG = """package clio_pkg;
localparam int GATE_ENTRIES = 8;
localparam int CLIO_HEADER_LEN = 52;
endpackage
"""

TOP = """module t #(
    parameter GATE_ENTRIES = clio_pkg::GATE_ENTRIES
) (output wire [31:0] a, output wire [31:0] b);
import clio_pkg::CLIO_HEADER_LEN;
sub #(.ENTRIES(GATE_ENTRIES)) s ();
assign a = CLIO_HEADER_LEN;
assign b = GATE_ENTRIES;
endmodule
"""

SUB = """module sub #(parameter ENTRIES = GATE_ENTRIES) ();
localparam L = CLIO_HEADER_LEN + ENTRIES;
endmodule
"""


class TestPrep(unittest.TestCase):
    def prep(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("clio_pkg.sv", PKG), ("t.sv", TOP), ("sub.sv", SUB)):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            out = os.path.join(d, "out")
            subprocess.run([sys.executable, os.path.join(HERE, "yosys_prep.py"), os.path.join(d, "clio_pkg.sv"),
                            out] + [os.path.join(d, n) for n in ("clio_pkg.sv", "t.sv", "sub.sv")], check=True)
            return {n: open(os.path.join(out, n)).read() for n in ("t.sv", "sub.sv")}

    def test_package_names_qualified_imports_dropped(self):
        out = self.prep()
        self.assertNotIn("import", out["t.sv"])
        self.assertIn("assign a = clio_pkg::CLIO_HEADER_LEN;", out["t.sv"])
        self.assertIn("parameter ENTRIES = clio_pkg::GATE_ENTRIES", out["sub.sv"])
        self.assertIn("localparam L = clio_pkg::CLIO_HEADER_LEN + ENTRIES;", out["sub.sv"])

    def test_own_parameter_of_a_package_name_stays_unqualified(self):
        # The top's GATE_ENTRIES parameter: qualifying its declaration is a
        # yosys syntax error, qualifying its uses ignores an override.
        t = self.prep()["t.sv"]
        self.assertIn("parameter GATE_ENTRIES = clio_pkg::GATE_ENTRIES", t)
        self.assertIn(".ENTRIES(GATE_ENTRIES)", t)
        self.assertIn("assign b = GATE_ENTRIES;", t)


if __name__ == "__main__":
    unittest.main()
