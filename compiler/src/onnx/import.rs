//! ONNX graph → IR function.
//!
//! The function's parameters are the graph's inputs (those without an initializer, in
//! graph order) followed by its tensor initializers and `Constant` tensors (so a derivative
//! model keeps them as constants, and a host can rebind them); rank-0 constants become
//! `const` ops. It returns the graph's single output, or a tuple of its outputs.
//!
//! Shapes: a `dim_value` is a fixed extent, a `dim_param` a symbolic one (equal names are
//! equal extents), anything else dynamic; rank 0 is an IR scalar. Numpy broadcasting of the
//! elementwise ops is made explicit with `tensor.broadcast`. The ops are in
//! [`super::import_ops`]; one the importer has no form for is an error naming the op, the
//! node and the opset.

use std::collections::HashMap;

use super::OnnxError;
use super::load::{elem_name, scalar_kind, tensor_value};
use super::proto::{ModelProto, NodeProto, ValueInfoProto, tensor_shape_proto::dimension, type_proto};
use crate::ir::{Builder, Dim, FuncRef, Function, Literal, Module, OpKind, ScalarKind, Type, ValueId};
use mad_runtime::{Tensor, TensorData};

/// One graph input or output: its name and IR type.
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    pub name: String,
    pub ty: Type,
}

/// A graph as an IR function.
#[derive(Clone, Debug)]
pub struct Imported {
    pub module: Module,
    pub func: FuncRef,
    /// The graph inputs: the function's first parameters.
    pub inputs: Vec<Port>,
    /// The constant tensors, named as in the graph: the parameters after the inputs.
    pub constants: Vec<(String, Tensor)>,
    pub outputs: Vec<Port>,
    /// The default-domain opset the model imports.
    pub opset: i64,
}

/// Imports the model's main graph.
pub fn import(model: &ModelProto) -> Result<Imported, OnnxError> {
    let opset = model
        .opset_import
        .iter()
        .find(|o| matches!(o.domain.as_deref(), None | Some("") | Some("ai.onnx")))
        .and_then(|o| o.version)
        .unwrap_or(1);
    let graph = model.graph.as_ref().ok_or_else(|| OnnxError::Read("the model has no graph".into()))?;
    let mut known: HashMap<String, Tensor> = HashMap::new();
    for t in &graph.initializer {
        known.insert(t.name.clone().unwrap_or_default(), tensor_value(t)?);
    }
    for n in &graph.node {
        if n.op_type.as_deref() == Some("Constant") {
            let out = n.output.first().cloned().unwrap_or_default();
            known.insert(out, constant_value(n)?);
        }
    }
    let inputs: Vec<Port> = graph
        .input
        .iter()
        .filter(|v| !known.contains_key(v.name.as_deref().unwrap_or("")))
        .map(port)
        .collect::<Result<_, _>>()?;
    let outputs: Vec<Port> = graph.output.iter().map(port).collect::<Result<_, _>>()?;
    if outputs.is_empty() {
        return Err(OnnxError::Invalid("the graph has no outputs".into()));
    }
    // Float tensors are parameters; integer and bool ones (shapes, axes, indices) are read
    // where they are used, and packed from literals if used as tensors.
    let mut constants: Vec<(String, Tensor)> = known.iter().filter(|(_, t)| !t.shape.is_empty() && t.kind().is_float()).map(|(n, t)| (n.clone(), t.clone())).collect();
    constants.sort_by(|a, b| a.0.cmp(&b.0));
    let mut params: Vec<Type> = inputs.iter().map(|p| p.ty.clone()).collect();
    params.extend(constants.iter().map(|(_, t)| Type::tensor(t.kind(), &t.shape.iter().map(|&n| n as u64).collect::<Vec<_>>())));
    let ret = match outputs.as_slice() {
        [one] => one.ty.clone(),
        many => Type::Tuple(many.iter().map(|p| p.ty.clone()).collect()),
    };
    let name = graph.name.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| "model".into());
    let mut func = Function::new(ident(&name), &params, ret);
    let args = func.params().to_vec();
    let mut g = GraphImport { b: Builder::new(&mut func), values: HashMap::new(), known, lists: HashMap::new(), index_rows: HashMap::new(), ints: HashMap::new(), extent_dims: HashMap::new(), unsqueezed: HashMap::new(), opset };
    for (p, &v) in inputs.iter().zip(&args) {
        g.values.insert(p.name.clone(), v);
    }
    for ((n, _), &v) in constants.iter().zip(&args[inputs.len()..]) {
        g.values.insert(n.clone(), v);
    }
    let scalars: Vec<(String, Tensor)> = g.known.iter().filter(|(_, t)| t.shape.is_empty()).map(|(n, t)| (n.clone(), t.clone())).collect();
    for (n, t) in scalars {
        let v = g.b.constant(literal(&t.data, 0));
        g.values.insert(n, v);
    }
    g.lower_nodes(&graph.node)?;
    let mut rets = Vec::new();
    for p in &outputs {
        let v = g.value(&p.name)?;
        let v = g.fit_declared(v, &p.ty, &p.name)?;
        rets.push(v);
    }
    let ret = if rets.len() == 1 { rets[0] } else { g.b.infer(OpKind::Tuple, rets).map_err(OnnxError::Invalid)? };
    g.b.finish(vec![ret]);
    let mut module = Module::new();
    let f = module.add_function(func);
    crate::ir::validate::validate_function(&module, f).map_err(|e| OnnxError::Invalid(format!("the imported graph does not validate: {}", e.iter().map(|x| x.to_string()).collect::<Vec<_>>().join("; "))))?;
    Ok(Imported { module, func: f, inputs, constants, outputs, opset })
}

