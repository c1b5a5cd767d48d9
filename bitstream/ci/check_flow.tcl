# check_flow.tcl -- checks bitstream/build.tcl without Vivado: runs it for
# every board under tclsh with vivado_stub.tcl, and checks the flow order,
# that every file read exists and is the expected list, that the
# constraints parse (no pin assigned twice), the XDC ports against the board
# top when it exists (both ways, bit by bit), the error paths, and the
# manifest.
# Usage: tclsh bitstream/ci/check_flow.tcl   (exit status = failed checks)

set ci_dir [file dirname [file normalize [info script]]]
set root [file dirname [file dirname $ci_dir]]
set stub [file join $ci_dir vivado_stub.tcl]
set build [file join $root bitstream build.tcl]
set failures 0
set checks 0

# CHECK: an expression evaluated in the caller, and what it asserts.
proc check {cond msg} {
    incr ::checks
    if {[uplevel 1 [list expr $cond]]} {
        puts "  ok   $msg"
    } else {
        puts "  FAIL $msg"
        incr ::failures
    }
}

proc slurp {path} {
    set h [open $path]
    set t [read $h]
    close $h
    return $t
}

# Run build.tcl with ARGS in a fresh interpreter holding the stubs.
proc run_build {args} {
    set i [interp create]
    $i eval [list set argv $args]
    $i eval [list set argc [llength $args]]
    $i eval [list source $::stub]
    # build.tcl prints progress; keep the log readable.
    set rc [catch {$i eval [list source $::build]} err]
    set r [dict create rc $rc error $err \
        calls [$i eval {set ::stub::calls}] \
        reads [$i eval {set ::stub::read_files}] \
        xdc [$i eval {set ::stub::xdc}]]
    if {!$rc} {
        dict set r boards [$i eval {set BOARDS}]
    }
    interp delete $i
    return $r
}

proc stub_opt_ok {call name value} {
    set i [lsearch -exact $call $name]
    return [expr {$i >= 0 && [lindex $call [expr {$i + 1}]] eq $value}]
}

# Every value of option NAME in CALL (an option may repeat, as -generic).
proc stub_opt_all {call name} {
    set r {}
    foreach i [lsearch -all -exact $call $name] {
        lappend r [lindex $call [expr {$i + 1}]]
    }
    return $r
}

proc first_index {calls cmd} {
    set n 0
    foreach c $calls {
        if {[lindex $c 0] eq $cmd} { return $n }
        incr n
    }
    return -1
}

proc last_index {calls cmd} {
    set r -1
    set n 0
    foreach c $calls {
        if {[lindex $c 0] eq $cmd} { set r $n }
        incr n
    }
    return $r
}

proc module_defined {files top} {
    foreach f $files {
        if {[regexp -line "^\\s*module\\s+${top}\\M" [slurp $f]]} { return $f }
    }
    return ""
}

# Port names of module TOP in FILE (ANSI header).
proc module_ports {file top} {
    return [dict keys [module_port_widths $file $top]]
}

# Ports of module TOP in FILE (ANSI header) with their widths in bits
# (1 for a scalar, N for [N-1:0] or [0:N-1] with numeric bounds).
proc module_port_widths {file top} {
    set text [slurp $file]
    regexp "module\\s+${top}\\M(.*?)\\);" $text -> header
    set ports {}
    foreach {-> range name} [regexp -all -inline {(?:input|output|inout)\s+(?:wire|logic|reg)?\s*(?:signed\s*)?(\[[^\]]*\])?\s*(\w+)} $header] {
        set width 1
        if {[regexp {^\[\s*(\d+)\s*:\s*(\d+)\s*\]$} $range -> hi lo]} {
            set width [expr {abs($hi - $lo) + 1}]
        }
        dict set ports $name $width
    }
    return $ports
}

# The board table, read from build.tcl itself (a run without arguments
# stops at the usage check after defining it).
set i [interp create]
catch {$i eval [list set argv {}]; $i eval [list source $build]}
set BOARDS [$i eval {set BOARDS}]
interp delete $i

# Stand-in tops for boards whose top module is not written yet: the first
# of these the board's sources define. Both boards have their tops
# (clio_zcu106_top, edm_u200_top): a board whose top is missing and that is
# not listed here fails.
set standin {}

