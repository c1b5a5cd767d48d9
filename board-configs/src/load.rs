//! Loading TOML board files: inheritance, typed reading, unknown keys, validation.
//!
//! A file may start with `inherit = "other.toml"` (relative to the file). The
//! parent is loaded first and the child's tables are merged into it key by key
//! (tables merge deeply; scalars and arrays replace). Every error names the
//! file that set the offending key, the dotted key, and the allowed range.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;
use std::io;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use toml::{Table, Value};

use crate::keys::{self, RegionKeys, RingKeys};
use crate::model::{
    Board, BoardConfig, BoardKind, Dedup, Dram, FastPath, FreePaFifo, FrontEnd, Name, Network,
    PageSizes, PageTable, Pages, Pcie, PortKind, Region, Regions, Ring, Rings, Sessions, Timeouts,
    Tlb, VaSpace,
};
use crate::validate::{limits, Limit};

/// Dotted key -> (merge rank, file that set it); a higher rank is a more derived file.
type Origins = HashMap<String, (usize, String)>;

/// Deepest allowed chain of `inherit`s (a longer chain is almost surely a mistake).
pub const MAX_INHERIT_DEPTH: usize = 8;

/// Why a board file could not be loaded. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read file: {io}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error (in the message, not a separate cause, so a chain
        /// printer does not say it twice).
        io: io::Error,
    },
    /// The file is not valid TOML.
    #[error("{file}: invalid TOML: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// Where (line and column) and what the parser reports.
        message: String,
    },
    /// The file named by `inherit` could not be loaded.
    #[error("{file}: key 'inherit' = {target:?}: cannot read {resolved}: {reason}")]
    InheritMissing {
        /// The inheriting file.
        file: String,
        /// The value of `inherit`.
        target: String,
        /// The path it resolves to.
        resolved: String,
        /// Why it could not be read.
        reason: String,
    },
    /// Inheritance loops back to a file already being loaded, or is too deep.
    #[error("{file}: key 'inherit': {reason}: {chain}")]
    InheritCycle {
        /// The file whose `inherit` closes the loop.
        file: String,
        /// What is wrong.
        reason: String,
        /// The chain of files, `a -> b -> a`.
        chain: String,
    },
    /// A key the schema does not have.
    #[error("{file}: unknown key '{key}' (known keys here: {known})")]
    UnknownKey {
        /// The file that set it.
        file: String,
        /// The dotted key.
        key: String,
        /// The keys allowed beside it.
        known: String,
    },
    /// A required key is absent from the file and its parents.
    #[error("{file}: missing key '{key}': expected {expected}")]
    Missing {
        /// The loaded (leaf) file.
        file: String,
        /// The dotted key.
        key: String,
        /// What it should hold.
        expected: String,
    },
    /// A key has the wrong TOML type.
    #[error("{file}: key '{key}' has type {found}: expected {expected}")]
    WrongType {
        /// The file that set it.
        file: String,
        /// The dotted key.
        key: String,
        /// The TOML type found.
        found: String,
        /// What it should hold.
        expected: String,
    },
    /// A key's value is out of range or breaks a rule relating it to other keys.
    #[error("{file}: key '{key}' = {value}: {reason}")]
    Invalid {
        /// The file that set it.
        file: String,
        /// The dotted key.
        key: String,
        /// The value as written or resolved.
        value: String,
        /// The allowed range or the broken rule.
        reason: String,
    },
}

impl ConfigError {
    /// The file the error is about.
    pub fn file(&self) -> &str {
        match self {
            ConfigError::Read { file, .. }
            | ConfigError::Syntax { file, .. }
            | ConfigError::InheritMissing { file, .. }
            | ConfigError::InheritCycle { file, .. }
            | ConfigError::UnknownKey { file, .. }
            | ConfigError::Missing { file, .. }
            | ConfigError::WrongType { file, .. }
            | ConfigError::Invalid { file, .. } => file,
        }
    }

