//! One step, no receiver: a line a second and a sender-side summary.
//! summary.rs works the summary out, print.rs prints, record.rs keeps
//! the JSON record.

mod print;
mod record;
mod summary;

use std::time::Duration;

use crate::fail::Failure;
use blastdrop::record_file;
use blastdrop::sender::{NoPeer, Sender, StepParams};
use blastdrop::session::Started;

use crate::mode::Single;
use crate::settings::Settings;
pub use print::frames_text;
pub use record::schema;
use record::{Record, SingleBody};

pub fn run(settings: &Settings, m: &Single, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    sender.set_queues(m.queues)?;
    print::announce(settings.traffic.paced_rate, m, sender);
    for side in sender.sides().iter().filter(|s| dpdk::af_xdp::is_af_xdp(&s.info.driver)) {
        blastdrop::say!("blast: {}: {}", side.info.name, blastdrop::xdp::state(&side.info.name, &started.eal_args).describe());
    }
    for side in sender.sides() {
        if let Some(from) = side.watch.kernel_source() {
            blastdrop::say!("blast: {}: NIC counters from {from}", side.info.name);
        }
    }
    let params = StepParams {
        queues: m.queues,
        size: m.size,
        mix: m.mix.clone(),
        flows: m.flows,
        rate: settings.traffic.paced_rate,
        count: m.count,
        duration: m.duration,
        warmup: Duration::ZERO,
        window: false,
        live: true,
        shape: m.shape,
        reflect: settings.traffic.reflect,
        replay: None,
    };
    let before = sender.read_counters();
    let cpu_before = blastdrop::host::CpuTimes::now();
    let outcome = sender.run_step(&params, &mut NoPeer)?;
    let host_steal_pct = blastdrop::host::CpuTimes::steal_pct(cpu_before, blastdrop::host::CpuTimes::now());
    let after = sender.read_counters();
    let summary = summary::summarize(settings.traffic.paced_rate, m, sender, &outcome, (&before, &after), host_steal_pct);
    print::print_summary(&summary, sender.socket_side().is_some());
    let (series, series_analysis) = crate::over_time::finish(&settings.outputs, sender, "blast: sent over time")?;
    if let Some(path) = &settings.outputs.json {
        let environment = blastdrop::environment::of_sender(started, sender, m.queues);
        let record = Record::blast(
            "single",
            &settings.config,
            SingleBody { flows: m.flows, src_mac: sender.src_mac(), environment, summary, series, series_analysis },
        );
        record_file::write_json(path, &record)?;
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}
