//! Building one ONNX graph: unique value names, nodes with their attributes, shared
//! constants (as initializers) and typed inputs and outputs.

use std::collections::{HashMap, HashSet};

use crate::ir::{Dim, ScalarKind, Type};
use super::proto::{tensor_proto::DataType, 
    AttributeProto, GraphProto, NodeProto, TensorProto, TensorShapeProto, TypeProto, ValueInfoProto, attribute_proto::AttributeType,
    tensor_shape_proto::{Dimension, dimension}, type_proto,
};
use mad_runtime::{Tensor, TensorData};

/// An attribute value.
pub enum Attr {
    Int(i64),
    Ints(Vec<i64>),
    Graph(Box<GraphProto>),
}

/// One graph under construction.
#[derive(Default)]
pub struct GraphWriter {
    pub nodes: Vec<NodeProto>,
    pub initializers: Vec<TensorProto>,
    pub inputs: Vec<ValueInfoProto>,
    pub outputs: Vec<ValueInfoProto>,
    taken: HashSet<String>,
    counter: usize,
    constants: HashMap<(i32, Vec<usize>, Vec<u8>), String>,
    /// Port names given to computed values by [`GraphWriter::alias`], and what each was.
    aliased: HashSet<String>,
    renamed: HashMap<String, String>,
}

impl GraphWriter {
    /// A writer whose fresh names avoid `reserved` (the names of the graph's ports).
    pub fn new(reserved: impl IntoIterator<Item = String>) -> GraphWriter {
        GraphWriter { taken: reserved.into_iter().collect(), ..Default::default() }
    }

    /// A fresh name starting with `stem`: `stem_<n>` with a counter no other fresh name
    /// shares, skipping names claimed as ports.
    pub fn fresh(&mut self, stem: &str) -> String {
        loop {
            self.counter += 1;
            let name = format!("{stem}_{}", self.counter);
            if !self.taken.contains(&name) {
                return name;
            }
        }
    }

    /// Reserves an exact name (a port); false when it is taken. Ports are claimed before
    /// any fresh name is handed out (fresh names avoid the claimed ones).
    pub fn claim(&mut self, name: &str) -> bool {
        debug_assert_eq!(self.counter, 0, "a port claimed after fresh names");
        self.taken.insert(name.to_string())
    }

    /// Appends a node with one output; returns the output's name.
    pub fn node(&mut self, op: &str, inputs: &[&str], attrs: Vec<(&str, Attr)>) -> String {
        let out = self.fresh(&op.to_ascii_lowercase());
        self.node_to(op, inputs, attrs, &out);
        out
    }

    /// Appends a node with `n` outputs; returns their names.
    pub fn node_n(&mut self, op: &str, inputs: &[&str], attrs: Vec<(&str, Attr)>, n: usize) -> Vec<String> {
        let outs: Vec<String> = (0..n).map(|_| self.fresh(&op.to_ascii_lowercase())).collect();
        self.node_to(op, inputs, attrs, &outs[0]);
        if let Some(node) = self.nodes.last_mut() {
            node.output = outs.clone();
        }
        outs
    }

    /// Appends a node writing the given output name.
    pub fn node_to(&mut self, op: &str, inputs: &[&str], attrs: Vec<(&str, Attr)>, out: &str) {
        let attribute = attrs
            .into_iter()
            .map(|(name, a)| {
                let mut p = AttributeProto { name: Some(name.to_string()), ..Default::default() };
                match a {
                    Attr::Int(i) => {
                        p.i = Some(i);
                        p.r#type = Some(AttributeType::Int as i32);
                    }
                    Attr::Ints(v) => {
                        p.ints = v;
                        p.r#type = Some(AttributeType::Ints as i32);
                    }
                    Attr::Graph(g) => {
                        p.g = Some(*g);
                        p.r#type = Some(AttributeType::Graph as i32);
                    }
                }
                p
            })
            .collect();
        self.nodes.push(NodeProto {
            input: inputs.iter().map(|s| s.to_string()).collect(),
            output: vec![out.to_string()],
            op_type: Some(op.to_string()),
            attribute,
            ..Default::default()
        });
    }

    /// Makes the value `from` available under the port name `to`: the node that computes
    /// `from` is renamed to write `to` (and its readers follow), or where that cannot be
    /// (a graph input, an initializer, a value already given a port name) an `Identity`.
    /// Renaming keeps the written graph free of `Identity` nodes whose input has other
    /// readers, which ONNX Runtime's identity elimination mishandles.
    pub fn alias(&mut self, from: &str, to: &str) {
        let producer = self.nodes.iter().rposition(|n| n.output.iter().any(|o| o == from));
        match producer {
            Some(i) if !self.aliased.contains(from) => {
                for o in &mut self.nodes[i].output {
                    if o == from {
                        *o = to.to_string();
                    }
                }
                for n in &mut self.nodes {
                    for input in &mut n.input {
                        if input == from {
                            *input = to.to_string();
                        }
                    }
                }
                self.aliased.insert(to.to_string());
                self.renamed.insert(from.to_string(), to.to_string());
            }
            _ => {
                let source = self.renamed.get(from).cloned().unwrap_or_else(|| from.to_string());
                self.node_to("Identity", &[&source], vec![], to);
            }
        }
    }

