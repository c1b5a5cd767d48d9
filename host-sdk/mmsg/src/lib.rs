//! Batched datagram I/O on a `std::net::UdpSocket`.
//!
//! One `recvmmsg`/`sendmmsg` moves up to a batch of datagrams per system
//! call; on a loaded host the per-call cost (and the wake-up it often
//! implies) dominates a small datagram's path, so both the SDK's UDP
//! transport and the emulated board's server move packets in batches.
//! Elsewhere than Linux the same API loops over `recv_from`/`send_to`.
//!
//! The socket's own mode decides blocking: [`Wait::ForOne`] blocks (up to
//! the socket's read timeout) for the first datagram and then takes only
//! what is already waiting; [`Wait::No`] never blocks.

use std::io;
use std::net::{SocketAddr, UdpSocket};

/// How a receive waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Block for the first datagram as the socket's mode and read timeout
    /// say; then take only datagrams already queued.
    ForOne,
    /// Take only datagrams already queued (`WouldBlock` if none).
    No,
}

/// Receive buffers for up to `slots` datagrams of at most `slot_len` bytes.
#[derive(Debug)]
pub struct RecvBatch {
    data: Vec<u8>,
    slot_len: usize,
    lens: Vec<usize>,
    from: Vec<Option<SocketAddr>>,
    count: usize,
}

impl RecvBatch {
    /// Room for `slots` (≥ 1) datagrams of `slot_len` bytes each.
    pub fn new(slots: usize, slot_len: usize) -> RecvBatch {
        let slots = slots.max(1);
        RecvBatch {
            data: vec![0u8; slots * slot_len],
            slot_len,
            lens: vec![0; slots],
            from: vec![None; slots],
            count: 0,
        }
    }

    /// Datagrams held by the last [`RecvBatch::recv`].
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the last receive took nothing.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Datagram `i` of the last receive and its sender; `None` past the end
    /// or when the datagram was longer than a slot (it is dropped, as a
    /// too-long packet is, and its length cannot be trusted).
    pub fn get(&self, i: usize) -> Option<(&[u8], Option<SocketAddr>)> {
        if i >= self.count || self.lens[i] > self.slot_len {
            return None;
        }
        let start = i * self.slot_len;
        Some((&self.data[start..start + self.lens[i]], self.from[i]))
    }

    /// Receive up to a batch; returns how many datagrams came (≥ 1), or the
    /// socket's error (`WouldBlock`/`TimedOut` when nothing came in time).
    pub fn recv(&mut self, sock: &UdpSocket, wait: Wait) -> io::Result<usize> {
        self.count = 0;
        let n = imp::recv(sock, self, wait)?;
        self.count = n;
        Ok(n)
    }
}

/// Send `pkts` (each to its address, or to the connected peer when `None`)
/// with as few system calls as the platform allows. Returns how many were
/// handed to the kernel; stops at the first error after at least one was
/// sent, and returns the error if none was.
pub fn send_batch<P: AsRef<[u8]>>(
    sock: &UdpSocket,
    pkts: &[(P, Option<SocketAddr>)],
) -> io::Result<usize> {
    let mut sent = 0;
    while sent < pkts.len() {
        match imp::send(sock, &pkts[sent..]) {
            Ok(0) => break,
            Ok(n) => sent += n,
            Err(e) if sent == 0 => return Err(e),
            Err(_) => break,
        }
    }
    Ok(sent)
}

/// Datagrams queued for one batched send ([`send_batch`],
/// [`GsoSender::send`]), each a copy in a buffer kept for the next batch:
/// a client that sends a step's packets together allocates nothing per
/// packet once its queue has grown to its usual batch.
#[derive(Debug, Default)]
pub struct SendQueue {
    /// Buffers; the first `len` hold queued datagrams.
    pkts: Vec<(Vec<u8>, Option<SocketAddr>)>,
    len: usize,
}

impl SendQueue {
    /// An empty queue.
    pub fn new() -> SendQueue {
        SendQueue::default()
    }

