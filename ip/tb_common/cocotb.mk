# Settings shared by every cocotb bench under ip/ (Icarus, SystemVerilog 2012).
# A bench Makefile sets DUT (and VERILOG_SOURCES, COMPILE_ARGS), includes this,
# then cocotb's Makefile.sim (TEST_MODULE names the Python tests when they are
# not test_$(DUT)). The bench base tb_base.py is on PYTHONPATH.
TB_COMMON := $(dir $(lastword $(MAKEFILE_LIST)))
TOPLEVEL_LANG = verilog
SIM ?= icarus
COCOTB_TOPLEVEL = $(DUT)
TEST_MODULE ?= test_$(DUT)
COCOTB_TEST_MODULES = $(TEST_MODULE)
TOPLEVEL = $(DUT)
MODULE = $(TEST_MODULE)
COMPILE_ARGS += -g2012
COCOTB_HDL_TIMEUNIT = 1ns
COCOTB_HDL_TIMEPRECISION = 1ps
export PYTHONPATH := $(abspath $(TB_COMMON)):$(PYTHONPATH)
