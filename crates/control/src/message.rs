use std::fmt;

use serde::{Deserialize, Serialize};

// The figures a window's answer carries are the records' (a record keeps
// them as drop sent them): declared there, spoken here.
pub use records::window::{
    is_zero, FrameSize, GroupFigures, LaneStalls, MemberFigures, PeerInfo, QBurst, QueueFigures, WindowArrivals, WindowFigures,
};

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

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Prepared {
    pub rx_queues: u16,
    pub restarted: bool,
    pub link_up: bool,
}

/// An error answer.
pub(crate) fn error(e: impl Into<String>) -> Response {
    Response::Error { error: e.into() }
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
