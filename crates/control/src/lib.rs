//! The control channel between `blast` (client) and `drop` (server): JSON
//! lines over TCP on the management network, never over the port under
//! test. See docs/protocol.md for the message set.
//!
//! Every message is one line holding one JSON object with the protocol
//! version `v`, a request `id` the reply repeats, and a `type`. A session
//! opens with a handshake (hello, challenge, auth) that proves the shared
//! secret without sending it; after it the server answers every line, an
//! error included, and keeps serving.

mod addr;
mod arrivals;
mod auth;
mod backend;
mod client;
mod group;
mod group_run;
mod group_session;
mod handshake;
mod lines;
mod message;
mod server;
mod session;
mod shared;
mod starting;
mod window;

pub use addr::{all_loopback, bind_fix, listen_addrs, unspecified, ListenError};
pub use arrivals::{q_burst, window_arrivals, LaneArrivals};
pub use auth::{nonce, Secret, SecretError, SecretSource, SECRET_ENV};
pub use backend::{Backend, BackendError, ClientLink};
pub use client::{Client, ClientError, ConnectionEnd};
pub use group::{member_arrivals, member_of, stream_range, Arrival, Group, GroupError, PlannedStep, Stage, StepPlan, MAX_SENDERS};
pub use handshake::{Handshake, HandshakeStep, Refusal};
pub use message::{
    is_zero, parse_request, reply_line, Envelope, FrameSize, GroupFigures, LaneStalls, MemberFigures, PeerInfo, Prepared, ProtoError,
    QBurst, QueueFigures, Request, Response, WindowArrivals, WindowFigures, MAX_LINE, MIN_FRAME_SIZE, VERSION,
};
pub use server::serve;
pub use shared::ServerConfig;
pub use starting::{answer_while_starting, starting_of, starting_text, STARTING};
