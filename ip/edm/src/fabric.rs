//! A star fabric: `N` hosts, each on its own switch port, joined by links that run the
//! standard PCS around the EDM shims (scrambler, fixed PCS latency, wire delay,
//! descrambler, sync-header monitor). Stepped one PHY cycle at a time.

use std::collections::{BTreeMap, VecDeque};

use clio_wire::edm::{Block66, BlockClass};

use crate::host::{Host, HostConfig};
use crate::phy::{error_block, Descrambler, LinkMonitor, Scrambler};
use crate::switch::{Switch, SwitchConfig};

/// Fabric parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FabricConfig {
    /// Switch (and its port count).
    pub switch: SwitchConfig,
    /// Template for every host (`node` is set per port).
    pub host: HostConfig,
    /// Cycles on the wire (PMA/PMD, transceiver, propagation) per hop.
    pub wire_cycles: u64,
    /// Run the real scrambler/descrambler on every link.
    pub scramble: bool,
}

impl FabricConfig {
    /// `ports` hosts, paper latencies, no wire delay (the Table 1 "network stack" setting).
    pub fn new(ports: usize) -> Self {
        FabricConfig {
            switch: SwitchConfig::new(ports),
            host: HostConfig::new(0),
            wire_cycles: 0,
            scramble: true,
        }
    }
}

/// A fault to inject on a link at a given cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inject {
    /// Replace the block the sender transmits (a misbehaving sender; passes the PCS intact).
    Replace(Block66),
    /// Corrupt the sync header on the wire (what a damaged link does).
    BadSync,
}

/// Direction of a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    /// Host → switch.
    Up,
    /// Switch → host.
    Down,
}

/// One observed EDM control block, for latency breakdowns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tap {
    /// Cycle.
    pub cycle: u64,
    /// Host index of the link.
    pub link: usize,
    /// Direction.
    pub dir: Dir,
    /// False when leaving the sender's EDM shim, true when entering the receiver's.
    pub rx: bool,
    /// The block.
    pub block: Block66,
}

#[derive(Debug, Clone)]
struct Link {
    pipe: VecDeque<Block66>,
    scr: Scrambler,
    des: Descrambler,
    scramble: bool,
    mon: LinkMonitor,
    inject: BTreeMap<u64, Inject>,
}

impl Link {
    fn new(delay: usize, scramble: bool) -> Self {
        let mut scr = Scrambler::default();
        let pipe = (0..delay)
            .map(|_| {
                if scramble {
                    scr.scramble(Block66::IDLE)
                } else {
                    Block66::IDLE
                }
            })
            .collect();
        Link {
            pipe,
            scr,
            des: Descrambler::default(),
            scramble,
            mon: LinkMonitor::new(),
            inject: BTreeMap::new(),
        }
    }

    fn recv(&mut self, now: u64) -> Block66 {
        let raw = self.pipe.pop_front().unwrap_or(Block66::IDLE);
        let b = if self.scramble {
            self.des.descramble(raw)
        } else {
            raw
        };
        if self.mon.observe(now, &b) {
            b
        } else {
            error_block()
        }
    }

    fn send(&mut self, now: u64, mut b: Block66) {
        let inj = self.inject.remove(&now);
        if let Some(Inject::Replace(r)) = inj {
            b = r;
        }
        let mut w = if self.scramble {
            self.scr.scramble(b)
        } else {
            b
        };
        if let Some(Inject::BadSync) = inj {
            w.sync = if w.sync == 0b01 { 0b11 } else { 0b00 };
        }
        self.pipe.push_back(w);
    }
}

/// The whole fabric.
#[derive(Debug, Clone)]
pub struct Fabric {
    now: u64,
    /// Hosts, index = switch port.
    pub hosts: Vec<Host>,
    /// The switch.
    pub switch: Switch,
    up: Vec<Link>,
    down: Vec<Link>,
    host_rx: Vec<Block66>,
    /// Recorded EDM control blocks (only while [`Fabric::tap`] is on).
    pub taps: Vec<Tap>,
    /// Record taps.
    pub tap: bool,
    /// Record frame starts (/S/) too, while [`Fabric::tap`] is on.
    pub tap_frames: bool,
}

