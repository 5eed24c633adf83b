//! ONNX control flow: an `If` whose condition is a constant is its taken branch, inlined
//! (as onnx-ad does). `If` on a condition known only at run time, `Loop` and `Scan` are not
//! imported yet: an error that names the node.

use super::OnnxError;
use super::import::GraphImport;
use super::import_ops::node_name;
use super::proto::NodeProto;
use mad_runtime::TensorData;

/// Inlines the taken branch of the constant-condition `If` `node`.
pub(super) fn lower_constant_if(g: &mut GraphImport<'_>, node: &NodeProto) -> Result<(), OnnxError> {
    let n = node_name(node);
    let cond = node.input.first().cloned().unwrap_or_default();
    let taken = match g.known.get(&cond).map(|t| &t.data) {
        Some(TensorData::Bool(v)) if v.len() == 1 => v[0],
        _ => {
            return Err(OnnxError::UnsupportedOp {
                op: "If (on a condition known only at run time)".into(),
                node: n,
                opset: g.opset,
            });
        }
    };
    let which = if taken { "then_branch" } else { "else_branch" };
    let branch = super::import_ops::attr(node, which)
        .and_then(|a| a.g.as_ref())
        .ok_or_else(|| OnnxError::Invalid(format!("node '{n}': If without a {which}")))?;
    for t in &branch.initializer {
        g.constant(t.name.clone().unwrap_or_default(), super::load::tensor_value(t)?)?;
    }
    g.lower_nodes(&branch.node)?;
    if branch.output.len() != node.output.len() {
        return Err(OnnxError::Invalid(format!("node '{n}': its {which} has {} outputs for {}", branch.output.len(), node.output.len())));
    }
    for (inner, outer) in branch.output.iter().zip(&node.output) {
        let inner = inner.name.clone().unwrap_or_default();
        let v = g.value(&inner)?;
        if !outer.is_empty() {
            g.values.insert(outer.clone(), v);
        }
    }
    Ok(())
}