    /// The dotted key the error is about, if it is about one.
    pub fn key(&self) -> Option<&str> {
        match self {
            ConfigError::Read { .. } | ConfigError::Syntax { .. } => None,
            ConfigError::InheritMissing { .. } | ConfigError::InheritCycle { .. } => {
                Some(keys::INHERIT)
            }
            ConfigError::UnknownKey { key, .. }
            | ConfigError::Missing { key, .. }
            | ConfigError::WrongType { key, .. }
            | ConfigError::Invalid { key, .. } => Some(key),
        }
    }
}

/// Where board files come from: the file system, or the files built into the crate.
pub trait Source {
    /// Reads the file at `path`.
    fn read(&self, path: &Path) -> io::Result<String>;
    /// A name that is equal for two paths naming the same file (for cycle detection).
    fn identity(&self, path: &Path) -> PathBuf;
}

/// Reads board files from the file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsSource;

impl Source for FsSource {
    fn read(&self, path: &Path) -> io::Result<String> {
        std::fs::read_to_string(path)
    }

    fn identity(&self, path: &Path) -> PathBuf {
        std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
    }
}

/// Loads, resolves and validates the board file at `path`.
pub fn load(path: impl AsRef<Path>) -> Result<BoardConfig, ConfigError> {
    load_from(&FsSource, path.as_ref())
}

/// Like [`load`], with the top file's text given; `inherit` is resolved next to `path`.
pub fn load_str(path: impl AsRef<Path>, text: &str) -> Result<BoardConfig, ConfigError> {
    struct Overlay<'a> {
        path: &'a Path,
        text: &'a str,
    }
    impl Source for Overlay<'_> {
        fn read(&self, path: &Path) -> io::Result<String> {
            if path == self.path {
                Ok(self.text.to_owned())
            } else {
                FsSource.read(path)
            }
        }
        fn identity(&self, path: &Path) -> PathBuf {
            FsSource.identity(path)
        }
    }
    let path = path.as_ref();
    load_from(&Overlay { path, text }, path)
}

/// Loads, resolves and validates `path` read through `source`.
pub fn load_from(source: &dyn Source, path: &Path) -> Result<BoardConfig, ConfigError> {
    let mut origins = HashMap::new();
    let mut stack = Vec::new();
    let text = source.read(path).map_err(|e| ConfigError::Read {
        file: show(path),
        io: e,
    })?;
    let root = resolve(source, path, &text, &mut stack, &mut origins)?;
    let reader = Reader {
        root: &root,
        origins: &origins,
        leaf: show(path),
        asked: RefCell::new(BTreeSet::new()),
        error: RefCell::new(None),
    };
    let config = reader.config();
    reader.unknown_keys(&root, "")?;
    if let Some(e) = reader.error.into_inner() {
        return Err(e);
    }
    config.validate().map_err(|v| ConfigError::Invalid {
        file: reader_file(&origins, v.key, &show(path)),
        key: v.key.to_owned(),
        value: v.value.to_string(),
        reason: v.reason.to_string(),
    })?;
    Ok(config)
}

fn show(path: &Path) -> String {
    path.display().to_string()
}