/// A name usable as an IR function name.
fn ident(name: &str) -> String {
    let s: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
    if s.starts_with(|c: char| c.is_ascii_digit()) { format!("_{s}") } else { s }
}

/// The scalar at `i` of tensor data.
pub(super) fn literal(d: &TensorData, i: usize) -> Literal {
    match d {
        TensorData::F64(v) => Literal::F64(v[i]),
        TensorData::F32(v) => Literal::F32(v[i]),
        TensorData::I64(v) => Literal::I64(v[i]),
        TensorData::Bool(v) => Literal::Bool(v[i]),
    }
}

/// The tensor of a `Constant` node (`value`, `value_float(s)`, `value_int(s)`).
fn constant_value(n: &NodeProto) -> Result<Tensor, OnnxError> {
    let node = n.name.clone().unwrap_or_default();
    let a = n.attribute.first().ok_or_else(|| OnnxError::Invalid(format!("Constant node '{node}' has no value")))?;
    match a.name.as_deref().unwrap_or("") {
        "value" => tensor_value(a.t.as_ref().ok_or_else(|| OnnxError::Invalid(format!("Constant node '{node}': `value` is not a tensor")))?),
        "value_float" => Ok(Tensor { shape: vec![], data: TensorData::F32(vec![a.f.unwrap_or(0.0)]) }),
        "value_floats" => Ok(Tensor { shape: vec![a.floats.len()], data: TensorData::F32(a.floats.clone()) }),
        "value_int" => Ok(Tensor { shape: vec![], data: TensorData::I64(vec![a.i.unwrap_or(0)]) }),
        "value_ints" => Ok(Tensor { shape: vec![a.ints.len()], data: TensorData::I64(a.ints.clone()) }),
        other => Err(OnnxError::Invalid(format!("Constant node '{node}': attribute `{other}` is not supported"))),
    }
}

/// A graph input or output's name and type.
fn port(v: &ValueInfoProto) -> Result<Port, OnnxError> {
    let name = v.name.clone().unwrap_or_default();
    let Some(type_proto::Value::TensorType(t)) = v.r#type.as_ref().and_then(|t| t.value.as_ref()) else {
        return Err(OnnxError::Invalid(format!("'{name}' is not a tensor (sequences, maps and optionals are not supported)")));
    };
    let elem = t.elem_type.unwrap_or(0);
    let kind = scalar_kind(elem).ok_or_else(|| OnnxError::Invalid(format!("'{name}' has element type {}, which mad does not compute with", elem_name(elem))))?;
    let Some(shape) = &t.shape else {
        return Err(OnnxError::Invalid(format!("'{name}' has no declared shape (its rank must be known)")));
    };
    let dims: Vec<Dim> = shape
        .dim
        .iter()
        .map(|d| match &d.value {
            Some(dimension::Value::DimValue(n)) if *n >= 0 => Dim::Fixed(*n as u64),
            Some(dimension::Value::DimParam(s)) if !s.is_empty() => Dim::Sym(s.clone()),
            _ => Dim::Dyn,
        })
        .collect();
    let ty = if dims.is_empty() { Type::Scalar(kind) } else { Type::Tensor { elem: kind, shape: dims } };
    Ok(Port { name, ty })
}

