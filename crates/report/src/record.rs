//! Reading a run's record: which kind it is, and whether its schema version
//! is one this report knows. Each kind's record is then read whole into its
//! records type (`Record::body`: the type blast or drop writes it from), and
//! its tables, plots, sentences, facts and warnings read that. Still read by
//! path (`J`): the atlas's rows (atlas.rs), the label, and the flags
//! (`config`: kept as given, with no type to read them back).

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The schema versions this report reads: the records crate's (docs/json.md).
pub use records::KNOWN_SCHEMA_VERSIONS;

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read {0}: {1}")]
    Io(PathBuf, std::io::Error),
    #[error("{0} is not JSON ({1}): give the file blast or drop wrote with --json")]
    NotJson(PathBuf, serde_json::Error),
    #[error("{0} is not a blastdrop record (no \"tool\" of blast or drop): give the file blast or drop wrote with --json")]
    NotOurs(PathBuf),
    #[error("{0} has no schema_version: it was written by a blastdrop older than this report; run it again with this blastdrop")]
    NoVersion(PathBuf),
    #[error("{0} has schema_version {1}, which this report does not know (it reads {known}): use the blastdrop that wrote it", known = known())]
    UnknownVersion(PathBuf, u64),
    #[error("{0} is a blast record of mode {1:?}, which this report does not know (single, ladder, knee, replay)")]
    UnknownMode(PathBuf, String),
}

fn known() -> String {
    KNOWN_SCHEMA_VERSIONS.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(", ")
}

/// What kind of run a record holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Ladder,
    Knee,
    Single,
    Replay,
    /// drop's own record (standalone, or the listening end of a ladder).
    Drop,
    /// A `blast paths` comparison (its runs' records are beside it).
    Paths,
    /// An RFC 9971 search (`--search mlr`).
    Mlr,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Ladder => "ladder",
            Kind::Knee => "knee search",
            Kind::Mlr => "RFC 9971 search",
            Kind::Single => "single run (sender-side only)",
            Kind::Replay => "capture replay",
            Kind::Drop => "drop (receiver)",
            Kind::Paths => "paths compared",
        }
    }
}

/// A record's own fields, read whole as its kind's records type.
pub enum Body {
    Ladder(Box<records::ladder::LadderBody>),
    Knee(Box<records::knee::KneeBody>),
    Mlr(Box<records::mlr::MlrBody>),
    Single(Box<records::single::SingleBody>),
    Replay(Box<records::replay::ReplayBody>),
    Drop(Box<records::drop::DropBody>),
}

/// One record as read, with the label the atlas files it under.
#[derive(Debug, Clone)]
pub struct Record {
    pub path: PathBuf,
    pub kind: Kind,
    /// `--label`, else the EC2 instance type the record names, else none.
    pub label: Option<String>,
    pub json: Value,
    /// The name the report gives the run when its file's name alone does not
    /// tell it apart from the others' (`names::name_runs`).
    pub(crate) shown_as: Option<String>,
}