/// Parses `text` (the contents of `path`), loads its parents, and merges.
/// `origins` maps each dotted leaf key to the file that set it last.
fn resolve(
    source: &dyn Source,
    path: &Path,
    text: &str,
    stack: &mut Vec<(PathBuf, String)>,
    origins: &mut Origins,
) -> Result<Table, ConfigError> {
    let file = show(path);
    let id = source.identity(path);
    if let Some(pos) = stack.iter().position(|(p, _)| *p == id) {
        let mut chain: Vec<&str> = stack[pos..].iter().map(|(_, f)| f.as_str()).collect();
        chain.push(&file);
        let parent = stack.last().map_or(file.clone(), |(_, f)| f.clone());
        return Err(ConfigError::InheritCycle {
            file: parent,
            reason: "inheritance cycle".into(),
            chain: chain.join(" -> "),
        });
    }
    if stack.len() >= MAX_INHERIT_DEPTH {
        let mut chain: Vec<&str> = stack.iter().map(|(_, f)| f.as_str()).collect();
        chain.push(&file);
        return Err(ConfigError::InheritCycle {
            file: stack.last().map_or(file.clone(), |(_, f)| f.clone()),
            reason: format!("more than {MAX_INHERIT_DEPTH} levels of inheritance"),
            chain: chain.join(" -> "),
        });
    }
    let mut table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::Syntax {
            file: file.clone(),
            message: syntax_message(text, &e),
        })?;
    stack.push((id, file.clone()));
    let mut merged = match table.remove(keys::INHERIT) {
        None => Table::new(),
        Some(Value::String(target)) => {
            let resolved = path.parent().unwrap_or(Path::new("")).join(&target);
            let parent_text = source
                .read(&resolved)
                .map_err(|e| ConfigError::InheritMissing {
                    file: file.clone(),
                    target: target.clone(),
                    resolved: show(&resolved),
                    reason: e.to_string(),
                })?;
            resolve(source, &resolved, &parent_text, stack, origins)?
        }
        Some(other) => {
            return Err(ConfigError::WrongType {
                file,
                key: keys::INHERIT.into(),
                found: other.type_str().into(),
                expected: "a file name string, relative to this file".into(),
            })
        }
    };
    stack.pop();
    // The top file (empty stack) ranks highest: it overrides its parents.
    let rank = MAX_INHERIT_DEPTH - stack.len();
    merge(&mut merged, table, &(rank, file), "", origins);
    Ok(merged)
}

/// `at line L, column C: message` from a parser error (1-based, columns in characters).
fn syntax_message(text: &str, e: &toml::de::Error) -> String {
    let message = e.message().trim_end().replace('\n', "; ");
    let Some(start) = e.span().map(|s| s.start.min(text.len())) else {
        return message;
    };
    let before = text.get(..start).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("at line {line}, column {column}: {message}")
}

/// Merges `over` into `base`: tables recursively, everything else replaced.
fn merge(
    base: &mut Table,
    over: Table,
    file: &(usize, String),
    prefix: &str,
    origins: &mut Origins,
) {
    for (k, v) in over {
        let key = join(prefix, &k);
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o, file, &key, origins),
            (_, v) => {
                record(&v, &key, file, origins);
                base.insert(k, v);
            }
        }
    }
}

fn record(v: &Value, key: &str, file: &(usize, String), origins: &mut Origins) {
    origins.insert(key.to_owned(), file.clone());
    if let Value::Table(t) = v {
        for (k, v) in t {
            record(v, &join(key, k), file, origins);
        }
    }
}

fn join(prefix: &str, k: &str) -> String {
    if prefix.is_empty() {
        k.to_owned()
    } else {
        format!("{prefix}.{k}")
    }
}

/// The file that set `key`, or the most derived file that set anything under
/// it (origins rank files by merge order), else the leaf file.
fn reader_file(origins: &Origins, key: &str, leaf: &str) -> String {
    let prefix = format!("{key}.");
    origins
        .iter()
        .filter(|(k, _)| *k == key || k.starts_with(&prefix))
        .max_by_key(|(_, (rank, _))| *rank)
        .map_or_else(|| leaf.to_owned(), |(_, (_, f))| f.clone())
}

/// Typed access to the merged table. Records every key it is asked for (to find
/// unknown ones) and the first error, and keeps going so all keys get asked.
struct Reader<'a> {
    root: &'a Table,
    origins: &'a Origins,
    leaf: String,
    asked: RefCell<BTreeSet<String>>,
    error: RefCell<Option<ConfigError>>,
}

const SIZE_HINT: &str = "a byte count (integer, or a string like \"4 MiB\")";

