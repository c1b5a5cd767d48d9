//! Typed layer over the `u64` calls: [`RemoteAddr`], [`RemoteAlloc`],
//! plain-old-data reads and writes (`bytemuck::Pod` types), lock scopes and
//! simpler polling. Everything here is a thin wrapper of the byte APIs of
//! [`Session`] and [`AsyncSession`], which stay the low level (and the
//! zero-copy path: [`Session::rread`] into your buffer).

use std::fmt;
use std::future::Future;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::Add;

use bytemuck::{AnyBitPattern, NoUninit};

use crate::backend::{Transport, UdpTransport};
use crate::proto::{Allocation, Completion};
use crate::{AsyncSession, ClientConfig, ClioError, Handle, OpKind, Session};

/// A virtual address in the remote address space of a session.
///
/// A newtype over the `u64` the low-level calls take (`addr.get()` or
/// `u64::from(addr)` gives it back), so a remote address cannot be mixed
/// up with a length or a local pointer. `addr + n` is `n` bytes further on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RemoteAddr(pub u64);

impl RemoteAddr {
    /// The raw VA.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl Add<u64> for RemoteAddr {
    type Output = RemoteAddr;
    /// `bytes` further on. Wrapping: a range past the end of the address
    /// space is refused by the board (`Unmapped`), not by a panic here.
    fn add(self, bytes: u64) -> RemoteAddr {
        RemoteAddr(self.0.wrapping_add(bytes))
    }
}

impl From<RemoteAddr> for u64 {
    fn from(a: RemoteAddr) -> u64 {
        a.0
    }
}

impl From<u64> for RemoteAddr {
    fn from(va: u64) -> RemoteAddr {
        RemoteAddr(va)
    }
}

impl fmt::Display for RemoteAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A remote allocation, owned: give it back with [`Session::free`] or
/// [`AsyncSession::free`], which take it by value so it cannot be used
/// after it was freed.
///
/// It is **not** freed on drop: freeing is a round trip to the board and
/// may fail, and a drop can neither wait nor report (nor reach a session
/// it does not borrow). A dropped allocation stays allocated until the
/// address space closes (its last session is closed or dropped), so it
/// is `#[must_use]`. [`RemoteAlloc::into_raw`] and
/// [`RemoteAlloc::from_raw`] convert to and from the low-level
/// [`Allocation`] (for [`Session::rfree`]).
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a remote allocation is not freed on drop; free it with Session::free"]
pub struct RemoteAlloc {
    raw: Allocation,
}

impl RemoteAlloc {
    /// Take ownership of a low-level allocation.
    pub fn from_raw(raw: Allocation) -> RemoteAlloc {
        RemoteAlloc { raw }
    }

    /// Give up ownership (nothing is freed).
    pub fn into_raw(self) -> Allocation {
        self.raw
    }

    /// Its first byte.
    pub fn addr(&self) -> RemoteAddr {
        RemoteAddr(self.raw.va)
    }

    /// Bytes reserved (whole pages: at least what was asked for).
    pub fn size(&self) -> u64 {
        self.raw.size
    }

    /// The address `offset` bytes in. Panics if `offset` is not inside the
    /// allocation (a local bug, caught before anything is sent).
    pub fn at(&self, offset: u64) -> RemoteAddr {
        assert!(
            offset < self.raw.size,
            "offset {offset} outside the {}-byte allocation at {:#x}",
            self.raw.size,
            self.raw.va
        );
        self.addr() + offset
    }

    /// The address of element `i` of an array of `P` that starts at the
    /// allocation's first byte. Panics if the element does not fit.
    pub fn index<P>(&self, i: u64) -> RemoteAddr {
        let n = std::mem::size_of::<P>() as u64;
        let end = i.checked_add(1).and_then(|k| k.checked_mul(n));
        assert!(
            end.is_some_and(|e| e <= self.raw.size),
            "element {i} of {n} bytes outside the {}-byte allocation at {:#x}",
            self.raw.size,
            self.raw.va
        );
        self.addr() + i * n
    }
}