    /// Queue a copy of `pkt`, to `to` (`None`: the connected peer).
    pub fn push(&mut self, pkt: &[u8], to: Option<SocketAddr>) {
        if self.len == self.pkts.len() {
            self.pkts.push((Vec::with_capacity(pkt.len()), to));
        }
        let (buf, dest) = &mut self.pkts[self.len];
        buf.clear();
        buf.extend_from_slice(pkt);
        *dest = to;
        self.len += 1;
    }

    /// The queued datagrams, oldest first, as the send functions take them.
    pub fn queued(&self) -> &[(Vec<u8>, Option<SocketAddr>)] {
        &self.pkts[..self.len]
    }

    /// How many datagrams are queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget the queued datagrams (their buffers stay for reuse).
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

/// Sends datagrams with UDP generic segmentation offload (GSO,
/// `UDP_SEGMENT`) where it can: consecutive datagrams to one destination,
/// all of one length but the last (which may be shorter), leave as one
/// message that the kernel cuts into those datagrams, so a multi-packet
/// answer crosses the sender's stack (and loopback) once instead of once
/// per packet. The receiver still gets the separate datagrams.
///
/// A kernel (or socket) that refuses `UDP_SEGMENT` is detected at the
/// first refused message: that send and every later one go datagram by
/// datagram ([`GsoSender::enabled`] turns false). Elsewhere than Linux it
/// always sends datagram by datagram.
#[derive(Debug)]
pub struct GsoSender {
    on: bool,
    gso_messages: u64,
}

impl Default for GsoSender {
    fn default() -> Self {
        GsoSender::new()
    }
}

impl GsoSender {
    /// Most datagrams in one segmented message (the kernel's
    /// `UDP_MAX_SEGMENTS` is 64 on older kernels).
    pub const MAX_SEGMENTS: usize = 64;
    /// Most bytes in one segmented message (a UDP datagram's largest
    /// payload over IPv4).
    pub const MAX_BYTES: usize = 65_507;

    /// A sender that tries GSO (on Linux).
    pub fn new() -> GsoSender {
        GsoSender {
            on: cfg!(target_os = "linux"),
            gso_messages: 0,
        }
    }

    /// A sender that never tries GSO (datagram by datagram, as
    /// [`send_batch`]).
    pub fn without_gso() -> GsoSender {
        GsoSender {
            on: false,
            gso_messages: 0,
        }
    }

    /// Whether sends still try GSO (false after the kernel refused it).
    pub fn enabled(&self) -> bool {
        self.on
    }

    /// Segmented messages the kernel has taken so far.
    pub fn gso_messages(&self) -> u64 {
        self.gso_messages
    }

