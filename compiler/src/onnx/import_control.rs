//! ONNX control flow: an `If` whose condition is a constant is its taken branch, inlined
//! (as onnx-ad does); on a condition known at run time, an `scf.if` whose regions are the
//! branches (both yielding values of one type). `Loop` and `Scan` are not imported yet: an
//! error that names the node.

use super::OnnxError;
use super::import::GraphImport;
use super::import_ops::node_name;
use super::proto::NodeProto;
use crate::ir::{Dim, OpKind, ScalarKind, Type};
use mad_runtime::TensorData;

/// Inlines the taken branch of the constant-condition `If` `node`.
pub(super) fn lower_if_node(g: &mut GraphImport<'_>, node: &NodeProto) -> Result<(), OnnxError> {
    let n = node_name(node);
    let cond = node.input.first().cloned().unwrap_or_default();
    let taken = match g.known.get(&cond).map(|t| &t.data) {
        Some(TensorData::Bool(v)) if v.len() == 1 => v[0],
        _ => return lower_if(g, node, &cond),
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

/// An `If` on a condition known at run time: `scf.if`, each branch lowered into its region
/// (its names visible in it only).
fn lower_if(g: &mut GraphImport<'_>, node: &NodeProto, cond: &str) -> Result<(), OnnxError> {
    let n = node_name(node);
    let c = g.value(cond)?;
    let c = match g.ty(c) {
        Type::Scalar(ScalarKind::Bool) => c,
        Type::Tensor { elem: ScalarKind::Bool, shape } if shape.iter().all(|d| *d == Dim::Fixed(1) || *d == Dim::Dyn) => {
            let mut ops = vec![c];
            ops.extend((0..shape.len()).map(|_| g.int(0)));
            g.b.infer(OpKind::Index, ops).map_err(OnnxError::Invalid)?
        }
        other => return Err(OnnxError::Invalid(format!("node '{n}': If condition of type {other}"))),
    };
    let mut regions = Vec::new();
    let mut types: Option<Vec<Type>> = None;
    for which in ["then_branch", "else_branch"] {
        let branch = super::import_ops::attr(node, which)
            .and_then(|a| a.g.as_ref())
            .ok_or_else(|| OnnxError::Invalid(format!("node '{n}': If without a {which}")))?;
        if branch.output.len() != node.output.len() {
            return Err(OnnxError::Invalid(format!("node '{n}': its {which} has {} outputs for {}", branch.output.len(), node.output.len())));
        }
        let (values, lists, known) = (g.values.clone(), g.lists.clone(), g.known.clone());
        g.b.begin_region(&[]);
        for t in &branch.initializer {
            g.constant(t.name.clone().unwrap_or_default(), super::load::tensor_value(t)?)?;
        }
        g.lower_nodes(&branch.node)?;
        let mut yields = Vec::new();
        for o in &branch.output {
            yields.push(g.value(o.name.as_deref().unwrap_or(""))?);
        }
        let tys: Vec<Type> = yields.iter().map(|&v| g.ty(v)).collect();
        match &types {
            None => types = Some(tys),
            Some(t) if *t == tys => {}
            Some(t) => {
                return Err(OnnxError::Invalid(format!("node '{n}': the branches yield values of different types ({t:?} and {tys:?})")));
            }
        }
        regions.push(g.b.end_region(yields));
        (g.values, g.lists, g.known) = (values, lists, known);
    }
    let id = g.b.push_with_regions(OpKind::If, vec![c], types.unwrap_or_default(), regions);
    for (name, v) in node.output.iter().zip(g.b.results(id)) {
        if !name.is_empty() {
            g.values.insert(name.clone(), v);
        }
    }
    Ok(())
}
