# vivado_stub.tcl -- the Vivado commands bitstream/build.tcl and the board
# ip.tcl scripts use, as plain-Tcl procs that record each call in
# ::stub::calls, check their file arguments exist, parse constraint files,
# and write the files Vivado would write (checkpoints, reports, bitstream,
# IP wrappers) as small stand-ins. Loaded by check_flow.tcl into a fresh
# interpreter before build.tcl; no Vivado needed.

namespace eval stub {
    variable calls {}
    variable read_files {}
    variable xdc {}
    variable bd {}
}

proc stub::rec {args} {
    lappend ::stub::calls $args
}

proc stub::need_file {cmd f} {
    if {![file isfile $f]} {
        error "$cmd: file $f does not exist"
    }
}

proc stub::write {path text} {
    file mkdir [file dirname $path]
    set h [open $path w]
    puts -nonewline $h $text
    close $h
}

proc stub::opt {args name} {
    set i [lsearch -exact $args $name]
    if {$i < 0} { return "" }
    return [lindex $args [expr {$i + 1}]]
}

# Parse one XDC file in a safe interpreter that knows only XDC commands:
# any other command is an error. Returns {ports PORTS pins {PIN PORT ...}}.
proc stub::parse_xdc {path} {
    set x [interp create -safe]
    $x eval {
        set ::ports {}
        set ::pins {}
        proc get_ports {args} {
            foreach a $args {
                foreach p $a { lappend ::ports $p }
            }
            return [list port $args]
        }
        proc get_clocks {args} { return [list clock $args] }
        proc get_pins {args} { return [list pin $args] }
        proc get_cells {args} { return [list cell $args] }
        proc get_nets {args} { return [list net $args] }
        proc current_design {args} { return design }
        proc pin_of {obj pin} {
            if {[lindex $obj 0] ne "port"} { error "PACKAGE_PIN on a non-port object $obj" }
            foreach p [lindex $obj 1] {
                if {[dict exists $::pins $pin] && [dict get $::pins $pin] ne $p} {
                    error "pin $pin assigned to both [dict get $::pins $pin] and $p"
                }
                dict set ::pins $pin $p
            }
        }
        proc set_property {args} {
            if {[lindex $args 0] eq "-dict"} {
                set d [lindex $args 1]
                if {[llength $d] % 2} { error "set_property -dict: odd-length list $d" }
                foreach {k v} $d {
                    if {$k in {PACKAGE_PIN LOC}} { pin_of [lindex $args 2] $v }
                }
            } else {
                if {[llength $args] != 3} { error "set_property needs NAME VALUE OBJECTS: $args" }
                if {[lindex $args 0] in {PACKAGE_PIN LOC}} { pin_of [lindex $args 2] [lindex $args 1] }
            }
        }
        proc create_clock {args} {
            if {[lsearch $args -period] < 0} { error "create_clock without -period" }
        }
        proc set_false_path {args} {}
        proc set_input_delay {args} {}
        proc set_output_delay {args} {}
        proc set_clock_groups {args} {}
        proc set_max_delay {args} {}
        proc set_multicycle_path {args} {}
    }
    set h [open $path]
    set text [read $h]
    close $h
    set rc [catch {$x eval $text} err]
    set ports [$x eval {set ::ports}]
    set pins [$x eval {set ::pins}]
    interp delete $x
    if {$rc} {
        error "read_xdc: $path does not parse: $err"
    }
    return [list ports [lsort -unique $ports] pins $pins]
}

# --- project and sources -------------------------------------------------------
proc create_project {args} { stub::rec create_project {*}$args }
proc current_project {args} { return project }
proc current_design {args} { return design }
proc set_property {args} { stub::rec set_property {*}$args }
proc read_verilog {args} {
    set f [lindex $args end]
    stub::need_file read_verilog $f
    lappend ::stub::read_files $f
    stub::rec read_verilog {*}$args
}
proc read_xdc {args} {
    set f [lindex $args end]
    stub::need_file read_xdc $f
    dict set ::stub::xdc $f [stub::parse_xdc $f]
    stub::rec read_xdc {*}$args
}

