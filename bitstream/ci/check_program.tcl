# check_program.tcl -- runs bitstream/program.tcl (the Alveo programming
# script `clio flash` uses) under tclsh with the hardware-manager commands
# stubbed, and checks its argument errors and its command sequence.
# Usage: tclsh bitstream/ci/check_program.tcl BITSTREAM
set script [file join [file dirname [file dirname [file normalize [info script]]]] program.tcl]
set bit [lindex $argv 0]
set failures 0

proc run {args} {
    set i [interp create]
    $i eval {
        set ::calls {}
        foreach cmd {open_hw_manager connect_hw_server current_hw_target open_hw_target
                     close_hw_target current_hw_device refresh_hw_device set_property
                     program_hw_devices disconnect_hw_server close_hw_manager} {
            proc $cmd {args} "lappend ::calls \[list $cmd {*}\$args\]"
        }
        proc get_hw_targets {args} {
            lappend ::calls [list get_hw_targets {*}$args]
            return [lsearch -all -inline -glob {localhost:3121/xilinx_tcf/Xilinx/0001 localhost:3121/xilinx_tcf/Xilinx/0002} [lindex $args end]]
        }
        proc get_hw_devices {args} {
            if {[string match [lindex $args end] xcu200_0]} { return xcu200_0 }
            return {}
        }
        proc get_property {name obj} { return 1 }
    }
    $i eval [list set argv $args]
    set rc [catch {$i eval [list source $::script]} err]
    set calls [$i eval {set ::calls}]
    interp delete $i
    return [list $rc $err $calls]
}

proc check {cond msg} {
    if {[uplevel 1 [list expr $cond]]} {
        puts "  ok   $msg"
    } else {
        puts "  FAIL $msg"
        incr ::failures
    }
}

puts "== program.tcl"
lassign [run] rc err
check {$rc && [string match "*usage: program.tcl*" $err]} "no arguments: usage error"
lassign [run /nonexistent.bit localhost:3121 xcu200_0] rc err
check {$rc && [string match "*does not exist*" $err]} "missing bitstream named"
lassign [run $bit localhost:3121 xcvu9p_0] rc err
check {$rc && [string match "*no device matching xcvu9p_0*" $err]} "absent device named"
lassign [run $bit localhost:3121 xcu200_0] rc err calls
check {!$rc} "programs xcu200_0 ($err)"
set names [lmap c $calls {lindex $c 0}]
set want {open_hw_manager connect_hw_server get_hw_targets current_hw_target open_hw_target current_hw_device
          refresh_hw_device set_property set_property set_property program_hw_devices
          refresh_hw_device close_hw_target disconnect_hw_server close_hw_manager}
check {$names eq [list {*}$want]} "command sequence: $names"
check {[lsearch -exact $calls [list set_property PROGRAM.FILE $bit xcu200_0]] >= 0} "PROGRAM.FILE set to the bitstream"
lassign [run $bit localhost:3121 xcu200_0 *0002*] rc err calls
check {!$rc && [lsearch -exact $calls {current_hw_target localhost:3121/xilinx_tcf/Xilinx/0002}] >= 0} "TARGET pattern selects the second cable"
lassign [run $bit localhost:3121 xcu200_0 *0003*] rc err
check {$rc && [string match "*no JTAG target matching \*0003\**" $err]} "absent cable named"
exit [expr {$failures > 0}]
