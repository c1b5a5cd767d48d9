# Vivado hardware-manager commands for the fake vivado: each records its
# words to vivado.calls. A file `fail` holding `program_hw_devices` makes
# programming fail like the real command.
set dir [file dirname [info script]]
set log [open [file join $dir vivado.calls] w]
proc rec {args} {
    global log
    puts $log [join $args " "]
    flush $log
}
proc open_hw_manager {args} { rec open_hw_manager {*}$args }
proc connect_hw_server {args} {
    rec connect_hw_server {*}$args
    puts "INFO: \[Labtools 27-2285\] Connecting to hw_server url TCP:[lindex $args end]"
}
proc get_hw_targets {args} {
    rec get_hw_targets {*}$args
    return [lsearch -all -inline -glob {localhost:3121/xilinx_tcf/Xilinx/21290594G00LA} [lindex $args end]]
}
proc current_hw_target {args} { rec current_hw_target {*}$args }
proc open_hw_target {args} { rec open_hw_target {*}$args; puts "INFO: \[Labtoolstcl 44-466\] Opening hw_target localhost:3121/xilinx_tcf/Xilinx/21290594G00LA" }
proc close_hw_target {args} { rec close_hw_target {*}$args }
proc get_hw_devices {args} { rec get_hw_devices {*}$args; return "xcu200_0" }
proc current_hw_device {args} { rec current_hw_device {*}$args }
proc refresh_hw_device {args} { rec refresh_hw_device {*}$args }
proc set_property {args} { rec set_property {*}$args }
proc get_property {args} { rec get_property {*}$args; return 1 }
proc program_hw_devices {args} {
    rec program_hw_devices {*}$args
    global dir
    if {[file exists [file join $dir fail]]} {
        error "\[Labtools 27-3165\] End of startup status: LOW"
    }
    puts "INFO: \[Labtools 27-3164\] End of startup status: HIGH"
}
proc write_cfgmem {args} {
    rec write_cfgmem {*}$args
    set f [lindex $args [expr {[lsearch $args -file] + 1}]]
    file mkdir [file dirname $f]
    set h [open $f w]; puts $h ":020000040000FA"; close $h
    puts "Writing file $f"
}
proc get_cfgmem_parts {args} { rec get_cfgmem_parts {*}$args; return [lindex $args end] }
proc create_hw_cfgmem {args} { rec create_hw_cfgmem {*}$args; return cfgmem_0 }
proc create_hw_bitstream {args} { rec create_hw_bitstream {*}$args }
proc program_hw_cfgmem {args} {
    rec program_hw_cfgmem {*}$args
    puts "Mfg ID : 20   Memory Type : bb   Memory Capacity : 21"
    puts "Performing Erase Operation..."
    puts "Erase Operation successful."
    puts "Performing Program and Verify Operations..."
    puts "Program/Verify Operation successful."
}
proc boot_hw_device {args} { rec boot_hw_device {*}$args }
proc disconnect_hw_server {args} { rec disconnect_hw_server {*}$args }
proc close_hw_manager {args} { rec close_hw_manager {*}$args }
set script [lindex $argv 0]
set argv [lrange $argv 1 end]
set argc [llength $argv]
source $script
