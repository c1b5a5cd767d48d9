//! The memory-node side of the rack, for emulated boards: a [`RackNode`] is a
//! `clio_emu::Board` behind the **region gate**, and a [`NodeAgent`] registers
//! the node with the controller and reports its pressure.
//!
//! Both are thin I/O shells around the slow path's pure state machine,
//! [`clio_slowpath::rack`] (the code the firmware image runs): the gate's
//! ranges and dirty records, the chunk bindings, per-region use, the clients'
//! address spaces and every control answer live in its [`RackAgent`](clio_slowpath::rack::RackAgent); the
//! registration and heartbeat schedule in its [`Link`]. Here they get the
//! emulated board, a mutex, sockets and a thread.
//!
//! The gate is what migration needs from a node (Clio §3.4.7: "requests to the
//! region are paused during the move"): per address space and node-VA range it
//! holds a [`GateState`]. `Paused` answers `BUSY` to everything that changes memory
//! (writes, atomics, locks, frees) and serves reads, so the
//! mover can copy a stable image while clients retry; `Moved` answers `MOVED` to
//! every request, so a client learns the region's new home from the controller.
//! Requests outside gated ranges reach the board untouched. Gates are set by
//! [`Message::Gate`] datagrams on the node's own data port (told from Clio packets
//! by the control magic), answered `Ack` with the board's boot epoch.
//!
//! `Tracking` serves everything and records, per [`clio_control::DIRTY_BLOCK`]
//! of the range, whether a change landed there since the mover last asked
//! ([`Message::TakeDirty`], which reads and clears the record in one step under
//! the node's lock): the mover copies while writes go on, re-copies the dirty
//! blocks in rounds, and pauses writes only for its last round (`Paused` keeps
//! the record). A change marks its blocks in the same step that executes it, so
//! a change that is acknowledged before the pause is either in what the mover
//! read or in the record it takes after the pause.
//!
//! A board allocation that starts inside a `Moved` range of the same address space
//! (the board reusing freed VA) drops that range's gate: the VA holds new data.
//!
//! The node is built as a board is: the agent runs in the board's slow path
//! (`clio_emu::InProcSlowPath`, the code the firmware links) and control
//! datagrams reach it over the rings (`CONTROL_REQ`/`CONTROL_REPLY`); the gate
//! is the fast-path model's region gate (`clio_fastpath::GateTable`), which
//! the agent sets with `GATE_SET` commands and which reports dirty blocks
//! with `GATE_DIRTY` (wire README, "The region gate on the rings"). Only the
//! per-region request counts stay in this shell (a board's fast path does not
//! count them).

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use clio::backend::InProcessBoard;

use clio_control::{Envelope, Message, NodeId, Pressure, RegionUse, MAX_ENVELOPE_LEN};
use clio_emu::{Board, ClientId, Engine};
use clio_slowpath::rack::{self, Link, LinkError};
use clio_wire::clio::{Header, Opcode, Packet, Status};

use crate::service::Client;

pub use clio_control::GateState;
pub use clio_slowpath::rack::Gate;

/// Gates a host node holds at once (`Moved` gates stay until their VA is
/// reused); also its fast path's gate entries.
pub const HOST_GATES: usize = clio_emu::slow::NODE_GATES;
/// Chunks bound on a host node (4 MiB each: 8 GiB of touched memory).
pub const HOST_BINDINGS: usize = clio_emu::slow::NODE_BINDINGS;
/// Rack clients' address spaces registered on a host node.
pub const HOST_SPACES: usize = clio_emu::slow::NODE_SPACES;

/// The pure node state machine as a host node sizes it.
pub type HostAgent = clio_emu::slow::NodeAgent;

/// What the gate did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateStats {
    /// Requests answered `BUSY` because their range was paused (by the fast
    /// path's gate, or a free by the slow path's).
    pub busy: u64,
    /// Requests answered `MOVED`.
    pub moved: u64,
    /// Dirty reports merged into a `Tracking` gate's record (the fast path
    /// reports each newly dirty block set once per take).
    pub tracked: u64,
    /// Control datagrams answered (gates set).
    pub control: u64,
    /// Control datagrams refused (malformed, not for a node).
    pub refused: u64,
    /// Clio requests handled (gated answers included).
    pub served: u64,
    /// Time spent handling them (ns, inside the node: its service time, without
    /// waiting for the node or for a core).
    pub busy_ns: u64,
}

/// An emulated memory board that is a rack node the way a real board is:
/// its slow path runs the [`RackAgent`](clio_slowpath::rack::RackAgent) (control datagrams reach it over the
/// rings) and the region gate is the fast-path model's.
pub struct RackNode {
    board: Board,
    served: u64,
    busy_ns: u64,
    /// Allocation answers seen while serving, for the agent (its `Moved`
    /// gates over reused VA go) once the board is done.
    allocs: Vec<(u32, u64, u64)>,
}

