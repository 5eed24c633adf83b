//! Line-oriented helpers shared by the text readers.

use super::{Location, MeshError};

/// Decodes a text file, reporting the line of the first invalid UTF-8 byte. A
/// leading byte-order mark (as some Windows tools write) is dropped.
pub(crate) fn decode<'a>(bytes: &'a [u8], format: &'static str) -> Result<&'a str, MeshError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        MeshError::syntax(format, Location::Line(line), "invalid UTF-8 text")
    })
}

/// Parses a finite coordinate.
pub(crate) fn coord(tok: &str, format: &'static str, line: usize) -> Result<f64, MeshError> {
    let v: f64 = tok.parse().map_err(|_| {
        MeshError::syntax(
            format,
            Location::Line(line),
            format!("`{tok}` is not a number"),
        )
    })?;
    if !v.is_finite() {
        return Err(MeshError::syntax(
            format,
            Location::Line(line),
            format!("non-finite coordinate `{tok}`"),
        ));
    }
    Ok(v)
}

/// Parses a non-negative integer (an index or a count).
pub(crate) fn uint(
    tok: &str,
    format: &'static str,
    line: usize,
    what: &str,
) -> Result<usize, MeshError> {
    tok.parse().map_err(|_| {
        MeshError::syntax(
            format,
            Location::Line(line),
            format!("`{tok}` is not a valid {what}"),
        )
    })
}
