# build.tcl -- non-project Vivado build of a board bitstream.
#
# Usage (from anywhere):
#   vivado -mode batch -nojournal -source bitstream/build.tcl -tclargs BOARD OUT_DIR ?TOP?
#   BOARD    zcu106 | alveo-u200
#   OUT_DIR  where checkpoints, reports, the bitstream and manifest.json go
#   TOP      top module (default: the board's, below)
#
# Flow: RTL (packages first) + board constraints + vendor IP (BOARD/ip.tcl)
# -> synth_design -> opt/place/phys_opt/route -> utilization and timing
# reports -> write_bitstream (+ the hardware platform .xsa on the ZCU106,
# whose psu_init.tcl the JTAG flash needs) -> manifest.json, which
# `clio flash` (crate clio-flash) checks before programming.
# ci/suites/30-bitstream.sh runs this script under tclsh with the Vivado
# commands stubbed (bitstream/ci/).

set clio_script_dir [file dirname [file normalize [info script]]]
set clio_root [file dirname $clio_script_dir]

# The boards. `part` must equal clio_flash::Board::part (a test checks it).
# `rtl`: directories whose *.sv are read; `sim_only`: files there that are
# simulation models, never synthesized; `top`: the board top module (its
# ports are the names the board's XDC constrains); `ip_pins`: top ports whose
# pins the vendor IP's own constraints place (not in the XDC; checked by
# ci/check_flow.tcl); `config`: the board config whose network.front_end
# chooses the board's network side (CLIO_BOARD_CONFIG overrides the file);
# `edm_rtl`: the directories an EDM front end adds (the top gets the generic
# FRONT_END = "edm"). Boards without `config` have one network side.
# `offload_tags`: the board's slow path serves offloads (the ZCU106's
# firmware image on the A53 registers them at boot), so the fast path
# forwards OFFLOAD_CALL to it: the top gets OFFLOAD_TAGS = this and
# OFFLOAD_RESP_BYTES = the config's network.max_response_bytes (the answer
# buffer, block RAM; ip/fastpath/rtl README, "The offload pass-through").
set BOARDS {
    zcu106 {part xczu7ev-ffvc1156-2-e
        top clio_zcu106_top
        rtl {ip/fastpath/rtl bitstream/common bitstream/zcu106}
        sim_only {clio_axi_ram.sv clio_fastpath_sim.sv}
        xdc {bitstream/zcu106/zcu106.xdc}
        ip bitstream/zcu106/ip.tcl
        ip_pins {}
        xsa 1
        config board-configs/zcu106.toml
        offload_tags 64
        edm_rtl {ip/edm/rtl ip/edm-clio/rtl bitstream/alveo-u200}}
    alveo-u200 {part xcu200-fsgd2104-2-e
        top edm_u200_top
        rtl {ip/fastpath/rtl ip/edm/rtl ip/edm-clio/rtl bitstream/common bitstream/alveo-u200}
        sim_only {clio_axi_ram.sv clio_fastpath_sim.sv}
        xdc {bitstream/alveo-u200/u200.xdc}
        ip bitstream/alveo-u200/ip.tcl
        ip_pins {pci_exp_rxp pci_exp_rxn pci_exp_txp pci_exp_txn}
        xsa 0}
}

