//! A run's figures over time, one row per interval, kept as columns in
//! bounded memory; the changes found in them, each with its evidence; and
//! their plot. No EAL: unit-tested on recorded and synthetic series.