fn resolve(addr: impl ToSocketAddrs) -> Result<SocketAddr, ClioError> {
    addr.to_socket_addrs()
        .map_err(|e| ClioError::Transport(format!("resolve board address: {e}")))?
        .next()
        .ok_or_else(|| ClioError::Transport("board address resolves to nothing".into()))
}

/// Open a blocking session with default settings to the board at `addr`
/// (`"127.0.0.1:47700"`, `("board7", 47700)`, a [`SocketAddr`]; the first
/// address a name resolves to is used). The same as [`Session::connect`].
pub fn connect(addr: impl ToSocketAddrs) -> Result<Session<UdpTransport>, ClioError> {
    Session::connect(addr)
}

impl Session<UdpTransport> {
    /// Open a session with [`ClientConfig::default`] to the board at
    /// `addr` (any [`ToSocketAddrs`]; the first resolved address is used):
    /// [`Session::open`] after name resolution.
    pub fn connect(addr: impl ToSocketAddrs) -> Result<Self, ClioError> {
        Session::open(resolve(addr)?, ClientConfig::default())
    }

    /// [`Session::connect`] with settings of your own.
    pub fn connect_with(addr: impl ToSocketAddrs, cfg: ClientConfig) -> Result<Self, ClioError> {
        Session::open(resolve(addr)?, cfg)
    }
}

impl crate::Client {
    /// A client with [`ClientConfig::default`] of the board at `addr` (any
    /// [`ToSocketAddrs`]): [`crate::Client::new`] after name resolution.
    pub fn connect(addr: impl ToSocketAddrs) -> Result<Self, ClioError> {
        crate::Client::new(resolve(addr)?, ClientConfig::default())
    }

    /// [`crate::Client::connect`] with settings of your own.
    pub fn connect_with(addr: impl ToSocketAddrs, cfg: ClientConfig) -> Result<Self, ClioError> {
        crate::Client::new(resolve(addr)?, cfg)
    }
}

fn pod_len<P>() -> Result<usize, ClioError> {
    match std::mem::size_of::<P>() {
        0 => Err(ClioError::InvalidArgument {
            what: "P",
            reason: "a zero-sized type has no bytes to transfer",
        }),
        n => Ok(n),
    }
}

fn pods_from_bytes<P: AnyBitPattern>(bytes: &[u8]) -> Vec<P> {
    // `pod_read_unaligned` because the byte buffer need not be aligned for P.
    bytes
        .chunks_exact(std::mem::size_of::<P>())
        .map(bytemuck::pod_read_unaligned)
        .collect()
}

impl<T: Transport> Session<T> {
    /// Allocate `size` bytes, readable and writable
    /// ([`crate::perms::RW`]); see [`Session::alloc_with`].
    pub fn alloc(&mut self, size: u64) -> Result<RemoteAlloc, ClioError> {
        self.alloc_with(size, crate::perms::RW)
    }

    /// Allocate `size` bytes with [`crate::perms`] bits, owned (free it
    /// with [`Session::free`]). Too large for the board ever:
    /// [`ClioError::TooLarge`]; past the address space's quota:
    /// [`ClioError::OverQuota`]; the board full: [`ClioError::OutOfMemory`].
    pub fn alloc_with(&mut self, size: u64, perms: u8) -> Result<RemoteAlloc, ClioError> {
        self.ralloc(size, perms).map(RemoteAlloc::from_raw)
    }

    /// Free an allocation (after every earlier call that touches it).
    pub fn free(&mut self, a: RemoteAlloc) -> Result<(), ClioError> {
        self.rfree(a.raw.va, a.raw.size)
    }

