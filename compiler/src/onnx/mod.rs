//! ONNX graphs in and out of the IR, and their derivative models.
//!
//! - [`proto`]: the protobuf messages (generated once, checked in);
//! - [`load`]: bytes and files to a [`proto::ModelProto`] (bounded: malformed input is an
//!   error, never a panic or an unbounded allocation), tensor data to run-time tensors;
//! - [`import`]: a graph to an IR function whose parameters are the graph's inputs followed
//!   by its initializers ([`Imported`]);
//! - [`derive`]: `forward` and `reverse` derivative models with onnx-ad's and CasADi's
//!   conventions (names, seed dimensions, seed layouts), built by the IR's own
//!   differentiation and written by the ONNX back end ([`crate::back::onnx`]).

pub mod derive;
pub mod import;
mod import_ops;
mod import_shapes;
pub mod load;
pub mod proto;

use std::fmt;

pub use derive::{Layout, Options, forward, reverse};
pub use import::{Imported, Port, import};
pub use load::{decode, read_model};

/// Why a model could not be read, imported, differentiated or written.
#[derive(Clone, Debug, PartialEq)]
pub enum OnnxError {
    /// The bytes are not a valid ONNX protobuf, or the file could not be read.
    Read(String),
    /// An op the importer has no form for: the op, the node's name and the opset.
    UnsupportedOp { op: String, node: String, opset: i64 },
    /// Any other problem with the graph (names the node or value).
    Invalid(String),
    /// The IR function has a construct with no ONNX form (export).
    Export(String),
    /// Differentiation failed.
    Derive(String),
}

impl fmt::Display for OnnxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OnnxError::Read(m) => write!(f, "cannot read the ONNX model: {m}"),
            OnnxError::UnsupportedOp { op, node, opset } => {
                write!(f, "unsupported operator '{op}' (node '{node}', opset {opset})")
            }
            OnnxError::Invalid(m) => write!(f, "invalid ONNX graph: {m}"),
            OnnxError::Export(m) => write!(f, "cannot write as ONNX: {m}"),
            OnnxError::Derive(m) => write!(f, "cannot differentiate: {m}"),
        }
    }
}

impl std::error::Error for OnnxError {}
