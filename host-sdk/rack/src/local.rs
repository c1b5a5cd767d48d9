//! A whole rack on this machine: the controller and M emulated memory nodes, each
//! served over real UDP on loopback and registered with the controller by its
//! agent — what `clio rack`, the rack benchmark and the tests start.

use clio_control::auth::RackKey;
use std::io;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use clio_config::BoardConfig;
use clio_emu::{Board, ServeOptions, ServerHandle};

use crate::config::RackConfig;
use crate::node::{InProcessLinks, NodeAgent, RackNode, SharedNode};
use crate::service::{Running, Service};
use crate::Rack;

/// Heartbeat interval of local nodes.
pub const HEARTBEAT: Duration = Duration::from_millis(100);

/// How local nodes are declared: capacity each claims in the rack file.
pub const NODE_CAPACITY: u64 = 16 << 30;

/// A running local rack.
pub struct LocalRack {
    config: RackConfig,
    controller: Option<Running>,
    nodes: Vec<SharedNode>,
    servers: Vec<Option<ServerHandle>>,
    agents: Vec<Option<NodeAgent>>,
}

impl std::fmt::Debug for LocalRack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRack")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The rack file text for nodes at `addrs` and a controller at `listen`.
pub fn rack_file(listen: SocketAddr, addrs: &[SocketAddr], dead_after_ms: u64) -> String {
    rack_file_keyed(listen, addrs, dead_after_ms, None)
}

/// [`rack_file`] with the rack key inline (`controller.key`), if any.
pub fn rack_file_keyed(
    listen: SocketAddr,
    addrs: &[SocketAddr],
    dead_after_ms: u64,
    key: Option<&RackKey>,
) -> String {
    let mut t = format!("[controller]\nlisten = \"{listen}\"\ndead_after_ms = {dead_after_ms}\n");
    if let Some(k) = key {
        t.push_str(&format!("key = \"{}\"\n", key_hex(k)));
    }
    for (i, a) in addrs.iter().enumerate() {
        t.push_str(&format!(
            "\n[[node]]\nname = \"mn{i}\"\naddress = \"{a}\"\ncapacity = {NODE_CAPACITY}\n"
        ));
    }
    t
}

/// The 32 hex digits of `key` (what a key file and `controller.key` hold).
pub fn key_hex(key: &RackKey) -> String {
    key.0.iter().map(|b| format!("{b:02x}")).collect()
}

/// A fresh rack key from the operating system's randomness.
pub fn generate_key() -> RackKey {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&clio_emu::boot_seed().to_le_bytes());
    k[8..].copy_from_slice(&clio_emu::boot_seed().to_le_bytes());
    RackKey(k)
}

impl LocalRack {
    /// Starts `m` emulated nodes (board `board`) on loopback, a controller on
    /// `listen` (port 0: any) logging to `log`, and registers every node —
    /// **keyed**: a fresh rack key ([`generate_key`], [`LocalRack::key`]) seals
    /// every control datagram of the controller, the nodes, their agents and
    /// the balancer; a client needs it (`SealedUdpLinks`, `Client::with_key`).
    pub fn start(
        m: usize,
        board: &BoardConfig,
        listen: SocketAddr,
        log: &Path,
        dead_after_ms: u64,
    ) -> io::Result<LocalRack> {
        Self::start_with_key(m, board, listen, log, dead_after_ms, Some(generate_key()))
    }

    /// [`LocalRack::start`] without a rack key, on explicit request: bare
    /// control datagrams (what in-process links, which never seal, need).
    pub fn start_keyless(
        m: usize,
        board: &BoardConfig,
        listen: SocketAddr,
        log: &Path,
        dead_after_ms: u64,
    ) -> io::Result<LocalRack> {
        Self::start_with_key(m, board, listen, log, dead_after_ms, None)
    }