impl std::fmt::Debug for RackNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RackNode")
            .field("agent", &self.board.rack())
            .field("served", &self.served)
            .finish_non_exhaustive()
    }
}

impl RackNode {
    /// `board` made a rack node (its gate open).
    pub fn new(mut board: Board) -> RackNode {
        board.make_rack_node(Box::default());
        RackNode {
            board,
            served: 0,
            busy_ns: 0,
            allocs: Vec::new(),
        }
    }

    fn agent_mut(&mut self) -> &mut HostAgent {
        self.board
            .rack_mut()
            .expect("a RackNode's board is a rack node")
    }

    /// Runs an agent change and lets its gate commands reach the fast path.
    fn with_agent<T>(&mut self, f: impl FnOnce(&mut HostAgent) -> T) -> T {
        let r = f(self.agent_mut());
        self.board.settle(&mut |_, _| {});
        r
    }

    /// Reads and clears the dirty record of the gate of `pid` starting at
    /// `va` (`None`: no gate there tracks).
    pub fn take_dirty(&mut self, pid: u32, va: u64) -> Option<u64> {
        self.with_agent(|a| a.take_dirty(pid, va))
    }

    /// Per-region use since the previous call, for every region the node holds
    /// chunks of (ascending), and resets the counts.
    pub fn take_usage(&mut self) -> Vec<RegionUse> {
        let mut v = Vec::new();
        self.agent_mut().take_usage(|u| v.push(u));
        v
    }

    /// Bound chunks of `region`: (pid, chunk, node VA), ascending by chunk.
    pub fn chunks_of(&self, region: u32) -> Vec<(u32, u16, u64)> {
        let mut v: Vec<_> = self
            .agent()
            .bindings()
            .iter()
            .filter(|b| b.region == region)
            .map(|b| (b.pid, b.chunk, b.va))
            .collect();
        v.sort_by_key(|&(_, c, _)| c);
        v
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The node's state machine (gates, bindings, spaces).
    pub fn agent(&self) -> &HostAgent {
        self.board
            .rack()
            .expect("a RackNode's board is a rack node")
    }

    /// Current gates.
    pub fn gates(&self) -> &[Gate] {
        self.agent().gates()
    }

    /// Counters: the slow path's (control, frees) and the fast path's gate.
    pub fn stats(&self) -> GateStats {
        let a = self.agent().stats();
        let g = self.board.fast().gate().stats();
        GateStats {
            busy: a.busy + g.busy,
            moved: a.moved + g.moved,
            tracked: a.tracked,
            control: a.control,
            refused: a.refused,
            served: self.served,
            busy_ns: self.busy_ns,
        }
    }

    /// The agent's own counters (authentication refusals included).
    pub fn agent_stats(&self) -> rack::AgentStats {
        self.agent().stats()
    }

    /// Sets the rack key: from now on the node serves only sealed control
    /// frames under it (its agent refuses and counts the rest).
    pub fn set_key(&mut self, key: clio_control::auth::RackKey) {
        self.agent_mut().set_key(key);
    }

    /// The node id and epoch the controller's probes granted (`(0, 0)`:
    /// never probed; see `join = "probe"`).
    pub fn rack_identity(&self) -> (NodeId, u32) {
        self.agent().rack_identity()
    }

    /// Physical memory pressure from the slow path's frame allocator.
    pub fn pressure(&self) -> Pressure {
        rack::pressure(self.board.slow().phys())
    }

    /// Sets (or, with `Open`, removes) the gate of `[va, va + len)` of `pid`;
    /// `false` if the gate table is full.
    pub fn set_gate(&mut self, gate: Gate) -> bool {
        self.with_agent(|a| a.set_gate(gate))
    }

    /// One datagram from client `from`; answers go to `out`. Everything goes
    /// into the board, as on a real one: control datagrams to the slow path's
    /// agent over the rings, Clio requests through the fast path's gate.
    pub fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        if HostAgent::is_control(pkt) {
            self.board.handle(from, pkt, out);
            return;
        }
        let t = Instant::now();
        self.serve(from, pkt, out);
        self.served += 1;
        self.busy_ns += u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX);
    }

    fn serve(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(u64, &[u8])) {
        let agent = self.agent_mut();
        if !agent.idle() {
            if let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) {
                // Per-region use for the controller's planning (a free is
                // counted by the slow path's gate, which sees it forwarded).
                if h.opcode != Opcode::Free {
                    agent.count(&h);
                }
            }
        }
        let allocs = &mut self.allocs;
        self.board.handle(from, pkt, &mut |to, p| {
            allocated(allocs, p);
            out(to, p)
        });
        if !self.allocs.is_empty() {
            let allocs = std::mem::take(&mut self.allocs);
            self.with_agent(|a| {
                for &(pid, va, size) in &allocs {
                    a.allocated(pid, va, size);
                }
            });
        }
    }

    /// Runs the slow path and the fast path's TX ring until both are idle.
    pub fn settle(&mut self, out: &mut dyn FnMut(u64, &[u8])) {
        self.board.settle(out);
    }
}

