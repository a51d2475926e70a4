//! Why a step stopped where it did. The evidence is on the NICs' counters:
//! on ENA the allowance counters say the platform's shaper held traffic
//! back; `imissed` and `rx_nombuf` say the receiver could not keep up; a
//! sender whose tx_burst keeps returning short says the queue or core is
//! the limit; frames that vanish with no counter to explain them were lost
//! in the network. No EAL here: all of it is tested on numbers.

mod by_kind;
mod counters;
pub mod ena_state;
mod express;
mod limit;
mod preflight;
mod receiver_only;
mod sample;
mod socket;
mod verdict;

pub use by_kind::{counter_kind, XstatsByKind};
pub use counters::{
    counter_set, kernel_counter_set, read_path, resolve, CounterKind, CounterSpec, ReadPath, Resolved, ENA_ALLOWANCES,
    ENA_EXPRESS_COUNTERS, ENA_EXPRESS_ENABLED, ENA_EXPRESS_LEVELS, ENA_EXPRESS_UDP_ENABLED, ENA_EXPRESS_UDP_ORDERING_BYPASS, ENA_LEVELS,
};
pub use express::{express_evidence, express_mode, ExpressMode, SRD_RESOURCE_NEAR_PCT};
pub use preflight::{preflight, Finding, PreflightInput, Severity};
pub use receiver_only::{receiver_verdict, ReceiverCounters};
pub use sample::{check_step, SampleCheck, MAX_PLAUSIBLE_PER_SECOND};
pub use socket::{socket_verdict, SocketCounters, UdpReceiver};
pub use verdict::{verdict, Limit, LimitKind, Side, Verdict, VerdictClass, WindowCounters, PUSHED_BACK_TX_PCT, SATURATED_BUSY_PCT};
