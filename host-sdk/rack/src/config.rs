//! The rack file: the memory nodes the controller knows, typed and validated.
//!
//! ```toml
//! [controller]                 # optional
//! listen = "127.0.0.1:7800"    # UDP address the controller serves (default shown)
//! dead_after_ms = 3000         # a node silent this long is declared dead (default shown)
//! migration_timeout_ms = 30000 # an open migration silent this long is closed `TimedOut`
//! key_file = "rack.key"        # the rack key: 32 hex digits (or `key = "…"` inline);
//!                              # relative to this file; absent: control datagrams are not sealed
//!
//! [[node]]
//! name = "mn0"                 # 1-32 chars of A-Za-z0-9._-, unique
//! address = "10.0.0.2:7700"    # IP:port, unique
//! capacity = "2 GiB"           # bytes (integer or "N KiB/MiB/GiB/TiB"), at least one vRegion
//! join = "hello"               # "hello" (the node registers itself) or "probe" (the controller asks)
//! ```
//!
//! Every error names the file, the dotted key (`node[1].capacity`) and, for a node's
//! key, the node's name.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;

use clio_control::{NodeAddr, NodeId, VREGION_BYTES};
use toml::{Table, Value};

/// Default UDP address of the controller.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7800";
/// Default silence after which a node is declared dead.
pub const DEFAULT_DEAD_AFTER_MS: u64 = 3000;
/// Most nodes a rack file may list (node ids are `u16`).
pub const MAX_NODES: usize = 4096;
/// Default silence after which an open migration is closed `TimedOut`.
pub const DEFAULT_MIGRATION_TIMEOUT_MS: u64 = 30_000;

/// How a node joins the rack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Join {
    /// It says `Hello` and sends heartbeats itself (the host's emulated nodes).
    #[default]
    Hello,
    /// The controller `Probe`s it at its address and registers and keeps it
    /// alive from the answers (a board whose fast path only answers senders).
    Probe,
}

/// One memory node of the rack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeConfig {
    /// Its id: 1-based position in the file's `[[node]]` list.
    pub id: NodeId,
    /// Its name (the identity the durable log records).
    pub name: String,
    /// Where it serves.
    pub address: SocketAddr,
    /// Physical bytes it offers for vRegions.
    pub capacity: u64,
    /// How it joins.
    pub join: Join,
}

impl NodeConfig {
    /// How many whole vRegions fit its capacity.
    pub fn region_slots(&self) -> u64 {
        self.capacity / VREGION_BYTES
    }

    /// Its address in the control protocol's form.
    pub fn node_addr(&self) -> NodeAddr {
        self.address.into()
    }
}

/// A validated rack file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RackConfig {
    /// The controller's UDP address.
    pub listen: SocketAddr,
    /// Silence (ms) after which a node is declared dead and fenced.
    pub dead_after_ms: u64,
    /// Silence (ms) after which an open migration is closed `TimedOut`.
    pub migration_timeout_ms: u64,
    /// The rack key (`controller.key` or `controller.key_file`): with one,
    /// every control datagram is a sealed frame (`clio_control::auth`).
    pub key: Option<clio_control::auth::RackKey>,
    /// The nodes, in file order (`nodes[i].id == i + 1`).
    pub nodes: Vec<NodeConfig>,
}

impl RackConfig {
    /// The node with `id`.
    pub fn node(&self, id: NodeId) -> Option<&NodeConfig> {
        self.nodes.get(usize::from(id).checked_sub(1)?)
    }

    /// The node called `name`.
    pub fn node_by_name(&self, name: &str) -> Option<&NodeConfig> {
        self.nodes.iter().find(|n| n.name == name)
    }
}