/// An allocation answer: noted for the agent, whose `Moved` gates over reused VA go.
fn allocated(allocs: &mut Vec<(u32, u64, u64)>, pkt: &[u8]) {
    let Ok(h) = Header::parse(&Packet::new_unchecked(pkt)) else {
        return;
    };
    if h.opcode == Opcode::AllocResp && h.status == Status::Ok {
        let size = clio_wire::payload::AllocResp::parse(Packet::new_unchecked(pkt).payload())
            .map_or(1, |a| a.size);
        allocs.push((h.pid, h.va, size));
    }
}

/// A node shared by its UDP server, in-process sessions and its agent.
#[derive(Debug, Clone)]
pub struct SharedNode(pub Arc<Mutex<RackNode>>);

impl SharedNode {
    /// Wraps `node`.
    pub fn new(node: RackNode) -> SharedNode {
        SharedNode(Arc::new(Mutex::new(node)))
    }

    /// Locks the node (a poisoned lock still holds the board's best state).
    pub fn lock(&self) -> std::sync::MutexGuard<'_, RackNode> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Engine for SharedNode {
    fn handle(&mut self, from: ClientId, packet: &[u8], out: &mut dyn FnMut(ClientId, &[u8])) {
        self.lock().handle(from, packet, out)
    }
    fn poll(&mut self, out: &mut dyn FnMut(ClientId, &[u8])) -> Option<Duration> {
        Engine::poll(&mut self.lock().board, out)
    }
}

impl InProcessBoard for SharedNode {
    fn handle(&mut self, from: u64, pkt: &[u8], out: &mut dyn FnMut(&[u8])) {
        self.lock().handle(from, pkt, &mut |to, p| {
            if to == from {
                out(p)
            }
        })
    }
}

/// Registers a node with the controller and keeps it alive with heartbeats
/// carrying its pressure, on its own thread.
#[derive(Debug)]
pub struct NodeAgent {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
    epoch: u32,
}

impl NodeAgent {
    /// Says hello for node `id` (serving at `addr` with `capacity` bytes) to the
    /// controller at `controller`, sends its first heartbeat (so the controller
    /// has its pressure once this returns), then heartbeats every `interval`.
    /// Fails if the controller refuses the hello or the first heartbeat or does
    /// not answer (naming its address).
    pub fn start(
        controller: SocketAddr,
        id: NodeId,
        addr: SocketAddr,
        capacity: u64,
        node: SharedNode,
        interval: Duration,
    ) -> io::Result<NodeAgent> {
        Self::start_sealed(controller, None, id, addr, capacity, node, interval)
    }