/// The state of one graph's import: the builder and the IR value of every ONNX name.
pub(super) struct GraphImport<'f> {
    pub b: Builder<&'f mut Function>,
    pub values: HashMap<String, ValueId>,
    /// Initializer and `Constant` data by name (shape and axes operands are read from it).
    pub known: HashMap<String, Tensor>,
    /// 1-D `int64` values known element by element (`Shape`, and what `Gather`, `Concat`
    /// and `Unsqueeze` make of them): the extents a `Reshape` or `Expand` takes.
    pub lists: HashMap<String, Vec<ValueId>>,
    /// `[1, k]` `int64` values made by `Unsqueeze` of a list at axis 0: one index tuple of
    /// a `ScatterND`.
    pub index_rows: HashMap<String, Vec<ValueId>>,
    /// The `i64` constants made here, and the extent each `tensor.dim` made here reads.
    pub ints: HashMap<ValueId, i64>,
    pub extent_dims: HashMap<ValueId, Dim>,
    /// Tensors that are another value with a new leading unit axis (`Unsqueeze` at 0): a
    /// `Concat` of such is a `tensor.pack` of the values.
    pub unsqueezed: HashMap<ValueId, ValueId>,
    pub opset: i64,
}

impl GraphImport<'_> {
    /// Lowers `nodes` in order (a graph's, or the taken branch of a constant `If`).
    pub fn lower_nodes(&mut self, nodes: &[NodeProto]) -> Result<(), OnnxError> {
        for node in nodes {
            match node.op_type.as_deref() {
                Some("Constant") => {
                    if !self.known.contains_key(node.output.first().map_or("", String::as_str)) {
                        let out = node.output.first().cloned().unwrap_or_default();
                        let t = constant_value(node)?;
                        self.constant(out, t)?;
                    }
                    continue;
                }
                Some("If") => {
                    super::import_control::lower_if_node(self, node)?;
                    continue;
                }
                _ => {}
            }
            if super::import_shapes::lower_shape_node(self, node)? {
                continue;
            }
            let results = super::import_ops::lower_node(self, node)?;
            for (name, v) in node.output.iter().zip(results) {
                if !name.is_empty() {
                    self.values.insert(name.clone(), v);
                }
            }
        }
        Ok(())
    }

    /// A constant met inside a subgraph: known by its data; a scalar is a `const`, an
    /// integer or bool tensor is read where it is used; a float tensor (which would have
    /// to be a parameter) is refused.
    pub fn constant(&mut self, name: String, t: Tensor) -> Result<(), OnnxError> {
        if t.shape.is_empty() {
            let v = self.b.constant(literal(&t.data, 0));
            self.values.insert(name.clone(), v);
        } else if t.kind().is_float() {
            return Err(OnnxError::Invalid(format!("a float tensor constant '{name}' inside a subgraph is not supported yet")));
        }
        self.known.insert(name, t);
        Ok(())
    }

    pub fn value(&mut self, name: &str) -> Result<ValueId, OnnxError> {
        if let Some(&v) = self.values.get(name) {
            return Ok(v);
        }
        if let Some(t) = self.known.get(name).filter(|t| !t.kind().is_float() && t.shape.len() > 1).cloned() {
            // An integer or bool constant of rank ≥ 2: its literals packed, then shaped.
            let items: Vec<ValueId> = (0..t.data.len()).map(|i| self.b.constant(literal(&t.data, i))).collect();
            let flat = self.b.infer(OpKind::Pack, items).map_err(OnnxError::Invalid)?;
            let mut ops = vec![flat];
            ops.extend(t.shape.iter().map(|&n| self.int(n as i64)));
            let ty = Type::tensor(t.kind(), &t.shape.iter().map(|&n| n as u64).collect::<Vec<_>>());
            let v = self.b.push1(OpKind::Reshape, ops, ty);
            self.values.insert(name.to_string(), v);
            return Ok(v);
        }
        // A list used as a tensor: its elements packed.
        let items = match self.lists.get(name).cloned() {
            Some(items) => items,
            None => match self.known.get(name).filter(|t| !t.kind().is_float() && t.shape.len() == 1).cloned() {
                Some(t) => (0..t.data.len()).map(|i| self.b.constant(literal(&t.data, i))).collect(),
                None => return Err(OnnxError::Invalid(format!("value '{name}' is used before it is defined"))),
            },
        };
        let v = if items.is_empty() {
            let zero = self.int(0);
            self.b.push1(OpKind::Full, vec![zero, zero], Type::tensor(ScalarKind::I64, &[0]))
        } else {
            self.b.infer(OpKind::Pack, items).map_err(OnnxError::Invalid)?
        };
        self.values.insert(name.to_string(), v);
        Ok(v)
    }

    /// The elements of a 1-D `int64` value known element by element, or constant.
    pub fn list(&mut self, name: &str) -> Option<Vec<ValueId>> {
        if let Some(l) = self.lists.get(name) {
            return Some(l.clone());
        }
        let Some(Tensor { shape, data: TensorData::I64(v) }) = self.known.get(name).cloned() else {
            return None;
        };
        (shape.len() <= 1).then(|| v.iter().map(|&n| self.int(n)).collect())
    }

    /// The value of an `i64` constant op's result.
    pub fn constant_of(&self, v: ValueId) -> Option<i64> {
        self.ints.get(&v).copied()
    }

    /// The extent an `i64` value stands for in a type: fixed for a constant, the axis's
    /// own extent for a `tensor.dim` of a tensor of symbolic extent there, else dynamic.
    pub fn dim_of_extent(&self, v: ValueId) -> Dim {
        match self.constant_of(v) {
            Some(n) if n >= 0 => Dim::Fixed(n as u64),
            Some(_) => Dim::Dyn,
            None => self.extent_dims.get(&v).cloned().unwrap_or(Dim::Dyn),
        }
    }

    /// `tensor.dim` of axis `axis` of `t` (a constant when the extent is fixed).
    pub fn extent(&mut self, t: ValueId, axis: usize) -> Result<ValueId, OnnxError> {
        let d = self.dims(t).get(axis).cloned().ok_or_else(|| OnnxError::Invalid(format!("axis {axis} of a value of rank {}", self.dims(t).len())))?;
        if let Dim::Fixed(n) = d {
            return Ok(self.int(n as i64));
        }
        let v = self.b.infer(OpKind::DimOf(axis as u32), vec![t]).map_err(OnnxError::Invalid)?;
        self.extent_dims.insert(v, d);
        Ok(v)
    }

    pub fn ty(&self, v: ValueId) -> Type {
        self.b.ty(v).clone()
    }

    pub fn dims(&self, v: ValueId) -> Vec<Dim> {
        match self.b.ty(v) {
            Type::Tensor { shape, .. } => shape.clone(),
            _ => Vec::new(),
        }
    }

    pub fn kind(&self, v: ValueId) -> ScalarKind {
        self.b.ty(v).scalar_kind().unwrap_or(ScalarKind::F64)
    }

    pub fn int(&mut self, n: i64) -> ValueId {
        let v = self.b.constant(Literal::I64(n));
        self.ints.insert(v, n);
        v
    }

    /// One `i64` value per extent of `dims`, reading unknown extents off `sources` (the
    /// first whose matching axis, right-aligned, is not a fixed 1).
    pub fn extents(&mut self, dims: &[Dim], sources: &[ValueId]) -> Result<Vec<ValueId>, OnnxError> {
        let mut out = Vec::with_capacity(dims.len());
        for (axis, d) in dims.iter().enumerate() {
            if let Dim::Fixed(n) = d {
                out.push(self.int(*n as i64));
                continue;
            }
            let from_end = dims.len() - axis;
            let source = sources.iter().find_map(|&s| {
                let sd = self.dims(s);
                (sd.len() >= from_end && sd[sd.len() - from_end] != Dim::Fixed(1)).then(|| (s, (sd.len() - from_end) as u32))
            });
            let Some((s, a)) = source else {
                return Err(OnnxError::Invalid(format!("no operand carries extent {d} of a broadcast")));
            };
            out.push(self.extent(s, a as usize)?);
        }
        Ok(out)
    }

    /// `v` stretched to `dims` (a no-op when it has them already).
    pub fn broadcast_to(&mut self, v: ValueId, dims: &[Dim], sources: &[ValueId]) -> Result<ValueId, OnnxError> {
        let ty = self.ty(v);
        let Type::Tensor { elem, shape } = &ty else {
            let extents = self.extents(dims, sources)?;
            let k = self.kind(v);
            let mut ops = vec![v];
            ops.extend(extents);
            return Ok(self.b.push1(OpKind::Full, ops, Type::Tensor { elem: k, shape: dims.to_vec() }));
        };
        if shape == dims {
            return Ok(v);
        }
        let extents = self.extents(dims, sources)?;
        let mut ops = vec![v];
        ops.extend(extents);
        Ok(self.b.push1(OpKind::Broadcast, ops, Type::Tensor { elem: *elem, shape: dims.to_vec() }))
    }

    /// Numpy broadcasting of operands: each tensor stretched to the common shape (scalars
    /// stay scalars: the IR's elementwise ops take them as they are).
    pub fn broadcast_all(&mut self, vs: &[ValueId], node: &str) -> Result<Vec<ValueId>, OnnxError> {
        let tensors: Vec<Vec<Dim>> = vs.iter().filter(|&&v| matches!(self.b.ty(v), Type::Tensor { .. })).map(|&v| self.dims(v)).collect();
        if tensors.is_empty() {
            return Ok(vs.to_vec());
        }
        let rank = tensors.iter().map(Vec::len).max().unwrap_or(0);
        let mut out_dims = Vec::with_capacity(rank);
        // Axes where two different symbolic extents meet: either may be 1, so the extent is
        // the larger one, at run time (where the op checks that they broadcast).
        let mut at_run_time = vec![false; rank];
        for (axis, run_time) in at_run_time.iter_mut().enumerate() {
            let mut d = Dim::Fixed(1);
            for s in &tensors {
                let Some(k) = (axis + s.len()).checked_sub(rank) else { continue };
                d = match (&d, &s[k]) {
                    (_, Dim::Fixed(1)) => d,
                    (Dim::Fixed(1), x) => x.clone(),
                    (a, b) if a == b => d,
                    (Dim::Fixed(_), Dim::Sym(_) | Dim::Dyn) => d,
                    (Dim::Sym(_) | Dim::Dyn, Dim::Fixed(_)) => s[k].clone(),
                    (Dim::Sym(_), Dim::Dyn) => d,
                    (Dim::Dyn, Dim::Sym(_)) => s[k].clone(),
                    (Dim::Sym(_), Dim::Sym(_)) => {
                        *run_time = true;
                        Dim::Dyn
                    }
                    (a, b) => return Err(OnnxError::Invalid(format!("node '{node}': extents {a} and {b} do not broadcast"))),
                };
            }
            out_dims.push(d);
        }
        let extents = if at_run_time.iter().any(|&r| r) {
            let mut extents = self.extents(&out_dims.iter().zip(&at_run_time).map(|(d, &r)| if r { Dim::Fixed(1) } else { d.clone() }).collect::<Vec<_>>(), vs)?;
            for axis in (0..rank).filter(|&a| at_run_time[a]) {
                let mut largest = self.int(1);
                for &v in vs {
                    let d = self.dims(v);
                    if let Some(k) = (axis + d.len()).checked_sub(rank) {
                        let e = self.extent(v, k)?;
                        largest = self.b.infer(OpKind::Binary(crate::ir::BinaryOp::Max), vec![largest, e]).map_err(OnnxError::Invalid)?;
                    }
                }
                extents[axis] = largest;
            }
            Some(extents)
        } else {
            None
        };
        let mut out = Vec::with_capacity(vs.len());
        for &v in vs {
            let Type::Tensor { elem, shape } = self.ty(v) else {
                out.push(v);
                continue;
            };
            out.push(match &extents {
                _ if shape == out_dims => v,
                Some(e) => {
                    let mut ops = vec![v];
                    ops.extend(e.iter().copied());
                    self.b.push1(OpKind::Broadcast, ops, Type::Tensor { elem, shape: out_dims.clone() })
                }
                None => self.broadcast_to(v, &out_dims, vs)?,
            });
        }
        Ok(out)
    }

    /// The graph output `v` with the declared type `ty` (a value of dynamic extents where
    /// the graph declares fixed ones keeps its type: the validator accepts both).
    fn fit_declared(&mut self, v: ValueId, ty: &Type, name: &str) -> Result<ValueId, OnnxError> {
        let have = self.ty(v);
        match (&have, ty) {
            (Type::Scalar(a), Type::Scalar(b)) | (Type::Tensor { elem: a, .. }, Type::Tensor { elem: b, .. }) if a == b => Ok(v),
            (Type::Tensor { elem: a, shape }, Type::Scalar(b)) if a == b && shape.iter().all(|d| *d == Dim::Fixed(1)) => {
                self.b.infer(OpKind::Sum, vec![v]).map_err(OnnxError::Invalid)
            }
            _ => Err(OnnxError::Invalid(format!("output '{name}' is declared {ty} but computes {have}"))),
        }
    }
}
