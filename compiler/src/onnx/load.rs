//! Reading ONNX models: protobuf decoding with prost, external data files, and tensor
//! data as run-time tensors.
//!
//! prost allocates no more than the input holds (every repeated field and byte string is
//! backed by bytes present in the message), so a truncated or adversarial file is an error
//! and never an unbounded allocation; the checks here add the semantic bounds (a tensor's
//! declared extents against the data it carries).

use std::path::Path;

use prost::Message;

use super::OnnxError;
use super::proto::{ModelProto, TensorProto, tensor_proto::DataType};
use crate::ir::ScalarKind;
use mad_runtime::{Tensor, TensorData};

/// Decodes a model from its protobuf bytes.
pub fn decode(bytes: &[u8]) -> Result<ModelProto, OnnxError> {
    let model = ModelProto::decode(bytes).map_err(|e| OnnxError::Read(e.to_string()))?;
    if model.graph.is_none() {
        return Err(OnnxError::Read("the model has no graph".into()));
    }
    Ok(model)
}

/// Reads a model file; tensors stored in external data files (beside the model) are read
/// in and made inline.
pub fn read_model(path: &Path) -> Result<ModelProto, OnnxError> {
    let bytes = std::fs::read(path).map_err(|e| OnnxError::Read(format!("{}: {e}", path.display())))?;
    let mut model = decode(&bytes)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    if let Some(g) = model.graph.as_mut() {
        for t in &mut g.initializer {
            inline_external(t, dir)?;
        }
    }
    Ok(model)
}

/// Replaces an external-data reference (`location`, `offset`, `length`) by the bytes.
fn inline_external(t: &mut TensorProto, dir: &Path) -> Result<(), OnnxError> {
    if t.data_location != Some(1) {
        return Ok(());
    }
    let name = t.name.clone().unwrap_or_default();
    let field = |key: &str| t.external_data.iter().find(|e| e.key.as_deref() == Some(key)).and_then(|e| e.value.clone());
    let location = field("location").ok_or_else(|| OnnxError::Read(format!("tensor '{name}': external data without a location")))?;
    let number = |key: &str| -> Result<Option<u64>, OnnxError> {
        field(key)
            .map(|v| v.parse::<u64>().map_err(|_| OnnxError::Read(format!("tensor '{name}': bad external-data {key} '{v}'"))))
            .transpose()
    };
    let (offset, length) = (number("offset")?.unwrap_or(0), number("length")?);
    let relative = Path::new(&location);
    if relative.is_absolute() || relative.components().any(|c| matches!(c, std::path::Component::ParentDir)) {
        return Err(OnnxError::Read(format!("tensor '{name}': external data '{location}' must be a path inside the model's folder")));
    }
    let bytes = std::fs::read(dir.join(relative)).map_err(|e| OnnxError::Read(format!("tensor '{name}': external data '{location}': {e}")))?;
    let start = usize::try_from(offset).ok().filter(|&s| s <= bytes.len());
    let Some(start) = start else {
        return Err(OnnxError::Read(format!("tensor '{name}': offset {offset} is past the end of '{location}'")));
    };
    let end = match length {
        Some(n) => usize::try_from(n).ok().and_then(|n| start.checked_add(n)).filter(|&e| e <= bytes.len()),
        None => Some(bytes.len()),
    };
    let Some(end) = end else {
        return Err(OnnxError::Read(format!("tensor '{name}': {} bytes at {offset} run past the end of '{location}'", length.unwrap_or(0))));
    };
    t.raw_data = Some(bytes[start..end].to_vec());
    t.data_location = Some(0);
    t.external_data.clear();
    Ok(())
}

/// The IR scalar kind of an ONNX element type, if mad computes with it.
pub fn scalar_kind(elem_type: i32) -> Option<ScalarKind> {
    match DataType::try_from(elem_type).ok()? {
        DataType::Float => Some(ScalarKind::F32),
        DataType::Double => Some(ScalarKind::F64),
        DataType::Int64 => Some(ScalarKind::I64),
        DataType::Bool => Some(ScalarKind::Bool),
        _ => None,
    }
}

/// The name of an ONNX element type for messages (`FLOAT16`, `INT32`, …).
pub fn elem_name(elem_type: i32) -> String {
    DataType::try_from(elem_type).map(|d| d.as_str_name().to_string()).unwrap_or_else(|_| format!("type #{elem_type}"))
}

/// A tensor's data as a run-time tensor (extents checked against the data present).
pub fn tensor_value(t: &TensorProto) -> Result<Tensor, OnnxError> {
    let name = t.name.as_deref().unwrap_or("");
    let elem = t.data_type.unwrap_or(0);
    let kind = scalar_kind(elem).ok_or_else(|| OnnxError::Invalid(format!("tensor '{name}' has element type {}, which mad does not compute with", elem_name(elem))))?;
    let mut shape = Vec::with_capacity(t.dims.len());
    let mut count = 1usize;
    for &d in &t.dims {
        let n = usize::try_from(d).map_err(|_| OnnxError::Invalid(format!("tensor '{name}' has a negative extent {d}")))?;
        count = count.checked_mul(n).ok_or_else(|| OnnxError::Invalid(format!("tensor '{name}' is too large")))?;
        shape.push(n);
    }
    let raw = t.raw_data.as_deref();
    let width = match kind {
        ScalarKind::F64 | ScalarKind::I64 => 8,
        ScalarKind::F32 => 4,
        ScalarKind::Bool => 1,
    };
    let present = match raw {
        Some(r) => r.len() / width,
        None => match kind {
            ScalarKind::F64 => t.double_data.len(),
            ScalarKind::F32 => t.float_data.len(),
            ScalarKind::I64 => t.int64_data.len(),
            ScalarKind::Bool => t.int32_data.len(),
        },
    };
    if present != count || raw.is_some_and(|r| r.len() != count * width) {
        return Err(OnnxError::Invalid(format!("tensor '{name}' of shape {shape:?} needs {count} elements, found {present}")));
    }
    let data = match (kind, raw) {
        (ScalarKind::F64, Some(r)) => TensorData::F64(r.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
        (ScalarKind::F32, Some(r)) => TensorData::F32(r.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap_or([0; 4]))).collect()),
        (ScalarKind::I64, Some(r)) => TensorData::I64(r.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect()),
        (ScalarKind::Bool, Some(r)) => TensorData::Bool(r.iter().map(|&b| b != 0).collect()),
        (ScalarKind::F64, None) => TensorData::F64(t.double_data.clone()),
        (ScalarKind::F32, None) => TensorData::F32(t.float_data.clone()),
        (ScalarKind::I64, None) => TensorData::I64(t.int64_data.clone()),
        (ScalarKind::Bool, None) => TensorData::Bool(t.int32_data.iter().map(|&b| b != 0).collect()),
    };
    Ok(Tensor { shape, data })
}
