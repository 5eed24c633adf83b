//! The error of reading, importing, differentiating or writing an ONNX model.

use std::fmt;

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