    /// Read `len` bytes at `va` into a new `Vec` (the same convention as
    /// [`AsyncSession::rread`]; [`Session::rread`] fills your buffer).
    pub fn rread_vec(&mut self, va: u64, len: u64) -> Result<Vec<u8>, ClioError> {
        let n = usize::try_from(len).map_err(|_| ClioError::InvalidArgument {
            what: "len",
            reason: "does not fit this machine's memory",
        })?;
        let mut buf = vec![0u8; n];
        self.rread(va, &mut buf)?;
        Ok(buf)
    }

    /// Read one `P` at `at` (its bytes as stored, no alignment needed).
    pub fn read_pod<P: AnyBitPattern>(&mut self, at: RemoteAddr) -> Result<P, ClioError> {
        let mut buf = vec![0u8; pod_len::<P>()?];
        self.rread(at.0, &mut buf)?;
        Ok(bytemuck::pod_read_unaligned(&buf))
    }

    /// Write one `P` at `at` (its in-memory bytes, so little-endian
    /// numbers on the usual hosts; padding is ruled out by `NoUninit`).
    pub fn write_pod<P: NoUninit>(&mut self, at: RemoteAddr, value: &P) -> Result<(), ClioError> {
        pod_len::<P>()?;
        self.rwrite(at.0, bytemuck::bytes_of(value))
    }

    /// Read `n` consecutive `P`s starting at `at` (one call, split into
    /// requests as [`Session::rread`] does).
    pub fn read_pods<P: AnyBitPattern>(
        &mut self,
        at: RemoteAddr,
        n: usize,
    ) -> Result<Vec<P>, ClioError> {
        let len = pod_len::<P>()?
            .checked_mul(n)
            .ok_or(ClioError::InvalidArgument {
                what: "n",
                reason: "too many elements",
            })?;
        let bytes = self.rread_vec(at.0, len as u64)?;
        Ok(pods_from_bytes(&bytes))
    }

    /// Write the slice `values` at `at` (one call).
    pub fn write_pods<P: NoUninit>(
        &mut self,
        at: RemoteAddr,
        values: &[P],
    ) -> Result<(), ClioError> {
        pod_len::<P>()?;
        self.rwrite(at.0, bytemuck::cast_slice(values))
    }

    /// Run `f` holding the lock word at `lock`: [`Session::rlock`], `f`,
    /// then [`Session::runlock`] whether `f` succeeded or not (the unlock
    /// is ordered after everything `f` did). `f`'s error comes first.
    pub fn with_lock<R>(
        &mut self,
        lock: RemoteAddr,
        f: impl FnOnce(&mut Self) -> Result<R, ClioError>,
    ) -> Result<R, ClioError> {
        self.rlock(lock.0)?;
        let r = f(self);
        let u = self.runlock(lock.0);
        let r = r?;
        u.map(|()| r)
    }

    /// Wait for one handle and return its result (no nesting, unlike
    /// [`Session::rpoll`]).
    pub fn rwait(&mut self, h: Handle) -> Result<Completion, ClioError> {
        let mut r = self.rpoll(std::slice::from_ref(&h))?;
        r.pop().unwrap_or(Err(ClioError::UnknownOp))
    }

    /// Wait for every handle; their completions in order, or the first
    /// error (every handle is still waited for, so none is left behind).
    pub fn rpoll_all(&mut self, handles: &[Handle]) -> Result<Vec<Completion>, ClioError> {
        self.rpoll(handles)?.into_iter().collect()
    }
}

impl AsyncSession {
    /// Open a session with [`ClientConfig::default`] to the board at
    /// `addr` (any `tokio::net::ToSocketAddrs`; the first resolved
    /// address is used): [`AsyncSession::open`] after name resolution.
    ///
    /// Not eager, unlike the calls of an open session: an ordinary `async`
    /// function that does nothing until awaited.
    pub async fn connect(addr: impl tokio::net::ToSocketAddrs) -> Result<AsyncSession, ClioError> {
        let board = tokio::net::lookup_host(addr)
            .await
            .map_err(|e| ClioError::Transport(format!("resolve board address: {e}")))?
            .next()
            .ok_or_else(|| ClioError::Transport("board address resolves to nothing".into()))?;
        AsyncSession::open(board, ClientConfig::default()).await
    }

