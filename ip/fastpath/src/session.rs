//! The session table: one on-chip entry per session id, checked by every
//! request that needs a session, written only by the slow path's
//! `SessionReply` and `Epoch` TX descriptors.

/// One session-table entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Session {
    /// Open.
    pub valid: bool,
    /// Address space (process id) of the session.
    pub pid: u32,
    /// The session key every request must carry.
    pub key: u64,
    /// Dedup records the session may hold.
    pub dedup_quota: u16,
    /// Locks the session may hold.
    pub lock_quota: u16,
    /// Locks the session holds now (successful LOCKs minus UNLOCKs, not below 0).
    pub locks: u16,
    /// The furthest `ack` the session has sent (0 = none yet): every request
    /// whose first attempt's id is serially before it was answered and the
    /// answer acknowledged, so a packet of such a request arriving now is a
    /// late network duplicate and must not execute again (its dedup record
    /// is gone).
    pub ack_floor: u32,
}

/// The table: session ids `1..capacity` (0 is "no session").
#[derive(Debug, Clone)]
pub struct Sessions {
    entries: Vec<Session>,
}

impl Sessions {
    /// A table of `capacity` entries, all closed.
    pub fn new(capacity: usize) -> Sessions {
        Sessions {
            entries: vec![Session::default(); capacity.max(1)],
        }
    }

    /// Entries (session ids are `1..capacity`).
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// The entry of `id` if it is an open session whose key and PID match.
    pub fn check(&self, id: u16, key: u64, pid: u32) -> Option<&Session> {
        if id == 0 {
            return None;
        }
        self.entries
            .get(usize::from(id))
            .filter(|e| e.valid && e.key == key && e.pid == pid)
    }

    /// The entry of `id` (open or not), if `id` is inside the table.
    pub fn get(&self, id: u16) -> Option<&Session> {
        self.entries.get(usize::from(id))
    }

    /// The entry of `id`, writable.
    pub fn get_mut(&mut self, id: u16) -> Option<&mut Session> {
        self.entries.get_mut(usize::from(id))
    }

    /// Whether `id` names an entry a descriptor may install or clear (1..capacity).
    pub fn in_range(&self, id: u16) -> bool {
        id != 0 && usize::from(id) < self.entries.len()
    }

    /// Close every session.
    pub fn clear(&mut self) {
        self.entries.fill(Session::default());
    }

    /// Open sessions.
    pub fn open(&self) -> usize {
        self.entries.iter().filter(|e| e.valid).count()
    }
}