    /// [`LocalRack::start`] under `key` (`None`: keyless).
    pub fn start_with_key(
        m: usize,
        board: &BoardConfig,
        listen: SocketAddr,
        log: &Path,
        dead_after_ms: u64,
        key: Option<RackKey>,
    ) -> io::Result<LocalRack> {
        if m == 0 || m > 64 {
            return Err(io::Error::other("nodes: between 1 and 64"));
        }
        let mut nodes = Vec::new();
        let mut servers = Vec::new();
        let mut addrs = Vec::new();
        for _ in 0..m {
            let b = Board::new(board).map_err(|e| io::Error::other(e.0))?;
            let mut node = RackNode::new(b);
            if let Some(k) = key {
                node.set_key(k);
            }
            let n = SharedNode::new(node);
            let s = clio_emu::spawn(
                n.clone(),
                "127.0.0.1:0".parse().expect("literal"),
                ServeOptions::for_board(board),
            )?;
            addrs.push(s.addr());
            nodes.push(n);
            servers.push(Some(s));
        }
        // The controller's own port is only known once bound: bind first, then
        // write the rack file with it.
        let probe = std::net::UdpSocket::bind(listen)?;
        let listen = probe.local_addr()?;
        drop(probe);
        let text = rack_file_keyed(listen, &addrs, dead_after_ms, key.as_ref());
        let config = crate::config::load_str("local-rack.toml", &text).map_err(io::Error::other)?;
        let (rack, _) = Rack::open(config.clone(), log, 0).map_err(io::Error::other)?;
        let controller = Service::bind(listen, rack)?.spawn()?;
        let mut r = LocalRack {
            config,
            controller: Some(controller),
            nodes,
            servers,
            agents: Vec::new(),
        };
        for i in 0..m {
            let a = r.register(i)?;
            r.agents.push(Some(a));
        }
        Ok(r)
    }

    fn register(&self, i: usize) -> io::Result<NodeAgent> {
        let c = &self.config.nodes[i];
        NodeAgent::start_sealed(
            self.controller_addr(),
            self.config.key,
            c.id,
            c.address,
            c.capacity,
            self.nodes[i].clone(),
            HEARTBEAT,
        )
    }

    /// The rack file it runs with.
    pub fn config(&self) -> &RackConfig {
        &self.config
    }

    /// The rack key (`None`: started keyless).
    pub fn key(&self) -> Option<RackKey> {
        self.config.key
    }

    /// Where the controller listens.
    pub fn controller_addr(&self) -> SocketAddr {
        self.config.listen
    }

    /// The nodes (node id i+1 is `nodes()[i]`).
    pub fn nodes(&self) -> &[SharedNode] {
        &self.nodes
    }

    /// In-process links to the nodes (for a [`crate::RackClient`] in this process).
    pub fn links(&self) -> InProcessLinks {
        InProcessLinks::new(self.nodes.clone())
    }

    /// Starts node-initiated migration beside the controller: a
    /// [`crate::Balancer`] reaching the nodes over UDP with sessions of `cfg`.
    pub fn start_balancer(
        &self,
        cfg: clio::ClientConfig,
        config: crate::BalancerConfig,
    ) -> io::Result<crate::Balancer> {
        crate::Balancer::start(
            &self.config,
            self.controller_addr(),
            crate::SealedUdpLinks(self.config.key),
            cfg,
            config,
        )
    }

    /// Kills node `id` (1-based): its UDP server and heartbeats stop; the
    /// controller declares it dead after `dead_after_ms`.
    pub fn kill(&mut self, id: u16) -> io::Result<()> {
        let i = usize::from(id) - 1;
        if let Some(a) = self.agents.get_mut(i).and_then(Option::take) {
            drop(a);
        }
        if let Some(s) = self.servers.get_mut(i).and_then(Option::take) {
            s.stop()?;
        }
        Ok(())
    }

    /// Stops heartbeats of node `id` only (a partitioned node: it still serves).
    pub fn silence(&mut self, id: u16) {
        if let Some(a) = self
            .agents
            .get_mut(usize::from(id) - 1)
            .and_then(Option::take)
        {
            drop(a);
        }
    }

    /// Says hello again for node `id` (after [`LocalRack::silence`]); returns
    /// the new epoch.
    pub fn rejoin(&mut self, id: u16) -> io::Result<u32> {
        let i = usize::from(id) - 1;
        let a = self.register(i)?;
        let e = a.epoch();
        self.agents[i] = Some(a);
        Ok(e)
    }

    /// Stops nodes and controller.
    pub fn stop(mut self) -> io::Result<()> {
        self.agents.clear();
        for s in self.servers.iter_mut().filter_map(Option::take) {
            s.stop()?;
        }
        if let Some(c) = self.controller.take() {
            c.stop()?;
        }
        Ok(())
    }
}

impl Drop for LocalRack {
    fn drop(&mut self) {
        self.agents.clear();
        for s in self.servers.iter_mut().filter_map(Option::take) {
            let _ = s.stop();
        }
        if let Some(c) = self.controller.take() {
            let _ = c.stop();
        }
    }
}
