//! The README as a newcomer follows it: the command it prints for the
//! control channel's token file, run exactly as printed and read by the
//! real drop and blast; its figures, each found in the record it quotes;
//! and its shape (the two commands first, under 150 lines).

mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const README: &str = include_str!("../README.md");
const EC2: &str = include_str!("../docs/ec2.md");
const PERFORMANCE: &str = include_str!("../docs/performance.md");
const GUIDE: &str = include_str!("../docs/guide.md");

/// The README's lines inside ``` blocks, trimmed.
fn code_lines(doc: &str) -> Vec<&str> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if inside {
            out.push(line.trim());
        }
    }
    out
}

/// The one command the README prints to make the token file.
fn token_command() -> &'static str {
    let found: Vec<&str> = code_lines(README)
        .into_iter()
        .filter(|l| l.contains(".blastdrop-token") && !l.contains("--token-file") && !l.starts_with("scp"))
        .collect();
    assert_eq!(found.len(), 1, "the README should print one command that makes the token file: {found:?}");
    found[0]
}

/// Runs the README's token command with `home` as ~, as sh runs it;
/// returns the file it made.
fn make_token(home: &Path) -> PathBuf {
    let cmd = token_command();
    let out = Command::new("sh").arg("-c").arg(cmd).env("HOME", home).current_dir(home).output().expect("sh runs");
    assert!(out.status.success(), "{cmd}: {}", String::from_utf8_lossy(&out.stderr));
    home.join(".blastdrop-token")
}

#[test]
fn the_token_command_makes_a_private_one_line_secret_the_runbook_prints_too() {
    let cmd = token_command();
    assert!(EC2.lines().any(|l| l.trim_start().starts_with(cmd)), "docs/ec2.md should print the README's token command: {cmd}");
    for l in code_lines(README).into_iter().filter(|l| l.contains("--token-file")) {
        assert!(l.contains("--token-file ~/.blastdrop-token"), "a README command reads another token file than the one it makes: {l}");
    }
    let home = scratch("readme-token");
    let file = make_token(&home);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{cmd} leaves {file:?} readable by others ({mode:o})");
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1, "one line: {text:?}");
    assert_eq!(text.trim_end().len(), 44, "32 random bytes in base64: {text:?}");
    // What drop and blast call with --token-file.
    let (secret, source) = control::Secret::load(Some(&file), None, None).unwrap().expect("a secret");
    assert_eq!(source, control::SecretSource::File);
    let nonce = control::nonce();
    assert!(secret.verify(&nonce, &secret.proof(&nonce)));
    // Run again, it makes another secret (a fresh one per pair of hosts).
    let again = scratch("readme-token-again");
    let (other, _) = control::Secret::load(Some(&make_token(&again)), None, None).unwrap().unwrap();
    assert!(!secret.verify(&nonce, &other.proof(&nonce)));
    let _ = std::fs::remove_dir_all(&home);
    let _ = std::fs::remove_dir_all(&again);
}

/// drop --listen and blast --peer, both given the token file the README's
/// command made: a one-step ladder over memif is served and counted; a
/// blast with another file so made is refused for its secret.
#[test]
fn drop_and_blast_read_the_token_file_the_readme_makes() {
    let _g = heavy();
    let dir = scratch("readme-token-run");
    let token = make_token(&dir);
    let token = token.to_str().unwrap();
    let (mut drop, addr, sock) = listening_drop(&dir, "m", 1, &["--token-file", token]);
    let json = dir.join("run.json");
    let ladder = |file: &str, json: &str| {
        let args = [
            "--peer",
            &addr,
            "--token-file",
            file,
            "--queues",
            "1",
            "--size",
            "64",
            "--rate",
            "100k",
            "--warmup",
            "0.2s",
            "--duration",
            "0.3s",
            "--drain",
            "0.2s",
            "--json",
            json,
        ];
        run(BLAST, &memif_blast_args(&sock, 1, &args), Duration::from_secs(60))
    };
    let out = ladder(token, json.to_str().unwrap());
    assert!(out.status.success(), "blast with the README's token file: {:?}\n{}\n{}", out.status, out.stdout, out.stderr);
    let v = read_json(&json);
    let step = &v["steps"][0];
    let sent = step["sent"]["packets"].as_u64().unwrap();
    assert!(sent > 0 && step["receiver"]["packets"].as_u64() == Some(sent), "memif loses nothing: {step}");
    let elsewhere = scratch("readme-token-other");
    let other = make_token(&elsewhere);
    let out = ladder(other.to_str().unwrap(), dir.join("refused.json").to_str().unwrap());
    assert_eq!(out.status.code(), Some(1), "blast with another secret: {}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.lines().any(|l| l.starts_with("blast: error: ") && l.contains("wrong secret")), "{}", out.stderr);
    assert!(drop.try_status().is_none(), "drop serves on after a wrong secret");
    sigint(&drop);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&elsewhere);
}

/// The README's figures are real: each row of its tables is a row of the
/// page it names (the benchmark's results, the memif ladder's whole run).
#[test]
fn the_readmes_figures_are_quoted_from_their_records() {
    let rows: Vec<&str> = README.lines().filter(|l| l.starts_with("| ") && l.contains("x |")).collect();
    assert!(rows.len() >= 2, "the README's result table: {rows:?}");
    let perf: Vec<&str> = PERFORMANCE.lines().collect();
    for r in &rows {
        let at = perf.iter().position(|l| l == r).unwrap_or_else(|| panic!("not in docs/performance.md as written: {r}"));
        let table = perf[..at].iter().rev().find(|l| l.starts_with("### ")).unwrap();
        assert!(table.contains(": 64 B frames, 1 queue(s) on 1 worker lcore(s)"), "{r} is from {table}, not the 64 B one-queue run");
    }
    assert!(README.contains("2026-11-30") && PERFORMANCE.contains("2 MiB hugepages, 2026-11-30"), "the result's date and conditions");
    let ladder: Vec<&str> =
        code_lines(README).into_iter().filter(|l| l.starts_with(|c: char| c.is_ascii_digit()) || l.starts_with("ceiling")).collect();
    assert!(!ladder.is_empty(), "the README's ladder rows");
    for r in ladder {
        assert!(GUIDE.lines().any(|l| l.trim() == r), "not in docs/guide.md's whole run: {r}");
    }
}

/// What a newcomer sees first: under 150 lines, and the first commands on
/// the page are the two commands.
#[test]
fn the_readme_is_short_and_opens_with_the_two_commands() {
    let n = README.lines().count();
    assert!(n < 150, "README.md is {n} lines");
    let first: Vec<&str> = code_lines(README).into_iter().take(2).collect();
    assert!(first[0].starts_with("scripts/demo ") && first[1].starts_with("scripts/test "), "{first:?}");
}
