//! The fields every record begins with, declared once: `tool`, `mode`
//! (blast's records), `schema_version`, `version` and `config`, then the
//! kind's own fields. The schema version is checked in one place.

use serde::{Deserialize, Serialize};

/// The schema version every --json record carries (docs/json.md). Raise it
/// when a field the report reads changes meaning or name; `blast report`
/// refuses a version it does not know rather than misread it.
pub const SCHEMA_VERSION: u32 = 1;

/// The schema versions a reader of records knows (docs/json.md). A record
/// of another version may name its fields differently: refused, not guessed.
pub const KNOWN_SCHEMA_VERSIONS: &[u64] = &[SCHEMA_VERSION as u64];

/// blastdrop's version, as every record says it: each crate of the
/// workspace has the workspace's version (`version.workspace`), the
/// binaries' included.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A tool's flags as given, for its record's `config`: written as they are
/// (their schema is the flags' own, with its name and descriptions) and
/// never read back below the tool's `main`, which resolves them into
/// settings; this wrapper offers no way to reach them.
pub struct AsGiven<'a, T>(&'a T);

impl<'a, T> AsGiven<'a, T> {
    pub fn new(flags: &'a T) -> Self {
        AsGiven(flags)
    }
}

impl<T: Serialize> Serialize for AsGiven<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for AsGiven<'_, T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

// A record of one kind: the header's fields, then the kind's own (`body`,
// flattened). `M` is `Mode` for blast's records and `NoMode` for drop's
// and the not-started one; `C` is `Config` for a record whose flags come
// right after the header, `ConfigBelow` for one that keeps them among its
// own fields. These slots are flattened, so an empty one adds nothing to
// the JSON or its schema. The schema's name and description are the
// body's (hence `//`, not `///`: a doc here would be the description of
// every record kind's schema).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "{B}")]
pub struct Record<M, C, B> {
    pub tool: String,
    #[serde(flatten)]
    pub mode: M,
    /// The record's schema version (docs/json.md); `blast report` refuses one it does not know.
    pub schema_version: u32,
    pub version: String,
    #[serde(flatten)]
    pub config: C,
    #[serde(flatten)]
    pub body: B,
}

// blast's records: which mode ran ("single", "ladder", "knee", "replay").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Mode {
    pub mode: String,
}

// drop's record and the not-started one: no mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NoMode {}

// The run's flags, right after the header.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Config<C> {
    pub config: C,
}

// The not-started record keeps its flags last, among its own fields.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ConfigBelow {}

impl<C, B> Record<Mode, Config<C>, B> {
    /// A blast record of `mode` from this build.
    pub fn blast(mode: &str, config: C, body: B) -> Self {
        Record::new("blast", Mode { mode: mode.to_owned() }, Config { config }, body)
    }
}

impl<C, B> Record<NoMode, Config<C>, B> {
    /// drop's record from this build.
    pub fn drop(config: C, body: B) -> Self {
        Record::new("drop", NoMode {}, Config { config }, body)
    }
}

impl<M, C, B> Record<M, C, B> {
    /// A record of `tool` from this build: this schema version and version.
    pub fn new(tool: &str, mode: M, config: C, body: B) -> Self {
        Record { tool: tool.to_owned(), mode, schema_version: SCHEMA_VERSION, version: VERSION.to_owned(), config, body }
    }
}

/// Why a record's schema version is not one to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    #[error("the record has no schema_version")]
    Missing,
    #[error("schema_version {0} is not one this build knows")]
    Unknown(u64),
}

/// Checks a record's `schema_version` against the versions this build
/// reads, before any other field is believed: the version, or why not.
pub fn check_schema_version(record: &serde_json::Value) -> Result<u64, VersionError> {
    match record.get("schema_version").and_then(serde_json::Value::as_u64) {
        None => Err(VersionError::Missing),
        Some(v) if !KNOWN_SCHEMA_VERSIONS.contains(&v) => Err(VersionError::Unknown(v)),
        Some(v) => Ok(v),
    }
}

/// The JSON schema of `T` as it is written (serde's serialize side: fields
/// skipped when empty are not required), draft 2020-12.
pub fn schema_of<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator().into_root_schema_for::<T>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
    struct Body {
        started: bool,
    }

    #[test]
    fn the_header_comes_first_in_its_order_and_reads_back() {
        let r = Record::blast("single", 7u32, Body { started: true });
        let json = serde_json::to_string(&r).unwrap();
        let want = format!(
            r#"{{"tool":"blast","mode":"single","schema_version":{SCHEMA_VERSION},"version":"{VERSION}","config":7,"started":true}}"#
        );
        assert_eq!(json, want);
        assert_eq!(serde_json::from_str::<Record<Mode, Config<u32>, Body>>(&json).unwrap(), r);
        let d = serde_json::to_string(&Record::drop(7u32, Body { started: false })).unwrap();
        assert!(d.starts_with(r#"{"tool":"drop","schema_version":"#), "{d}");
        let below = Record::new("blast", NoMode {}, ConfigBelow {}, Body { started: false });
        let b = serde_json::to_string(&below).unwrap();
        assert_eq!(b, format!(r#"{{"tool":"blast","schema_version":{SCHEMA_VERSION},"version":"{VERSION}","started":false}}"#));
    }

    #[test]
    fn the_schema_is_named_and_described_by_the_body_with_the_header_required_first() {
        /// A body's description.
        #[derive(Serialize, schemars::JsonSchema)]
        #[schemars(rename = "SomeRecord")]
        struct Described {
            started: bool,
        }
        let s = serde_json::to_value(schema_of::<Record<Mode, Config<u32>, Described>>()).unwrap();
        assert_eq!(s["title"], "SomeRecord");
        assert_eq!(s["description"], "A body's description.");
        assert_eq!(s["required"], serde_json::json!(["tool", "mode", "schema_version", "version", "config", "started"]));
    }

    #[test]
    fn only_known_schema_versions_are_read() {
        assert_eq!(check_schema_version(&serde_json::json!({ "schema_version": 1 })), Ok(1));
        assert_eq!(check_schema_version(&serde_json::json!({ "schema_version": 99 })), Err(VersionError::Unknown(99)));
        assert_eq!(check_schema_version(&serde_json::json!({ "schema_version": "1" })), Err(VersionError::Missing));
        assert_eq!(check_schema_version(&serde_json::json!({})), Err(VersionError::Missing));
    }
}