/// Why a rack file could not be loaded; every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum RackConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read file: {io}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error.
        io: std::io::Error,
    },
    /// Not valid TOML.
    #[error("{file}: invalid TOML: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// The parser's message.
        message: String,
    },
    /// A key the schema does not have.
    #[error(
        "{file}: unknown key '{key}'{} (known keys here: {known})",
        node_suffix(node)
    )]
    UnknownKey {
        /// The file.
        file: String,
        /// The node it is in, if any.
        node: Option<String>,
        /// The dotted key.
        key: String,
        /// The keys allowed beside it.
        known: String,
    },
    /// A required key is absent.
    #[error(
        "{file}: missing key '{key}'{}: expected {expected}",
        node_suffix(node)
    )]
    Missing {
        /// The file.
        file: String,
        /// The node it is in, if any.
        node: Option<String>,
        /// The dotted key.
        key: String,
        /// What it should hold.
        expected: String,
    },
    /// A value of the wrong type, out of range, or breaking a rule (e.g. a duplicate).
    #[error("{file}: key '{key}'{} = {value}: {reason}", node_suffix(node))]
    Invalid {
        /// The file.
        file: String,
        /// The node it is in, if any.
        node: Option<String>,
        /// The dotted key.
        key: String,
        /// The value as written.
        value: String,
        /// The allowed range or the broken rule.
        reason: String,
    },
}

fn node_suffix(node: &Option<String>) -> String {
    match node {
        Some(n) => format!(" (node '{n}')"),
        None => String::new(),
    }
}

impl RackConfigError {
    /// The dotted key the error is about, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            RackConfigError::Read { .. } | RackConfigError::Syntax { .. } => None,
            RackConfigError::UnknownKey { key, .. }
            | RackConfigError::Missing { key, .. }
            | RackConfigError::Invalid { key, .. } => Some(key),
        }
    }

    /// The node the error is about, if any (by name, or `node[i]` when it has none).
    pub fn node(&self) -> Option<&str> {
        match self {
            RackConfigError::UnknownKey { node, .. }
            | RackConfigError::Missing { node, .. }
            | RackConfigError::Invalid { node, .. } => node.as_deref(),
            _ => None,
        }
    }
}

/// Loads and validates the rack file at `path`.
pub fn load(path: impl AsRef<Path>) -> Result<RackConfig, RackConfigError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|io| RackConfigError::Read {
        file: path.display().to_string(),
        io,
    })?;
    load_str(path, &text)
}

