//! The report as Markdown (GitHub's dialect: pipe tables), for issues and
//! wikis. A cell's note becomes a numbered footnote under its table; each
//! plot is an SVG file written beside the Markdown and linked.

use std::fmt::Write;

use crate::doc::{Block, Doc, Table};

/// The Markdown, and the plot files it links: (file name, SVG).
pub struct Markdown {
    pub text: String,
    pub plots: Vec<(String, String)>,
}

/// Text safe inside a table cell: pipes escaped, lines joined.
fn cell_text(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// `plot_name(n)` names the n-th plot's file (from 1).
pub fn render(doc: &Doc, plot_name: impl Fn(usize) -> String) -> Markdown {
    let mut m = String::new();
    let mut plots = Vec::new();
    let _ = writeln!(m, "# {}\n", doc.title);
    if !doc.headlines.is_empty() {
        m.push_str("## What was found\n\n");
        for l in &doc.headlines {
            let _ = writeln!(m, "- **{}**: {}", l.runs, l.text);
        }
        m.push('\n');
    }
    if !doc.warnings.is_empty() {
        m.push_str("> **Read first**\n>\n");
        for w in &doc.warnings {
            let _ = writeln!(m, "> - {}", w.text);
        }
        m.push('\n');
    }
    for s in &doc.sections {
        let _ = writeln!(m, "{} {}\n", "#".repeat(s.level as usize), s.heading);
        for b in &s.blocks {
            match b {
                Block::Para(p) => {
                    let _ = writeln!(m, "{p}\n");
                }
                Block::Warnings(w) => {
                    for x in w {
                        let _ = writeln!(m, "> **Warning:** {x}\n>");
                    }
                    m.push('\n');
                }
                Block::Facts(f) => {
                    m.push_str("| | |\n| --- | --- |\n");
                    for (k, v) in f {
                        let _ = writeln!(m, "| **{}** | {} |", cell_text(k), cell_text(v));
                    }
                    m.push('\n');
                }
                Block::Table(t) => table(&mut m, t),
                Block::Plot { caption, svg } => {
                    let name = plot_name(plots.len() + 1);
                    let _ = writeln!(m, "![{}]({name})\n\n*{}*\n", caption.replace(['[', ']'], ""), caption);
                    plots.push((name, svg.clone()));
                }
                Block::Sentences(x) => {
                    for s in x {
                        let _ = writeln!(m, "> {s}\n>");
                    }
                    m.push('\n');
                }
            }
        }
    }
    Markdown { text: m, plots }
}

fn table(m: &mut String, t: &Table) {
    let _ = writeln!(m, "**{}**\n", t.caption);
    let _ = writeln!(m, "| {} |", t.header.iter().map(|h| cell_text(h)).collect::<Vec<_>>().join(" | "));
    let _ = writeln!(m, "|{}", " --- |".repeat(t.header.len()));
    let mut notes = Vec::new();
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match &c.note {
                Some(n) => {
                    notes.push(n.clone());
                    format!("{} [{}]", cell_text(&c.text), notes.len())
                }
                None => cell_text(&c.text),
            })
            .collect();
        let _ = writeln!(m, "| {} |", cells.join(" | "));
    }
    m.push('\n');
    for (i, n) in notes.iter().enumerate() {
        let _ = writeln!(m, "{}. {}", i + 1, n);
    }
    if !notes.is_empty() {
        m.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{Cell, Section};

    #[test]
    fn notes_become_footnotes_and_plots_files() {
        let mut t = Table::new("steps", &["a|b", "limit"]);
        t.row(vec![Cell::new("1"), Cell::noted("sender", "short")]);
        t.row(vec![Cell::new("2"), Cell::noted("none", "delivered")]);
        let mut s = Section::new(2, "Run 1");
        s.push(Block::Table(t)).push(Block::Plot { caption: "the ladder".into(), svg: "<svg/>".into() });
        let m = render(&Doc { title: "t".into(), sections: vec![s], ..Doc::default() }, |n| format!("r-{n}.svg"));
        assert!(m.text.contains("| a\\|b | limit |\n| --- | --- |\n| 1 | sender [1] |\n| 2 | none [2] |"), "{}", m.text);
        assert!(m.text.contains("1. short\n2. delivered"), "{}", m.text);
        assert!(m.text.contains("![the ladder](r-1.svg)"));
        assert_eq!(m.plots, vec![("r-1.svg".to_string(), "<svg/>".to_string())]);
    }
}
