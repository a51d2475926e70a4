//! Bad input: each case ends within seconds with one line that names the
//! problem and the fix, and a non-zero exit.

mod common;
use common::*;
use std::time::Duration;

/// Runs `bin` with `args` (and EAL arguments when given) and checks the
/// one-line error; returns that line.
fn one_line_error(bin: &str, args: &[&str], eal: Option<Vec<String>>) -> String {
    let mut all = strings(args);
    if let Some(eal) = eal {
        all.push("--".into());
        all.extend(eal);
    }
    let out = run(bin, &all, Duration::from_secs(20));
    assert!(!out.status.success(), "{bin} {all:?} should fail: {}", out.stdout);
    assert!(out.elapsed < Duration::from_secs(10), "took {:?}", out.elapsed);
    let tool = if bin == BLAST { "blast" } else { "drop" };
    let prefix = format!("{tool}: error: ");
    let errors: Vec<&str> = out.stderr.lines().filter(|l| l.starts_with(&prefix)).collect();
    assert_eq!(errors.len(), 1, "exactly one error line, got {errors:?} in {}", out.stderr);
    assert_eq!(out.stderr.lines().last(), Some(errors[0]), "the error is the last word");
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    errors[0].to_owned()
}

fn null_eal() -> Vec<String> {
    let mut e = eal_base();
    e.extend(strings(&["--vdev=net_null0", "-l", "0,1"]));
    e
}

#[test]
fn unknown_port_lists_the_ports_there_are() {
    let _g = heavy();
    let l = one_line_error(BLAST, &["--port", "3"], Some(null_eal()));
    assert!(l.contains("port \"3\" not found") && l.contains("0 (net_null0)") && l.contains("--vdev"), "{l}");
    let l = one_line_error(DROP, &["--port", "net_nothing0"], Some(null_eal()));
    assert!(l.contains("not found"), "{l}");
}

#[test]
fn more_queues_than_the_device_allows() {
    let _g = heavy();
    // net_null has 1024 queues; the device check comes before the lcore check.
    let l = one_line_error(BLAST, &["--port", "0", "--queues", "1025"], Some(null_eal()));
    assert!(l.contains("at most 1024") && l.contains("lower --queues"), "{l}");
}

#[test]
fn more_queues_than_lcores() {
    let _g = heavy();
    let l = one_line_error(BLAST, &["--queues", "2"], Some(null_eal()));
    assert!(l.contains("needs 2 worker lcores") && l.contains("--lcores"), "{l}");
}

#[test]
fn frame_size_below_64() {
    let l = one_line_error(BLAST, &["--size", "63"], None);
    assert!(l.contains("63") && l.contains("minimum of 64"), "{l}");
    let l = one_line_error(DROP, &["--max-size", "10"], None);
    assert!(l.contains("minimum of 64"), "{l}");
}

#[test]
fn frame_size_above_the_port_max() {
    let _g = heavy();
    let l = one_line_error(BLAST, &["--size", "70000"], Some(null_eal()));
    assert!(l.contains("frame size 70000") && l.contains("takes frames up to") && l.contains("lower --size"), "{l}");
}

#[test]
fn zero_flows() {
    let l = one_line_error(BLAST, &["--flows", "0"], None);
    assert!(l.contains("at least 1 flow"), "{l}");
    let l = one_line_error(BLAST, &["--flows", "100", "--src-port", "65500"], Some(null_eal()));
    assert!(l.contains("65535"), "{l}");
}

#[test]
fn unparsable_values() {
    for args in [
        &["--rate", "fast"][..],
        &["--duration", "-1"],
        &["--count", "many"],
        &["--dst-mac", "zz"],
        &["--burst", "0"],
        &["--queues", "0"],
        &["--nonsense"],
    ] {
        one_line_error(BLAST, args, None);
    }
}