/// Parses and validates `text` as the rack file `path` (used in messages only).
pub fn load_str(path: impl AsRef<Path>, text: &str) -> Result<RackConfig, RackConfigError> {
    let file = path.as_ref().display().to_string();
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| RackConfigError::Syntax {
            file: file.clone(),
            message: e.to_string().trim_end().to_string(),
        })?;
    let p = Parser { file: &file };
    p.known(&table, "", None, &["controller", "node"])?;

    let mut listen: SocketAddr = DEFAULT_LISTEN.parse().expect("default address parses");
    let mut dead_after_ms = DEFAULT_DEAD_AFTER_MS;
    let mut migration_timeout_ms = DEFAULT_MIGRATION_TIMEOUT_MS;
    let mut key = None;
    if let Some(v) = table.get("controller") {
        let c = p.table(v, "controller", None)?;
        p.known(
            c,
            "controller.",
            None,
            &[
                "listen",
                "dead_after_ms",
                "migration_timeout_ms",
                "key",
                "key_file",
            ],
        )?;
        if let Some(v) = c.get("listen") {
            listen = p.socket_addr(v, "controller.listen", None)?;
        }
        if let Some(v) = c.get("dead_after_ms") {
            dead_after_ms = p.integer(v, "controller.dead_after_ms", None, 1, 3_600_000)?;
        }
        if let Some(v) = c.get("migration_timeout_ms") {
            migration_timeout_ms =
                p.integer(v, "controller.migration_timeout_ms", None, 1, 86_400_000)?;
        }
        key = rack_key(&p, c, path.as_ref())?;
    }

    let list = match table.get("node") {
        None => {
            return Err(RackConfigError::Missing {
                file,
                node: None,
                key: "node".into(),
                expected: "at least one [[node]] table".into(),
            })
        }
        Some(Value::Array(a)) => a,
        Some(v) => return Err(p.invalid("node", None, v, "expected an array of [[node]] tables")),
    };
    if list.is_empty() || list.len() > MAX_NODES {
        return Err(RackConfigError::Invalid {
            file,
            node: None,
            key: "node".into(),
            value: format!("{} nodes", list.len()),
            reason: format!("a rack has 1..={MAX_NODES} nodes"),
        });
    }

    let mut nodes: Vec<NodeConfig> = Vec::with_capacity(list.len());
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut addrs: HashMap<SocketAddr, usize> = HashMap::new();
    for (i, v) in list.iter().enumerate() {
        let at = format!("node[{i}]");
        let t = p.table(v, &at, None)?;
        // Name first, so every later error can name the node.
        let name_key = format!("{at}.name");
        let name = match t.get("name") {
            None => {
                return Err(RackConfigError::Missing {
                    file,
                    node: Some(at),
                    key: name_key,
                    expected: "the node's name".into(),
                })
            }
            Some(Value::String(s)) => s.clone(),
            Some(v) => return Err(p.invalid(&name_key, Some(&at), v, "expected a string")),
        };
        let label = Some(name.as_str());
        if name.is_empty()
            || name.len() > 32
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        {
            return Err(p.invalid(
                &name_key,
                Some(&at),
                &Value::String(name.clone()),
                "must be 1-32 chars of A-Za-z0-9._-",
            ));
        }
        p.known(
            t,
            &format!("{at}."),
            label,
            &["name", "address", "capacity", "join"],
        )?;
        if let Some(first) = names.insert(name.clone(), i) {
            return Err(p.invalid(
                &name_key,
                label,
                &Value::String(name.clone()),
                &format!("duplicate name: node[{first}] has it too"),
            ));
        }
        let addr_key = format!("{at}.address");
        let address = match t.get("address") {
            None => return Err(p.missing(&addr_key, label, "IP:port, e.g. \"10.0.0.2:7700\"")),
            Some(v) => p.socket_addr(v, &addr_key, label)?,
        };
        if let Some(first) = addrs.insert(address, i) {
            return Err(p.invalid(
                &addr_key,
                label,
                &Value::String(address.to_string()),
                &format!(
                    "duplicate address: node[{first}] '{}' has it too",
                    nodes[first].name
                ),
            ));
        }
        let cap_key = format!("{at}.capacity");
        let capacity = match t.get("capacity") {
            None => return Err(p.missing(&cap_key, label, "bytes, e.g. \"2 GiB\"")),
            Some(v) => p.size(v, &cap_key, label)?,
        };
        if capacity < VREGION_BYTES {
            let reason = if capacity == 0 {
                "must not be zero: a node offers at least one vRegion (1 GiB)"
            } else {
                "must be at least one vRegion (1 GiB)"
            };
            return Err(p.invalid(&cap_key, label, t.get("capacity").expect("present"), reason));
        }
        let join_key = format!("{at}.join");
        let join = match t.get("join") {
            None => Join::Hello,
            Some(Value::String(s)) if s == "hello" => Join::Hello,
            Some(Value::String(s)) if s == "probe" => Join::Probe,
            Some(v) => {
                return Err(p.invalid(&join_key, label, v, "expected \"hello\" or \"probe\""))
            }
        };
        nodes.push(NodeConfig {
            id: NodeId::try_from(i + 1).expect("at most MAX_NODES nodes"),
            name,
            address,
            capacity,
            join,
        });
    }
    Ok(RackConfig {
        listen,
        dead_after_ms,
        migration_timeout_ms,
        key,
        nodes,
    })
}

