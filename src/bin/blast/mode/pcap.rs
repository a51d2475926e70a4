//! The capture --pcap names, read into memory and scheduled over the
//! queues, or the failure that says what is wrong with it and what to do.

use crate::fail::Failure;

use super::ReplayRun;
use crate::args::Args;

pub fn replay(args: &Args) -> Result<ReplayRun, Failure> {
    let file = args.pcap.clone().expect("--pcap given");
    let capture = capture::Capture::read(&file, args.pcap_memory).map_err(|e| capture_failure(&file, e))?;
    let queues = args.queues[0];
    let schedule = capture::Schedule::new(&capture, args.pcap_timing, args.paced_rate(), queues, args.pcap_loop);
    Ok(ReplayRun { queues, file, capture, schedule, duration: args.duration })
}

/// A capture blast cannot replay: what is wrong, and what to do.
fn capture_failure(file: &std::path::Path, e: capture::CaptureError) -> Failure {
    use capture::CaptureError as E;
    let fix = match &e {
        E::Io(_) => "check the path and its permissions",
        E::Empty | E::NoFrames => "capture some traffic into it first (tcpdump -w FILE)",
        E::NotACapture(_) => "give a pcap or pcapng file (tcpdump -w, dumpcap, Wireshark)",
        E::Truncated { .. } => "copy the file again, or keep its whole frames (editcap -r FILE OUT 1-N)",
        E::Malformed { .. } => "check it with capinfos; rewrite it with editcap -F pcap",
        E::LinkType(_) => "capture on an Ethernet interface (tcpdump -i any writes Linux cooked frames)",
        E::Snapped { .. } => "capture whole frames (tcpdump -s 0)",
        E::Runt { .. } => "leave that frame out (editcap FILE OUT N)",
        E::Untimed { .. } => "save it with timestamps (editcap -F pcap)",
        E::TooBig { .. } => "raise --pcap-memory, or replay a part of it (editcap -c N)",
    };
    let msg = format!("--pcap {}: {e}: {fix}", file.display());
    if matches!(e, E::Io(_)) {
        Failure::runtime(msg)
    } else {
        Failure::usage(msg)
    }
}
