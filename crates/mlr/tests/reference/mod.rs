//! RFC 9971's reference implementation (PyPI `MLRsearch`, pinned) as an
//! oracle, run by scripts/mlr-oracle in a venv under the workspace's
//! target/ (installed from PyPI the first time, as scripts/test installs
//! cfn-lint); a machine that cannot install it fails the test that asks,
//! saying why. Shared by crates/mlr's tests and the workspace's tests/mlr.rs.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

use serde_json::Value;

/// The reference implementation's version: RFC 9971 cites it.
pub const REFERENCE: &str = "MLRsearch==1.2.1";

/// The workspace's root: the first directory up from this crate's that holds scripts/mlr-oracle.
fn workspace() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("scripts/mlr-oracle").exists() {
        assert!(dir.pop(), "no scripts/mlr-oracle above {}", env!("CARGO_MANIFEST_DIR"));
    }
    dir
}

/// The venv's python with the reference installed (installed once; tests
/// that ask at the same time wait for one install).
fn reference_python() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let venv = workspace().join("target/mlr-reference");
    let python = venv.join("bin/python3");
    let marker = venv.join(REFERENCE);
    if !marker.exists() {
        let made = Command::new("python3").args(["-m", "venv"]).arg(&venv).status().map(|s| s.success()).unwrap_or(false);
        assert!(made, "could not make a venv at {} (python3 -m venv; on Debian: apt-get install python3-venv)", venv.display());
        let pip = Command::new(venv.join("bin/pip")).args(["install", "-q", REFERENCE]).status().map(|s| s.success()).unwrap_or(false);
        assert!(pip, "could not install {REFERENCE} from PyPI into {}", venv.display());
        std::fs::write(&marker, "").unwrap();
    }
    python
}

/// scripts/mlr-oracle's answer to `request`.
pub fn oracle(request: &Value) -> Value {
    let mut child = Command::new(reference_python())
        .arg(workspace().join("scripts/mlr-oracle"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(request.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "scripts/mlr-oracle failed: {err}");
    serde_json::from_slice(&out.stdout).unwrap()
}
