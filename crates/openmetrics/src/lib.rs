//! `/metrics` in the Prometheus text format for both tools: the figures
//! the main thread publishes once a tick, served on their own thread,
//! never from a lane.
