//! The report as one self-contained HTML file: inline CSS and SVG, no
//! script and nothing fetched, so it reads the same offline, mailed, or
//! printed.

use std::fmt::Write;

use crate::doc::{Block, Cell, Doc, Table};

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1400px; padding: 0 1em; color: #1a1a1a; }
h1 { font-size: 1.6em; } h2 { border-bottom: 2px solid #ccc; padding-bottom: .2em; margin-top: 2em; } h3 { margin-top: 1.5em; }
table { border-collapse: collapse; margin: .5em 0 1.5em; font-size: .9em; }
caption { text-align: left; font-weight: 600; padding: .3em 0; }
th, td { border: 1px solid #bbb; padding: .25em .5em; vertical-align: top; }
th { background: #eef; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.why { font-size: .8em; color: #555; max-width: 28em; text-align: left; }
.answer { border: 2px solid #36c; background: #f2f6ff; padding: .5em 1em; margin: 1em 0; }
.answer h2 { border: none; margin: .2em 0; font-size: 1.2em; } .answer .run { font-weight: 600; }
.warnings { border: 2px solid #c60; background: #fff4e5; padding: .5em 1em; margin: 1em 0; }
.warnings h2 { border: none; margin: .2em 0; color: #a40; font-size: 1.2em; }
.sentences { border-left: 4px solid #36c; background: #f2f6ff; padding: .4em 1em; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
figure { margin: 1em 0; } figure svg { max-width: 100%; height: auto; }
figcaption { font-size: .9em; color: #333; }
@media print { body { max-width: none; } figure, table { page-break-inside: avoid; } }
";

pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn render(doc: &Doc) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{}</title><style>{STYLE}</style></head><body>\n<h1>{}</h1>\n",
        esc(&doc.title),
        esc(&doc.title)
    );
    if !doc.headlines.is_empty() {
        h.push_str("<section id=\"answer\" class=\"answer\"><h2>What was found</h2><ul>\n");
        for l in &doc.headlines {
            let _ = writeln!(h, "<li class=\"headline\"><span class=\"run\">{}</span>: {}</li>", esc(&l.runs), esc(&l.text));
        }
        h.push_str("</ul></section>\n");
    }
    if !doc.warnings.is_empty() {
        h.push_str("<section id=\"warnings\" class=\"warnings\"><h2>Read first</h2><ul>\n");
        for w in &doc.warnings {
            let _ = writeln!(h, "<li class=\"warning\" data-kind=\"{}\">{}</li>", esc(w.kind), esc(&w.text));
        }
        h.push_str("</ul></section>\n");
    }
    for s in &doc.sections {
        let _ = writeln!(h, "<section><h{l}>{}</h{l}>", esc(&s.heading), l = s.level);
        for b in &s.blocks {
            block(&mut h, b);
        }
        h.push_str("</section>\n");
    }
    h.push_str("</body></html>\n");
    h
}

fn block(h: &mut String, b: &Block) {
    match b {
        Block::Para(p) => {
            let _ = writeln!(h, "<p>{}</p>", esc(p));
        }
        Block::Warnings(w) => {
            h.push_str("<div class=\"warnings\"><ul>");
            for x in w {
                let _ = write!(h, "<li>{}</li>", esc(x));
            }
            h.push_str("</ul></div>\n");
        }
        Block::Facts(f) => {
            h.push_str("<dl class=\"facts\">");
            for (k, v) in f {
                let _ = write!(h, "<dt>{}</dt><dd>{}</dd>", esc(k), esc(v));
            }
            h.push_str("</dl>\n");
        }
        Block::Table(t) => table(h, t),
        Block::Plot { caption, svg } => {
            let _ = writeln!(h, "<figure>{}<figcaption>{}</figcaption></figure>", strip_prolog(svg), esc(caption));
        }
        Block::Sentences(s) => {
            h.push_str("<div class=\"sentences\">");
            for x in s {
                let _ = write!(h, "<p>{}</p>", esc(x));
            }
            h.push_str("</div>\n");
        }
    }
}

/// An SVG document's XML prolog is not allowed inside HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}

fn table(h: &mut String, t: &Table) {
    let _ = write!(h, "<table><caption>{}</caption><thead><tr>", esc(&t.caption));
    for c in &t.header {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr></thead><tbody>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for c in row {
            cell(h, c);
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table>\n");
}

fn cell(h: &mut String, c: &Cell) {
    let numeric = c.text.parse::<f64>().is_ok() || c.text.trim_end_matches('%').parse::<f64>().is_ok();
    let class = if numeric { " class=\"num\"" } else { "" };
    let _ = write!(h, "<td{class}>{}", esc(&c.text));
    if let Some(n) = &c.note {
        let _ = write!(h, "<div class=\"why\">{}</div>", esc(n));
    }
    h.push_str("</td>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doc::{Headline, Section, WarningLine};

    fn doc() -> Doc {
        let mut t = Table::new("a <table>", &["x", "limit"]);
        t.row(vec![Cell::new("1.500"), Cell::noted("sender", "tx_burst came back short & often")]);
        let mut s = Section::new(2, "Run 1");
        s.push(Block::Table(t)).push(Block::Plot {
            caption: "c".into(),
            svg: "<?xml version=\"1.0\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>".into(),
        });
        Doc {
            title: "t".into(),
            headlines: vec![Headline { runs: "run 1 a.json".into(), text: "1.500 Mpps & more".into() }],
            warnings: vec![WarningLine { kind: "llq-off", text: "LLQ is off".into() }],
            sections: vec![s],
        }
    }

    #[test]
    fn the_page_stands_alone_and_escapes_what_it_quotes() {
        let h = render(&doc());
        assert!(!h.contains("<script") && !h.contains("src=") && !h.contains("href=") && !h.contains("@import"), "{h}");
        assert!(h.contains("a &lt;table&gt;") && h.contains("short &amp; often"));
        assert!(h.contains("<figure><svg") && !h.contains("<?xml"));
        assert!(h.find("Read first").unwrap() < h.find("Run 1").unwrap(), "warnings first");
        let (answer, warnings) = (h.find("<section id=\"answer\"").unwrap(), h.find("<section id=\"warnings\"").unwrap());
        assert!(answer < warnings, "the answer before the warnings");
        assert!(h.contains("<li class=\"headline\"><span class=\"run\">run 1 a.json</span>: 1.500 Mpps &amp; more</li>"), "{h}");
        assert!(h.contains("<li class=\"warning\" data-kind=\"llq-off\">LLQ is off</li>"), "{h}");
        assert!(h.contains("<td class=\"num\">1.500</td>"));
    }
}
