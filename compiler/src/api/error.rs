//! Errors of the embedding API, and compile diagnostics bundled with their sources
//! so that they can be rendered anywhere.

use crate::front::SourceFiles;
pub use crate::front::locate::{SourceLocation, locate, locate_message, render};
pub use crate::front::source::without_bom;
use codespan_reporting::diagnostic::Diagnostic;
use mad_runtime::RtError;
use std::fmt;

/// Compile diagnostics together with the files they point into.
pub struct Diagnostics {
    pub files: SourceFiles,
    pub diagnostics: Vec<Diagnostic<usize>>,
}

impl Diagnostics {
    pub fn new(files: SourceFiles, diagnostics: Vec<Diagnostic<usize>>) -> Diagnostics {
        Diagnostics { files, diagnostics }
    }

    /// Renders every diagnostic as codespan-reporting does, with or without colour.
    pub fn render(&self, color: bool) -> String {
        render(&self.files, &self.diagnostics, color)
    }

    /// The stable codes (`E0101`, …) in order.
    pub fn codes(&self) -> Vec<String> {
        self.diagnostics
            .iter()
            .filter_map(|d| d.code.clone())
            .collect()
    }

    /// Each diagnostic as plain data, in order: its code, message, and where its primary
    /// label points (file name, 1-based line and column in characters), when it has one.
    pub fn items(&self) -> Vec<DiagnosticItem> {
        use codespan_reporting::files::Files;
        self.diagnostics
            .iter()
            .map(|d| {
                let at = d
                    .labels
                    .iter()
                    .find(|l| l.style == codespan_reporting::diagnostic::LabelStyle::Primary)
                    .and_then(|l| {
                        let loc = self.files.location(l.file_id, l.range.start).ok()?;
                        let name = self.files.name(l.file_id).ok()?.to_string();
                        Some((name, loc.line_number, loc.column_number))
                    });
                DiagnosticItem {
                    code: d.code.clone(),
                    message: d.message.clone(),
                    file: at.as_ref().map(|a| a.0.clone()),
                    line: at.as_ref().map(|a| a.1),
                    column: at.as_ref().map(|a| a.2),
                }
            })
            .collect()
    }
}

/// One compile diagnostic as plain data ([`Diagnostics::items`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticItem {
    /// `E0101`, …
    pub code: Option<String>,
    pub message: String,
    /// Where the primary label points: file name, 1-based line, 1-based column (characters).
    pub file: Option<String>,
    pub line: Option<usize>,
    pub column: Option<usize>,
}


impl fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.render(false))
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.render(false))
    }
}

/// Everything the embedding API can report.
#[derive(Debug)]
pub enum Error {
    /// The source did not compile.
    Compile(Diagnostics),
    /// Reading a file failed.
    Io(String),
    /// No user function has this name.
    NoSuchFunction {
        name: String,
        available: Vec<String>,
    },
    /// The Rust types of a typed lookup do not match the mad signature.
    Signature {
        name: String,
        expected: String,
        found: String,
    },
    /// Dynamically typed arguments do not match the signature.
    Arguments { name: String, message: String },
    /// None of the overloads of an overloaded name takes these arguments or Rust types
    /// (`found`); `overloads` are their signatures, in source order.
    NoOverload {
        name: String,
        overloads: Vec<String>,
        found: String,
    },
    /// The code generator failed (a defect of the compiler, reported, not a panic).
    Backend(String),
    /// A `.npy` file could not be read or written, or does not hold what its parameter's
    /// type needs (the message names the file and says what was expected).
    Npy(String),
    /// The program stopped with a run-time error; `at` says where, when the
    /// failing operation came from source.
    Runtime {
        error: RtError,
        at: Option<SourceLocation>,
    },
}


impl Error {
    /// A run-time error without a known location.
    pub fn runtime(error: RtError) -> Error {
        Error::Runtime { error, at: None }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Compile(d) => write!(f, "{d}"),
            Error::Io(m) => write!(f, "{m}"),
            Error::NoSuchFunction { name, available } => {
                write!(f, "no function `{name}`")?;
                if !available.is_empty() {
                    write!(f, " (available: {})", available.join(", "))?;
                }
                Ok(())
            }
            Error::Signature {
                name,
                expected,
                found,
            } => {
                write!(
                    f,
                    "function `{name}` has signature `{expected}`, which does not match the Rust types `{found}`"
                )
            }
            Error::Arguments { name, message } => {
                write!(f, "bad arguments for `{name}`: {message}")
            }
            Error::NoOverload { name, overloads, found } => {
                write!(f, "no overload of `{name}` takes {found}; its overloads are `{}`", overloads.join("`, `"))
            }
            Error::Backend(m) => write!(f, "code generation failed: {m}"),
            Error::Npy(m) => write!(f, "{m}"),
            Error::Runtime { error, at } => {
                write!(f, "run-time error: {error}")?;
                if let Some(at) = at {
                    write!(f, "\n  --> {}:{}:{}", at.file, at.line, at.column)?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {}

/// Turns a file's bytes into a source; invalid UTF-8 becomes a diagnostic at the
/// first bad byte (the rest of the file is shown lossily so the label has context).
pub fn load_source(name: String, bytes: Vec<u8>) -> Result<(SourceFiles, usize), Error> {
    let mut files = SourceFiles::new();
    match crate::front::source::add_source(&mut files, name, bytes) {
        (id, None) => Ok((files, id)),
        (_, Some(d)) => Err(Error::Compile(Diagnostics::new(files, vec![d]))),
    }
}