# --- IP and block designs ------------------------------------------------------
proc get_board_parts {args} { return [list xilinx.com:zcu106:part0:2.6] }
proc create_bd_design {args} {
    set ::stub::bd [list dir [stub::opt $args -dir] name [lindex $args end]]
    stub::rec create_bd_design {*}$args
}
proc create_bd_cell {args} { stub::rec create_bd_cell {*}$args; return [lindex $args end] }
proc apply_bd_automation {args} { stub::rec apply_bd_automation {*}$args }
proc get_bd_intf_pins {args} { return [lindex $args end] }
proc get_bd_pins {args} { return [lindex $args end] }
proc get_bd_addr_spaces {args} { return [lindex $args end] }
proc get_bd_addr_segs {args} { return [lindex $args end] }
proc make_bd_intf_pins_external {args} { stub::rec make_bd_intf_pins_external {*}$args }
proc make_bd_pins_external {args} { stub::rec make_bd_pins_external {*}$args }
proc connect_bd_net {args} { stub::rec connect_bd_net {*}$args }
proc assign_bd_address {args} { stub::rec assign_bd_address {*}$args }
proc validate_bd_design {args} { stub::rec validate_bd_design {*}$args }
proc save_bd_design {args} { stub::rec save_bd_design {*}$args }
proc get_files {pattern} {
    set name [dict get $::stub::bd name]
    if {$pattern ne "$name.bd"} { error "get_files: no file matches $pattern" }
    return [file join [dict get $::stub::bd dir] $name $name.bd]
}
proc generate_target {args} { stub::rec generate_target {*}$args }
# Vivado writes the wrapper HDL of the block design and returns its path.
proc make_wrapper {args} {
    stub::rec make_wrapper {*}$args
    set name [dict get $::stub::bd name]
    set path [file join [dict get $::stub::bd dir] $name hdl ${name}_wrapper.v]
    stub::write $path "// stand-in for the wrapper Vivado generates\nmodule ${name}_wrapper;\nendmodule\n"
    return $path
}
proc create_ip {args} { stub::rec create_ip {*}$args }
proc get_ips {args} { return [lindex $args end] }
proc synth_ip {args} { stub::rec synth_ip {*}$args }

# --- implementation ------------------------------------------------------------
proc synth_design {args} {
    set top [stub::opt $args -top]
    set part [stub::opt $args -part]
    if {$top eq "" || $part eq ""} { error "synth_design: -top and -part are required ($args)" }
    set found 0
    foreach f $::stub::read_files {
        set h [open $f]
        set text [read $h]
        close $h
        if {[regexp -line "^\\s*module\\s+${top}\\M" $text]} { set found 1 }
    }
    if {!$found} { error "synth_design: top $top is in none of the files read" }
    stub::rec synth_design {*}$args
}
foreach cmd {opt_design place_design phys_opt_design route_design} {
    proc $cmd {args} "stub::rec $cmd {*}\$args"
}
proc write_checkpoint {args} {
    stub::rec write_checkpoint {*}$args
    stub::write [lindex $args end] "stub checkpoint\n"
}
proc report_utilization {args} {
    stub::rec report_utilization {*}$args
    stub::write [stub::opt $args -file] "stub utilization report\n"
}
proc report_timing_summary {args} {
    stub::rec report_timing_summary {*}$args
    stub::write [stub::opt $args -file] "stub timing summary\n"
}
proc get_timing_paths {args} { return {path worst} }
proc get_property {name obj} {
    if {$name eq "SLACK"} { return 0.125 }
    error "get_property: stub knows no property $name"
}
proc write_bitstream {args} {
    stub::rec write_bitstream {*}$args
    stub::write [lindex $args end] "stub bitstream of [llength $::stub::read_files] sources\n"
}
proc write_hw_platform {args} {
    stub::rec write_hw_platform {*}$args
    stub::write [lindex $args end] "stub hardware platform\n"
}
proc version {args} { return "0.0-tclsh-stub" }
