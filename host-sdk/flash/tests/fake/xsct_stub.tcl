# XSDB commands for the fake xsct: each records its words to xsct.calls and
# prints what the real command prints. A file `fail` holding a command name
# makes that command fail like the real one (or `exit0` to stop silently).
set dir [file dirname [info script]]
set log [open [file join $dir xsct.calls] w]
proc rec {args} {
    global log
    puts $log [join $args " "]
    flush $log
}
proc fail_if {cmd} {
    global dir
    set f [file join $dir fail]
    if {![file exists $f]} { return }
    set h [open $f]
    set what [string trim [read $h]]
    close $h
    if {$what eq $cmd} {
        error "no targets found with \"name =~ \"PSU\"\". available targets: none"
    }
    if {$what eq "exit0:$cmd"} { exit 0 }
}
proc connect {args} { rec connect {*}$args; puts "tcfchan#0" }
proc targets {args} { rec targets {*}$args }
proc rst {args} { rec rst {*}$args; puts "Info: Cortex-A53 #0 (target 9) Stopped at 0xffff0000 (Reset Catch)" }
proc after {ms args} { rec after $ms }
proc mwr {args} { rec mwr {*}$args }
proc configparams {args} { rec configparams {*}$args }
proc fpga {args} {
    rec fpga {*}$args
    fail_if fpga
    puts -nonewline "  0%    0MB   0.0MB/s  ??:?? ETA\r"
    puts -nonewline " 47%    9MB   4.6MB/s  00:02 ETA\r"
    puts "100%   19MB   4.7MB/s  00:04    "
    puts "successfully programmed FPGA"
}
proc dow {args} {
    rec dow {*}$args
    fail_if dow
    set f [lindex $args end]
    puts "Downloading Program -- $f"
    puts "\tsection, .text: 0x00000000 - 0x0001a3ff"
    puts -nonewline "  0%    0MB   0.0MB/s  ??:?? ETA\r"
    puts "100%    0MB   0.4MB/s  00:00    "
    puts "Setting PC to Program Start Address 0x00000000"
    puts "Successfully downloaded $f"
}
# Boot-mode pins: the file `bootmode` (default 0, JTAG) holds CRL_APB.BOOT_MODE_USER.
proc mrd {args} {
    rec mrd {*}$args
    global dir
    set f [file join $dir bootmode]
    set v 0
    if {[file exists $f]} { set h [open $f]; set v [string trim [read $h]]; close $h }
    if {[lindex $args 0] eq "-value"} { return $v }
    return [format "%X:   %08X" [lindex $args end] $v]
}
proc loadhw {args} { rec loadhw {*}$args; fail_if loadhw }
# hsi (FSBL / PMU firmware build): generate_app writes DIR/executable.elf.
namespace eval hsi {}
proc hsi::open_hw_design {args} { rec hsi::open_hw_design {*}$args; fail_if hsi::open_hw_design; return design_1 }
proc hsi::current_hw_design {args} { return design_1 }
proc hsi::close_hw_design {args} { rec hsi::close_hw_design {*}$args }
proc hsi::generate_app {args} {
    rec hsi::generate_app {*}$args
    fail_if hsi::generate_app
    set d [lindex $args [expr {[lsearch $args -dir] + 1}]]
    set app [lindex $args [expr {[lsearch $args -app] + 1}]]
    file mkdir $d
    set h [open [file join $d executable.elf] w]; puts $h "fake $app"; close $h
    puts "Compiling $app ... done"
}
proc con {args} { rec con {*}$args; puts "Info: Cortex-A53 #0 (target 9) Running" }
proc disconnect {args} { rec disconnect {*}$args }
source [lindex $argv 0]
