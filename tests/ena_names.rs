//! The ENA counter names the limit verdicts read, checked against the ENA
//! PMD this build runs with: its xstat names are string constants in
//! librte_net_ena, so a renamed or added allowance counter fails here
//! instead of silently turning a verdict into `none`. Run against 22.11
//! (Debian 12), 24.11 (Debian 13) and 25.11 (Debian testing; scripts/dpdk-line)
//! by the test command.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(args: &[&str]) -> String {
    let out = Command::new("pkg-config").args(args).arg("libdpdk").output().expect("pkg-config runs");
    assert!(out.status.success(), "pkg-config {args:?} libdpdk failed");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// The DPDK line, as (year, month).
fn dpdk_line() -> (u32, u32) {
    let v = pkg_config(&["--modversion"]);
    let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

/// librte_net_ena in the PMD folder beside the DPDK libraries.
fn ena_pmd() -> Option<PathBuf> {
    let libdir = PathBuf::from(pkg_config(&["--variable=libdir"]));
    let dpdk = libdir.join("dpdk");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dpdk)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("pmds-"))
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("librte_net_ena.so")))
        .filter(|p| !p.is_symlink())
        .collect();
    found.sort();
    found.pop().or_else(|| {
        // A static or unusual layout: the shared library beside the others.
        let p = libdir.join("librte_net_ena.so");
        p.exists().then_some(p)
    })
}

/// Printable runs of 4 or more bytes, as `strings` finds them.
fn strings(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    bytes.split(|b| !(0x20..0x7f).contains(b)).filter(|s| s.len() >= 4).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}

#[test]
fn the_ena_counter_names_are_the_pmds_own() {
    let Some(pmd) = ena_pmd() else {
        assert!(
            std::env::var_os("BLASTDROP_NO_ENA_PMD").is_some(),
            "no librte_net_ena next to DPDK {} (libdir {}): the ENA names cannot be checked; set BLASTDROP_NO_ENA_PMD=1 for a DPDK built without it",
            pkg_config(&["--modversion"]),
            pkg_config(&["--variable=libdir"])
        );
        return common::skip_or_fail(
            "the_ena_counter_names_are_the_pmds_own",
            "this DPDK has no ENA PMD (BLASTDROP_NO_ENA_PMD is set): install Debian's DPDK (librte-net-ena) to check the names",
        );
    };
    let names = strings(&pmd);
    let has = |n: &str| names.iter().any(|s| s == n);
    let line = dpdk_line();
    eprintln!("checking {} (DPDK {}.{:02})", pmd.display(), line.0, line.1);

    for n in limits::ENA_ALLOWANCES {
        assert!(has(n), "{n} is not among {}'s xstat names: the allowance verdicts would read nothing", pmd.display());
    }
    // conntrack_allowance_available is a level from 23.11 on.
    for n in limits::ENA_LEVELS {
        if line >= (23, 11) {
            assert!(has(n), "{n} is missing from {} (DPDK {}.{})", pmd.display(), line.0, line.1);
        } else {
            assert!(!has(n), "{n} appeared in DPDK {}.{}: the counter sets assume it from 23.11", line.0, line.1);
        }
    }
    // ENA Express (SRD) from 23.11 on: counters and levels, listed always.
    for n in limits::ENA_EXPRESS_COUNTERS.iter().chain(limits::ENA_EXPRESS_LEVELS) {
        if line >= (23, 11) {
            assert!(
                has(n),
                "{n} is missing from {} (DPDK {}.{}): the ENA Express evidence would read nothing",
                pmd.display(),
                line.0,
                line.1
            );
        } else {
            assert!(!has(n), "{n} appeared in DPDK {}.{}: the counter sets assume it from 23.11", line.0, line.1);
        }
    }
    let srd: Vec<&String> =
        names.iter().filter(|s| s.starts_with("ena_srd_") && s.chars().all(|c| c.is_ascii_lowercase() || c == '_')).collect();
    for n in srd {
        assert!(
            limits::ENA_EXPRESS_COUNTERS.contains(&n.as_str()) || limits::ENA_EXPRESS_LEVELS.contains(&n.as_str()),
            "{} names {n}, which the ENA Express evidence does not read: add it to crates/limits",
            pmd.display()
        );
    }
    // Every allowance name the PMD knows is one the verdicts read.
    let known: Vec<&str> = limits::ENA_ALLOWANCES.iter().chain(limits::ENA_LEVELS).copied().collect();
    let theirs: Vec<&String> = names
        .iter()
        .filter(|s| {
            s.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                && (s.ends_with("_allowance_exceeded") || s.ends_with("_allowance_available"))
        })
        .collect();
    assert!(!theirs.is_empty());
    for n in theirs {
        assert!(known.contains(&n.as_str()), "{} names {n}, which the verdicts do not read: add it to crates/limits", pmd.display());
    }
}
