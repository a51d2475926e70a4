//! `/metrics` in the Prometheus text format for both tools: the figures
//! the main thread publishes once a tick, served on their own thread,
//! never from a lane.
//!
//! [`Metrics`] holds the figures in `prometheus-client` families (the
//! crate does the encoding: OpenMetrics text 1.0.0 for Prometheus, the
//! Prometheus text format 0.0.4 for anyone else); the main thread sets
//! them about once a second. [`serve`] binds ADDR:PORT under the control
//! port's rules and answers `GET /metrics` on its own threads, with a cap
//! on connections and a total deadline on each, so a silent or slow client
//! costs a thread for 2 s at most and never reaches the tools' loops.

mod figures;
mod http;
mod latency;

pub use figures::{Metrics, StepAccount, StepLabels};
pub use http::{
    serve, MetricsServer, ServeError, DEADLINE, MAX_CONNECTIONS, MAX_HEAD, OPENMETRICS_CONTENT_TYPE, PROMETHEUS_TEXT_CONTENT_TYPE,
};