impl Record {
    pub fn read(path: &Path, label: Option<String>) -> Result<Record, ReadError> {
        let text = std::fs::read_to_string(path).map_err(|e| ReadError::Io(path.to_path_buf(), e))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| ReadError::NotJson(path.to_path_buf(), e))?;
        Record::from_json(path, json, label)
    }

    pub fn from_json(path: &Path, json: Value, label: Option<String>) -> Result<Record, ReadError> {
        let p = || path.to_path_buf();
        let kind = match (J(&json).str("tool"), J(&json).str("mode")) {
            (Some("drop"), _) => Kind::Drop,
            (Some("blast"), Some("ladder")) => Kind::Ladder,
            (Some("blast"), Some("knee")) => Kind::Knee,
            (Some("blast"), Some("single")) => Kind::Single,
            (Some("blast"), Some("replay")) => Kind::Replay,
            (Some("blast"), Some("paths")) => Kind::Paths,
            (Some("blast"), Some("mlr")) => Kind::Mlr,
            (Some("blast"), m) => return Err(ReadError::UnknownMode(p(), m.unwrap_or("none").to_string())),
            _ => return Err(ReadError::NotOurs(p())),
        };
        records::check_schema_version(&json).map_err(|e| match e {
            records::VersionError::Missing => ReadError::NoVersion(p()),
            records::VersionError::Unknown(v) => ReadError::UnknownVersion(p(), v),
        })?;
        let label = label.or_else(|| J(&json).str(&format!("{}/machine/ec2/instance_type", env_root(kind))).map(str::to_string));
        Ok(Record { path: p(), kind, label, json, shown_as: None })
    }

    /// The run's name in the report: its file's name, or where several
    /// runs' files share it, the shortest end of its path that is its own
    /// (`a/drop.json`, `b/drop.json`: set by `names::name_runs`).
    pub fn file_name(&self) -> String {
        self.shown_as.clone().unwrap_or_else(|| self.base_name())
    }

    /// The file's own name, without its folders.
    pub fn base_name(&self) -> String {
        self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| self.path.display().to_string())
    }

    pub fn j(&self) -> J<'_> {
        J(&self.json)
    }

    /// The record read whole as its kind's type.
    pub fn body(&self) -> Result<Body, String> {
        Ok(match self.kind {
            Kind::Ladder => Body::Ladder(Box::new(self.ladder()?)),
            Kind::Knee => Body::Knee(Box::new(self.knee()?)),
            Kind::Mlr => Body::Mlr(Box::new(self.mlr()?)),
            Kind::Single => Body::Single(Box::new(self.single()?)),
            Kind::Replay => Body::Replay(Box::new(self.replay()?)),
            Kind::Drop => Body::Drop(Box::new(self.drop()?)),
            Kind::Paths => return Err(format!("{}: a paths comparison has a section of its own", self.file_name())),
        })
    }

    /// The record read whole as a ladder's (`records::ladder`), as blast
    /// wrote it; or why it cannot be: a field missing or of another type.
    pub fn ladder(&self) -> Result<records::ladder::LadderBody, String> {
        self.typed::<records::ladder::LadderRecord>("ladder").map(|r| r.body)
    }

    /// The record read whole as a paths comparison's (`records::paths`).
    pub fn paths(&self) -> Result<records::paths::PathsBody, String> {
        self.typed::<records::paths::PathsRecord>("paths").map(|r| r.body)
    }

    /// The record read whole as a knee search's (`records::knee`).
    pub fn knee(&self) -> Result<records::knee::KneeBody, String> {
        self.typed::<records::knee::KneeRecord>("knee search").map(|r| r.body)
    }

    /// The record read whole as an RFC 9971 search's (`records::mlr`).
    pub fn mlr(&self) -> Result<records::mlr::MlrBody, String> {
        self.typed::<records::mlr::MlrRecord>("RFC 9971 search").map(|r| r.body)
    }

    /// The record read whole as a single run's (`records::single`).
    pub fn single(&self) -> Result<records::single::SingleBody, String> {
        self.typed::<records::single::SingleRecord>("single run").map(|r| r.body)
    }

    /// The record read whole as a capture replay's (`records::replay`).
    pub fn replay(&self) -> Result<records::replay::ReplayBody, String> {
        self.typed::<records::replay::ReplayRecord>("replay").map(|r| r.body)
    }

    /// The record read whole as drop's (`records::drop`).
    pub fn drop(&self) -> Result<records::drop::DropBody, String> {
        self.typed::<records::drop::DropRecord>("drop").map(|r| r.body)
    }

    /// The record read whole into `T`, its kind's records type.
    fn typed<T: serde::de::DeserializeOwned>(&self, kind: &str) -> Result<T, String> {
        serde_json::from_value(self.json.clone()).map_err(|e| format!("{}: cannot read it as a {kind} record: {e}", self.file_name()))
    }
}

/// Where a record keeps its own host's environment, for its label.
fn env_root(kind: Kind) -> &'static str {
    match kind {
        Kind::Ladder | Kind::Knee | Kind::Mlr => "environment/sender",
        _ => "environment",
    }
}

/// A JSON value read by `/`-separated paths; a missing field reads as None.
#[derive(Debug, Clone, Copy)]
pub struct J<'a>(pub &'a Value);

static NULL: Value = Value::Null;

