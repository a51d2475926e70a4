//! The control channel between `blast` (client) and `drop` (server): JSON
//! lines over TCP on the management network, never over the port under
//! test. See docs/protocol.md for the message set.
//!
//! Every message is one line holding one JSON object with the protocol
//! version `v`, a request `id` the reply repeats, the shared `token` when
//! the server has one, and a `type`. The server answers every line, an
//! error included, and keeps serving; only a wrong token closes the
//! connection.

mod client;
mod message;
mod server;

pub use client::{Client, ClientError};
pub use message::{
    parse_request, reply_line, Envelope, PeerInfo, Prepared, ProtoError, QueueFigures, Request, Response, WindowFigures, MAX_LINE, VERSION,
};
pub use server::{serve, serve_connection, Backend, ServerConfig};
