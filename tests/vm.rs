//! The path a user with a PCI NIC takes, in a QEMU guest (scripts/vm): two
//! emulated Intel 82576 NICs bound to DPDK by deploy/setup.sh (vfio-pci
//! through the guest's IOMMU, then uio_pci_generic), a blast -> drop ladder
//! over the hardware PMD (net_e1000_igb) with the EAL arguments the script
//! wrote, drop killed mid-ladder, and --undo. The guest script
//! (tests/vm/pci.sh) only runs things; the judging is here.
//!
//! Booting a guest needs root, QEMU from a Debian 13 root and a guest image
//! (minutes the first time), so this runs only with BLASTDROP_VM=1, as
//! scripts/test sets it; BLASTDROP_VM_BIN names the binaries to copy in
//! (scripts/test gives the `emulated` profile's: under TCG a debug build
//! sends too slowly to load the emulated path).

mod common;

use common::{assert_exact, assert_matches_schema};
use std::path::{Path, PathBuf};
use std::process::Command;

fn read(out: &Path, name: &str) -> String {
    std::fs::read_to_string(out.join(name)).unwrap_or_else(|e| panic!("the guest left no {name} in {}: {e}", out.display()))
}

fn rc(out: &Path, name: &str) -> i32 {
    read(out, &format!("{name}.rc")).trim().parse().unwrap_or(-1)
}

fn record(out: &Path, name: &str) -> serde_json::Value {
    serde_json::from_str(&read(out, name)).unwrap_or_else(|e| panic!("{name} is not JSON: {e}"))
}

/// Every step: an exact account, a verdict with its evidence, and loss
/// never called `none`. Returns (sent, lost) summed.
fn judge_steps(rec: &serde_json::Value, what: &str) -> (u64, u64) {
    let steps = rec["steps"].as_array().unwrap_or_else(|| panic!("{what}: no steps: {rec}"));
    assert!(!steps.is_empty(), "{what}: no steps");
    let (mut sent, mut lost) = (0, 0);
    for step in steps {
        let (s, l) = assert_exact(step);
        sent += s;
        lost += l;
        let limit = step["limit"].as_str().unwrap_or_else(|| panic!("{what}: a step without a limit: {step}"));
        let limits = step["verdict"]["limits"].as_array().unwrap_or_else(|| panic!("{what}: no verdict: {step}"));
        assert!(!limits.is_empty(), "{what}: an empty verdict: {step}");
        if limit != "none" {
            assert!(
                limits.iter().all(|l| l["evidence"].as_str().is_some_and(|e| !e.is_empty())),
                "{what}: a limit without evidence: {step}"
            );
        }
        if l > 0 {
            // The loss is named where it happened (the emulated NIC counts
            // none: `network`, or the receiver's own counters), never `none`.
            assert_ne!(limit, "none", "{what}: {l} lost and no limit: {step}");
            let named = limits
                .iter()
                .any(|x| matches!(x["kind"].as_str(), Some("network" | "receiver")) && x["frames"].as_u64().is_some_and(|f| f > 0));
            assert!(named, "{what}: {l} lost in an emulated NIC is a receiver or network limit, not {limit}: {step}");
        }
        // The receiver's hardware counters were read: imissed from the
        // basic stats, igb's own drop counters from its xstats.
        let r = &step["receiver"];
        assert!(r["imissed"].is_u64(), "{what}: no imissed: {r}");
        assert!(r["xstats"].get("rx_management_dropped").is_some(), "{what}: igb's rx_management_dropped not watched: {}", r["xstats"]);
    }
    (sent, lost)
}

/// drop's 2 RX queues both got frames: the NIC's RSS spread the flows.
fn rss_spread(rec: &serde_json::Value, what: &str) {
    for step in rec["steps"].as_array().unwrap() {
        let queues = step["receiver"]["queues"].as_array().unwrap();
        assert_eq!(queues.len(), 2, "{what}: drop ran 2 RX queues: {step}");
        for q in queues {
            assert!(q["packets"].as_u64().unwrap() > 0, "{what}: RSS left an RX queue idle: {}", step["receiver"]["queues"]);
        }
    }
}

/// The guest's two NICs, in address order (blast's, drop's).
fn nics(out: &Path) -> (String, String) {
    let text = read(out, "nics");
    let mut it = text.split_whitespace().map(String::from);
    let (tx, rx) = (it.next().unwrap_or_default(), it.next().unwrap_or_default());
    assert!(tx.starts_with("0000:") && rx.starts_with("0000:"), "the guest found its two igb NICs: {text}");
    (tx, rx)
}