    /// Send `pkts` as [`send_batch`] does (each to its address, or to the
    /// connected peer when `None`; returns how many datagrams were handed to
    /// the kernel, stopping at the first error after at least one), with
    /// runs of equal-length datagrams to one destination segmented.
    pub fn send<P: AsRef<[u8]>>(
        &mut self,
        sock: &UdpSocket,
        pkts: &[(P, Option<SocketAddr>)],
    ) -> io::Result<usize> {
        if !self.on {
            return send_batch(sock, pkts);
        }
        let mut sent = 0;
        while sent < pkts.len() {
            match imp::send_gso(sock, &pkts[sent..]) {
                Ok((0, _)) => break,
                Ok((n, gso)) => {
                    sent += n;
                    self.gso_messages += gso;
                }
                Err(imp::GsoError::Segmented { run, refused }) => {
                    // The first message, a segmented one, failed: its
                    // datagrams go one by one. A refusal of UDP_SEGMENT
                    // (this kernel, socket or route's MTU) holds for later
                    // sends too: datagram by datagram from now on.
                    if refused {
                        self.on = false;
                    }
                    match send_batch(sock, &pkts[sent..sent + run]) {
                        Ok(n) => sent += n,
                        Err(e) if sent == 0 => return Err(e),
                        Err(_) => break,
                    }
                    if !self.on {
                        return match send_batch(sock, &pkts[sent..]) {
                            Ok(n) => Ok(sent + n),
                            Err(_) if sent > 0 => Ok(sent),
                            Err(e) => Err(e),
                        };
                    }
                }
                Err(imp::GsoError::Io(e)) if sent == 0 => return Err(e),
                Err(imp::GsoError::Io(_)) => break,
            }
        }
        Ok(sent)
    }
}

/// Ask for a socket receive buffer of `bytes` (the kernel caps it at its
/// `rmem_max`) and return the size in force afterwards. A pipelined client
/// has many answers in flight; when its thread is descheduled they must fit
/// in the socket, or they are lost and cost a retransmission timeout.
pub fn grow_recv_buffer(sock: &UdpSocket, bytes: usize) -> io::Result<usize> {
    imp::grow_recv_buffer(sock, bytes)
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{RecvBatch, Wait};
    use std::io;
    use std::mem::{size_of, MaybeUninit};
    use std::net::{SocketAddr, SocketAddrV4, SocketAddrV6, UdpSocket};
    use std::os::fd::AsRawFd;

    /// Zero `s` and view it initialised.
    ///
    /// # Safety
    /// All-zero bytes must be a valid `T` (true of the plain C structs this is
    /// used for: sockaddr_storage, iovec, mmsghdr).
    unsafe fn zero<T>(s: &mut [MaybeUninit<T>]) -> &mut [T] {
        for e in s.iter_mut() {
            // SAFETY: the caller guarantees all-zero is a valid `T`.
            e.write(unsafe { std::mem::zeroed() });
        }
        // SAFETY: every element was just initialised; `MaybeUninit<T>` has
        // `T`'s layout.
        unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [T]) }
    }

    /// Most datagrams per system call (the kernel's UIO_MAXIOV bounds it).
    const MAX_BATCH: usize = 64;

    fn to_addr(s: &libc::sockaddr_storage) -> Option<SocketAddr> {
        match s.ss_family as libc::c_int {
            libc::AF_INET => {
                // SAFETY: the family says the storage holds a sockaddr_in,
                // and sockaddr_storage is large and aligned enough for it.
                let a = unsafe { &*(s as *const _ as *const libc::sockaddr_in) };
                Some(SocketAddr::V4(SocketAddrV4::new(
                    u32::from_be(a.sin_addr.s_addr).into(),
                    u16::from_be(a.sin_port),
                )))
            }
            libc::AF_INET6 => {
                // SAFETY: as above, for sockaddr_in6.
                let a = unsafe { &*(s as *const _ as *const libc::sockaddr_in6) };
                Some(SocketAddr::V6(SocketAddrV6::new(
                    a.sin6_addr.s6_addr.into(),
                    u16::from_be(a.sin6_port),
                    a.sin6_flowinfo,
                    a.sin6_scope_id,
                )))
            }
            _ => None,
        }
    }

    fn from_addr(a: &SocketAddr, s: &mut libc::sockaddr_storage) -> libc::socklen_t {
        match a {
            SocketAddr::V4(v4) => {
                // SAFETY: sockaddr_storage is large and aligned enough for a
                // sockaddr_in; every field is written below.
                let p = unsafe { &mut *(s as *mut _ as *mut libc::sockaddr_in) };
                p.sin_family = libc::AF_INET as libc::sa_family_t;
                p.sin_port = v4.port().to_be();
                p.sin_addr.s_addr = u32::from(*v4.ip()).to_be();
                size_of::<libc::sockaddr_in>() as libc::socklen_t
            }
            SocketAddr::V6(v6) => {
                // SAFETY: as above, for sockaddr_in6.
                let p = unsafe { &mut *(s as *mut _ as *mut libc::sockaddr_in6) };
                p.sin6_family = libc::AF_INET6 as libc::sa_family_t;
                p.sin6_port = v6.port().to_be();
                p.sin6_flowinfo = v6.flowinfo();
                p.sin6_addr.s6_addr = v6.ip().octets();
                p.sin6_scope_id = v6.scope_id();
                size_of::<libc::sockaddr_in6>() as libc::socklen_t
            }
        }
    }

    pub(super) fn grow_recv_buffer(sock: &UdpSocket, bytes: usize) -> io::Result<usize> {
        let want = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
        let len = size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: the option value is a c_int that lives for the call.
        let r = unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&want as *const libc::c_int).cast(),
                len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut got: libc::c_int = 0;
        let mut got_len = len;
        // SAFETY: `got` and `got_len` are valid for writes during the call.
        let r = unsafe {
            libc::getsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&mut got as *mut libc::c_int).cast(),
                &mut got_len,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(got.max(0) as usize)
    }

    pub(super) fn recv(sock: &UdpSocket, b: &mut RecvBatch, wait: Wait) -> io::Result<usize> {
        let slots = b.lens.len().min(MAX_BATCH);
        // Only the slots in use are zeroed: zeroing all MAX_BATCH entries
        // (13 KiB) cost a fifth of the board's thread in a profile of
        // `clio bench --only kv`.
        let mut names = [const { MaybeUninit::<libc::sockaddr_storage>::uninit() }; MAX_BATCH];
        let mut iov = [const { MaybeUninit::<libc::iovec>::uninit() }; MAX_BATCH];
        let mut hdrs = [const { MaybeUninit::<libc::mmsghdr>::uninit() }; MAX_BATCH];
        // SAFETY: all-zero is a valid value of these plain C structs.
        let (names, iov, hdrs) = unsafe {
            (
                zero(&mut names[..slots]),
                zero(&mut iov[..slots]),
                zero(&mut hdrs[..slots]),
            )
        };
        for i in 0..slots {
            let buf = &mut b.data[i * b.slot_len..(i + 1) * b.slot_len];
            iov[i] = libc::iovec {
                iov_base: buf.as_mut_ptr().cast(),
                iov_len: buf.len(),
            };
            hdrs[i].msg_hdr.msg_name = (&mut names[i] as *mut libc::sockaddr_storage).cast();
            hdrs[i].msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            hdrs[i].msg_hdr.msg_iov = &mut iov[i];
            hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        let flags = match wait {
            Wait::ForOne => libc::MSG_WAITFORONE,
            Wait::No => libc::MSG_DONTWAIT,
        };
        // SAFETY: `hdrs[..slots]` point at `names`, `iov` and disjoint
        // slices of `b.data`, all alive and unaliased for the call.
        let n = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                hdrs.as_mut_ptr(),
                slots as libc::c_uint,
                flags as _,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = n as usize;
        for i in 0..n {
            let h = &hdrs[i];
            // A truncated datagram reports a length past the slot: `get`
            // then refuses it.
            b.lens[i] = if h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                b.slot_len + 1
            } else {
                h.msg_len as usize
            };
            b.from[i] = if h.msg_hdr.msg_namelen > 0 {
                to_addr(&names[i])
            } else {
                None
            };
        }
        Ok(n)
    }

    /// Why a segmented send failed.
    pub(super) enum GsoError {
        /// The first message, `run` datagrams segmented, failed; `refused`:
        /// with an error that refuses `UDP_SEGMENT` itself (not this
        /// kernel, socket or route), so later ones would fail alike.
        Segmented { run: usize, refused: bool },
        /// Any other error.
        Io(io::Error),
    }

    /// Room for one `UDP_SEGMENT` control message (8-byte aligned).
    #[derive(Clone, Copy)]
    #[repr(C, align(8))]
    struct Cmsg([u8; 32]);

    /// Where the runs of `pkts` end: each run one destination, every
    /// datagram of one length but the last (not longer), within the
    /// kernel's segment and byte limits; at most `MAX_BATCH` runs and
    /// `MAX_BATCH` datagrams in all.
    pub(super) fn runs<P: AsRef<[u8]>>(pkts: &[(P, Option<SocketAddr>)], ends: &mut Vec<usize>) {
        ends.clear();
        let n = pkts.len().min(MAX_BATCH);
        let mut i = 0;
        while i < n {
            let (first, to) = (&pkts[i].0, pkts[i].1);
            let seg = first.as_ref().len();
            let mut j = i + 1;
            let mut bytes = seg;
            while seg > 0
                && j < n
                && j - i < super::GsoSender::MAX_SEGMENTS
                && pkts[j].1 == to
                && pkts[j - 1].0.as_ref().len() == seg
            {
                let len = pkts[j].0.as_ref().len();
                if len == 0 || len > seg || bytes + len > super::GsoSender::MAX_BYTES {
                    break;
                }
                bytes += len;
                j += 1;
            }
            ends.push(j);
            i = j;
        }
    }

    /// One `sendmmsg` of `pkts`' runs (see [`runs`]), each run of more than
    /// one datagram as one message with a `UDP_SEGMENT` control message.
    /// Returns the datagrams handed to the kernel and the segmented
    /// messages among them.
    pub(super) fn send_gso<P: AsRef<[u8]>>(
        sock: &UdpSocket,
        pkts: &[(P, Option<SocketAddr>)],
    ) -> Result<(usize, u64), GsoError> {
        let mut ends = Vec::with_capacity(MAX_BATCH);
        runs(pkts, &mut ends);
        let msgs = ends.len();
        let datagrams = ends.last().copied().unwrap_or(0);
        let mut names = [const { MaybeUninit::<libc::sockaddr_storage>::uninit() }; MAX_BATCH];
        let mut iov = [const { MaybeUninit::<libc::iovec>::uninit() }; MAX_BATCH];
        let mut hdrs = [const { MaybeUninit::<libc::mmsghdr>::uninit() }; MAX_BATCH];
        let mut cmsgs = [Cmsg([0; 32]); MAX_BATCH];
        // SAFETY: all-zero is a valid value of these plain C structs.
        let (names, iov, hdrs) = unsafe {
            (
                zero(&mut names[..msgs]),
                zero(&mut iov[..datagrams]),
                zero(&mut hdrs[..msgs]),
            )
        };
        for (i, (data, _)) in pkts[..datagrams].iter().enumerate() {
            let data = data.as_ref();
            iov[i] = libc::iovec {
                // The kernel only reads through this pointer.
                iov_base: data.as_ptr() as *mut libc::c_void,
                iov_len: data.len(),
            };
        }
        let mut start = 0;
        for (m, &end) in ends.iter().enumerate() {
            let h = &mut hdrs[m].msg_hdr;
            if let Some(a) = &pkts[start].1 {
                h.msg_namelen = from_addr(a, &mut names[m]);
                h.msg_name = (&mut names[m] as *mut libc::sockaddr_storage).cast();
            }
            h.msg_iov = &mut iov[start];
            h.msg_iovlen = end - start;
            if end - start > 1 {
                let seg = pkts[start].0.as_ref().len() as u16;
                let space = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
                h.msg_control = cmsgs[m].0.as_mut_ptr().cast();
                h.msg_controllen = space as _;
                // SAFETY: `msg_control` points at `space` (≤ 32) bytes,
                // 8-byte aligned, so the first header and its data fit.
                unsafe {
                    let c = libc::CMSG_FIRSTHDR(h);
                    (*c).cmsg_level = libc::SOL_UDP;
                    (*c).cmsg_type = libc::UDP_SEGMENT;
                    (*c).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
                    std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg);
                }
            }
            start = end;
        }
        // SAFETY: `hdrs[..msgs]` point at `names`, `iov`, `cmsgs` and the
        // caller's packets, all alive for the call; the kernel does not
        // write them.
        let r =
            unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), msgs as libc::c_uint, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            // EMSGSIZE: a segment longer than the route's MTU allows (the
            // datagrams alone may still go, fragmented).
            let refused = matches!(
                e.raw_os_error(),
                Some(
                    libc::EINVAL
                        | libc::EIO
                        | libc::ENOPROTOOPT
                        | libc::EOPNOTSUPP
                        | libc::EMSGSIZE
                )
            );
            return Err(if ends[0] > 1 {
                GsoError::Segmented {
                    run: ends[0],
                    refused,
                }
            } else {
                GsoError::Io(e)
            });
        }
        let r = r as usize;
        let sent = if r == 0 { 0 } else { ends[r - 1] };
        let mut gso = 0;
        let mut start = 0;
        for &end in &ends[..r] {
            gso += u64::from(end - start > 1);
            start = end;
        }
        Ok((sent, gso))
    }

    pub(super) fn send<P: AsRef<[u8]>>(
        sock: &UdpSocket,
        pkts: &[(P, Option<SocketAddr>)],
    ) -> io::Result<usize> {
        let n = pkts.len().min(MAX_BATCH);
        let mut names = [const { MaybeUninit::<libc::sockaddr_storage>::uninit() }; MAX_BATCH];
        let mut iov = [const { MaybeUninit::<libc::iovec>::uninit() }; MAX_BATCH];
        let mut hdrs = [const { MaybeUninit::<libc::mmsghdr>::uninit() }; MAX_BATCH];
        // SAFETY: all-zero is a valid value of these plain C structs.
        let (names, iov, hdrs) = unsafe {
            (
                zero(&mut names[..n]),
                zero(&mut iov[..n]),
                zero(&mut hdrs[..n]),
            )
        };
        for (i, (data, to)) in pkts[..n].iter().enumerate() {
            let data = data.as_ref();
            iov[i] = libc::iovec {
                // The kernel only reads through this pointer.
                iov_base: data.as_ptr() as *mut libc::c_void,
                iov_len: data.len(),
            };
            if let Some(a) = to {
                hdrs[i].msg_hdr.msg_namelen = from_addr(a, &mut names[i]);
                hdrs[i].msg_hdr.msg_name = (&mut names[i] as *mut libc::sockaddr_storage).cast();
            }
            hdrs[i].msg_hdr.msg_iov = &mut iov[i];
            hdrs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: `hdrs[..n]` point at `names`, `iov` and the caller's
        // packets, all alive for the call; the kernel does not write them.
        let r =
            unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), n as libc::c_uint, 0) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(r as usize)
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{RecvBatch, Wait};
    use std::io;
    use std::net::{SocketAddr, UdpSocket};

    /// Why a segmented send failed (never segmented on this platform).
    pub(super) enum GsoError {
        /// Never made here.
        #[allow(dead_code)]
        Segmented { run: usize, refused: bool },
        /// Any error.
        Io(io::Error),
    }

    pub(super) fn send_gso<P: AsRef<[u8]>>(
        sock: &UdpSocket,
        pkts: &[(P, Option<SocketAddr>)],
    ) -> Result<(usize, u64), GsoError> {
        send(sock, pkts).map(|n| (n, 0)).map_err(GsoError::Io)
    }

    pub(super) fn grow_recv_buffer(_sock: &UdpSocket, _bytes: usize) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "receive buffer sizing is implemented for Linux only",
        ))
    }

    pub(super) fn recv(sock: &UdpSocket, b: &mut RecvBatch, wait: Wait) -> io::Result<usize> {
        // One datagram per call: the portable API has no batch receive.
        if wait == Wait::No {
            sock.set_nonblocking(true)?;
        }
        let r = sock.recv_from(&mut b.data[..b.slot_len]);
        if wait == Wait::No {
            sock.set_nonblocking(false)?;
        }
        let (n, from) = r?;
        b.lens[0] = n;
        b.from[0] = Some(from);
        Ok(1)
    }

    pub(super) fn send<P: AsRef<[u8]>>(
        sock: &UdpSocket,
        pkts: &[(P, Option<SocketAddr>)],
    ) -> io::Result<usize> {
        let (p, to) = &pkts[0];
        match to {
            Some(a) => sock.send_to(p.as_ref(), a)?,
            None => sock.send(p.as_ref())?,
        };
        Ok(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn pair() -> (UdpSocket, UdpSocket) {
        let a = UdpSocket::bind("127.0.0.1:0").unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").unwrap();
        b.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        (a, b)
    }

    #[test]
    fn batch_round_trip_with_addresses() {
        let (a, b) = pair();
        let to = Some(b.local_addr().unwrap());
        let pkts: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; 1 + i as usize]).collect();
        let batch: Vec<(&Vec<u8>, Option<SocketAddr>)> = pkts.iter().map(|p| (p, to)).collect();
        assert_eq!(send_batch(&a, &batch).unwrap(), 100);
        let mut batch = RecvBatch::new(16, 256);
        let mut got = Vec::new();
        while got.len() < 100 {
            let n = batch.recv(&b, Wait::ForOne).unwrap();
            assert!((1..=16).contains(&n));
            for i in 0..n {
                let (d, from) = batch.get(i).unwrap();
                assert_eq!(from, Some(a.local_addr().unwrap()));
                got.push(d.to_vec());
            }
        }
        assert_eq!(got, pkts);
        let e = batch.recv(&b, Wait::No).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
    }

    #[test]
    fn too_long_datagrams_are_refused_and_connected_sends_work() {
        let (a, b) = pair();
        a.connect(b.local_addr().unwrap()).unwrap();
        let long = [7u8; 300];
        let short = [1u8, 2, 3];
        send_batch(&a, &[(&long[..], None), (&short[..], None)]).unwrap();
        let mut batch = RecvBatch::new(4, 64);
        let mut seen = Vec::new();
        while seen.len() < 2 {
            let n = batch.recv(&b, Wait::ForOne).unwrap();
            for i in 0..n {
                seen.push(batch.get(i).map(|(d, _)| d.to_vec()));
            }
        }
        assert_eq!(seen, vec![None, Some(short.to_vec())]);
        assert!(batch.get(9).is_none());
    }

    #[test]
    fn batch_boundaries() {
        // Sends of exactly one batch (64), one past it, and one datagram;
        // receives into one slot, into more slots than are queued, and
        // into exactly the kernel's batch.
        let (a, b) = pair();
        let to = Some(b.local_addr().unwrap());
        let from = Some(a.local_addr().unwrap());
        for (count, slots) in [(64usize, 64usize), (65, 1), (1, 64), (3, 2)] {
            let pkts: Vec<Vec<u8>> = (0..count)
                .map(|i| (i as u32).to_le_bytes().to_vec())
                .collect();
            let batch: Vec<(&Vec<u8>, Option<SocketAddr>)> = pkts.iter().map(|p| (p, to)).collect();
            assert_eq!(send_batch(&a, &batch).unwrap(), count);
            let mut rb = RecvBatch::new(slots, 16);
            let mut got = Vec::new();
            while got.len() < count {
                let n = rb.recv(&b, Wait::ForOne).unwrap();
                assert!((1..=slots).contains(&n), "{n} of {slots} slots");
                assert!(rb.get(n).is_none());
                for i in 0..n {
                    let (d, f) = rb.get(i).unwrap();
                    assert_eq!(f, from);
                    got.push(d.to_vec());
                }
            }
            assert_eq!(got, pkts, "{count} datagrams into {slots} slots");
        }
    }

    /// Receive `count` datagrams on `b`, in order.
    fn take(b: &UdpSocket, count: usize) -> Vec<Vec<u8>> {
        let mut rb = RecvBatch::new(16, 70_000);
        let mut got = Vec::new();
        while got.len() < count {
            let n = rb.recv(b, Wait::ForOne).unwrap();
            for i in 0..n {
                got.push(rb.get(i).unwrap().0.to_vec());
            }
        }
        got
    }

    /// Answers as a board sends them: runs of full packets and a shorter
    /// last one, to two destinations, and lone packets in between.
    fn answers() -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        for i in 0..4u8 {
            v.push(vec![i; 8000]);
        }
        v.push(vec![9; 1234]);
        v.push(vec![10; 300]);
        for i in 0..3u8 {
            v.push(vec![20 + i; 1000]);
        }
        v
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn runs_keep_one_destination_one_length_and_the_limits() {
        let a: Option<SocketAddr> = Some("127.0.0.1:1".parse().unwrap());
        let b: Option<SocketAddr> = Some("127.0.0.1:2".parse().unwrap());
        let p = |len: usize, to| (vec![0u8; len], to);
        let mut ends = Vec::new();
        // Equal lengths and a shorter last; a longer one starts a run; a
        // new destination starts a run; an empty datagram stands alone.
        let pkts = [
            p(100, a),
            p(100, a),
            p(40, a),
            p(100, a),
            p(200, a),
            p(200, b),
            p(0, b),
            p(5, b),
        ];
        imp::runs(&pkts, &mut ends);
        assert_eq!(ends, [3, 4, 5, 6, 7, 8]);
        // At most MAX_SEGMENTS datagrams and MAX_BYTES bytes per run.
        let many: Vec<_> = (0..64).map(|_| p(10, a)).collect();
        imp::runs(&many, &mut ends);
        assert_eq!(ends, [64]);
        let big: Vec<_> = (0..9).map(|_| p(8916, a)).collect();
        imp::runs(&big, &mut ends);
        assert_eq!(ends, [7, 9], "7 × 8916 B fit 65 507 B, 8 do not");
    }

    #[test]
    fn gso_sends_arrive_as_separate_datagrams() {
        let (a, b) = pair();
        let to = Some(b.local_addr().unwrap());
        let pkts: Vec<(Vec<u8>, Option<SocketAddr>)> =
            answers().into_iter().map(|p| (p, to)).collect();
        let mut g = GsoSender::new();
        assert_eq!(g.send(&a, &pkts).unwrap(), pkts.len());
        let want: Vec<Vec<u8>> = pkts.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(take(&b, want.len()), want);
        if cfg!(target_os = "linux") {
            assert!(g.enabled(), "this kernel took UDP_SEGMENT");
            assert_eq!(g.gso_messages(), 2, "the two runs went segmented");
        }
    }

    /// `SO_NO_CHECK` (send without UDP checksums), which the kernel
    /// refuses to combine with `UDP_SEGMENT` (`EINVAL`).
    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    fn no_checksums(s: &UdpSocket) {
        use std::os::fd::AsRawFd;
        const SO_NO_CHECK: libc::c_int = 11;
        let one: libc::c_int = 1;
        // SAFETY: the option value is a c_int that lives for the call.
        let r = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                SO_NO_CHECK,
                (&one as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        assert_eq!(r, 0, "{}", io::Error::last_os_error());
    }

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    #[test]
    fn a_refused_gso_falls_back_to_one_datagram_each() {
        let (a, b) = pair();
        no_checksums(&a);
        let to = Some(b.local_addr().unwrap());
        let pkts: Vec<(Vec<u8>, Option<SocketAddr>)> =
            answers().into_iter().map(|p| (p, to)).collect();
        let mut g = GsoSender::new();
        assert!(g.enabled());
        // The kernel refuses the first segmented message: everything is
        // still sent, datagram by datagram (that run's too), and GSO stays
        // off.
        assert_eq!(g.send(&a, &pkts).unwrap(), pkts.len());
        assert!(!g.enabled(), "the refusal turned GSO off");
        assert_eq!(g.gso_messages(), 0);
        assert_eq!(g.send(&a, &pkts).unwrap(), pkts.len());
        let want: Vec<Vec<u8>> = pkts.iter().map(|(p, _)| p.clone()).collect();
        let got = take(&b, 2 * want.len());
        assert_eq!(&got[..want.len()], &want[..]);
        assert_eq!(&got[want.len()..], &want[..]);
    }

    #[test]
    fn send_queue_reuses_its_buffers() {
        let (a, b) = pair();
        let to = Some(b.local_addr().unwrap());
        let mut q = SendQueue::new();
        assert!(q.is_empty());
        q.push(b"first, long", to);
        q.push(b"two", None);
        assert_eq!(q.len(), 2);
        assert_eq!(q.queued()[0], (b"first, long".to_vec(), to));
        assert_eq!(q.queued()[1], (b"two".to_vec(), None));
        let first = q.queued()[0].0.as_ptr();
        q.clear();
        assert!(q.is_empty() && q.queued().is_empty());
        // The next batch takes the old buffers, with their new contents
        // and destinations only.
        q.push(b"x", to);
        assert_eq!(q.queued(), &[(b"x".to_vec(), to)]);
        assert_eq!(q.queued()[0].0.as_ptr(), first, "buffer reused");
        q.push(b"y", to);
        assert_eq!(send_batch(&a, q.queued()).unwrap(), 2);
        assert_eq!(take(&b, 2), [b"x".to_vec(), b"y".to_vec()]);
    }

    #[test]
    fn receive_buffer_grows() {
        let (_a, b) = pair();
        let small = grow_recv_buffer(&b, 4096).unwrap();
        let big = grow_recv_buffer(&b, 1 << 20).unwrap();
        assert!(big > small, "{small} -> {big}");
    }

    #[test]
    fn timeout_reports_would_block_or_timed_out() {
        let (_a, b) = pair();
        b.set_read_timeout(Some(Duration::from_millis(5))).unwrap();
        let mut batch = RecvBatch::new(4, 64);
        let e = batch.recv(&b, Wait::ForOne).unwrap_err();
        assert!(matches!(
            e.kind(),
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
        ));
        assert!(batch.is_empty());
    }
}
