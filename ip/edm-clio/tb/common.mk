# Shared cocotb settings of the translator's benches: the ip-wide ones
# (ip/tb_common/cocotb.mk: Icarus, SV 2012, the bench base on PYTHONPATH) plus
# the EDM package and this directory's helpers (edm_clio_tb.py).
EDM_CLIO_TB := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
include $(EDM_CLIO_TB)/../../tb_common/cocotb.mk
EDM_RTL = $(abspath $(EDM_CLIO_TB)/../../edm/rtl)
EDM_CLIO_RTL = $(abspath $(EDM_CLIO_TB)/../rtl)
VERILOG_SOURCES += $(EDM_RTL)/edm_pkg.sv
export PYTHONPATH := $(EDM_CLIO_TB):$(PYTHONPATH)
COMPILE_ARGS += -I$(EDM_CLIO_TB)/include
