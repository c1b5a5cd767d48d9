//! Connect, allocate, write and read typed records, free.
//! Run: `clio sim &` then `cargo run -p clio --example quick_start [-- ADDR]`.
use clio::bytemuck::{Pod, Zeroable};

#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[bytemuck(crate = "clio::bytemuck")]
#[repr(C)]
struct Point {
    x: u64,
    y: u64,
}

fn main() -> Result<(), clio::ClioError> {
    let addr = std::env::args().nth(1);
    let mut s = clio::connect(addr.as_deref().unwrap_or("127.0.0.1:47700"))?;
    let a = s.alloc(1 << 20)?; // 1 MiB, read-write; not freed on drop
    let p = Point { x: 1, y: 2 };
    s.write_pod(a.addr(), &p)?;
    assert_eq!(s.read_pod::<Point>(a.addr())?, p);
    let rec = a.index::<Point>(10); // element 10 of an array of Points
    s.write_pods(rec, &[p, p])?;
    assert_eq!(s.read_pods::<Point>(rec, 2)?, [p, p]);
    // The low level: u64 VAs and byte buffers (your buffer: no copy).
    let mut buf = [0u8; 5];
    s.rwrite(a.at(4096).get(), b"hello")?;
    s.rread(a.at(4096).get(), &mut buf)?;
    assert_eq!(&buf, b"hello");
    s.free(a)?;
    println!("quick start: ok");
    Ok(())
}
