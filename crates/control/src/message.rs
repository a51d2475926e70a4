use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

/// The protocol version this build speaks. 2: a challenge-response
/// handshake (hello, challenge, auth) instead of a token in every message.
pub const VERSION: u32 = 2;
/// The smallest frame either end takes, FCS included.
pub const MIN_FRAME_SIZE: u32 = 64;
/// The longest line either side accepts, newline excluded.
pub const MAX_LINE: usize = 64 * 1024;

/// What blast asks of drop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Request {
    /// Opens the handshake; answered with a challenge (a nonce).
    Hello,
    /// Answers the challenge: HMAC-SHA256 of the nonce under the shared
    /// secret, in hex (empty when drop has no secret). Answered with drop's
    /// [`PeerInfo`], and the session is the client's.
    Auth {
        proof: String,
        /// The group trial this client comes to join (it then sends join
        /// first); None: a run of its own, which holds drop alone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        group: Option<String>,
    },
    /// Get ready for a step: use this many RX queues (restarting the port if
    /// the count changes) and frames up to `max_size` bytes.
    Prepare { rx_queues: u16, max_size: u32 },
    /// Baseline every counter now: the measured window starts. `streams`:
    /// where the sender's streams stand (none: no exact account of the window).
    StartWindow {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streams: Option<seqtrack::StreamEdge>,
    },
    /// The window ends now: answer with its figures. `streams`: where the
    /// sender's streams stand at its end (the trial is what lies between).
    EndWindow {
        window: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streams: Option<seqtrack::StreamEdge>,
    },
    /// Closing the connection.
    Bye,
    /// Join group `group` of `senders` senders for a group trial, with
    /// this member's whole plan (every member's must match). Answered with
    /// [`Response::Joined`]; from then on prepare, start_window and
    /// group_end wait until every member has reached them.
    Join { group: String, senders: u16, plan: crate::StepPlan },
    /// A group member's end of a window: what it sent in it, and how its
    /// own sending went. The window closes when every member has said so;
    /// each gets the group's figures.
    GroupEnd {
        window: u64,
        sent_packets: u64,
        sent_bytes: u64,
        /// Its lanes' busy cycles per frame sent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cycles_per_packet: Option<f64>,
        /// Its sender-side verdict (its own counters only), as a label.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sender_limit: Option<String>,
        /// Where its streams stand at the window's end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        streams: Option<seqtrack::StreamEdge>,
    },
}

/// The receiver as blast's record needs it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerInfo {
    pub hostname: String,
    pub dpdk: String,
    pub port_name: String,
    pub driver: String,
    pub max_rx_queues: u16,
    pub worker_lcores: u16,
    pub max_size: u32,
    pub rss: bool,
    pub cpu_model: String,
    /// Ports drop receives on (several --port); `port_name` names them all.
    #[serde(default = "one_port")]
    pub ports: u16,
    /// Whether drop sends every frame back (drop --reflect): blast's
    /// --reflect needs it, or no probe comes back to time.
    #[serde(default)]
    pub reflect: bool,
}