impl<'a> J<'a> {
    pub fn at(self, path: &str) -> J<'a> {
        let ptr = if path.is_empty() { String::new() } else { format!("/{}", path.trim_start_matches('/')) };
        J(self.0.pointer(&ptr).unwrap_or(&NULL))
    }

    pub fn is_null(self) -> bool {
        self.0.is_null()
    }

    pub fn str(self, path: &str) -> Option<&'a str> {
        self.at(path).0.as_str()
    }

    pub fn f64(self, path: &str) -> Option<f64> {
        self.at(path).0.as_f64()
    }

    pub fn u64(self, path: &str) -> Option<u64> {
        self.at(path).0.as_u64()
    }

    pub fn bool(self, path: &str) -> Option<bool> {
        self.at(path).0.as_bool()
    }

    pub fn arr(self, path: &str) -> &'a [Value] {
        self.at(path).0.as_array().map(Vec::as_slice).unwrap_or(&[])
    }

    /// Any scalar as text ("" for null or missing), lists joined with commas.
    pub fn text(self, path: &str) -> String {
        match self.at(path).0 {
            Value::Null => String::new(),
            Value::String(s) => s.clone(),
            Value::Array(a) => a.iter().map(|v| J(v).text("")).collect::<Vec<_>>().join(","),
            v => v.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> Result<Record, ReadError> {
        Record::from_json(Path::new("run.json"), v, None)
    }

    #[test]
    fn kinds_are_told_apart() {
        let k = |v: Value| read(v).unwrap().kind;
        assert_eq!(k(json!({"tool": "drop", "schema_version": 1})), Kind::Drop);
        assert_eq!(k(json!({"tool": "blast", "mode": "ladder", "schema_version": 1})), Kind::Ladder);
        assert_eq!(k(json!({"tool": "blast", "mode": "knee", "schema_version": 1})), Kind::Knee);
        assert_eq!(k(json!({"tool": "blast", "mode": "replay", "schema_version": 1})), Kind::Replay);
        assert_eq!(k(json!({"tool": "blast", "mode": "single", "schema_version": 1})), Kind::Single);
    }

    #[test]
    fn unknown_or_missing_versions_are_refused_with_the_fix() {
        let e = read(json!({"tool": "blast", "mode": "ladder", "schema_version": 2})).unwrap_err().to_string();
        assert!(e.contains("schema_version 2") && e.contains("reads 1") && e.contains("use the blastdrop that wrote it"), "{e}");
        let e = read(json!({"tool": "drop"})).unwrap_err().to_string();
        assert!(e.contains("no schema_version") && e.contains("run it again"), "{e}");
        let e = read(json!({"hello": 1})).unwrap_err().to_string();
        assert!(e.contains("not a blastdrop record"), "{e}");
        let e = read(json!({"tool": "blast", "mode": "fleet", "schema_version": 1})).unwrap_err().to_string();
        assert!(e.contains("mode \"fleet\""), "{e}");
    }

    #[test]
    fn the_label_comes_from_the_flag_else_the_instance_type() {
        let v = json!({"tool": "blast", "mode": "ladder", "schema_version": 1,
            "environment": {"sender": {"machine": {"ec2": {"instance_type": "c8gn.48xlarge"}}}}});
        assert_eq!(read(v.clone()).unwrap().label.as_deref(), Some("c8gn.48xlarge"));
        let r = Record::from_json(Path::new("a.json"), v, Some("mine".into())).unwrap();
        assert_eq!(r.label.as_deref(), Some("mine"));
        assert_eq!(read(json!({"tool": "drop", "schema_version": 1})).unwrap().label, None);
    }

    #[test]
    fn paths_read_what_is_there_and_none_otherwise() {
        let v = json!({"a": {"b": [1, 2], "c": "x", "d": 1.5, "e": null}});
        let j = J(&v);
        assert_eq!(j.text("a/b"), "1,2");
        assert_eq!(j.str("a/c"), Some("x"));
        assert_eq!(j.f64("a/d"), Some(1.5));
        assert!(j.at("a/e").is_null() && j.at("a/zz/y").is_null());
        assert_eq!(j.arr("a/b").len(), 2);
        assert!(j.arr("a/c").is_empty());
    }
}
