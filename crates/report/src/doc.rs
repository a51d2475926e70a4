//! A report as a document: sections of paragraphs, tables, plots and
//! sentences, built once and written as HTML or Markdown, so that the two
//! files cannot say different things.

/// The whole report.
#[derive(Debug, Clone, Default)]
pub struct Doc {
    pub title: String,
    /// Said first: one line per run or group trial, what was found and what held it.
    pub headlines: Vec<Headline>,
    /// Then what the reader must not miss, one line per kind, most serious first.
    pub warnings: Vec<WarningLine>,
    pub sections: Vec<Section>,
}

/// A run's (or a group trial's) answer: its figure, its conditions, its limit.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// The run or runs it is of: "run 2 b/drop.json".
    pub runs: String,
    pub text: String,
}

/// One kind of warning with the runs and steps it covers.
#[derive(Debug, Clone, PartialEq)]
pub struct WarningLine {
    /// The kind's name (`warning::Kind::id`), for the HTML's `data-kind`.
    pub kind: &'static str,
    pub text: String,
}

/// A heading and what stands under it; `level` 2 is a run or the atlas, 3 a part of one.
#[derive(Debug, Clone)]
pub struct Section {
    pub level: u8,
    pub heading: String,
    pub blocks: Vec<Block>,
}

impl Section {
    pub fn new(level: u8, heading: impl Into<String>) -> Section {
        Section { level, heading: heading.into(), blocks: Vec::new() }
    }

    pub fn push(&mut self, b: Block) -> &mut Self {
        self.blocks.push(b);
        self
    }
}

#[derive(Debug, Clone)]
pub enum Block {
    Para(String),
    /// Warnings of one run, set apart.
    Warnings(Vec<String>),
    /// Name and value pairs (where and how a run ran).
    Facts(Vec<(String, String)>),
    Table(Table),
    /// An SVG picture, inline in HTML, a file beside the Markdown.
    Plot {
        caption: String,
        svg: String,
    },
    /// Sentences meant to be pasted as they are.
    Sentences(Vec<String>),
}

/// A table whose cells may carry a note (a verdict and its evidence), shown
/// under the figure in HTML and as a footnote in Markdown.
#[derive(Debug, Clone, Default)]
pub struct Table {
    pub caption: String,
    pub header: Vec<String>,
    pub rows: Vec<Vec<Cell>>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cell {
    pub text: String,
    /// What stands behind the figure: the limit that held it, in words.
    pub note: Option<String>,
}

impl Cell {
    pub fn new(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), note: None }
    }

    pub fn noted(text: impl Into<String>, note: impl Into<String>) -> Cell {
        Cell { text: text.into(), note: Some(note.into()) }
    }
}

impl From<String> for Cell {
    fn from(s: String) -> Cell {
        Cell::new(s)
    }
}

impl From<&str> for Cell {
    fn from(s: &str) -> Cell {
        Cell::new(s)
    }
}

impl Table {
    pub fn new(caption: impl Into<String>, header: &[&str]) -> Table {
        Table { caption: caption.into(), header: header.iter().map(|h| h.to_string()).collect(), rows: Vec::new() }
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        debug_assert_eq!(cells.len(), self.header.len());
        self.rows.push(cells);
    }
}
