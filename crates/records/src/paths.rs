//! `blast paths`: one plan (a fixed-rate table and a knee search per
//! shape) run over several paths, interleaved, and their comparison.

use serde::{Deserialize, Serialize};

/// One path as given: how blast reaches the wire on it, and what starts its drop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathPlan {
    pub name: String,
    /// blast's flags for this path (its port or --socket, its --peer), and its EAL arguments after `--`.
    pub blast_args: Vec<String>,
    /// The command that starts this path's drop for each of its runs (None: its drop serves on its own).
    pub drop_command: Option<String>,
    /// drop's control address, as the path's --peer gives it.
    pub peer: String,
}

/// One run of blast, in the order they ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathRun {
    pub path: String,
    /// "table" (one rate at one shape) or "knee" (a knee search at one shape).
    pub what: String,
    pub rate_mpps: Option<f64>,
    pub shape: String,
    pub round: u32,
    /// When it started (UNIX seconds) and how long it took.
    pub started_unix: f64,
    pub seconds: f64,
    /// Its record (relative to the comparison's directory).
    pub record: String,
    /// Its output (stdout and stderr).
    pub log: String,
    pub exit_code: Option<i32>,
    pub error: Option<String>,
}

/// blast paths --json record (mode = paths): the plan, every run in the
/// order it ran with its record, each path's figures as read from those
/// records, and the comparison (docs/paths.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "BlastPathsRecord")]
pub struct PathsBody {
    pub paths: Vec<PathPlan>,
    pub rates_mpps: Vec<f64>,
    pub shapes: Vec<String>,
    pub rounds: u32,
    /// The flags every run got (after `blast paths ... --`).
    pub common_args: Vec<String>,
    /// The flags the knee searches got besides (--knee-args).
    pub knee_args: Vec<String>,
    /// Where the runs' records and logs are.
    pub directory: String,
    pub runs: Vec<PathRun>,
    pub figures: Vec<paths::PathFigures>,
    pub comparison: paths::Comparison,
    pub interrupted: bool,
}

pub type PathsRecord<C = serde_json::Value> = crate::Record<crate::Mode, crate::Config<C>, PathsBody>;
