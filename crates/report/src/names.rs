//! Runs named so that no two share a name: a record is named by its
//! file's name, and where several share it (three `drop.json` from
//! different folders) by the shortest end of its path that no other run's
//! path ends with (`a/drop.json`, `b/drop.json`). A label is shown beside
//! the name, not instead of it: one label may cover several runs (an atlas
//! row of several ladders, or the EC2 instance type every run of one
//! instance carries), so it does not tell runs apart.

use std::path::{Component, Path};

use crate::record::Record;

/// The records, each with the name the report gives it.
pub fn name_runs(records: &[Record]) -> Vec<Record> {
    let paths: Vec<Vec<String>> = records.iter().map(|r| components(&r.path)).collect();
    let mut named: Vec<Record> = records.to_vec();
    for (i, r) in named.iter_mut().enumerate() {
        let shared = |k: usize| paths.iter().enumerate().any(|(j, p)| j != i && tail(p, k) == tail(&paths[i], k));
        if !shared(1) {
            continue;
        }
        let own = (2..=paths[i].len()).find(|&k| !shared(k));
        r.shown_as = Some(match own {
            Some(k) => tail(&paths[i], k).join("/"),
            // The same file given twice: its path is all there is, and the run's number tells the two apart.
            None => format!("{} (run {})", paths[i].join("/").trim_start_matches('/'), i + 1),
        });
    }
    named
}

/// The path's parts, made absolute where it can be (relative paths given
/// from different folders), without the root.
fn components(path: &Path) -> Vec<String> {
    let whole = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    whole
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".to_string()),
            _ => None,
        })
        .collect()
}

/// Its last `k` parts (all of them when it has fewer).
fn tail(parts: &[String], k: usize) -> &[String] {
    &parts[parts.len().saturating_sub(k)..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drop_at(path: &str, label: Option<&str>) -> Record {
        let v: serde_json::Value = serde_json::from_str(include_str!("../testdata/drop.json")).unwrap();
        Record::from_json(Path::new(path), v, label.map(str::to_string)).unwrap()
    }

    #[test]
    fn runs_that_share_a_file_name_are_named_by_the_shortest_path_end_of_their_own() {
        let runs = [
            drop_at("/x/a/drop.json", None),
            drop_at("/x/b/drop.json", Some("c8gn.large")),
            drop_at("/y/a/drop.json", None),
            drop_at("/y/knee.json", None),
        ];
        let names: Vec<String> = name_runs(&runs).iter().map(Record::file_name).collect();
        assert_eq!(names, ["x/a/drop.json", "b/drop.json", "y/a/drop.json", "knee.json"]);
        // The same file twice: its path, and its run's number.
        let names: Vec<String> =
            name_runs(&[drop_at("/r/drop.json", None), drop_at("/r/drop.json", None)]).iter().map(Record::file_name).collect();
        assert_eq!(names, ["r/drop.json (run 1)", "r/drop.json (run 2)"]);
        // A relative path is read from here: two runs, one here and one in a folder, differ.
        let names: Vec<String> =
            name_runs(&[drop_at("drop.json", None), drop_at("sub/drop.json", None)]).iter().map(Record::file_name).collect();
        let here = std::env::current_dir().unwrap();
        let parent = here.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(names, [format!("{parent}/drop.json"), "sub/drop.json".to_string()]);
    }
}
