//! A run's figures over time at its end: the series taken from the sender,
//! what was found in it said, and its plot drawn where --series-svg asks.

use crate::fail::Failure;
use blastdrop::sender::Sender;

use crate::settings::Outputs;

/// The run's series and its analysis (None when the sender kept none).
pub fn finish(outputs: &Outputs, sender: &mut Sender, title: &str) -> Result<(Option<series::Series>, Option<series::Analysis>), Failure> {
    let Some((series, analysis)) = sender.take_timeline().map(|t| t.finish()) else { return Ok((None, None)) };
    blastdrop::say!("blast: over time: {}", analysis.sentence);
    if let Some(path) = &outputs.series_svg {
        blastdrop::timeline::write_plot(path, &series, &analysis, title)?;
    }
    Ok((Some(series), Some(analysis)))
}
