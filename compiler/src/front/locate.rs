//! Places in the sources, rendered: diagnostics as text (codespan-reporting), and the
//! source location of a run-time error with its snippet.

use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::term::{self, Config};
use mad_runtime::RtError;

use super::SourceFiles;

/// Renders diagnostics to a string; with `color`, ANSI escapes are included.
pub fn render(files: &SourceFiles, diagnostics: &[Diagnostic<usize>], color: bool) -> String {
    let config = Config::default();
    if color {
        let mut buf = term::termcolor::Buffer::ansi();
        for d in diagnostics {
            let _ = term::emit_to_write_style(&mut buf, &config, files, d);
        }
        String::from_utf8_lossy(buf.as_slice()).into_owned()
    } else {
        let mut out = String::new();
        for d in diagnostics {
            if let Ok(s) = term::emit_into_string(&config, files, d) {
                out.push_str(&s);
            }
        }
        out
    }
}

/// A place in a source file, with the codespan-reporting rendering of the
/// run-time error at that place.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceLocation {
    pub file: String,
    /// 1-based.
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    /// The error rendered as a diagnostic with the source line (no colour).
    pub snippet: String,
}

/// Locates a run-time error in the sources and renders it as a diagnostic.
pub fn locate(
    files: &SourceFiles,
    error: &RtError,
    file: usize,
    span: mad_grammar::span::Span,
) -> Option<SourceLocation> {
    locate_message(files, &format!("run-time error: {error}"), file, span)
}

/// Locates `span` of `file` in the sources and renders it as a diagnostic with `message`
/// (the whole headline) and the label "this operation failed".
pub fn locate_message(
    files: &SourceFiles,
    message: &str,
    file: usize,
    span: mad_grammar::span::Span,
) -> Option<SourceLocation> {
    use codespan_reporting::files::Files;
    let loc = files.location(file, span.start as usize).ok()?;
    let name = files.name(file).ok()?.to_string();
    let d = Diagnostic::error()
        .with_message(message.to_string())
        .with_labels(vec![
            Label::primary(file, span.range()).with_message("this operation failed"),
        ]);
    Some(SourceLocation {
        file: name,
        line: loc.line_number,
        column: loc.column_number,
        snippet: render(files, &[d], false),
    })
}
