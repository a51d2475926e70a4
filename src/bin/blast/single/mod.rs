//! One step, no receiver: a line a second and a sender-side summary.
//! summary.rs works the summary out, report.rs prints, record.rs keeps
//! the JSON record.

mod record;
mod report;
mod summary;

use std::time::Duration;

use blastdrop::fail::Failure;
use blastdrop::report as out;
use blastdrop::sender::{NoPeer, Sender, StepParams};
use blastdrop::session::Started;

use crate::args::Args;
use crate::mode::Single;
pub use record::schema;
use record::{Record, SingleBody};
pub use report::frames_text;

pub fn run(args: &Args, m: &Single, started: &Started, sender: &mut Sender) -> Result<(), Failure> {
    sender.set_queues(m.queues)?;
    report::announce(args, m, sender);
    let params = StepParams {
        queues: m.queues,
        size: m.size,
        mix: m.mix.clone(),
        flows: m.flows,
        rate: args.paced_rate(),
        count: m.count,
        duration: m.duration,
        warmup: Duration::ZERO,
        window: false,
        live: true,
        shape: m.shape,
        reflect: args.reflect,
        replay: None,
    };
    let before = sender.read_counters();
    let cpu_before = blastdrop::host::CpuTimes::now();
    let outcome = sender.run_step(&params, &mut NoPeer)?;
    let host_steal_pct = blastdrop::host::CpuTimes::steal_pct(cpu_before, blastdrop::host::CpuTimes::now());
    let after = sender.read_counters();
    let summary = summary::summarize(args, m, sender, &outcome, (&before, &after), host_steal_pct);
    report::print_summary(&summary);
    let (series, series_analysis) = crate::over_time::finish(args, sender, "blast: sent over time")?;
    if let Some(path) = &args.json {
        let environment = blastdrop::environment::of_sender(started, sender, m.queues);
        let record = Record::blast(
            "single",
            args,
            SingleBody { flows: m.flows, src_mac: sender.src_mac(), environment, summary, series, series_analysis },
        );
        out::write_json(path, &record)?;
    }
    match outcome.failure {
        Some(msg) => Err(Failure::runtime(msg)),
        None => Ok(()),
    }
}
