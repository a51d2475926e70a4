//! `blast report`: the records of earlier runs as one HTML file and one
//! Markdown file. A subcommand of blast rather than a binary of its own:
//! it is installed wherever blast is, and it starts no EAL (it only reads
//! JSON), so it runs on a laptop as well as on the instance.

use std::path::{Path, PathBuf};

use crate::fail::Failure;
use clap::Parser;

/// Turns blast and drop records (--json) into one report.
#[derive(Parser, Debug)]
#[command(
    name = "blast-report",
    bin_name = "blast report",
    about = "Write one self-contained HTML report and/or Markdown from blast and drop records (--json files)",
    after_help = "Examples:\n  \
                  blast report ladder.json drop.json --html run.html --markdown run.md\n  \
                  blast report a.json b.json c.json --label c8gn.large --label c8gn.12xlarge --label c8gn.48xlarge --html atlas.html\n\
                  Several ladder runs (or a labelled one) also make the atlas: one row per instance type or --label.\n\
                  On EC2 the records carry the instance type, which serves as the label when --label is not given.\n\
                  The Markdown's plots are written beside it as FILE-N.svg."
)]
pub struct ReportArgs {
    /// Records written by blast --json or drop --json, in the order the report shows them
    #[arg(value_name = "RUN.json")]
    pub runs: Vec<PathBuf>,
    /// Write the report as one HTML file (inline SVG and CSS, nothing fetched)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report as Markdown (GitHub tables), its plots as SVG files beside it
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// The atlas row a run belongs to (e.g. an instance type): once for all runs, or once per run in order
    #[arg(long, value_name = "LABEL")]
    pub label: Vec<String>,
    /// Print the man page (blast-report.1) and exit
    #[arg(long, hide = true)]
    pub generate_man: bool,
}

pub fn main(argv: Vec<std::ffi::OsString>) -> Result<(), Failure> {
    let args: ReportArgs = crate::cli::parse_args_from(argv)?;
    if crate::cli::generated_docs::<ReportArgs>(None, args.generate_man)? {
        return Ok(());
    }
    if args.runs.is_empty() {
        return Err(Failure::usage("blast report needs the records to report: blast report RUN.json [RUN.json ...] --html FILE"));
    }
    if args.html.is_none() && args.markdown.is_none() {
        return Err(Failure::usage("blast report writes nothing without --html FILE or --markdown FILE: give one or both"));
    }
    // Where the files go is checked before any record is read.
    crate::cli::check_outputs(&[("--html", args.html.as_deref()), ("--markdown", args.markdown.as_deref())])?;
    let labels = labels(&args)?;
    let records =
        args.runs.iter().zip(labels).map(|(p, l)| report::Record::read(p, l).map_err(Failure::usage)).collect::<Result<Vec<_>, _>>()?;
    let doc = report::build(&records).map_err(Failure::usage)?;
    if let Some(path) = &args.html {
        write(path, &report::html::render(&doc))?;
        blastdrop::say!("blast report: wrote {}", path.display());
    }
    if let Some(path) = &args.markdown {
        let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
        let md = report::markdown::render(&doc, |n| format!("{stem}-{n}.svg"));
        let dir = path.parent().unwrap_or(Path::new(""));
        for (name, svg) in &md.plots {
            write(&dir.join(name), svg)?;
        }
        write(path, &md.text)?;
        blastdrop::say!("blast report: wrote {} and {} plot(s) beside it", path.display(), md.plots.len());
    }
    Ok(())
}

/// One label per run: none, one for all, or one each.
fn labels(args: &ReportArgs) -> Result<Vec<Option<String>>, Failure> {
    let n = args.runs.len();
    match args.label.len() {
        0 => Ok(vec![None; n]),
        1 => Ok(vec![Some(args.label[0].clone()); n]),
        k if k == n => Ok(args.label.iter().cloned().map(Some).collect()),
        k => Err(Failure::usage(format!("--label is given {k} times for {n} runs: give it once for all runs or once per run, in order"))),
    }
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::runtime(format!("cannot write {}: {e}: check the directory exists and is writable", path.display())))
}
