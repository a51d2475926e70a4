//! A record written to its file, as pretty JSON to a path or to stdout
//! (`-`). Its schema comes from its type: `records::schema_of`.

use crate::fail::Failure;
use serde::Serialize;

/// Writes `value` as pretty JSON to `path`; `-` writes it to stdout (where
/// nothing else goes then: crate::out).
pub fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value).map_err(|e| Failure::runtime(format!("cannot encode the JSON record: {e}")))?;
    if crate::out::is_stdout(path) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        return out
            .write_all((text + "\n").as_bytes())
            .and_then(|_| out.flush())
            .map_err(|e| Failure::runtime(format!("cannot write --json to stdout: {e}")));
    }
    std::fs::write(path, text + "\n").map_err(|e| Failure::runtime(format!("cannot write --json {}: {e}", path.display())))
}
