//! A record written to its file, as pretty JSON to a path or to stdout
//! (`-`). Its schema comes from its type: `records::schema_of`.

use crate::error::Error;
use serde::Serialize;

/// Writes `value` as pretty JSON to `path`; `-` writes it to stdout (where
/// nothing else goes then: crate::out).
pub fn write_json<T: Serialize>(path: &std::path::Path, value: &T) -> Result<(), Error> {
    let text = serde_json::to_string_pretty(value).map_err(Error::RecordEncode)?;
    if crate::out::is_stdout(path) {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        return out
            .write_all((text + "\n").as_bytes())
            .and_then(|_| out.flush())
            .map_err(|source| Error::RecordWrite { path: None, source });
    }
    std::fs::write(path, text + "\n").map_err(|source| Error::RecordWrite { path: Some(path.to_path_buf()), source })
}
