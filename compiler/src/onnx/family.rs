//! The sibling family CasADi's ONNX import discovers beside a primal model `DIR/f.onnx`:
//! `adj_f.onnx` (reverse), optionally `fwd_f.onnx` (forward), and `fwd_adj_f.onnx`, the
//! forward derivative of the adjoint (Hessian-vector products), each named
//! `<kind>_<file name>` in the primal's folder.

use std::path::{Path, PathBuf};

use prost::Message;

use super::proto::ModelProto;
use super::{OnnxError, Options, forward, reverse};

/// CasADi's sibling name: `<kind>_<file name>` in the same folder.
pub fn sibling(path: &Path, kind: &str) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!("{kind}_{name}"))
}

fn write(path: &Path, model: &ModelProto) -> Result<(), OnnxError> {
    std::fs::write(path, model.encode_to_vec()).map_err(|e| OnnxError::Read(format!("cannot write {}: {e}", path.display())))
}

/// Writes `model` to `path` and its siblings beside it; returns the paths written, the
/// primal first. `options` chooses the inputs and outputs (prefixes and layout are
/// CasADi's). The second-order model differentiates the adjoint model forward with every
/// input of it seeded and the adjoint's own outputs as its outputs.
pub fn family(model: &ModelProto, path: &Path, options: &Options, forward_sibling: bool, second_order: bool) -> Result<Vec<PathBuf>, OnnxError> {
    let options = Options { inputs: options.inputs.clone(), outputs: options.outputs.clone(), ..Default::default() };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| OnnxError::Read(format!("cannot create {}: {e}", dir.display())))?;
    }
    write(path, model)?;
    let mut written = vec![path.to_path_buf()];
    let adjoint = reverse(model, &options)?;
    let adj_path = sibling(path, "adj");
    write(&adj_path, &adjoint)?;
    written.push(adj_path.clone());
    if forward_sibling {
        let p = sibling(path, "fwd");
        write(&p, &forward(model, &options)?)?;
        written.push(p);
    }
    if second_order {
        let primal: Vec<&str> = model.graph.iter().flat_map(|g| &g.output).filter_map(|v| v.name.as_deref()).collect();
        let produced: Vec<String> =
            adjoint.graph.iter().flat_map(|g| &g.output).filter_map(|v| v.name.clone()).filter(|n| !primal.contains(&n.as_str())).collect();
        let second = forward(&adjoint, &Options { outputs: Some(produced), ..Default::default() })?;
        let p = sibling(&adj_path, "fwd");
        write(&p, &second)?;
        written.push(p);
    }
    Ok(written)
}
