//! Source text from a file's bytes, as every `.mad` file is read (the program's own file
//! and the files its `mod name;` declarations load): a leading byte-order mark is dropped,
//! lines ending in CR alone are read as lines, and bytes that are not UTF-8 are error
//! E0006 at the first bad byte.

use codespan_reporting::diagnostic::{Diagnostic, Label};

use super::SourceFiles;

/// The byte-order mark some editors write at the start of UTF-8 files.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// `bytes` without a leading UTF-8 byte-order mark: source files are read as if it were not
/// there (positions in diagnostics count from the first character after it, as editors
/// show them).
pub fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes)
}

/// Adds a file's bytes to `files` under `name` and returns its id. Invalid UTF-8 comes
/// back as a diagnostic at the first bad byte (the file is then added with the rest of its
/// text shown lossily, so that the label has context).
pub fn add_source(
    files: &mut SourceFiles,
    name: String,
    mut bytes: Vec<u8>,
) -> (usize, Option<Diagnostic<usize>>) {
    if without_bom(&bytes).len() != bytes.len() {
        bytes.drain(..UTF8_BOM.len());
    }
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            // Lines end in LF or CRLF; a file whose lines end in CR alone (old Mac editors)
            // is read with CR as the line end (same length: positions are unchanged), so that
            // diagnostics name its lines.
            if !text.contains('\n') && text.contains('\r') {
                text = text.replace('\r', "\n");
            }
            (files.add(name, text), None)
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            // Byte offsets shift where replacement characters are longer than the bad
            // bytes; the valid prefix is unchanged, so `at` is still exact.
            let end = (at + 1).min(text.len());
            let id = files.add(name, text);
            let d = Diagnostic::error()
                .with_code("E0006")
                .with_message("the file is not valid UTF-8")
                .with_labels(vec![
                    Label::primary(id, at..end).with_message(format!("invalid UTF-8 at byte {at}")),
                ])
                .with_notes(vec!["help: save the file as UTF-8".to_string()]);
            (id, Some(d))
        }
    }
}
