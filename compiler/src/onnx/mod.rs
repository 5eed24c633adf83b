//! ONNX graphs in and out of the IR, and their derivative models.
//!
//! - [`proto`]: the protobuf messages (generated once, checked in; they live with the ONNX
//!   back end, [`crate::back::onnx`], which writes them);
//! - [`load`]: bytes and files to a [`proto::ModelProto`] (bounded: malformed input is an
//!   error, never a panic or an unbounded allocation), tensor data to run-time tensors;
//! - [`import`]: a graph to an IR function whose parameters are the graph's inputs followed
//!   by its initializers ([`Imported`]);
//! - [`derive`]: `forward` and `reverse` derivative models with onnx-ad's and CasADi's
//!   conventions (names, seed dimensions, seed layouts), built by the IR's own
//!   differentiation and written by the ONNX back end ([`crate::back::onnx`]);
//! - [`family`]: the primal and its sibling derivative models as CasADi discovers them.
//!
//! The Rust API: [`import`], [`export`], [`forward`], [`reverse`], [`family`].

pub mod derive;
pub mod family;
pub mod import;
mod import_control;
mod import_layout;
mod import_nn;
mod import_ops;
mod import_shapes;
pub mod load;

pub use crate::back::onnx::{OnnxError, OnnxOptions, export, proto};
pub use derive::{Layout, Options, forward, reverse};
pub use family::family;
pub use import::{Imported, Port, import};
pub use load::{decode, read_model};