/// The rack key from `controller.key` (inline hex) or `controller.key_file`
/// (a file holding the hex, relative to the rack file); errors name the key
/// and the file, never the key's value.
fn rack_key(
    p: &Parser<'_>,
    c: &Table,
    rack_file: &Path,
) -> Result<Option<clio_control::auth::RackKey>, RackConfigError> {
    use clio_control::auth::RackKey;
    let invalid = |key: &str, value: String, reason: String| RackConfigError::Invalid {
        file: p.file.to_string(),
        node: None,
        key: key.into(),
        value,
        reason,
    };
    match (c.get("key"), c.get("key_file")) {
        (Some(_), Some(_)) => Err(invalid(
            "controller.key_file",
            "(with controller.key)".into(),
            "set controller.key or controller.key_file, not both".into(),
        )),
        (Some(Value::String(s)), None) => RackKey::from_hex(s).map(Some).map_err(|e| {
            invalid(
                "controller.key",
                "(not shown: a secret)".into(),
                e.to_string(),
            )
        }),
        (Some(v), None) => Err(p.invalid(
            "controller.key",
            None,
            v,
            "expected a string of 32 hex digits",
        )),
        (None, Some(Value::String(f))) => {
            let path = rack_file
                .parent()
                .map_or_else(|| Path::new(f).to_path_buf(), |d| d.join(f));
            let text = std::fs::read_to_string(&path).map_err(|e| {
                invalid(
                    "controller.key_file",
                    format!("{f:?}"),
                    format!("cannot read {}: {e}", path.display()),
                )
            })?;
            RackKey::from_hex(&text).map(Some).map_err(|e| {
                invalid(
                    "controller.key_file",
                    format!("{f:?}"),
                    format!("{}: {e}", path.display()),
                )
            })
        }
        (None, Some(v)) => Err(p.invalid("controller.key_file", None, v, "expected a file name")),
        (None, None) => Ok(None),
    }
}

struct Parser<'a> {
    file: &'a str,
}

impl Parser<'_> {
    fn invalid(&self, key: &str, node: Option<&str>, v: &Value, reason: &str) -> RackConfigError {
        RackConfigError::Invalid {
            file: self.file.to_string(),
            node: node.map(str::to_string),
            key: key.to_string(),
            value: v.to_string(),
            reason: reason.to_string(),
        }
    }

    fn missing(&self, key: &str, node: Option<&str>, expected: &str) -> RackConfigError {
        RackConfigError::Missing {
            file: self.file.to_string(),
            node: node.map(str::to_string),
            key: key.to_string(),
            expected: expected.to_string(),
        }
    }

    fn known(
        &self,
        t: &Table,
        prefix: &str,
        node: Option<&str>,
        keys: &[&str],
    ) -> Result<(), RackConfigError> {
        for k in t.keys() {
            if !keys.contains(&k.as_str()) {
                return Err(RackConfigError::UnknownKey {
                    file: self.file.to_string(),
                    node: node.map(str::to_string),
                    key: format!("{prefix}{k}"),
                    known: keys.join(", "),
                });
            }
        }
        Ok(())
    }

    fn table<'v>(
        &self,
        v: &'v Value,
        key: &str,
        node: Option<&str>,
    ) -> Result<&'v Table, RackConfigError> {
        v.as_table()
            .ok_or_else(|| self.invalid(key, node, v, "expected a table"))
    }

    fn integer(
        &self,
        v: &Value,
        key: &str,
        node: Option<&str>,
        min: u64,
        max: u64,
    ) -> Result<u64, RackConfigError> {
        match v.as_integer() {
            Some(i) if i >= 0 && (min..=max).contains(&(i as u64)) => Ok(i as u64),
            Some(_) => Err(self.invalid(key, node, v, &format!("must be in {min}..={max}"))),
            None => Err(self.invalid(key, node, v, "expected an integer")),
        }
    }

    fn size(&self, v: &Value, key: &str, node: Option<&str>) -> Result<u64, RackConfigError> {
        match v {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            Value::String(s) => clio_config::parse_size(s).ok_or_else(|| {
                self.invalid(
                    key,
                    node,
                    v,
                    "expected bytes: an integer or \"N B/KiB/MiB/GiB/TiB\"",
                )
            }),
            _ => Err(self.invalid(
                key,
                node,
                v,
                "expected bytes: a non-negative integer or \"N GiB\"",
            )),
        }
    }

    fn socket_addr(
        &self,
        v: &Value,
        key: &str,
        node: Option<&str>,
    ) -> Result<SocketAddr, RackConfigError> {
        match v.as_str().map(str::parse::<SocketAddr>) {
            Some(Ok(a)) if a.port() != 0 => Ok(a),
            Some(Ok(_)) => Err(self.invalid(key, node, v, "port must be 1..=65535")),
            _ => Err(self.invalid(
                key,
                node,
                v,
                "expected \"IP:port\", e.g. \"10.0.0.2:7700\" or \"[::1]:7700\"",
            )),
        }
    }
}
