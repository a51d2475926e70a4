//! How the flags are written into a record's `config`: a list of one as
//! that value (as it has always been written), a mix, a timing or a
//! latency limit as its label.

use serde::Serialize;

use blastdrop::session::parse::List;

/// How `ser_one_or_list` writes: one value as itself, several as a list.
#[derive(serde::Serialize, schemars::JsonSchema)]
#[serde(untagged)]
#[allow(dead_code)] // describes the JSON only
pub enum OneOrList<T> {
    One(T),
    List(Vec<T>),
}

/// One value as itself (as it has always been written), several as a list.
pub fn ser_one_or_list<T: serde::Serialize, S: serde::Serializer>(v: &Option<List<T>>, s: S) -> Result<S::Ok, S::Error> {
    match v.as_ref().map(|l| l.as_slice()) {
        Some([one]) => one.serialize(s),
        Some(many) => many.serialize(s),
        None => s.serialize_none(),
    }
}

pub fn ser_mix<S: serde::Serializer>(v: &Option<wire::SizeMix>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(m) => s.serialize_str(&m.label()),
        None => s.serialize_none(),
    }
}

pub fn ser_display<T: std::fmt::Display, S: serde::Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.to_string())
}

pub fn ser_sla<S: serde::Serializer>(v: &Option<latency::Sla>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_str(&x.label()),
        None => s.serialize_none(),
    }
}