fn one_port() -> u16 {
    1
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prepared {
    pub rx_queues: u16,
    pub restarted: bool,
    pub link_up: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueueFigures {
    pub queue: u16,
    pub packets: u64,
    pub bytes: u64,
    /// Seconds of the window this queue's lcore spent on polls that
    /// brought frames and the work behind them.
    #[serde(default)]
    pub busy_seconds: f64,
}

/// An error answer.
pub(crate) fn error(e: impl Into<String>) -> Response {
    Response::Error { error: e.into() }
}

/// What drop counted over one measured window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowFigures {
    pub window: u64,
    /// The window's length on drop's clock.
    pub seconds: f64,
    pub packets: u64,
    /// Frame bytes, FCS included.
    pub bytes: u64,
    pub queues: Vec<QueueFigures>,
    pub imissed: u64,
    pub rx_nombuf: u64,
    pub ierrors: u64,
    /// af_packet: frames the kernel dropped on drop's full RX rings (its
    /// sockets' PACKET_STATISTICS), where the PMD does not count them in
    /// `imissed` (DPDK before 25.03); 0 otherwise, and from an older drop.
    #[serde(default)]
    pub socket_drops: u64,
    pub no_probe: u64,
    /// Per-stream sequence accounting over every probe that arrived in the
    /// window, the trial's and any other (its loss is the gap estimate).
    pub probe: seqtrack::SeqCounts,
    /// The exact account of the trial's own frames: the senders' streams
    /// between the window's edges (absent where drop could not count them:
    /// `trial_unavailable` says why).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<seqtrack::TrialAccount>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_unavailable: Option<String>,
    /// Frames that arrived in the window and are not the trial's (frames
    /// without a probe, such as the kernel's IPv6 neighbour discovery;
    /// warm-up or earlier frames still in flight; another sender's), with
    /// the trial's duplicates: `packets - trial.received`. Reported beside
    /// the trial's figures, never mixed in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_frames: Option<u64>,
    /// With several ports, on each port's figures: the trial's own frames
    /// that arrived on it, and their bytes (its share of `trial.received`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial_received_bytes: Option<u64>,
    /// Each sender's own account, in the order of the edges drop was
    /// given (a group's members); drop's side only, never on the wire.
    #[serde(skip)]
    pub trial_parts: Vec<seqtrack::TrialAccount>,
    /// Watched extended-stat deltas over the window, by name (allowance
    /// counters on ENA, and --watch-xstat names). The wire form of
    /// `limits::XstatsByKind` (with `levels`): drop flattens its counters
    /// by kind into it once (`to_wire`), blast groups them again once
    /// (`from_wire`, each name's kind from the limits crate).
    pub xstats: BTreeMap<String, u64>,
    /// Levels (not counters) read at the window's end, e.g. conntrack_allowance_available.
    #[serde(default)]
    pub levels: BTreeMap<String, u64>,
    /// Why the counter samples of this window are not to be believed, if they are not.
    #[serde(default)]
    pub xstats_invalid: Option<String>,
    /// rx_burst calls over the window, and how many returned nothing:
    /// a receiver that never came back empty was saturated.
    #[serde(default)]
    pub polls: u64,
    #[serde(default)]
    pub empty_polls: u64,
    /// drop's lanes' loops that stood still in the window (see LaneStalls),
    /// and the share of its host's CPU time the hypervisor took (steal).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stalls: Option<LaneStalls>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_steal_pct: Option<f64>,
    /// The busiest queue's busy_seconds: as long as the sender's trial, the
    /// receiver was saturated.
    #[serde(default)]
    pub busy_seconds: f64,
    /// With several ports: each port's own figures (its queues, its
    /// counters), in drop's --port order; the fields above are their sums.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<WindowFigures>,
    /// The device these figures are for, when they are one port's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port_name: Option<String>,
    /// Set when the window ended without its client (it vanished, or moved
    /// on with the window open): why. Its figures stop where it went.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    /// A group trial's window: the group and what each member sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<Box<GroupFigures>>,
    /// How the window's arrivals bunched up (absent with --count-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Box<WindowArrivals>>,
    /// Probe frames received by size, FCS included, smallest first (empty
    /// with --count-only), and those of sizes beyond what a lane counts apart.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<FrameSize>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sizes_other: u64,
    /// Arrivals and losses per block of stream ids (seqtrack::STREAM_BLOCK
    /// ids each), for a group's per-member figures; drop's side only,
    /// never on the wire.
    #[serde(skip)]
    pub stream_blocks: Vec<seqtrack::BlockCounts>,
}

/// Lanes' loops that stood still over a window (descheduled by the host, or
/// their CPU taken): how often, the longest, and in all. A lane stopped
/// for 1.5 s delays every frame it should have handled by up to that.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LaneStalls {
    pub count: u64,
    pub longest_ms: f64,
    pub total_ms: f64,
    /// The queue of the lane that stood still longest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub longest_queue: Option<u16>,
}

