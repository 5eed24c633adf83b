//! Errors of mesh reading, writing and generation, with the position of the fault.

use std::fmt;

/// Where in a file an error was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A 1-based line number (text formats and PLY headers).
    Line(usize),
    /// A 0-based byte offset (binary PLY bodies).
    Byte(u64),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(n) => write!(f, "line {n}"),
            Location::Byte(b) => write!(f, "byte {b}"),
        }
    }
}

/// Why a mesh could not be read, written or generated.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshError {
    /// The file could not be opened, read or written.
    Io { path: String, message: String },
    /// The file is malformed at `at` (`format` is `"OBJ"`, `"OFF"` or `"PLY"`).
    Syntax {
        format: &'static str,
        at: Location,
        message: String,
    },
    /// The mesh has no vertices or no triangles.
    Empty { message: String },
    /// A generator spec such as `grid:10x10` is malformed.
    BadSpec { spec: String, message: String },
    /// The path's extension is not `.obj`, `.off` or `.ply`.
    UnknownFormat { path: String },
    /// A mesh built in memory is invalid (index out of range, non-finite coordinate).
    Invalid { message: String },
}

impl MeshError {
    /// The line number of a syntax error in a text file or header, if that is where it was.
    pub fn line(&self) -> Option<usize> {
        match self {
            MeshError::Syntax {
                at: Location::Line(n),
                ..
            } => Some(*n),
            _ => None,
        }
    }

    /// The byte offset of a syntax error in a binary body, if that is where it was.
    pub fn byte_offset(&self) -> Option<u64> {
        match self {
            MeshError::Syntax {
                at: Location::Byte(b),
                ..
            } => Some(*b),
            _ => None,
        }
    }

    pub(crate) fn syntax(format: &'static str, at: Location, message: impl Into<String>) -> Self {
        MeshError::Syntax {
            format,
            at,
            message: message.into(),
        }
    }
}

impl fmt::Display for MeshError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MeshError::Io { path, message } => write!(f, "{path}: {message}"),
            MeshError::Syntax {
                format,
                at,
                message,
            } => write!(f, "{format} {at}: {message}"),
            MeshError::Empty { message } => write!(f, "empty mesh: {message}"),
            MeshError::BadSpec { spec, message } => write!(f, "mesh spec `{spec}`: {message}"),
            MeshError::UnknownFormat { path } => {
                let name = path.split_once(':').map(|(n, _)| n);
                match name.and_then(|n| super::generators::GENERATORS.iter().find(|g| g.eq_ignore_ascii_case(n))) {
                    Some(g) => write!(f, "{path}: unknown mesh format; generator names are lower case (`{g}:…`)"),
                    None => write!(
                        f,
                        "{path}: unknown mesh format (expected a file ending in .obj, .off or .ply, or a generator: \
                         grid, sphere, disk, torus, spheres2)"
                    ),
                }
            }
            MeshError::Invalid { message } => write!(f, "invalid mesh: {message}"),
        }
    }
}

impl std::error::Error for MeshError {}