    /// `v` repeated along a new leading axis of `count` entries (`count`: a 1-D `int64`
    /// tensor `[n]`): an unbatched value given the seed axis.
    pub fn repeat(&mut self, v: &str, count: &str) -> String {
        let zero = self.ints(&[0]);
        let one = self.node("Unsqueeze", &[v, &zero], vec![]);
        let shape = self.node("Shape", &[v], vec![]);
        let target = self.node("Concat", &[count, &shape], vec![("axis", Attr::Int(0))]);
        self.node("Expand", &[&one, &target], vec![])
    }

    /// An initializer holding `t` (one per distinct value).
    pub fn constant(&mut self, t: &Tensor) -> String {
        let bytes = tensor_proto("", t).raw_data.unwrap_or_default();
        let key = (elem_type(t.kind()), t.shape.clone(), bytes);
        if let Some(n) = self.constants.get(&key) {
            return n.clone();
        }
        let name = self.fresh("const");
        self.initializers.push(tensor_proto(&name, t));
        self.constants.insert(key, name.clone());
        name
    }

    /// A named initializer (a model's own constant, kept under its name).
    pub fn initializer(&mut self, name: &str, t: &Tensor) {
        self.initializers.push(tensor_proto(name, t));
    }

    /// A 1-D `int64` constant.
    pub fn ints(&mut self, v: &[i64]) -> String {
        self.constant(&Tensor { shape: vec![v.len()], data: TensorData::I64(v.to_vec()) })
    }

    /// A rank-0 constant of kind `k`.
    pub fn scalar(&mut self, k: ScalarKind, x: f64) -> String {
        let data = match k {
            ScalarKind::F64 => TensorData::F64(vec![x]),
            ScalarKind::F32 => TensorData::F32(vec![x as f32]),
            ScalarKind::I64 => TensorData::I64(vec![x as i64]),
            ScalarKind::Bool => TensorData::Bool(vec![x != 0.0]),
        };
        self.constant(&Tensor { shape: vec![], data })
    }

    pub fn add_input(&mut self, name: &str, elem: ScalarKind, dims: &[Dim]) {
        self.inputs.push(value_info(name, elem, dims));
    }

    pub fn add_output(&mut self, name: &str, elem: ScalarKind, dims: &[Dim]) {
        self.outputs.push(value_info(name, elem, dims));
    }

    /// The graph; initializers no node reads are left out.
    pub fn finish(self, name: &str) -> GraphProto {
        let GraphWriter { nodes, initializers, inputs, outputs, .. } = self;
        let mut read: HashSet<&str> = outputs.iter().filter_map(|o| o.name.as_deref()).collect();
        reads(&nodes, &mut read);
        let initializer = initializers.into_iter().filter(|t| t.name.as_deref().is_some_and(|n| read.contains(n))).collect();
        GraphProto { node: nodes, name: Some(name.to_string()), initializer, input: inputs, output: outputs, ..Default::default() }
    }
}

/// The names `nodes` read, those of their subgraphs' nodes included.
fn reads<'n>(nodes: &'n [NodeProto], out: &mut HashSet<&'n str>) {
    for n in nodes {
        out.extend(n.input.iter().map(String::as_str));
        for a in &n.attribute {
            if let Some(g) = &a.g {
                reads(&g.node, out);
                out.extend(g.output.iter().filter_map(|o| o.name.as_deref()));
            }
        }
    }
}

/// The extents of an IR type (none for a scalar).
pub fn dims_of(t: &Type) -> Vec<Dim> {
    match t {
        Type::Tensor { shape, .. } => shape.clone(),
        _ => Vec::new(),
    }
}

/// A tensor value's declaration: element type and extents (`?` extents have no value).
pub fn value_info(name: &str, elem: ScalarKind, dims: &[Dim]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|d| Dimension {
            value: match d {
                Dim::Fixed(n) => Some(dimension::Value::DimValue(*n as i64)),
                Dim::Sym(s) => Some(dimension::Value::DimParam(s.clone())),
                Dim::Dyn => None,
            },
            ..Default::default()
        })
        .collect();
    ValueInfoProto {
        name: Some(name.to_string()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(type_proto::Tensor {
                elem_type: Some(elem_type(elem)),
                shape: Some(TensorShapeProto { dim }),
            })),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The ONNX element type of an IR scalar kind.
pub fn elem_type(k: ScalarKind) -> i32 {
    (match k {
        ScalarKind::F32 => DataType::Float,
        ScalarKind::F64 => DataType::Double,
        ScalarKind::I64 => DataType::Int64,
        ScalarKind::Bool => DataType::Bool,
    }) as i32
}

/// A run-time tensor as an ONNX tensor named `name` (little-endian raw data).
pub fn tensor_proto(name: &str, t: &Tensor) -> TensorProto {
    let raw: Vec<u8> = match &t.data {
        TensorData::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::I64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        TensorData::Bool(v) => v.iter().map(|&b| b as u8).collect(),
    };
    TensorProto {
        name: Some(name.to_string()),
        dims: t.shape.iter().map(|&n| n as i64).collect(),
        data_type: Some(elem_type(t.kind())),
        raw_data: Some(raw),
        ..Default::default()
    }
}
