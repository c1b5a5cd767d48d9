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
proc disconnect_hw_server {args} { rec disconnect_hw_server {*}$args }
proc close_hw_manager {args} { rec close_hw_manager {*}$args }
set script [lindex $argv 0]
set argv [lrange $argv 1 end]
set argc [llength $argv]
source $script