impl Reader<'_> {
    fn file(&self, key: &str) -> String {
        reader_file(self.origins, key, &self.leaf)
    }

    fn fail(&self, e: ConfigError) {
        let mut slot = self.error.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.asked.borrow_mut().insert(key.to_owned());
        let mut parts = key.split('.');
        let first = parts.next()?;
        let mut v = self.root.get(first)?;
        for p in parts {
            v = v.as_table()?.get(p)?;
        }
        Some(v)
    }

    /// The value at `key`, or records "missing" and returns `None`.
    fn need(&self, key: &str, expected: &dyn Display) -> Option<&Value> {
        let v = self.get(key);
        if v.is_none() {
            self.fail(ConfigError::Missing {
                file: self.leaf.clone(),
                key: key.to_owned(),
                expected: expected.to_string(),
            });
        }
        v
    }

    fn wrong_type(&self, key: &str, v: &Value, expected: &dyn Display) {
        self.fail(ConfigError::WrongType {
            file: self.file(key),
            key: key.to_owned(),
            found: v.type_str().to_owned(),
            expected: expected.to_string(),
        });
    }

    fn out_of_range(&self, key: &str, shown: &dyn Display, reason: &dyn Display) {
        self.fail(ConfigError::Invalid {
            file: self.file(key),
            key: key.to_owned(),
            value: shown.to_string(),
            reason: reason.to_string(),
        });
    }

    fn check(&self, key: &str, v: i128, shown: &dyn Display, limit: Limit) -> u64 {
        match u64::try_from(v) {
            Ok(u) if limit.allows(u) => u,
            _ => {
                self.out_of_range(key, shown, &format_args!("must be {limit}"));
                0
            }
        }
    }

    /// An integer within `limit`.
    fn int(&self, key: &str, limit: Limit) -> u64 {
        let expected = format!("an integer {limit}");
        match self.need(key, &expected) {
            None => 0,
            Some(Value::Integer(i)) => self.check(key, i128::from(*i), i, limit),
            Some(v) => {
                self.wrong_type(key, v, &expected);
                0
            }
        }
    }

    /// An optional integer within `limit`: `None` when the key is absent.
    fn opt_int(&self, key: &str, limit: Limit) -> Option<u64> {
        self.get(key)?;
        Some(self.int(key, limit))
    }

    /// An optional boolean: `None` when the key is absent.
    fn opt_bool(&self, key: &str) -> Option<bool> {
        match self.get(key)? {
            Value::Boolean(b) => Some(*b),
            v => {
                self.wrong_type(key, v, &"true or false");
                None
            }
        }
    }

    /// An optional byte count within `limit`: `None` when the key is absent.
    fn opt_bytes(&self, key: &str, limit: Limit) -> Option<u64> {
        self.get(key)?;
        Some(self.bytes(key, limit))
    }

    /// A byte count within `limit`: an integer, or a string with a binary unit.
    fn bytes(&self, key: &str, limit: Limit) -> u64 {
        let expected = format!("{SIZE_HINT} {limit}");
        match self.need(key, &expected) {
            None => 0,
            Some(v) => self.bytes_value(key, v, limit, &expected),
        }
    }

    fn bytes_value(&self, key: &str, v: &Value, limit: Limit, expected: &str) -> u64 {
        match v {
            Value::Integer(i) => self.check(key, i128::from(*i), i, limit),
            Value::String(s) => match parse_size(s) {
                Some(n) => self.check(key, i128::from(n), &format_args!("{s:?}"), limit),
                None => {
                    self.out_of_range(
                        key,
                        &format_args!("{s:?}"),
                        &format_args!("expected {expected}"),
                    );
                    0
                }
            },
            v => {
                self.wrong_type(key, v, &expected);
                0
            }
        }
    }

    fn string(&self, key: &str, expected: &str) -> Option<&str> {
        match self.need(key, &expected)? {
            Value::String(s) => Some(s),
            v => {
                self.wrong_type(key, v, &expected);
                None
            }
        }
    }

    /// One of a fixed set of words.
    fn choice<T: Copy>(&self, key: &str, all: &[T], name: fn(T) -> &'static str) -> T {
        let words: Vec<String> = all.iter().map(|t| format!("{:?}", name(*t))).collect();
        let expected = format!("one of {}", words.join(", "));
        if let Some(s) = self.string(key, &expected) {
            if let Some(t) = all.iter().find(|t| name(**t) == s) {
                return *t;
            }
            self.out_of_range(
                key,
                &format_args!("{s:?}"),
                &format_args!("must be {expected}"),
            );
        }
        all[0]
    }

    fn region(&self, key: RegionKeys) -> Region {
        Region {
            base: self.int(key.base, limits::REGION_BASE),
            size: self.bytes(key.size, limits::REGION_SIZE),
        }
    }

    fn ring(&self, key: RingKeys) -> Ring {
        Ring {
            base: self.int(key.base, limits::RING_BASE),
            slots: self.int(key.slots, limits::RING_SLOTS) as u32,
        }
    }

    fn page_sizes(&self, key: &str) -> PageSizes {
        let expected = format!(
            "an array of page sizes, each {SIZE_HINT} {}",
            limits::PAGE_SIZE
        );
        let mut set = PageSizes::EMPTY;
        match self.need(key, &expected) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let size = self.bytes_value(key, item, limits::PAGE_SIZE, &expected);
                    if size != 0 && set.contains(size) {
                        self.out_of_range(key, &size, &"lists this size twice");
                    }
                    if size.is_power_of_two() {
                        set = set.with(size);
                    }
                }
            }
            Some(v) => self.wrong_type(key, v, &expected),
        }
        set
    }

    fn name(&self, key: &str) -> Name {
        let expected = "a name of 1 to 32 characters from A-Z, a-z, 0-9, '.', '_', '-'";
        let s = self.string(key, expected).unwrap_or("");
        match Name::try_new(s) {
            Some(n) => n,
            None => {
                self.out_of_range(
                    key,
                    &format_args!("{s:?}"),
                    &format_args!("must be {expected}"),
                );
                Name::new("")
            }
        }
    }

    fn mac(&self, key: &str) -> [u8; 6] {
        let expected = "a MAC address string like \"02:00:00:00:00:01\"";
        let Some(s) = self.string(key, expected) else {
            return [0; 6];
        };
        let parts: Vec<Option<u8>> = s
            .split(':')
            .map(|p| {
                (p.len() == 2)
                    .then(|| u8::from_str_radix(p, 16).ok())
                    .flatten()
            })
            .collect();
        match <[Option<u8>; 6]>::try_from(parts) {
            Ok(a) if a.iter().all(Option::is_some) => a.map(|b| b.unwrap_or(0)),
            _ => {
                self.out_of_range(
                    key,
                    &format_args!("{s:?}"),
                    &format_args!("must be {expected}"),
                );
                [0; 6]
            }
        }
    }

    fn ipv4(&self, key: &str) -> [u8; 4] {
        let expected = "an IPv4 address string like \"10.0.0.2\"";
        let Some(s) = self.string(key, expected) else {
            return [0; 4];
        };
        match s.parse::<Ipv4Addr>() {
            Ok(a) => a.octets(),
            Err(_) => {
                self.out_of_range(
                    key,
                    &format_args!("{s:?}"),
                    &format_args!("must be {expected}"),
                );
                [0; 4]
            }
        }
    }

    fn config(&self) -> BoardConfig {
        use limits as l;
        let pcie = match self.get(keys::PCIE) {
            None => None,
            Some(Value::Table(_)) => Some(Pcie {
                vendor_id: self.int(keys::PCIE_VENDOR_ID, l::PCI_ID) as u16,
                device_id: self.int(keys::PCIE_DEVICE_ID, l::PCI_ID) as u16,
                user_bar: self.int(keys::PCIE_USER_BAR, l::PCI_BAR) as u8,
                user_offset: self.int(keys::PCIE_USER_OFFSET, l::PCI_USER_OFFSET),
                h2c_channels: self.int("pcie.h2c_channels", l::XDMA_CHANNELS) as u8,
                c2h_channels: self.int("pcie.c2h_channels", l::XDMA_CHANNELS) as u8,
                xdma_instance: self.int(keys::PCIE_XDMA_INSTANCE, l::XDMA_INSTANCE) as u32,
            }),
            Some(v) => {
                self.wrong_type(keys::PCIE, v, &"a table");
                None
            }
        };
        let kind = self.choice(keys::BOARD_KIND, &BoardKind::ALL, BoardKind::as_str);
        BoardConfig {
            board: Board {
                name: self.name(keys::BOARD_NAME),
                kind,
            },
            dram: Dram {
                base: self.int(keys::DRAM_BASE, l::DRAM_BASE),
                size: self.bytes(keys::DRAM_SIZE, l::DRAM_SIZE),
            },
            regions: Regions {
                firmware: self.region(keys::REGIONS_FIRMWARE),
                rings: self.region(keys::REGIONS_RINGS),
                net_buffers: self.region(keys::REGIONS_NET_BUFFERS),
                page_table: self.region(keys::REGIONS_PAGE_TABLE),
                data: self.region(keys::REGIONS_DATA),
            },
            pages: Pages {
                sizes: self.page_sizes(keys::PAGES_SIZES),
                default_size: self.bytes(keys::PAGES_DEFAULT_SIZE, l::PAGE_SIZE),
            },
            page_table: PageTable {
                slots_per_bucket: self.int(keys::PAGE_TABLE_SLOTS_PER_BUCKET, l::SLOTS_PER_BUCKET)
                    as u32,
                slot_factor: self.int(keys::PAGE_TABLE_SLOT_FACTOR, l::SLOT_FACTOR) as u32,
            },
            tlb: Tlb {
                entries: self.int(keys::TLB_ENTRIES, l::TLB_ENTRIES) as u32,
            },
            free_pa_fifo: FreePaFifo {
                depth: self.int(keys::FREE_PA_FIFO_DEPTH, l::FREE_PA_FIFO_DEPTH) as u32,
            },
            rings: Rings {
                slot_bytes: self.bytes(keys::RINGS_SLOT_BYTES, l::RING_SLOT_BYTES) as u32,
                rx: self.ring(keys::RINGS_RX),
                tx: self.ring(keys::RINGS_TX),
            },
            fastpath: FastPath {
                clock_mhz: self.int(keys::FASTPATH_CLOCK_MHZ, l::CLOCK_MHZ) as u32,
                datapath_bits: self.int(keys::FASTPATH_DATAPATH_BITS, l::DATAPATH_BITS) as u32,
                regs_base: self.opt_int(keys::FASTPATH_REGS_BASE, l::REGS_BASE),
                read_streams: self
                    .opt_bool(keys::FASTPATH_READ_STREAMS)
                    .unwrap_or(FastPath::default_read_streams(kind)),
            },
            network: Network {
                mac: self.mac(keys::NETWORK_MAC),
                ipv4: self.ipv4("network.ipv4"),
                udp_port: self.int(keys::NETWORK_UDP_PORT, l::UDP_PORT) as u16,
                mtu_payload: self.bytes(keys::NETWORK_MTU_PAYLOAD, l::MTU_PAYLOAD) as u32,
                ports: self.int(keys::NETWORK_PORTS, l::PORTS) as u32,
                port_gbps: self.int(keys::NETWORK_PORT_GBPS, l::PORT_GBPS) as u32,
                port_kind: self.choice(keys::NETWORK_PORT_KIND, &PortKind::ALL, PortKind::as_str),
                clients: self
                    .opt_int(keys::NETWORK_CLIENTS, l::CLIENTS)
                    .map_or(crate::model::DEFAULT_CLIENTS, |n| n as u32),
                max_response_bytes: self
                    .opt_bytes(keys::NETWORK_MAX_RESPONSE_BYTES, l::MAX_RESPONSE_BYTES)
                    .map_or(crate::model::DEFAULT_MAX_RESPONSE_BYTES, |n| n as u32),
                front_end: match self.get(keys::NETWORK_FRONT_END) {
                    Some(_) => {
                        self.choice(keys::NETWORK_FRONT_END, &FrontEnd::ALL, FrontEnd::as_str)
                    }
                    None => FrontEnd::Udp,
                },
            },
            dedup: Dedup {
                buffer_bytes: self.bytes(keys::DEDUP_BUFFER_BYTES, l::DEDUP_BUFFER_BYTES),
                entry_bytes: self.bytes(keys::DEDUP_ENTRY_BYTES, l::DEDUP_ENTRY_BYTES) as u32,
                offload_answers: self
                    .opt_int(keys::DEDUP_OFFLOAD_ANSWERS, l::OFFLOAD_ANSWERS)
                    .map_or(crate::model::DEFAULT_OFFLOAD_ANSWERS, |n| n as u32),
            },
            timeouts: Timeouts {
                request_us: self.int(keys::TIMEOUTS_REQUEST_US, l::REQUEST_US),
                rto_min_us: self.int(keys::TIMEOUTS_RTO_MIN_US, l::RTO_US),
                rto_max_us: self.int(keys::TIMEOUTS_RTO_MAX_US, l::RTO_US),
                retry_budget: self.int(keys::TIMEOUTS_RETRY_BUDGET, l::RETRY_BUDGET) as u32,
            },
            va: VaSpace {
                bits: self.int(keys::VA_BITS, l::VA_BITS) as u32,
                vregion_bytes: self.bytes(keys::VA_VREGION_BYTES, l::VREGION_BYTES),
                max_pids: self.int(keys::VA_MAX_PIDS, l::MAX_PIDS) as u32,
            },
            sessions: Sessions {
                capacity: self.int(keys::SESSIONS_CAPACITY, l::SESSION_CAPACITY) as u32,
                dedup_per_session: self.int(keys::SESSIONS_DEDUP_PER_SESSION, l::DEDUP_PER_SESSION)
                    as u32,
                locks_per_session: self.int(keys::SESSIONS_LOCKS_PER_SESSION, l::LOCKS_PER_SESSION)
                    as u32,
                mem_quota_bytes: self.bytes(keys::SESSIONS_MEM_QUOTA_BYTES, l::MEM_QUOTA_BYTES),
            },
            pcie,
        }
    }

    /// Errors on the first key in `table` (at dotted `prefix`) that was never asked for.
    fn unknown_keys(&self, table: &Table, prefix: &str) -> Result<(), ConfigError> {
        let asked = self.asked.borrow();
        for (k, v) in table {
            let key = join(prefix, k);
            if asked.contains(&key) && !matches!(v, Value::Table(_)) {
                continue;
            }
            let below = format!("{key}.");
            let has_children = asked.iter().any(|a| a.starts_with(&below));
            match v {
                Value::Table(t) if has_children => self.unknown_keys(t, &key)?,
                _ if asked.contains(&key) => {}
                _ => {
                    let siblings: BTreeSet<&str> = asked
                        .iter()
                        .filter_map(|a| {
                            let rest = if prefix.is_empty() {
                                a.as_str()
                            } else {
                                a.strip_prefix(prefix)?.strip_prefix('.')?
                            };
                            rest.split('.').next()
                        })
                        .collect();
                    let mut known: Vec<&str> = siblings.into_iter().collect();
                    if prefix.is_empty() {
                        known.insert(0, keys::INHERIT);
                    }
                    return Err(ConfigError::UnknownKey {
                        file: self.file(&key),
                        key,
                        known: known.join(", "),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Parses `"4 MiB"`, `"4MiB"`, `"30 KiB"`, `"2 GiB"`, `"1 TiB"`, `"512 B"` or `"4096"`.
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s
        .find(|c: char| !c.is_ascii_digit() && c != '_')
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() {
        return None;
    }
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(mult)
}