fn setup_case(out: &Path, case: &str, driver: &str) {
    let (tx, rx) = nics(out);
    let first = read(out, &format!("{case}-setup-1.txt"));
    assert_eq!(rc(out, &format!("{case}-setup-1")), 0, "{case}: set-up failed:\n{first}");
    let wants = [
        "not ENA: ".to_string(),
        format!("bind {tx} to {driver}"),
        format!("bind {rx} to {driver}"),
        format!("write the EAL arguments (-a {tx} -a {rx})"),
    ];
    for want in &wants {
        assert!(first.contains(want), "{case}: {want:?} missing from the set-up's first run:\n{first}");
    }
    if driver == "vfio-pci" {
        // Each case reserves them: the one before gave back what it reserved (--undo).
        assert!(first.contains("reserve 384 hugepages of 2 MiB"), "{first}");
        assert!(first.contains("driver: vfio-pci through the IOMMU ("), "{first}");
        assert!(first.contains("skipped (ENA only): building vfio-pci with write-combining"), "{first}");
    } else {
        assert!(first.contains("driver: uio_pci_generic"), "{first}");
        assert!(!first.contains("control_path_poll_interval"), "no ENA devarg on igb: {first}");
    }
    let second = read(out, &format!("{case}-setup-2.txt"));
    assert_eq!(rc(out, &format!("{case}-setup-2")), 0, "{second}");
    assert!(second.contains("nothing to change: every step was done already"), "{case}: the second run changed something:\n{second}");
    let (s1, s2) = (read(out, &format!("{case}-state-1")), read(out, &format!("{case}-state-2")));
    assert_eq!(s1, s2, "{case}: the second run changed the machine");
    for pci in [&tx, &rx] {
        assert!(s1.contains(&format!("{pci} {driver}")), "{case}: {pci} not bound to {driver}: {s1}");
    }
    let undo = read(out, &format!("{case}-undo.txt"));
    assert_eq!(rc(out, &format!("{case}-undo")), 0, "{undo}");
    let after = read(out, &format!("{case}-state-undo"));
    for pci in [&tx, &rx] {
        assert!(after.contains(&format!("{pci} igb")), "{case}: --undo left {pci} away from igb: {after}\n{undo}");
    }
    assert!(!after.contains("-a 0000"), "{case}: --undo left the EAL arguments behind: {after}");
    let links = read(out, &format!("{case}-links-undo"));
    assert_eq!(links.lines().filter(|l| !l.starts_with("lo ")).count(), 2, "{case}: both NICs are kernel interfaces again: {links}");
}

#[test]
fn pci_nics_bound_by_the_setup_script_carry_exact_ladders_over_the_igb_pmd() {
    if std::env::var("BLASTDROP_VM").as_deref() != Ok("1") {
        eprintln!("SKIP the QEMU guest test: set BLASTDROP_VM=1 (scripts/test does, as root) to boot it");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bin =
        std::env::var("BLASTDROP_VM_BIN").map(PathBuf::from).unwrap_or_else(|_| Path::new(common::BLAST).parent().unwrap().to_path_buf());
    // BLASTDROP_VM_ARCH=arm64: the virt machine with an SMMUv3, running the
    // aarch64 build (BLASTDROP_VM_BIN: target/aarch64/.../emulated).
    let arch = std::env::var("BLASTDROP_VM_ARCH").unwrap_or_else(|_| "x86_64".into());
    let out = root.join(format!("target/vm/pci-{arch}"));
    let started = std::time::Instant::now();
    let status = Command::new(root.join("scripts/vm"))
        .args([
            "--arch",
            &arch,
            "--bin",
            &bin.display().to_string(),
            "--out",
            &out.display().to_string(),
            "--timeout",
            "840",
            "--mem",
            "3072",
        ])
        .arg("bash tests/vm/pci.sh")
        .status()
        .expect("scripts/vm runs");
    eprintln!("the guest ran in {:.0} s", started.elapsed().as_secs_f64());
    assert!(status.success(), "scripts/vm failed ({status}); the console above says where");

    let guest = read(&out, "guest.txt");
    assert!(guest.lines().any(|l| l.starts_with("iommu: ") && l.len() > "iommu: ".len()), "the guest has its IOMMU: {guest}");
    setup_case(&out, "vfio", "vfio-pci");
    setup_case(&out, "uio", "uio_pci_generic");

    for case in ["vfio", "uio"] {
        let text = read(&out, &format!("{case}-paced.txt"));
        assert_eq!(rc(&out, &format!("{case}-paced")), 0, "{case}: the paced ladder failed:\n{text}");
        assert!(text.contains("(from sysfs"), "{case}: lcores placed from the guest's sysfs topology:\n{text}");
        assert!(text.contains("net_e1000_igb"), "{case}: over the hardware PMD:\n{text}");
        let rec = record(&out, &format!("{case}-paced.json"));
        assert_matches_schema(&rec, "blast-ladder");
        let (sent, lost) = judge_steps(&rec, &format!("{case} paced"));
        rss_spread(&rec, &format!("{case} paced"));
        eprintln!("{case}: paced ladder exact: {sent} sent, {lost} lost");
    }

    let text = read(&out, "vfio-unpaced.txt");
    assert_eq!(rc(&out, "vfio-unpaced"), 0, "the unpaced ladder failed:\n{text}");
    let rec = record(&out, "vfio-unpaced.json");
    let (sent, lost) = judge_steps(&rec, "unpaced");
    eprintln!(
        "unpaced: {sent} sent, {lost} lost; limits {:?}",
        rec["steps"].as_array().unwrap().iter().map(|s| s["limit"].clone()).collect::<Vec<_>>()
    );

    for round in 1..=3 {
        let killed = read(&out, &format!("vfio-killed-{round}.txt"));
        assert_ne!(rc(&out, &format!("vfio-killed-{round}")), 0, "round {round}: blast must fail when its receiver is killed:\n{killed}");
        assert!(killed.contains("the receiver is gone"), "round {round}: blast names the receiver's end:\n{killed}");
        assert!(!killed.contains("panicked"), "{killed}");
        // The steps before the kill stand, exact; none after it is made up.
        if let Ok(text) = std::fs::read_to_string(out.join(format!("vfio-killed-{round}.json"))) {
            let rec: serde_json::Value = serde_json::from_str(&text).expect("the killed run's record is JSON");
            for step in rec["steps"].as_array().into_iter().flatten().filter(|s| s["error"].is_null()) {
                assert_exact(step);
            }
        }
        if round > 1 {
            // A new drop opened the NIC the killed one held.
            assert!(killed.contains("step 1 ("), "round {round}: the next drop served a step:\n{killed}");
        }
    }
}