impl LaneStalls {
    /// Adds one lane's: `ticks` of `hz` per second.
    pub fn add(&mut self, queue: u16, count: u64, total_ticks: u64, longest_ticks: u64, hz: u64) {
        let ms = |t: u64| t as f64 / hz.max(1) as f64 * 1e3;
        self.count += count;
        self.total_ms += ms(total_ticks);
        if longest_ticks > 0 && ms(longest_ticks) > self.longest_ms {
            (self.longest_ms, self.longest_queue) = (ms(longest_ticks), Some(queue));
        }
    }
}

/// For `skip_serializing_if`: a count of nothing.
pub fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Frames of one size (bytes, FCS included) that arrived.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FrameSize {
    pub size: u32,
    pub frames: u64,
}

impl FrameSize {
    /// A count by size as a list, smallest size first.
    pub fn list(by_size: &BTreeMap<u32, u64>) -> Vec<FrameSize> {
        by_size.iter().map(|(&size, &frames)| FrameSize { size, frames }).collect()
    }
}

/// What each member of a group sent in a window (its own count, given at group_end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupFigures {
    pub name: String,
    pub members: Vec<MemberFigures>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MemberFigures {
    pub member: u16,
    /// The member's control address, as drop saw it.
    pub client: String,
    /// The member's stream ids: [stream_base, stream_base + stream_count).
    pub stream_base: u32,
    pub stream_count: u32,
    pub sent_packets: u64,
    pub sent_bytes: u64,
    /// What drop counted of this member's streams in the window: its trial
    /// frames that arrived, and those lost: exact (`sent - received` from
    /// the member's sequence numbers) when `exact`, else frames of its
    /// streams and the gap estimate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    #[serde(default)]
    pub exact: bool,
    /// The member's exact account (with `exact`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trial: Option<seqtrack::TrialAccount>,
    /// What the member said of its own sending at group_end: its lanes'
    /// cycles per frame and its sender-side verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles_per_packet: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_limit: Option<String>,
}

/// How the arrivals bunched up at the receiver over one window, for the
/// traffic of every sender at once (drop's lanes measure it; off with
/// --count-only). docs/methodology.md reads it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowArrivals {
    /// Polls that came back full (frames were waiting beyond one poll),
    /// and the most frames taken in one run of such polls on one queue.
    pub full_polls: u64,
    pub max_backlog_frames: u64,
    /// Arrivals counted per interval of this many microseconds on each
    /// queue (absent when drop's --arrival-interval-us is 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_us: Option<u64>,
    /// Intervals with traffic (and the empty ones between), summed over queues.
    #[serde(default)]
    pub intervals: u64,
    /// The most frames one queue took in one interval, and the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_per_interval: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_per_interval: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_to_mean: Option<f64>,
    /// The backlog the busiest interval's burst builds on its queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q_burst: Option<QBurst>,
}

/// Q_burst = (lambda_peak - mu) x T_b for the queue whose estimate is the
/// largest (where no peak exceeds its mu, the queue nearest to): lambda_peak its busiest interval's arrivals per second, mu the
/// frames it served per second of busy time, T_b the interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QBurst {
    pub queue: u16,
    pub lambda_peak_mpps: f64,
    pub mu_mpps: f64,
    pub t_b_us: f64,
    /// The estimate, in frames (0 when the peak does not exceed mu).
    pub frames: f64,
}

/// What drop answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Response {
    /// The nonce to prove the secret on, and whether drop checks the proof.
    Challenge {
        nonce: String,
        auth: bool,
    },
    Hello {
        info: PeerInfo,
    },
    Prepared(Prepared),
    WindowStarted {
        window: u64,
    },
    WindowFigures(Box<WindowFigures>),
    Bye,
    /// This client is member `member` of a group of `senders`: its streams
    /// are the ids [stream_base, stream_base + stream_count).
    Joined {
        member: u16,
        senders: u16,
        stream_base: u32,
        stream_count: u32,
    },
    Error {
        error: String,
    },
}

