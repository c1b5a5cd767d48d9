# stubbed_build.tcl -- run bitstream/build.tcl under plain tclsh with the
# Vivado commands stubbed (vivado_stub.tcl): the same arguments as build.tcl.
# Used by the clio-flash tests to check the manifest build.tcl writes is the
# one `clio flash` accepts.
# Usage: tclsh bitstream/ci/stubbed_build.tcl BOARD OUT_DIR ?TOP?
set ci_dir [file dirname [file normalize [info script]]]
source [file join $ci_dir vivado_stub.tcl]
source [file join [file dirname $ci_dir] build.tcl]
