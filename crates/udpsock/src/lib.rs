//! The kernel's UDP stack as a path, beside DPDK's ports: one socket per
//! queue, blast's frames as UDP payloads that start with the same probe
//! header, sent with `sendmmsg` and UDP GSO and received with `recvmmsg` and
//! UDP GRO on sockets that share a port through `SO_REUSEPORT`. No EAL.
//!
//! A frame size here means what it means on a DPDK port: the Ethernet frame
//! the payload would travel in, FCS included ([`payload_len`]), so a step's
//! frames are the same bytes on every path.
//!
//! What the kernel drops is counted where it keeps it: a socket's own drops
//! (`/proc/net/udp`'s `drops` column, [`socket_drops`]) and the namespace's
//! UDP counters ([`snmp`]). Under GRO the kernel moves (and drops) buffers
//! that hold up to 64 datagrams each, and counts one drop per buffer: a drop
//! count is then a count of buffers, not of frames ([`RecvCounts`]). Loss
//! itself is never read from a counter: it is the probes' sequence numbers.

pub mod host;
mod messages;
mod payload;
mod recv;
mod send;
pub mod snmp;
mod socket;

pub use payload::{frame_len, payload_len, MIN_FRAME};
pub use recv::{RecvCounts, RecvLane, MAX_BUFFER};
pub use send::{SendCounts, SendLane, MAX_SEGMENTS};
pub use socket::{receiver_socket, sender_socket, socket_drops, Buffer, SocketError};