    /// Allocate `size` bytes read-write, owned (free with
    /// [`AsyncSession::free`]).
    ///
    /// Eager: submitted when called, not when first polled; dropping the
    /// future does not cancel the allocation (its result is then lost).
    pub fn alloc(&self, size: u64) -> impl Future<Output = Result<RemoteAlloc, ClioError>> {
        let f = self.ralloc(size, crate::perms::RW);
        async move { f.await.map(RemoteAlloc::from_raw) }
    }

    /// Free an allocation.
    ///
    /// Eager: submitted when called; dropping the future still frees.
    pub fn free(&self, a: RemoteAlloc) -> impl Future<Output = Result<(), ClioError>> {
        self.rfree(a.raw.va, a.raw.size)
    }

    /// Read `buf.len()` bytes at `va` into `buf` (the convention of the
    /// blocking [`Session::rread`]; [`AsyncSession::rread`] returns a
    /// `Vec`).
    ///
    /// Eager: the read is submitted when called; the future copies the
    /// data into `buf` when awaited. Dropping it does not cancel the read
    /// (`buf` is then left as it was).
    pub fn rread_into<'b>(
        &self,
        va: u64,
        buf: &'b mut [u8],
    ) -> impl Future<Output = Result<(), ClioError>> + 'b {
        let f = self.rread(va, buf.len() as u64);
        async move {
            let d = f.await?;
            if d.len() != buf.len() {
                return Err(ClioError::Protocol {
                    op: OpKind::Read,
                    field: "clio.total_len",
                });
            }
            buf.copy_from_slice(&d);
            Ok(())
        }
    }

    /// Read one `P` at `at`.
    ///
    /// Eager: submitted when called, not when first polled.
    pub fn read_pod<P: AnyBitPattern>(
        &self,
        at: RemoteAddr,
    ) -> impl Future<Output = Result<P, ClioError>> {
        let f = pod_len::<P>().map(|n| self.rread(at.0, n as u64));
        async move { Ok(bytemuck::pod_read_unaligned(&f?.await?)) }
    }

    /// Write one `P` at `at` (copied at the call).
    ///
    /// Eager: submitted when called; a dropped, never-awaited future still
    /// writes.
    pub fn write_pod<P: NoUninit>(
        &self,
        at: RemoteAddr,
        value: &P,
    ) -> impl Future<Output = Result<(), ClioError>> {
        let f = pod_len::<P>().map(|_| self.rwrite(at.0, bytemuck::bytes_of(value)));
        async move { f?.await }
    }

    /// Read `n` consecutive `P`s at `at`.
    ///
    /// Eager: submitted when called, not when first polled.
    pub fn read_pods<P: AnyBitPattern>(
        &self,
        at: RemoteAddr,
        n: usize,
    ) -> impl Future<Output = Result<Vec<P>, ClioError>> {
        let len = pod_len::<P>().and_then(|s| {
            s.checked_mul(n).ok_or(ClioError::InvalidArgument {
                what: "n",
                reason: "too many elements",
            })
        });
        let f = len.map(|l| self.rread(at.0, l as u64));
        async move { Ok(pods_from_bytes(&f?.await?)) }
    }

    /// Write the slice `values` at `at` (copied at the call).
    ///
    /// Eager: submitted when called; a dropped, never-awaited future still
    /// writes.
    pub fn write_pods<P: NoUninit>(
        &self,
        at: RemoteAddr,
        values: &[P],
    ) -> impl Future<Output = Result<(), ClioError>> {
        let f = pod_len::<P>().map(|_| self.rwrite(at.0, bytemuck::cast_slice(values)));
        async move { f?.await }
    }
}