/// A request with its envelope.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Envelope<T> {
    pub v: u32,
    pub id: u64,
    #[serde(flatten)]
    pub body: T,
}

/// Why a request line was refused. Each has a one-sentence reason for the reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtoError {
    TooLong,
    Malformed(String),
    WrongVersion(u64),
    Unknown(String),
    BadFields(String),
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtoError::TooLong => write!(f, "message longer than {MAX_LINE} bytes"),
            ProtoError::Malformed(e) => write!(f, "not a JSON object: {e}"),
            ProtoError::WrongVersion(v) => {
                write!(f, "protocol version {v} is not spoken here (this side speaks {VERSION}): run blast and drop of the same release")
            }
            ProtoError::Unknown(t) => write!(f, "unknown message type {t:?}"),
            ProtoError::BadFields(e) => write!(f, "bad fields: {e}"),
        }
    }
}

/// Parses one request line. Returns the request id (when one could be read)
/// with the error, so the reply can repeat it.
pub fn parse_request(line: &[u8]) -> Result<Envelope<Request>, (u64, ProtoError)> {
    if line.len() > MAX_LINE {
        return Err((0, ProtoError::TooLong));
    }
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|e| (0, ProtoError::Malformed(e.to_string())))?;
    let obj = value.as_object().ok_or((0, ProtoError::Malformed("not an object".into())))?;
    let id = obj.get("id").and_then(|v| v.as_u64()).unwrap_or(0);
    match obj.get("v").and_then(|v| v.as_u64()) {
        Some(v) if v == u64::from(VERSION) => {}
        Some(v) => return Err((id, ProtoError::WrongVersion(v))),
        None => return Err((id, ProtoError::Malformed("no protocol version \"v\"".into()))),
    }
    let kind = match obj.get("type").and_then(|t| t.as_str()) {
        Some(k) => k.to_owned(),
        None => return Err((id, ProtoError::Malformed("no message \"type\"".into()))),
    };
    if !matches!(kind.as_str(), "hello" | "auth" | "prepare" | "start_window" | "end_window" | "bye" | "join" | "group_end") {
        return Err((id, ProtoError::Unknown(kind)));
    }
    serde_json::from_value::<Envelope<Request>>(value).map_err(|e| (id, ProtoError::BadFields(e.to_string())))
}