    /// [`NodeAgent::start`] sealing its messages under the rack key `key`.
    pub fn start_sealed(
        controller: SocketAddr,
        key: Option<clio_control::auth::RackKey>,
        id: NodeId,
        addr: SocketAddr,
        capacity: u64,
        node: SharedNode,
        interval: Duration,
    ) -> io::Result<NodeAgent> {
        let mut c = Client::connect(controller)?.with_key(key);
        let boot_epoch = node.lock().board.epoch();
        let interval_ms = u64::try_from(interval.as_millis()).unwrap_or(u64::MAX);
        let mut link = Link::new(id, addr.into(), capacity, boot_epoch, interval_ms);
        let t0 = Instant::now();
        let now_ms = move || u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
        let named =
            |e: io::Error| io::Error::new(e.kind(), format!("rack controller {controller}: {e}"));
        let reply = c.call(link.hello()).map_err(named)?;
        // A refused or unexpected answer, named for the log.
        let failed = |what: &str, e: LinkError, reply: &Message| match e {
            LinkError::Refused { code, field } => io::Error::other(format!(
                "rack controller {controller} refused node {id}'s {what}: {code} ({})",
                field.name()
            )),
            LinkError::Unexpected => io::Error::other(format!(
                "rack controller {controller}: unexpected answer {reply:?}"
            )),
        };
        let epoch = link
            .welcomed(now_ms(), &reply)
            .map_err(|e| failed("hello", e, &reply))?;
        // The first heartbeat goes out before this returns, so the controller
        // knows the node's pressure from the start: placement breaks ties by
        // the free bytes last reported, and a node not heard from counts as
        // full, which would make where the first regions land a race.
        if let Some(beat) = link.heartbeat(now_ms(), node.lock().pressure()) {
            let reply = c.call(beat).map_err(named)?;
            link.beat_answered(&reply)
                .map_err(|e| failed("first heartbeat", e, &reply))?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name(format!("clio-node-{id}"))
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let now = now_ms();
                    let beat = if link.due(now) {
                        link.heartbeat(now, node.lock().pressure())
                    } else {
                        None
                    };
                    if let Some(beat) = beat {
                        // A lost heartbeat is covered by the next; a refusal (declared
                        // dead, fenced) ends the agent: the node must say hello again.
                        if let Ok(reply) = c.call(beat) {
                            if let Err(LinkError::Refused { code, field }) =
                                link.beat_answered(&reply)
                            {
                                return Err(io::Error::other(format!(
                                    "rack controller {controller} refused node {id}'s heartbeat: {code} ({})",
                                    field.name()
                                )));
                            }
                        }
                        // Per-region use for the controller's migration planning,
                        // in pages; a lost page only weakens one window's counts.
                        let mut pages = Vec::new();
                        link.usage(node.lock().agent_mut(), |m| pages.push(m));
                        for page in pages {
                            let _ = c.call(page);
                        }
                    }
                    std::thread::sleep(interval.min(Duration::from_millis(20)));
                }
                Ok(())
            })?;
        Ok(NodeAgent {
            stop,
            thread: Some(thread),
            epoch,
        })
    }

    /// The epoch the controller gave this registration.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// Stops heartbeating (the controller declares the node dead after its
    /// `dead_after_ms`); returns why the agent ended if it ended on its own.
    pub fn stop(mut self) -> io::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(io::Error::other("node agent thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for NodeAgent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Sends one control message to a memory node's data port and waits for the
/// answer (bounded retries): how a mover sets a node's gate over UDP.
pub fn call_node(node: SocketAddr, message: Message) -> io::Result<Message> {
    call_node_sealed(node, None, message)
}

/// [`call_node`], sealed under the rack key `key` (`None`: bare).
pub fn call_node_sealed(
    node: SocketAddr,
    key: Option<clio_control::auth::RackKey>,
    message: Message,
) -> io::Result<Message> {
    let mut c = Client::connect(node)?.with_key(key);
    c.call(message)
        .map_err(|e| io::Error::new(e.kind(), format!("memory node {node}: {e}")))
}

/// Memory nodes in this process: sessions through the SDK's in-process backend,
/// control messages through the same [`RackNode::handle`] a UDP datagram takes.
#[derive(Debug, Clone)]
pub struct InProcessLinks {
    nodes: Vec<SharedNode>,
    next_client: Arc<std::sync::atomic::AtomicU64>,
}

impl InProcessLinks {
    /// Links to `nodes`, node id i+1 being `nodes[i]`.
    pub fn new(nodes: Vec<SharedNode>) -> InProcessLinks {
        InProcessLinks {
            nodes,
            next_client: Arc::new(std::sync::atomic::AtomicU64::new(1)),
        }
    }

    fn node(&self, id: NodeId) -> Option<&SharedNode> {
        self.nodes.get(usize::from(id).checked_sub(1)?)
    }
}

impl crate::client::Links<clio::backend::InProcess<SharedNode>> for InProcessLinks {
    fn session(
        &self,
        node: NodeId,
        _addr: SocketAddr,
        cfg: clio::ClientConfig,
    ) -> Result<clio::Session<clio::backend::InProcess<SharedNode>>, clio::ClioError> {
        let n = self.node(node).ok_or(clio::ClioError::InvalidArgument {
            what: "node",
            reason: "no such in-process node",
        })?;
        let from = self.next_client.fetch_add(1, Ordering::Relaxed);
        clio::Session::open_with(clio::backend::InProcess::new(n.clone(), from), cfg)
    }

    fn control(&self, node: NodeId, _addr: SocketAddr, message: Message) -> io::Result<Message> {
        let n = self
            .node(node)
            .ok_or_else(|| io::Error::other(format!("no in-process node {node}")))?;
        let mut buf = [0u8; MAX_ENVELOPE_LEN];
        let req = Envelope::new(1, message)
            .encode(&mut buf)
            .map_err(io::Error::other)?
            .to_vec();
        let mut reply = None;
        // Client id 0 is never a session's: the answer comes back here only.
        n.lock()
            .handle(0, &req, &mut |_, p| reply = Some(p.to_vec()));
        let reply = reply.ok_or_else(|| io::Error::other(format!("node {node}: no answer")))?;
        Envelope::decode(&reply)
            .map(|e| e.message)
            .map_err(io::Error::other)
    }
}