# The raw value of KEY in table [SECTION] of the board config at PATH
# (comments and surrounding blanks dropped), or the empty list when the key
# is absent; fails naming the file if it cannot be read.
proc clio_board_config_value {path section key} {
    if {[catch {open $path r} h]} { clio_fail "cannot read board config $path: $h" }
    set text [read $h]
    close $h
    set in 0
    foreach line [split $text \n] {
        set line [string trim [lindex [split $line #] 0]]
        if {[regexp {^\[([^\]]+)\]$} $line -> name]} { set in [expr {$name eq $section}]; continue }
        if {$in && [regexp "^${key}\\s*=\\s*(.+)$" $line -> value]} {
            return [list [string trim $value]]
        }
    }
    return {}
}

# An integer key of a board config (`KEY = 0x..` or decimal, `_` digit
# separators allowed) in table [SECTION]; fails naming the file and key.
proc clio_board_config_int {path section key} {
    set found [clio_board_config_value $path $section $key]
    if {[llength $found] == 0} { clio_fail "$path: \[$section\] $key is missing" }
    set value [string map {_ {}} [lindex $found 0]]
    if {![string is wide -strict $value]} {
        clio_fail "$path: \[$section\] $key = $value is not an integer"
    }
    return [format 0x%X $value]
}

# A byte size of a board config (`KEY = 65536` or `KEY = "64 KiB"`, also
# MiB and GiB, `_` separators allowed) in table [SECTION], or `default`
# when absent; fails naming the file and key.
proc clio_board_config_bytes {path section key default} {
    set found [clio_board_config_value $path $section $key]
    if {[llength $found] == 0} { return $default }
    set value [string map {_ {}} [lindex $found 0]]
    if {[string is wide -strict $value]} { return [expr {wide($value)}] }
    if {[regexp {^"(\d+)\s*(KiB|MiB|GiB)"$} $value -> n unit]} {
        return [expr {wide($n) << [dict get {KiB 10 MiB 20 GiB 30} $unit]}]
    }
    clio_fail "$path: \[$section\] $key = $value is not a byte size"
}

# A string key of a board config (`KEY = "value"`) in table [SECTION], or
# `default` when absent; fails naming the file and key if the value is not
# a quoted string, one of `allowed`.
proc clio_board_config_choice {path section key default allowed} {
    set found [clio_board_config_value $path $section $key]
    if {[llength $found] == 0} { return $default }
    set raw [lindex $found 0]
    if {![regexp {^"([^"]*)"$} $raw -> value] || $value ni $allowed} {
        clio_fail "$path: \[$section\] $key = $raw is not one of: [join $allowed {, }]"
    }
    return $value
}

proc clio_fail {msg} {
    puts stderr "build.tcl: error: $msg"
    error "build.tcl: $msg"
}

proc clio_step {msg} {
    puts "build.tcl: == $msg"
    flush stdout
}

# --- arguments ----------------------------------------------------------------
if {[llength $argv] < 2 || [llength $argv] > 3} {
    clio_fail "usage: build.tcl BOARD OUT_DIR ?TOP? (boards: [dict keys $BOARDS]); got: $argv"
}
set board [lindex $argv 0]
set out_dir [file normalize [lindex $argv 1]]
if {![dict exists $BOARDS $board]} {
    clio_fail "unknown board `$board` (known: [dict keys $BOARDS])"
}
set cfg [dict get $BOARDS $board]
set part [dict get $cfg part]
set top [dict get $cfg top]
if {[llength $argv] == 3} {
    set top [lindex $argv 2]
}
file mkdir $out_dir

# --- network side ---------------------------------------------------------------
# network.front_end of the board config: "udp" (the default) or "edm".
set clio_front_end udp
if {[dict exists $cfg config]} {
    set board_config [file join $clio_root [dict get $cfg config]]
    if {[info exists ::env(CLIO_BOARD_CONFIG)] && $::env(CLIO_BOARD_CONFIG) ne ""} {
        set board_config [file normalize $::env(CLIO_BOARD_CONFIG)]
    }
    set clio_front_end [clio_board_config_choice $board_config network front_end udp {udp edm}]
}
set rtl_dirs [dict get $cfg rtl]
set generics {}
if {$clio_front_end eq "edm"} {
    lappend rtl_dirs {*}[dict get $cfg edm_rtl]
    # CHECK: Vivado's spelling of a string generic on the command line.
    lappend generics -generic "FRONT_END=\"edm\""
}

# --- offload pass-through ---------------------------------------------------------
# OFFLOAD_CALL forwarded to the slow path (issue #16), with an answer buffer
# of the board's response bound (default 64 KiB): the longest answer the
# firmware sends is the bound (at least the MTU, which validation keeps below
# it); with its 4-byte head within clio_wire::ring::MAX_OFFLOAD_LEN (128 KiB).
set clio_offload_tags 0
set clio_offload_resp 0
if {[dict exists $cfg offload_tags]} {
    if {![info exists board_config]} { clio_fail "board $board: offload_tags needs a board config" }
    # MAX_OFFLOAD_LEN as generated from the wire crate into clio_pkg.sv.
    set pkg [file join $clio_root ip fastpath rtl clio_pkg.sv]
    if {[catch {open $pkg r} h]} { clio_fail "cannot read $pkg: $h" }
    set pkg_text [read $h]
    close $h
    if {![regexp {localparam int MAX_OFFLOAD_LEN = (\d+);} $pkg_text -> max_offload]} {
        clio_fail "$pkg defines no MAX_OFFLOAD_LEN"
    }
    set clio_offload_tags [dict get $cfg offload_tags]
    set clio_offload_resp [clio_board_config_bytes $board_config network max_response_bytes 65536]
    if {$clio_offload_resp < 1 || $clio_offload_resp + 4 > $max_offload} {
        clio_fail "$board_config: \[network\] max_response_bytes = $clio_offload_resp: an offload answer of it with its 4-byte head exceeds MAX_OFFLOAD_LEN ($max_offload)"
    }
    lappend generics -generic OFFLOAD_TAGS=$clio_offload_tags -generic OFFLOAD_RESP_BYTES=$clio_offload_resp
}

# --- sources --------------------------------------------------------------------
# Packages first (other files import them), then the rest in name order.
set sources {}
set packages {}
foreach dir $rtl_dirs {
    set abs [file join $clio_root $dir]
    if {![file isdirectory $abs]} {
        clio_fail "RTL directory $dir (board $board) does not exist"
    }
    foreach f [lsort [glob -nocomplain -directory $abs *.sv]] {
        if {[file tail $f] in [dict get $cfg sim_only]} {
            continue
        }
        if {[string match *_pkg.sv $f]} {
            lappend packages $f
        } else {
            lappend sources $f
        }
    }
}
set sources [concat $packages $sources]
if {[llength $sources] == 0} {
    clio_fail "no RTL sources in $rtl_dirs"
}
if {[lsearch -glob $packages */clio_pkg.sv] < 0} {
    clio_fail "clio_pkg.sv (generated by clio-wire) is missing from ip/fastpath/rtl"
}

# The top must be defined by one of the sources, or synthesis would fail
# late with a less helpful message.
set top_file ""
foreach f $sources {
    set h [open $f]
    set text [read $h]
    close $h
    if {[regexp -line "^\\s*module\\s+${top}\\M" $text]} {
        set top_file $f
        break
    }
}
if {$top_file eq ""} {
    clio_fail "top module `$top` (board $board) is not defined in any of the [llength $sources] sources read from $rtl_dirs; write it there, or pass another top as the third argument"
}

set xdc_files {}
foreach x [dict get $cfg xdc] {
    set abs [file join $clio_root $x]
    if {![file isfile $abs]} {
        clio_fail "constraints file $x does not exist"
    }
    lappend xdc_files $abs
}
set ip_script [file join $clio_root [dict get $cfg ip]]
if {![file isfile $ip_script]} {
    clio_fail "IP script [dict get $cfg ip] does not exist"
}

# --- project, RTL, constraints, IP ------------------------------------------
clio_step "board $board, part $part, top $top ([llength $sources] sources), front end $clio_front_end"
create_project -in_memory -part $part
set_property target_language Verilog [current_project]
foreach f $sources {
    read_verilog -sv $f
}
foreach x $xdc_files {
    read_xdc $x
}
set clio_ip_dir [file join $out_dir ip]
file mkdir $clio_ip_dir
source $ip_script
foreach f $clio_ip_sources {
    read_verilog $f
}
foreach ip $clio_ips {
    synth_ip [get_ips $ip]
}

# --- implementation ------------------------------------------------------------
clio_step "synth_design"
synth_design -top $top -part $part {*}$generics
write_checkpoint -force [file join $out_dir post_synth.dcp]
report_utilization -file [file join $out_dir utilization_synth.rpt]

clio_step "opt_design / place_design / phys_opt_design / route_design"
opt_design
place_design
phys_opt_design
route_design
write_checkpoint -force [file join $out_dir post_route.dcp]

clio_step "reports"
set util_rpt [file join $out_dir utilization.rpt]
set timing_rpt [file join $out_dir timing_summary.rpt]
report_utilization -file $util_rpt
report_timing_summary -max_paths 10 -file $timing_rpt
set worst [get_timing_paths -max_paths 1 -nworst 1 -setup]
set wns [get_property SLACK $worst]
set timing_met [expr {$wns ne "" && $wns >= 0}]
if {!$timing_met} {
    puts "build.tcl: WARNING: timing not met (WNS $wns ns); see $timing_rpt"
}

clio_step "write_bitstream"
set bit_name "clio_[string map {- _} $board].bit"
set bit [file join $out_dir $bit_name]
write_bitstream -force $bit
set xsa_name ""
if {[dict get $cfg xsa]} {
    set xsa_name "clio_[string map {- _} $board].xsa"
    write_hw_platform -fixed -include_bit -force [file join $out_dir $xsa_name]
}

# --- manifest -------------------------------------------------------------------
# SHA-256 with tcllib's sha256 when present, else coreutils' sha256sum.
proc clio_sha256 {path} {
    if {![catch {package require sha256}]} {
        return [string tolower [::sha2::sha256 -hex -filename $path]]
    }
    return [lindex [exec sha256sum $path] 0]
}

proc clio_json_string {s} {
    return "\"[string map {\\ \\\\ \" \\\" \n \\n \t \\t} $s]\""
}

# Source hash: SHA-256 of the sorted "sha256  relative/path" lines of every
# input (RTL, constraints, IP script, this script); no git needed.
set inputs [concat $sources $xdc_files [list $ip_script [file normalize [info script]]]]
set lines {}
foreach f $inputs {
    set rel [string range $f [expr {[string length $clio_root] + 1}] end]
    lappend lines "[clio_sha256 $f]  $rel"
}
set listing [file join $out_dir sources.sha256]
set h [open $listing w]
puts -nonewline $h "[join [lsort $lines] \n]\n"
close $h
set source_hash [clio_sha256 $listing]

set fields [list \
    format [clio_json_string clio-bitstream-manifest] \
    format_version 1 \
    board [clio_json_string $board] \
    part [clio_json_string $part] \
    top [clio_json_string $top] \
    bitstream [clio_json_string $bit_name] \
    sha256 [clio_json_string [clio_sha256 $bit]] \
    source_hash [clio_json_string $source_hash] \
    sources [llength $inputs] \
    tool_version [clio_json_string "Vivado [version -short]"] \
    timing_met [expr {$timing_met ? "true" : "false"}] \
    wns_ns [clio_json_string $wns] \
    utilization_report [clio_json_string [file tail $util_rpt]] \
    timing_report [clio_json_string [file tail $timing_rpt]] \
    offload_tags $clio_offload_tags \
    offload_resp_bytes $clio_offload_resp \
]
if {$xsa_name ne ""} {
    lappend fields hardware_platform [clio_json_string $xsa_name]
}
set body {}
foreach {k v} $fields {
    lappend body "  [clio_json_string $k]: $v"
}
set manifest [file join $out_dir manifest.json]
set h [open $manifest w]
puts $h "\{\n[join $body ",\n"]\n\}"
close $h
clio_step "wrote $bit and $manifest"