/// Encodes a reply as one line, newline included.
pub fn reply_line(id: u64, body: &Response) -> String {
    let env = Envelope { v: VERSION, id, body };
    let mut s = serde_json::to_string(&env).expect("responses always encode");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Envelope<Request>, (u64, ProtoError)> {
        parse_request(s.as_bytes())
    }

    #[test]
    fn requests_round_trip() {
        for body in [
            Request::Hello,
            Request::Auth { proof: "ab01".into(), group: None },
            Request::Auth { proof: "ab01".into(), group: Some("g".into()) },
            Request::Prepare { rx_queues: 4, max_size: 1518 },
            Request::StartWindow { streams: None },
            Request::StartWindow { streams: Some(seqtrack::StreamEdge { run: 3, first: 64, seqs: vec![1, u32::MAX] }) },
            Request::EndWindow { window: 7, streams: None },
            Request::Bye,
            Request::Join { group: "g".into(), senders: 3, plan: crate::StepPlan::default() },
            Request::GroupEnd {
                window: 7,
                sent_packets: 10,
                sent_bytes: 640,
                cycles_per_packet: Some(41.5),
                sender_limit: Some("none".into()),
                streams: Some(seqtrack::StreamEdge { run: 1, first: 0, seqs: vec![9] }),
            },
            Request::GroupEnd { window: 7, sent_packets: 10, sent_bytes: 640, cycles_per_packet: None, sender_limit: None, streams: None },
        ] {
            let env = Envelope { v: VERSION, id: 3, body: body.clone() };
            let line = serde_json::to_string(&env).unwrap();
            let back = parse(&line).unwrap();
            assert_eq!(back, env, "{line}");
        }
    }

    #[test]
    fn wire_form_is_flat_json() {
        let env = Envelope { v: 2, id: 9, body: Request::EndWindow { window: 2, streams: None } };
        assert_eq!(serde_json::to_string(&env).unwrap(), r#"{"v":2,"id":9,"type":"end_window","window":2}"#);
        let c = reply_line(1, &Response::Challenge { nonce: "00ff".into(), auth: true });
        assert_eq!(c, "{\"v\":2,\"id\":1,\"type\":\"challenge\",\"nonce\":\"00ff\",\"auth\":true}\n");
    }

    #[test]
    fn each_refusal_has_its_reason() {
        assert!(matches!(parse("{nope"), Err((0, ProtoError::Malformed(_)))));
        assert!(matches!(parse("[1,2]"), Err((0, ProtoError::Malformed(_)))));
        assert!(matches!(parse(r#"{"id":4,"type":"hello"}"#), Err((4, ProtoError::Malformed(_)))));
        assert_eq!(parse(r#"{"v":1,"id":5,"type":"hello","token":"t"}"#).unwrap_err(), (5, ProtoError::WrongVersion(1)));
        assert!(ProtoError::WrongVersion(1).to_string().contains("same release"));
        assert_eq!(parse(r#"{"v":2,"id":6,"type":"reboot"}"#).unwrap_err(), (6, ProtoError::Unknown("reboot".into())));
        assert!(matches!(parse(r#"{"v":2,"id":7,"type":"prepare","rx_queues":"many"}"#), Err((7, ProtoError::BadFields(_)))));
        assert!(matches!(parse(r#"{"v":2,"id":7,"type":"auth"}"#), Err((7, ProtoError::BadFields(_)))));
        // Fields a later minor revision may add are ignored, not refused.
        assert!(parse(r#"{"v":2,"id":8,"type":"hello","extra":1}"#).is_ok());
        let long = format!(r#"{{"v":2,"id":1,"type":"hello","pad":"{}"}}"#, "x".repeat(MAX_LINE));
        assert_eq!(parse(&long).unwrap_err(), (0, ProtoError::TooLong));
    }

    #[test]
    fn window_figures_round_trip_with_everything_drop_adds() {
        let f = WindowFigures {
            window: 4,
            packets: 12,
            sizes: vec![FrameSize { size: 64, frames: 7 }, FrameSize { size: 594, frames: 4 }, FrameSize { size: 1518, frames: 1 }],
            sizes_other: 2,
            arrivals: Some(Box::new(WindowArrivals {
                full_polls: 1,
                interval_us: Some(100),
                peak_to_mean: Some(2.5),
                q_burst: Some(QBurst { queue: 0, lambda_peak_mpps: 3.0, mu_mpps: 2.0, t_b_us: 100.0, frames: 100.0 }),
                ..Default::default()
            })),
            ..Default::default()
        };
        let l = reply_line(5, &Response::WindowFigures(Box::new(f.clone())));
        let back: Envelope<Response> = serde_json::from_str(l.trim_end()).unwrap();
        assert_eq!(back.body, Response::WindowFigures(Box::new(f)), "{l}");
    }

    #[test]
    fn replies_are_one_line() {
        let l = reply_line(3, &Response::Error { error: "bad\nthing".into() });
        assert!(l.ends_with('\n'));
        assert_eq!(l.matches('\n').count(), 1);
        let back: Envelope<Response> = serde_json::from_str(l.trim_end()).unwrap();
        assert_eq!(back.id, 3);
    }
}
