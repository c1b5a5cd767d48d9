//! The TCP side of the peer benchmarks (`peer`: memcached; `kv`: memcached
//! and redis): a peer server process on a free loopback port, and a
//! line-oriented client connection (both peers' protocols are lines plus
//! counted byte blocks).

use std::io::{BufRead, BufReader, Read};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long a peer server may take to accept connections.
const START_DEADLINE: Duration = Duration::from_secs(10);

/// A peer server process of ours; killed when dropped.
pub(super) struct Server {
    child: Child,
    /// Where it listens.
    pub(super) addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary `bin` on PATH, if it is installed.
pub(super) fn find(bin: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(bin))
        .find(|p| p.is_file())
}

impl Server {
    /// Start `bin` with `args(port)` on a free loopback port and wait until
    /// it accepts a connection.
    pub(super) fn start(
        bin: &std::path::Path,
        args: &dyn Fn(u16) -> Vec<String>,
    ) -> Result<Server> {
        // Learn a free port from the kernel, then hand it to the server.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("finding a free TCP port")?
            .port();
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let child = Command::new(bin)
            .args(args(port))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let mut s = Server { child, addr };
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if let Some(status) = s.child.try_wait()? {
                let mut err = String::new();
                if let Some(mut e) = s.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                bail!(
                    "{} exited at start ({status}): {}",
                    bin.display(),
                    err.trim()
                );
            }
            match TcpStream::connect_timeout(&addr, Duration::from_millis(100)) {
                Ok(_) => return Ok(s),
                Err(e) if Instant::now() >= deadline => {
                    bail!(
                        "{} did not accept on {addr} within {START_DEADLINE:?}: {e}",
                        bin.display()
                    )
                }
                // Not listening yet: the refused connect is the wait.
                Err(_) => std::thread::yield_now(),
            }
        }
    }
}

/// One TCP connection to a peer speaking lines and counted byte blocks.
pub(super) struct LineClient {
    /// The writing half.
    pub(super) w: TcpStream,
    r: BufReader<TcpStream>,
    /// The peer's name in errors (`memcached`).
    peer: &'static str,
    line: String,
    /// The last block [`LineClient::read_bytes`] read.
    pub(super) buf: Vec<u8>,
    /// Requests being batched before one write.
    pub(super) out: Vec<u8>,
}

impl LineClient {
    /// Connects to `peer` at `addr` (no Nagle delay); a read waits at most
    /// `read_timeout`.
    pub(super) fn connect(
        peer: &'static str,
        addr: SocketAddr,
        read_timeout: Duration,
    ) -> Result<LineClient> {
        let s = TcpStream::connect(addr).with_context(|| format!("connecting to {peer} {addr}"))?;
        s.set_nodelay(true)?;
        s.set_read_timeout(Some(read_timeout))?;
        Ok(LineClient {
            r: BufReader::new(s.try_clone()?),
            w: s,
            peer,
            line: String::new(),
            buf: Vec::new(),
            out: Vec::new(),
        })
    }

    /// The next line, without its line end.
    pub(super) fn read_line(&mut self) -> Result<&str> {
        self.line.clear();
        if self.r.read_line(&mut self.line)? == 0 {
            bail!("{} closed the connection", self.peer);
        }
        Ok(self.line.trim_end())
    }

    /// The next `n` bytes, into [`LineClient::buf`].
    pub(super) fn read_bytes(&mut self, n: usize) -> Result<()> {
        self.buf.resize(n, 0);
        self.r.read_exact(&mut self.buf)?;
        Ok(())
    }
}
