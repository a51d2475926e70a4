//! A capture as blast replays it: every frame of a pcap or pcapng file
//! held in memory (`read`), its addresses rewritten for the path under
//! test (`rewrite`), the frames a probe goes into readied (`probes`), and its frames spread over queues by flow and given
//! their departure times (`schedule`). No EAL here: the replay lane in
//! blast copies the bytes into mbufs and keeps the times.

mod frame;
mod probes;
mod read;
mod rewrite;
mod schedule;

pub use frame::{FlowKind, FrameInfo};
pub use probes::ProbeStats;
pub use read::{Capture, CaptureError, Format};
pub use rewrite::{Rewrite, RewriteStats, ICMPV6_QUOTE_KEPT, ICMP_QUOTE_KEPT, IPV6_EXTENSIONS_KEPT, IPV6_MALFORMED_KEPT};
pub use schedule::{QueuePlan, Schedule, Timing, TimingError};
