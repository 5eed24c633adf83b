//! The ONNX back end: IR functions written as ONNX graphs.
//!
//! [`Onnx`] is an [`Emitter`](super::Emitter): it writes one function of a module (its
//! calls inlined) as a model whose inputs are the function's parameters and whose outputs
//! are its results (a tuple result gives one output per field), named after the source
//! (`madc onnx export FILE.mad --fn NAME OUT.onnx`). [`lower`] has the op forms, shared
//! with the derivative models of `onnx::derive`; [`writer`] builds the graph; [`proto`] has
//! the protobuf messages (read by `onnx::load` as well).
//!
//! Written models import the default domain at [`OPSET`] and pass
//! `onnx.checker.check_model(full_check=True)`. `scf.if` is written as `If`; loops
//! (`scf.for`/`while`), the run-time tape and `print` have no ONNX form yet: exporting them
//! is an error naming the op.

mod error;
pub mod lower;
pub mod proto;
pub mod writer;

pub use error::OnnxError;

use std::io::Write;

use prost::Message;

use crate::codegen::element_loop::BatchSpec;
use crate::ir::{Function, Module, OpKind, ScalarKind, Type, ValueId};
use proto::{ModelProto, OperatorSetIdProto};
use lower::{Slot, lower_function};
use writer::{GraphWriter, dims_of};

/// The default-domain opset of written models.
pub const OPSET: i64 = 18;

/// The ONNX back end.
pub struct Onnx;

/// Which function to write and how to name its ports.
#[derive(Clone, Debug, Default)]
pub struct OnnxOptions {
    /// The function (default: `main`, else the module's only function).
    pub function: Option<String>,
    /// Input names, one per parameter (default: `x0`, `x1`, …).
    pub inputs: Vec<String>,
    /// Output names, one per result (default: `y0`, `y1`, …).
    pub outputs: Vec<String>,
}

impl super::Emitter for Onnx {
    type Options = OnnxOptions;
    type Error = OnnxError;

    fn emit(module: &Module, _loops: &[BatchSpec], options: &OnnxOptions, out: &mut dyn Write) -> Result<(), OnnxError> {
        let model = export(module, options)?;
        out.write_all(&model.encode_to_vec()).map_err(|e| OnnxError::Export(e.to_string()))
    }
}

/// The model of one function of `module`.
pub fn export(module: &Module, options: &OnnxOptions) -> Result<ModelProto, OnnxError> {
    let f = match &options.function {
        Some(name) => module.find(name).ok_or_else(|| OnnxError::Export(format!("no function `{name}`")))?,
        None => module.find("main").or_else(|| (module.functions.len() == 1).then(|| module.functions.iter().next().map(|(h, _)| h)).flatten()).ok_or_else(|| OnnxError::Export("name the function to write (--fn)".into()))?,
    };
    let mut m = module.clone();
    crate::passes::inline::inline_calls(&mut m, f, 64);
    crate::passes::cleanup(&mut m, f).map_err(|e| OnnxError::Export(format!("{e:?}")))?;
    let func = &m.functions[f];
    let params: Vec<ValueId> = func.params().to_vec();
    let inputs: Vec<String> = (0..params.len()).map(|i| options.inputs.get(i).cloned().unwrap_or_else(|| format!("x{i}"))).collect();
    let ret = func.body.yields[0];
    let results = match &func.ret {
        Type::Tuple(items) if !items.is_empty() => tuple_parts(func, ret).ok_or_else(|| OnnxError::Export("the result tuple is not formed in the function".into()))?,
        Type::Tuple(_) => return Err(OnnxError::Export(format!("`{}` returns nothing", func.name))),
        _ => vec![ret],
    };
    let outputs: Vec<String> = (0..results.len()).map(|i| options.outputs.get(i).cloned().unwrap_or_else(|| format!("y{i}"))).collect();
    let mut w = GraphWriter::new(inputs.iter().chain(&outputs).cloned());
    let mut slots = Vec::new();
    for (&p, name) in params.iter().zip(&inputs) {
        let t = func.ty(p);
        let Some(k) = t.scalar_kind() else {
            return Err(OnnxError::Export(format!("parameter `{name}` is a tuple")));
        };
        w.add_input(name, k, &dims_of(t));
        slots.push(Slot::Tensor { name: name.clone(), batched: false });
    }
    let written = lower_function(func, &mut w, slots, &results, None)?;
    for (&v, name) in results.iter().zip(&outputs) {
        let Some(Slot::Tensor { name: from, .. }) = written.get(&v) else {
            return Err(OnnxError::Export(format!("result `{name}` is not a tensor")));
        };
        w.alias(from, name);
        w.add_output(name, func.ty(v).scalar_kind().unwrap_or(ScalarKind::F64), &dims_of(func.ty(v)));
    }
    Ok(finish_model(w.finish(&func.name), &ModelProto::default()))
}

/// A model around `graph`, keeping `like`'s producer fields where it has them.
pub fn finish_model(graph: proto::GraphProto, like: &ModelProto) -> ModelProto {
    ModelProto {
        ir_version: Some(8),
        opset_import: vec![OperatorSetIdProto { domain: Some(String::new()), version: Some(OPSET) }],
        producer_name: Some("mad".into()),
        producer_version: Some(env!("CARGO_PKG_VERSION").into()),
        doc_string: like.doc_string.clone(),
        graph: Some(graph),
        ..Default::default()
    }
}

/// The operands of the `tuple` op that defines `v` in `f`'s body, if one does.
pub fn tuple_parts(f: &Function, v: ValueId) -> Option<Vec<ValueId>> {
    f.body.ops.iter().map(|&id| &f.ops[id]).find(|op| op.results.first() == Some(&v) && op.kind == OpKind::Tuple).map(|op| op.operands.clone())
}