#[test]
fn eal_that_cannot_start_says_why() {
    let _g = heavy();
    let l = one_line_error(BLAST, &[], Some(strings(&["--no-huge", "-m", "512", "--no-shconf", "--no-pci", "--lcores=0@0,1@99999"])));
    assert!(l.contains("EAL failed to start") && l.contains("after --"), "{l}");
}

#[test]
fn no_hugepages_says_to_set_them_up_or_pass_no_huge() {
    if blastdrop::eal_args::hugepages_reserved(std::path::Path::new("/sys/kernel/mm/hugepages")) > 0 {
        eprintln!("SKIP no_hugepages_says_to_set_them_up_or_pass_no_huge: this machine has hugepages reserved");
        return;
    }
    let _g = heavy();
    let l = one_line_error(BLAST, &[], Some(strings(&["--no-pci", "--no-shconf", "--vdev=net_null0", "-l", "0,1"])));
    assert!(l.contains("hugepages") && l.contains("--no-huge"), "{l}");
}

#[test]
fn port_that_will_not_start_says_so() {
    let _g = heavy();
    let dir = scratch("nostart");
    let mut eal = eal_base();
    // A memif client whose server socket does not exist refuses to start.
    eal.push(format!("--vdev=net_memif0,role=client,socket={}/none.sock,socket-abstract=no", dir.display()));
    eal.extend(strings(&["-l", "0,1"]));
    let l = one_line_error(BLAST, &["--port", "net_memif0"], Some(eal));
    assert!(l.contains("cannot start port 0 (net_memif0, net_memif)") && l.contains("peer"), "{l}");
}

#[test]
fn link_that_never_comes_up_times_out() {
    let _g = heavy();
    let dir = scratch("nolink");
    let mut eal = eal_base();
    // A memif server with no client: the port starts, the link never comes up.
    eal.push(format!("--vdev=net_memif0,role=server,socket={}/none.sock,socket-abstract=no", dir.display()));
    eal.extend(strings(&["-l", "0,1"]));
    let l = one_line_error(BLAST, &["--port", "net_memif0", "--link-timeout", "1"], Some(eal));
    assert!(l.contains("still down") && l.contains("peer"), "{l}");
}

#[test]
fn shapes_knee_and_latency_flags_are_checked_before_anything_starts() {
    let l = one_line_error(BLAST, &["--rate", "1M", "--shape", "bursty"], None);
    assert!(l.contains("\"bursty\" is not an arrival shape") && l.contains("burst:N"), "{l}");
    let l = one_line_error(BLAST, &["--shape", "even"], None);
    assert!(l.contains("--shape even paces frames") && l.contains("--rate"), "{l}");
    let l = one_line_error(BLAST, &["--shape", "open", "--rate", "1M"], None);
    assert!(l.contains("--shape open is unpaced"), "{l}");
    let l = one_line_error(BLAST, &["--find-knee"], None);
    assert!(l.contains("--find-knee measures loss at the receiver") && l.contains("--peer"), "{l}");
    let l = one_line_error(BLAST, &["--find-knee", "--peer", "127.0.0.1:9", "--size", "64,128"], None);
    assert!(l.contains("one --queues and one --size"), "{l}");
    let l = one_line_error(BLAST, &["--find-knee", "--peer", "127.0.0.1:9", "--pdr-loss", "0.1", "--loss", "1"], None);
    assert!(l.contains("--pdr-loss at least --loss"), "{l}");
    let l = one_line_error(BLAST, &["--sla", "P99.9<=50us"], None);
    assert!(l.contains("--sla limits the knee's latency") && l.contains("--reflect"), "{l}");
    let l = one_line_error(BLAST, &["--find-knee", "--peer", "127.0.0.1:9", "--reflect", "--sla", "P97<=5us"], None);
    assert!(l.contains("is not a latency limit") && l.contains("P99.9<=50us"), "{l}");
    let l = one_line_error(BLAST, &["--sentence"], None);
    assert!(l.contains("--sentence renders a knee"), "{l}");
}
