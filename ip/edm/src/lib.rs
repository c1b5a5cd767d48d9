//! EDM reference model: the 64b/66b block layer with EDM's memory block types, the host
//! and switch network stacks, and intra-frame preemption of non-memory frames, stepped one
//! 2.56 ns PHY cycle at a time so that the RTL can be checked against it.

pub mod assemble;
pub mod fabric;
pub mod forward;
pub mod host;
pub mod load;
pub mod phy;
pub mod switch;
pub mod timing;
pub mod vectors;