impl Fabric {
    /// Build a fabric; fails if the switch configuration is invalid.
    pub fn new(cfg: FabricConfig) -> Result<Self, edm_pim::ConfigError> {
        let n = cfg.switch.ports;
        let switch = Switch::new(cfg.switch)?;
        let delay = (cfg.host.lat.pcs_tx + cfg.wire_cycles + cfg.host.lat.pcs_rx) as usize;
        let hosts = (0..n)
            .map(|i| {
                let mut h = cfg.host;
                h.node = i as u16;
                Host::new(h)
            })
            .collect();
        Ok(Fabric {
            now: 0,
            hosts,
            switch,
            up: (0..n).map(|_| Link::new(delay, cfg.scramble)).collect(),
            down: (0..n).map(|_| Link::new(delay, cfg.scramble)).collect(),
            host_rx: vec![Block66::IDLE; n],
            taps: Vec::new(),
            tap: false,
            tap_frames: false,
        })
    }

    /// Current cycle.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// Schedule a fault on host `link`'s `dir` link at `cycle`.
    pub fn inject(&mut self, link: usize, dir: Dir, cycle: u64, what: Inject) {
        let l = match dir {
            Dir::Up => &mut self.up[link],
            Dir::Down => &mut self.down[link],
        };
        l.inject.insert(cycle, what);
    }

    /// Cycle at which a link was disabled by the sync-header monitor, if it was.
    pub fn link_disabled(&self, link: usize, dir: Dir) -> Option<u64> {
        match dir {
            Dir::Up => self.up[link].mon.disabled_at(),
            Dir::Down => self.down[link].mon.disabled_at(),
        }
    }

    /// Advance one cycle.
    pub fn tick(&mut self) {
        let now = self.now;
        let n = self.hosts.len();
        let sw_rx: Vec<Block66> = (0..n).map(|i| self.up[i].recv(now)).collect();
        for i in 0..n {
            self.host_rx[i] = self.down[i].recv(now);
        }
        if self.tap {
            for (i, b) in sw_rx.iter().enumerate() {
                self.record(i, Dir::Up, true, *b);
            }
            for i in 0..n {
                let b = self.host_rx[i];
                self.record(i, Dir::Down, true, b);
            }
        }
        let sw_tx = self.switch.tick(now, &sw_rx);
        for (i, &down) in sw_tx.iter().enumerate().take(n) {
            let b = self.hosts[i].tick(now, self.host_rx[i]);
            if self.tap {
                self.record(i, Dir::Up, false, b);
                self.record(i, Dir::Down, false, down);
            }
            self.up[i].send(now, b);
            self.down[i].send(now, down);
        }
        self.now += 1;
    }

    fn record(&mut self, link: usize, dir: Dir, rx: bool, block: Block66) {
        let class = block.class();
        if matches!(
            class,
            BlockClass::Ms | BlockClass::Mst | BlockClass::Notify | BlockClass::Grant
        ) || (self.tap_frames && class == BlockClass::Start)
        {
            self.taps.push(Tap {
                cycle: self.now,
                link,
                dir,
                rx,
                block,
            });
        }
    }

    /// True when every host and the switch have nothing left to do.
    pub fn is_quiet(&self) -> bool {
        self.switch.is_quiet() && self.hosts.iter().all(|h| h.is_quiet())
    }

    /// Run until quiet (plus the link pipelines drained) or `max_cycles` more cycles;
    /// returns whether it went quiet.
    pub fn run_until_quiet(&mut self, max_cycles: u64) -> bool {
        let end = self.now + max_cycles;
        let mut quiet_for = 0;
        let drain = self.up.first().map_or(0, |l| l.pipe.len() as u64) + 2;
        while self.now < end {
            self.tick();
            if self.is_quiet() {
                quiet_for += 1;
                if quiet_for > drain {
                    return true;
                }
            } else {
                quiet_for = 0;
            }
        }
        false
    }
}
