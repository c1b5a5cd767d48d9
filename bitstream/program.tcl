# program.tcl -- program an FPGA over JTAG with the Vivado hardware manager.
#
# Usage: vivado -mode batch -nojournal -nolog -source program.tcl \
#            -tclargs BITSTREAM HW_SERVER_URL DEVICE ?TARGET?
#   BITSTREAM      the .bit file (checked against its build manifest first)
#   HW_SERVER_URL  e.g. localhost:3121 (a hw_server must be running there)
#   DEVICE         hardware-device name pattern, e.g. xcu200_0
#   TARGET         hardware-target pattern selecting one JTAG cable when the
#                  hw_server sees several, e.g. *21290594G00LA* (default *)
#
# `clio flash` (crate clio-flash) runs this script for the Alveo U200 and
# turns the `clio-step:` lines into progress. Any failure is a Tcl error, so
# Vivado exits non-zero; the last line is `clio-done` on success.

proc clio_step {n total label} {
    puts "clio-step: $n/$total $label"
    flush stdout
}

if {[llength $argv] < 3 || [llength $argv] > 4} {
    error "usage: program.tcl BITSTREAM HW_SERVER_URL DEVICE ?TARGET? (got: $argv)"
}
lassign $argv bitstream url device_pattern target_pattern
if {$target_pattern eq ""} {
    set target_pattern *
}
if {![file isfile $bitstream]} {
    error "bitstream $bitstream does not exist"
}

clio_step 1 4 "connect to hw_server $url"
open_hw_manager
connect_hw_server -url $url
set targets [get_hw_targets -quiet $target_pattern]
if {[llength $targets] == 0} {
    error "hw_server $url sees no JTAG target matching $target_pattern (cable unplugged or board off?)"
}

clio_step 2 4 "find device $device_pattern"
set device ""
foreach target $targets {
    current_hw_target $target
    open_hw_target
    set found [get_hw_devices -quiet $device_pattern]
    if {[llength $found] > 0} {
        set device [lindex $found 0]
        break
    }
    close_hw_target
}
if {$device eq ""} {
    error "no device matching $device_pattern on any target of $url"
}
current_hw_device $device
refresh_hw_device -update_hw_probes false $device

clio_step 3 4 "program $device"
set_property PROBES.FILE {} $device
set_property FULL_PROBES.FILE {} $device
set_property PROGRAM.FILE $bitstream $device
program_hw_devices $device

clio_step 4 4 "check DONE"
refresh_hw_device $device
set done [get_property REGISTER.IR.BIT5_DONE $device]
if {$done != 1} {
    error "$device did not assert DONE after programming"
}
close_hw_target
disconnect_hw_server
close_hw_manager
puts "clio-done"