puts "== argument errors"
set r [run_build]
check {[dict get $r rc] && [string match "*usage: build.tcl BOARD OUT_DIR*" [dict get $r error]]} "no arguments: usage error"
set r [run_build zcu102 [file join [pwd] unused]]
check {[dict get $r rc] && [string match "*unknown board `zcu102`*" [dict get $r error]]} "unknown board named"

set tmp [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] clio-bitstream-check-[pid]]
file delete -force $tmp
file mkdir $tmp

dict for {board cfg} $BOARDS {
    puts "== $board"
    set part [dict get $cfg part]
    set default_top [dict get $cfg top]
    # Expected sources: every *.sv of the RTL dirs except the simulation models.
    set expected {}
    set sim_only [dict get $cfg sim_only]
    foreach dir [dict get $cfg rtl] {
        foreach f [lsort [glob -nocomplain -directory [file join $root $dir] *.sv]] {
            set head [lindex [split [slurp $f] \n] 0]
            if {[string match -nocase *simulation* $head]} {
                check {[file tail $f] in $sim_only} "[file tail $f] says it is for simulation and is listed in sim_only"
            }
            if {[file tail $f] ni $sim_only} { lappend expected $f }
        }
    }
    foreach s $sim_only {
        set found 0
        foreach dir [dict get $cfg rtl] {
            if {[file exists [file join $root $dir $s]]} { set found 1 }
        }
        check $found "sim_only file $s exists (no stale entry)"
    }

    set top_file [module_defined $expected $default_top]
    if {$top_file eq ""} {
        set r [run_build $board [file join $tmp $board-missing]]
        check {[dict get $r rc] && [string match "*top module `$default_top`*not defined*" [dict get $r error]]} \
            "board top `$default_top` is not written yet: build stops with an error naming it"
        set top ""
        foreach candidate [expr {[dict exists $standin $board] ? [dict get $standin $board] : {}}] {
            if {$top eq "" && [module_defined $expected $candidate] ne ""} { set top $candidate }
        }
        check {$top ne ""} "a stand-in top exists for $board ([expr {[dict exists $standin $board] ? [dict get $standin $board] : {none listed}}])"
        if {$top eq ""} { continue }
        puts "  note board top $default_top not found in [dict get $cfg rtl]; flow checked with stand-in top $top"
        set r [run_build $board [file join $tmp $board] $top]
    } else {
        set top $default_top
        set r [run_build $board [file join $tmp $board]]
    }
    set r2 [run_build $board [file join $tmp $board-bad] does_not_exist]
    check {[dict get $r2 rc] && [string match "*top module `does_not_exist`*" [dict get $r2 error]]} "unknown top named in the error"

    check {![dict get $r rc]} "build.tcl runs to the end (top $top) [expr {[dict get $r rc] ? [dict get $r error] : {}}]"
    if {[dict get $r rc]} { continue }
    set calls [dict get $r calls]

    # Flow order.
    set order {create_project read_verilog read_xdc synth_design opt_design place_design phys_opt_design route_design report_timing_summary write_bitstream}
    set prev -1
    set in_order 1
    foreach cmd $order {
        set at [first_index $calls $cmd]
        if {$at < 0 || $at < $prev} { set in_order 0; puts "    $cmd at $at (previous step at $prev)" }
        set prev $at
    }
    check $in_order "flow order: [join $order { < }]"
    check {[last_index $calls read_verilog] < [first_index $calls synth_design] && [last_index $calls read_xdc] < [first_index $calls synth_design]} "all sources and constraints read before synthesis"
    check {[last_index $calls report_utilization] > [first_index $calls route_design]} "utilization reported after routing"
    set synth [lindex $calls [first_index $calls synth_design]]
    if {$board eq "zcu106"} {
        # The register block's address comes from the board config the firmware reads.
        set cfgtext [slurp [file join $root board-configs zcu106.toml]]
        regexp {\nregs_base\s*=\s*(0x[0-9A-Fa-f_]+)} $cfgtext -> base
        set base [format 0x%X [string map {_ {}} $base]]
        set placed 0
        foreach c $calls {
            if {[lindex $c 0] eq "assign_bd_address" && [stub_opt_ok $c -offset $base] && [stub_opt_ok $c -range 4K]} { set placed 1 }
        }
        check $placed "register block assigned at fastpath.regs_base = $base (4K) of zcu106.toml"
    }
    check {[stub_opt_ok $synth -top $top] && [stub_opt_ok $synth -part $part]} "synth_design -top $top -part $part"
    # The offload pass-through: on where the slow path serves offloads
    # (the ZCU106's firmware), its answer buffer the config's response bound.
    set of_generics [lsearch -all -inline -glob [stub_opt_all $synth -generic] OFFLOAD_*]
    if {[dict exists $cfg offload_tags]} {
        set of_want [list OFFLOAD_TAGS=[dict get $cfg offload_tags] OFFLOAD_RESP_BYTES=65536]
        check {[dict get $cfg offload_tags] > 0 && $of_generics eq $of_want} "synth_design -generic $of_want (64 KiB = network.max_response_bytes of the board config): $of_generics"
    } else {
        check {$of_generics eq {}} "no offload pass-through generics: $of_generics"
    }

    # Sources: every RTL file read exactly once, packages first, plus IP wrappers.
    set reads [dict get $r reads]
    set rtl_reads [lsearch -all -inline -not -glob $reads [file join $tmp *]]
    check {[lsort $rtl_reads] eq [lsort $expected]} "reads exactly the [llength $expected] RTL sources of [dict get $cfg rtl] (sim models excluded)"
    check {[string match *_pkg.sv [lindex $rtl_reads 0]]} "a package is read first ([file tail [lindex $rtl_reads 0]])"
    check {[lsearch -glob $rtl_reads */clio_pkg.sv] >= 0} "generated clio_pkg.sv is read"
    set all_exist 1
    foreach f $reads { if {![file isfile $f]} { set all_exist 0 } }
    check $all_exist "every file read exists ([llength $reads] files)"

    # Vendor IP: every IP created is synthesized, every block-design wrapper read.
    set ips {}
    set synthed {}
    set wrappers 0
    foreach c $calls {
        switch -- [lindex $c 0] {
            create_ip { lappend ips [lindex $c [expr {[lsearch -exact $c -module_name] + 1}]] }
            synth_ip { lappend synthed [lindex $c end] }
            make_wrapper { incr wrappers }
        }
    }
    check {[llength $ips] > 0 && [lsort $ips] eq [lsort $synthed]} "vendor IP created and synthesized before synth_design: $ips"
    check {[llength $reads] - [llength $rtl_reads] == $wrappers} "every block-design wrapper is read ($wrappers)"
    check {[last_index $calls synth_ip] < [first_index $calls synth_design]} "IP synthesized before the design"
    # A block design's IP is synthesized with the top (global mode): in a
    # non-project flow nothing else synthesizes its out-of-context cells,
    # which would stay black boxes (issue #17, finding 6).
    set bds 0
    set bd_ok 1
    for {set i 0} {$i < [llength $calls]} {incr i} {
        set c [lindex $calls $i]
        if {[lindex $c 0] eq "generate_target" && [string match *.bd [lindex $c end]]} {
            incr bds
            set bd [lindex $c end]
            set mode_at -1
            for {set j 0} {$j < $i} {incr j} {
                set d [lindex $calls $j]
                if {[lrange $d 0 2] eq {set_property synth_checkpoint_mode None} && [lindex $d end] eq $bd} {
                    set mode_at $j
                }
            }
            if {$mode_at < 0} { set bd_ok 0 }
        }
    }
    check $bd_ok "every block design ($bds) is set to synth_checkpoint_mode None before generate_target"
    # XDMA: select_quad is ignored unless en_gt_selection is on.
    set quad_ok 1
    foreach c $calls {
        if {[lindex $c 0] eq "set_property" && [lindex $c 1] eq "-dict"} {
            set d [lindex $c 2]
            if {[dict exists $d CONFIG.select_quad] &&
                (![dict exists $d CONFIG.en_gt_selection] || [dict get $d CONFIG.en_gt_selection] ne "true")} {
                set quad_ok 0
            }
        }
    }
    check $quad_ok "every select_quad comes with en_gt_selection true"

    # Constraints.
    set xdc [dict get $r xdc]
    check {[dict size $xdc] == [llength [dict get $cfg xdc]]} "every constraints file read and parsed ([dict size $xdc])"
    set ports {}
    dict for {f parsed} $xdc {
        set ports [concat $ports [dict get $parsed ports]]
        puts "    [file tail $f]: [llength [dict get $parsed ports]] ports, [dict size [dict get $parsed pins]] pins"
    }
    if {$top eq $default_top} {
        set have [module_ports $top_file $top]
        set missing {}
        foreach p [lsort -unique $ports] {
            regsub {\[.*$} $p {} base
            if {$base ni $have} { lappend missing $base }
        }
        check {[llength $missing] == 0} "every XDC port is a port of $top (missing: [lsort -unique $missing])"
        # And the other way: every top port, every bit of it, is constrained
        # (an unconstrained top-level I/O fails write_bitstream's DRC).
        set widths [module_port_widths $top_file $top]
        set xdc_bits {}
        foreach p [lsort -unique $ports] {
            if {[string first * $p] >= 0} { continue }
            regsub {\[.*$} $p {} base
            dict incr xdc_bits $base
        }
        # Ports the vendor IP places: on the top, not in the XDC.
        set ip_pins [expr {[dict exists $cfg ip_pins] ? [dict get $cfg ip_pins] : {}}]
        set bad_ip_pins {}
        foreach p $ip_pins {
            if {![dict exists $widths $p] || [dict exists $xdc_bits $p]} { lappend bad_ip_pins $p }
        }
        check {[llength $bad_ip_pins] == 0} "IP-placed ports ([llength $ip_pins]) are top ports and not in the XDC (wrong: $bad_ip_pins)"
        set unconstrained {}
        dict for {name width} $widths {
            if {$name in $ip_pins} { continue }
            if {![dict exists $xdc_bits $name]} {
                lappend unconstrained $name
            } elseif {[dict get $xdc_bits $name] != $width} {
                lappend unconstrained "$name ([dict get $xdc_bits $name] of $width bits)"
            }
        }
        check {[llength $unconstrained] == 0} "every port bit of $top is constrained in the XDC (unconstrained: $unconstrained)"
    }

    # Outputs and manifest.
    set out [file join $tmp $board]
    set bit [file join $out "clio_[string map {- _} $board].bit"]
    check {[file isfile $bit]} "bitstream written"
    foreach rpt {utilization.rpt timing_summary.rpt} {
        check {[file isfile [file join $out $rpt]]} "$rpt written to the out dir"
    }
    set mf [file join $out manifest.json]
    check {[file isfile $mf]} "manifest.json written"
    if {![file isfile $mf]} { continue }
    set m [slurp $mf]
    set values {}
    foreach key {format board part top bitstream sha256 source_hash tool_version utilization_report timing_report} {
        if {[regexp "\"$key\": \"(\[^\"\]*)\"" $m -> v]} { dict set values $key $v }
    }
    check {[dict size $values] == 10} "manifest has every key ([dict keys $values])"
    check {[dict get $values board] eq $board && [dict get $values part] eq $part && [dict get $values top] eq $top} "manifest names board, part and top"
    check {[dict get $values sha256] eq [lindex [exec sha256sum $bit] 0]} "manifest sha256 is the bitstream's"
    check {[regexp {^[0-9a-f]{64}$} [dict get $values source_hash]]} "manifest source_hash is a SHA-256"
    check {[regexp {"timing_met": true} $m]} "timing_met recorded"
    set of_tags [expr {[dict exists $cfg offload_tags] ? [dict get $cfg offload_tags] : 0}]
    set of_resp [expr {$of_tags > 0 ? 65536 : 0}]
    check {[regexp "\"offload_tags\": $of_tags,\n" $m] && [regexp "\"offload_resp_bytes\": $of_resp,?\n" $m]} "manifest records the offload pass-through (tags $of_tags, answer buffer $of_resp bytes)"
    if {[dict get $cfg xsa]} {
        check {[first_index $calls write_hw_platform] > [first_index $calls write_bitstream]} "hardware platform (.xsa) written after the bitstream"
    }
}

# The ZCU106 with network.front_end = "edm" (a copy of its board config with
# the key set; CLIO_BOARD_CONFIG points the build at it): the EDM RTL is read
# besides the board's, the top gets FRONT_END = "edm", the EDM port's
# transceiver replaces the Ethernet core. A value that is no front end stops
# the build naming the key.
puts "== zcu106, network.front_end = edm"
set base_cfg [slurp [file join $root board-configs zcu106.toml]]
set edm_cfg [file join $tmp zcu106-edm.toml]
set h [open $edm_cfg w]
puts $h [regsub {\n\[network\]\n} $base_cfg "\n\[network\]\nfront_end = \"edm\"\n"]
close $h
set ::env(CLIO_BOARD_CONFIG) $edm_cfg
set r [run_build zcu106 [file join $tmp zcu106-edm]]
check {![dict get $r rc]} "build.tcl runs to the end with the EDM front end [expr {[dict get $r rc] ? [dict get $r error] : {}}]"
if {![dict get $r rc]} {
    set calls [dict get $r calls]
    set synth [lindex $calls [first_index $calls synth_design]]
    check {[stub_opt_ok $synth -generic {FRONT_END="edm"}]} "synth_design -generic FRONT_END=\"edm\" ($synth)"
    set zcfg [dict get $BOARDS zcu106]
    set expected {}
    foreach dir [concat [dict get $zcfg rtl] [dict get $zcfg edm_rtl]] {
        foreach f [lsort [glob -nocomplain -directory [file join $root $dir] *.sv]] {
            if {[file tail $f] ni [dict get $zcfg sim_only]} { lappend expected $f }
        }
    }
    set rtl_reads [lsearch -all -inline -not -glob [dict get $r reads] [file join $tmp *]]
    check {[lsort $rtl_reads] eq [lsort $expected]} "reads the board's RTL and the EDM RTL ([llength $expected] sources)"
    set ips {}
    foreach c $calls {
        if {[lindex $c 0] eq "create_ip"} { lappend ips [lindex $c [expr {[lsearch -exact $c -module_name] + 1}]] }
    }
    check {"clio_gth_edm" in $ips && "clio_eth" ni $ips} "the EDM port's transceiver instead of the Ethernet core: $ips"
}
set h [open $edm_cfg w]
puts $h [regsub {\n\[network\]\n} $base_cfg "\n\[network\]\nfront_end = \"rdma\"\n"]
close $h
set r [run_build zcu106 [file join $tmp zcu106-bad]]
check {[dict get $r rc] && [string match "*\\\[network\\\] front_end = \"rdma\" is not one of: udp, edm*" [dict get $r error]]} \
    "an unknown front end stops the build naming the key ([dict get $r error])"

# The offload answer buffer follows network.max_response_bytes (a size or an
# integer); a bound whose answer exceeds MAX_OFFLOAD_LEN stops the build
# naming the key.
puts "== zcu106, network.max_response_bytes"
foreach {value want} {{"8 KiB"} 8192 {131_072} fail {"2 MiB"} fail {"lots"} fail {3072} 3072} {
    set h [open $edm_cfg w]
    puts $h [regsub {\nmax_response_bytes\s*=[^\n]*\n} $base_cfg "\nmax_response_bytes = $value\n"]
    close $h
    set r [run_build zcu106 [file join $tmp zcu106-resp]]
    if {$want eq "fail"} {
        check {[dict get $r rc] && [string match "*\\\[network\\\] max_response_bytes = *" [dict get $r error]]} \
            "max_response_bytes = $value stops the build naming the key ([dict get $r error])"
    } else {
        set synth [lindex [dict get $r calls] [first_index [dict get $r calls] synth_design]]
        check {![dict get $r rc] && "OFFLOAD_RESP_BYTES=$want" in [stub_opt_all $synth -generic]} \
            "max_response_bytes = $value: synth_design -generic OFFLOAD_RESP_BYTES=$want"
    }
}
unset ::env(CLIO_BOARD_CONFIG)

file delete -force $tmp
puts "== $checks checks, $failures failed"
exit [expr {$failures > 0}]
