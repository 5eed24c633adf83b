//! Derivative models of ONNX graphs, with onnx-ad's and CasADi's conventions.
//!
//! `reverse(m)` computes `adj_x = Jᵀ·adj_y` and `forward(m)` computes `fwd_y = J·fwd_x`.
//! The derivative model keeps the primal signature as a prefix (its inputs, then its
//! outputs, computed as in the primal), then one seed input per seeded value and one
//! derivative output per differentiated value, named `<prefix><name>`. The prefix and the
//! seed dimension follow CasADi's `diff_prefix` rule (`adj_`/`nadj`, then `adj2_`/`nadj2`
//! on a model that already has `adj_` names; `fwd_`/`nfwd` likewise) unless given. Only
//! floating-point inputs and outputs get seeds (by default all of them, in graph order).
//!
//! Any number of seed directions ride in one evaluation: the seed count is a symbolic
//! dimension of the seed inputs. Layouts of a seed of a value of shape `s`:
//! - `onnx`: `s ++ [n]`;
//! - `casadi` (the default, CasADi's matrix reading): rank 0 `[1, n]`, rank 1 `[len, n]`,
//!   rank 2 `[rows, n·cols]` (the columns of seed 0, then of seed 1, …), higher ranks
//!   flattened `[numel, n]`.
//!
//! The derivative is the IR's own ([`crate::ad::vjp`], [`crate::ad::forward::jvp_active`]) of the
//! imported graph, cleaned, and written by [`crate::back::onnx`] with the seed directions
//! as a leading batch axis; the model's constants stay constants (no seeds, no adjoints).

use super::OnnxError;
use super::import::{Imported, Port, import};
use super::proto::ModelProto;
use crate::back::onnx::lower::{Slot, lower_function};
use crate::back::onnx::writer::{Attr, GraphWriter, dims_of};
use crate::back::onnx::{finish_model, tuple_parts};
use crate::ir::{Dim, FuncRef, ScalarKind, Type, ValueId};

/// How seed tensors are shaped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    #[default]
    Casadi,
    Onnx,
}

/// The choices of `forward` and `reverse` (all optional, as onnx-ad's).
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The graph inputs to differentiate (default: every floating-point one).
    pub inputs: Option<Vec<String>>,
    /// The graph outputs to differentiate (default: every floating-point one).
    pub outputs: Option<Vec<String>>,
    /// The derivative-tensor prefix (default: CasADi's rule).
    pub prefix: Option<String>,
    /// The symbolic seed dimension (default: `n` + the prefix without its `_`).
    pub dim: Option<String>,
    pub layout: Layout,
}

/// The reverse-derivative (adjoint) model of `model`.
pub fn reverse(model: &ModelProto, options: &Options) -> Result<ModelProto, OnnxError> {
    derive(model, options, Mode::Reverse)
}

/// The forward-derivative model of `model`.
pub fn forward(model: &ModelProto, options: &Options) -> Result<ModelProto, OnnxError> {
    derive(model, options, Mode::Forward)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Forward,
    Reverse,
}

/// CasADi's derivative-prefix rule over a model's own names: `kind_`, or `kind<n+1>_`
/// after the highest `kind<n>_` (`kind_` counting as 1) already present.
pub fn diff_prefix<'a>(names: impl IntoIterator<Item = &'a str>, kind: &str) -> String {
    let mut highest = 0;
    for name in names {
        let Some(end) = name.find('_') else { continue };
        if end < kind.len() || !name.starts_with(kind) {
            continue;
        }
        let index = if end == kind.len() { Some(1) } else { name[kind.len()..end].parse::<u32>().ok() };
        if let Some(i) = index {
            highest = highest.max(i);
        }
    }
    if highest == 0 { format!("{kind}_") } else { format!("{kind}{}_", highest + 1) }
}

fn is_float(t: &Type) -> bool {
    t.scalar_kind().is_some_and(ScalarKind::is_float)
}

/// The ports named in `names` (in that order), or every floating-point one.
fn select<'p>(ports: &'p [Port], names: &Option<Vec<String>>, what: &str) -> Result<Vec<&'p Port>, OnnxError> {
    let Some(names) = names else {
        let chosen: Vec<&Port> = ports.iter().filter(|p| is_float(&p.ty)).collect();
        if chosen.is_empty() {
            return Err(OnnxError::Derive(format!("the graph has no floating-point {what} to differentiate")));
        }
        return Ok(chosen);
    };
    names
        .iter()
        .map(|n| {
            let p = ports.iter().find(|p| &p.name == n).ok_or_else(|| OnnxError::Derive(format!("'{n}' is not a graph {what}")))?;
            if !is_float(&p.ty) {
                return Err(OnnxError::Derive(format!("{what} '{n}' is not of a floating-point type")));
            }
            Ok(p)
        })
        .collect()
}

fn derive(model: &ModelProto, options: &Options, mode: Mode) -> Result<ModelProto, OnnxError> {
    let mut imp = import(model)?;
    let kind = if mode == Mode::Reverse { "adj" } else { "fwd" };
    let graph = model.graph.as_ref().ok_or_else(|| OnnxError::Read("the model has no graph".into()))?;
    let port_names: Vec<&str> = graph.input.iter().chain(&graph.output).filter_map(|v| v.name.as_deref()).collect();
    let prefix = options.prefix.clone().unwrap_or_else(|| diff_prefix(port_names.iter().copied(), kind));
    let dim = options.dim.clone().unwrap_or_else(|| format!("n{}", prefix.trim_end_matches('_')));
    let xs: Vec<Port> = select(&imp.inputs, &options.inputs, "input")?.into_iter().cloned().collect();
    let ys: Vec<Port> = select(&imp.outputs, &options.outputs, "output")?.into_iter().cloned().collect();
    let (seeded, differentiated) = if mode == Mode::Reverse { (&ys, &xs) } else { (&xs, &ys) };

    let mut reserved: Vec<String> = imp.inputs.iter().chain(&imp.outputs).map(|p| p.name.clone()).collect();
    reserved.extend(imp.constants.iter().map(|(n, _)| n.clone()));
    let mut w = GraphWriter::new(reserved);
    let name_of = |p: &Port, w: &mut GraphWriter| -> Result<String, OnnxError> {
        let name = format!("{prefix}{}", p.name);
        if !w.claim(&name) {
            return Err(OnnxError::Derive(format!("'{name}' is already used in the graph; it is the name the derivative convention needs")));
        }
        Ok(name)
    };
    let seed_names: Vec<String> = seeded.iter().map(|p| name_of(p, &mut w)).collect::<Result<_, _>>()?;
    let out_names: Vec<String> = differentiated.iter().map(|p| name_of(p, &mut w)).collect::<Result<_, _>>()?;

    // The primal inputs, the constants, and the seeds in the internal layout.
    for p in &imp.inputs {
        w.add_input(&p.name, p.ty.scalar_kind().unwrap_or(ScalarKind::F64), &dims_of(&p.ty));
    }
    for (n, t) in &imp.constants {
        w.initializer(n, t);
    }
    let mut seeds = Vec::new();
    for (p, name) in seeded.iter().zip(&seed_names) {
        let dims = dims_of(&p.ty);
        w.add_input(name, p.ty.scalar_kind().unwrap_or(ScalarKind::F64), &seed_dims(&dims, &dim, name, options.layout));
        // The primal's extents at run time, where the layout needs them and they are not
        // fixed (a graph input's; an output's would come too late).
        let input = (mode == Mode::Forward).then_some(p.name.as_str());
        seeds.push(unpack(&mut w, name, &dims, input, options.layout)?);
    }
    let count = {
        let first = seeds.first().cloned().ok_or_else(|| OnnxError::Derive("no seeds".into()))?;
        let shape = w.node("Shape", &[&first], vec![]);
        let zero = w.ints(&[0]);
        w.node("Gather", &[&shape, &zero], vec![])
    };
    let mut params: Vec<Slot> = imp.inputs.iter().map(|p| Slot::Tensor { name: p.name.clone(), batched: false }).collect();
    params.extend(imp.constants.iter().map(|(n, _)| Slot::Tensor { name: n.clone(), batched: false }));

    let h = differentiate(&mut imp, mode, &xs)?;
    let f = &imp.module.functions[h];
    let seed_of = |p: &Port| seeded.iter().position(|q| q.name == p.name).map(|i| Slot::Tensor { name: seeds[i].clone(), batched: true });
    match mode {
        Mode::Reverse => {
            // One cotangent parameter: the outputs' seeds (zeros for unseeded outputs).
            let mut parts = Vec::new();
            for p in &imp.outputs {
                parts.push(match seed_of(p) {
                    Some(s) => s,
                    None => Slot::Tensor { name: zeros(&mut w, &p.ty, &p.name)?, batched: false },
                });
            }
            params.push(if parts.len() == 1 { parts.remove(0) } else { Slot::Tuple(parts) });
        }
        Mode::Forward => params.extend(xs.iter().filter_map(seed_of)),
    }

    // What to write: the primal outputs and the derivatives asked for.
    let ret = f.body.yields[0];
    let top = tuple_parts(f, ret).ok_or_else(|| OnnxError::Derive("the derivative's result is not a tuple".into()))?;
    let primal = split(f, top[0], imp.outputs.len());
    let derivatives: Vec<Option<ValueId>> = match mode {
        Mode::Reverse => {
            // Adjoints come for every float parameter, in order.
            let kinds = imp.inputs.iter().map(|p| p.ty.scalar_kind()).chain(imp.constants.iter().map(|(_, t)| Some(t.kind())));
            let float_params: Vec<usize> = kinds.enumerate().filter(|(_, k)| k.is_some_and(ScalarKind::is_float)).map(|(i, _)| i).collect();
            xs.iter()
                .map(|x| {
                    let i = imp.inputs.iter().position(|p| p.name == x.name)?;
                    let k = float_params.iter().position(|&j| j == i)?;
                    top.get(1 + k).copied()
                })
                .collect()
        }
        Mode::Forward => {
            let tangents = split(f, top[1], imp.outputs.len());
            ys.iter().map(|y| imp.outputs.iter().position(|p| p.name == y.name).and_then(|i| tangents.get(i).copied())).collect()
        }
    };
    let mut wanted: Vec<ValueId> = primal.clone();
    wanted.extend(derivatives.iter().flatten());
    let slots = lower_function(f, &mut w, params, &wanted, Some(&count))?;

    for (p, &v) in imp.outputs.iter().zip(&primal) {
        let Some(Slot::Tensor { name, .. }) = slots.get(&v) else {
            return Err(OnnxError::Derive(format!("output '{}' was not written", p.name)));
        };
        w.alias(name, &p.name);
        w.add_output(&p.name, p.ty.scalar_kind().unwrap_or(ScalarKind::F64), &dims_of(&p.ty));
    }
    for ((p, name), v) in differentiated.iter().zip(&out_names).zip(&derivatives) {
        let dims = dims_of(&p.ty);
        let internal = match v.and_then(|v| slots.get(&v)) {
            Some(Slot::Tensor { name, batched: true }) => name.clone(),
            Some(Slot::Tensor { name, batched: false }) => w.repeat(name, &count),
            _ => {
                let z = zeros(&mut w, &p.ty, &p.name)?;
                w.repeat(&z, &count)
            }
        };
        let packed = pack(&mut w, &internal, &dims, options.layout)?;
        w.alias(&packed, name);
        w.add_output(name, p.ty.scalar_kind().unwrap_or(ScalarKind::F64), &seed_dims(&dims, &dim, name, options.layout));
    }
    let name = graph.name.clone().unwrap_or_else(|| "model".into());
    Ok(finish_model(w.finish(&format!("{prefix}{name}")), model))
}

/// The derivative function: `f$vjp` (all float parameters) or `f$jvp1` seeded at `xs`.
fn differentiate(imp: &mut Imported, mode: Mode, xs: &[Port]) -> Result<FuncRef, OnnxError> {
    let err = |e: crate::ad::AdError| OnnxError::Derive(e.to_string());
    let h = match mode {
        Mode::Reverse => crate::ad::vjp(&mut imp.module, imp.func).map_err(err)?,
        Mode::Forward => {
            let mut active: Vec<bool> = imp.inputs.iter().map(|p| xs.iter().any(|x| x.name == p.name)).collect();
            active.extend(imp.constants.iter().map(|_| false));
            crate::ad::forward::jvp_active(&mut imp.module, imp.func, 1, &active).map_err(err)?
        }
    };
    // The derivative of a straight-line graph is straight-line: one round of clean-up
    // does what more would (the writer drops dead ops); loops get the full clean-up.
    let straight = imp.module.functions[h].body.ops.iter().all(|&id| imp.module.functions[h].ops[id].regions.is_empty());
    let cleaned = if straight { crate::passes::cleanup_straight_line(&mut imp.module, h) } else { crate::passes::cleanup(&mut imp.module, h) };
    cleaned.map_err(|e| OnnxError::Derive(format!("{e:?}")))?;
    Ok(h)
}

/// The `n` parts of a result: itself when `n == 1`, else the operands of its tuple.
fn split(f: &crate::ir::Function, v: ValueId, n: usize) -> Vec<ValueId> {
    if n == 1 { vec![v] } else { tuple_parts(f, v).unwrap_or_default() }
}

/// A zero tensor of a value's (fixed) type.
fn zeros(w: &mut GraphWriter, ty: &Type, name: &str) -> Result<String, OnnxError> {
    let k = ty.scalar_kind().unwrap_or(ScalarKind::F64);
    let dims = dims_of(ty);
    let Some(shape) = dims.iter().map(|d| if let Dim::Fixed(n) = d { Some(*n as i64) } else { None }).collect::<Option<Vec<_>>>() else {
        return Err(OnnxError::Derive(format!("'{name}' needs a zero derivative of a shape known only at run time (select the values to differentiate with --inputs/--outputs)")));
    };
    let zero = w.scalar(k, 0.0);
    let shape = w.ints(&shape);
    Ok(w.node("Expand", &[&zero, &shape], vec![]))
}

fn fixed(d: &Dim) -> Option<i64> {
    if let Dim::Fixed(n) = d { Some(*n as i64) } else { None }
}

/// The declared extents of a seed of a value of extents `dims`.
fn seed_dims(dims: &[Dim], dim: &str, name: &str, layout: Layout) -> Vec<Dim> {
    let n = Dim::Sym(dim.to_string());
    match (layout, dims.len()) {
        (Layout::Onnx, _) => dims.iter().cloned().chain([n]).collect(),
        (Layout::Casadi, 0) => vec![Dim::Fixed(1), n],
        (Layout::Casadi, 1) => vec![dims[0].clone(), n],
        (Layout::Casadi, 2) => {
            let cols = match &dims[1] {
                Dim::Fixed(1) => n,
                Dim::Fixed(c) => Dim::Sym(format!("{dim}_x{c}")),
                Dim::Sym(s) => Dim::Sym(format!("{dim}_{s}")),
                Dim::Dyn => Dim::Dyn,
            };
            vec![dims[0].clone(), cols]
        }
        (Layout::Casadi, _) => {
            let rows = dims.iter().map(fixed).try_fold(1i64, |p, d| d.map(|d| p * d));
            vec![rows.map_or_else(|| Dim::Sym(format!("{name}_rows")), |r| Dim::Fixed(r as u64)), n]
        }
    }
}

/// A seed input in the layout → the internal `[n, …shape]`. `input` names the graph
/// input the seed belongs to, whose shape gives extents that are not fixed.
fn unpack(w: &mut GraphWriter, seed: &str, dims: &[Dim], input: Option<&str>, layout: Layout) -> Result<String, OnnxError> {
    let r = dims.len() as i64;
    // The extents `dims[from..]` as a 1-D int64 tensor.
    let extents = |w: &mut GraphWriter, from: usize| -> Result<String, OnnxError> {
        if let Some(s) = dims[from..].iter().map(fixed).collect::<Option<Vec<_>>>() {
            return Ok(w.ints(&s));
        }
        let Some(x) = input else {
            return Err(OnnxError::Derive("the CasADi layout of an output of rank ≥ 2 needs its declared shape".into()));
        };
        let shape = w.node("Shape", &[x], vec![]);
        let lo = w.ints(&[from as i64]);
        let hi = w.ints(&[dims.len() as i64]);
        Ok(w.node("Slice", &[&shape, &lo, &hi], vec![]))
    };
    Ok(match (layout, r) {
        (_, 0) => {
            let flat = w.ints(&[-1]);
            w.node("Reshape", &[seed, &flat], vec![])
        }
        (Layout::Onnx, _) => {
            let perm: Vec<i64> = std::iter::once(r).chain(0..r).collect();
            w.node("Transpose", &[seed], vec![("perm", Attr::Ints(perm))])
        }
        (Layout::Casadi, 1) => w.node("Transpose", &[seed], vec![("perm", Attr::Ints(vec![1, 0]))]),
        (Layout::Casadi, 2) => {
            let cols = extents(w, 1)?;
            let head = w.ints(&[0, -1]);
            let shape = w.node("Concat", &[&head, &cols], vec![("axis", Attr::Int(0))]);
            let split = w.node("Reshape", &[seed, &shape], vec![]);
            w.node("Transpose", &[&split], vec![("perm", Attr::Ints(vec![1, 0, 2]))])
        }
        (Layout::Casadi, _) => {
            let t = w.node("Transpose", &[seed], vec![("perm", Attr::Ints(vec![1, 0]))]);
            let rest = extents(w, 0)?;
            let head = w.ints(&[0]);
            let shape = w.node("Concat", &[&head, &rest], vec![("axis", Attr::Int(0))]);
            w.node("Reshape", &[&t, &shape], vec![])
        }
    })
}

/// The internal `[n, …shape]` → the layout of a derivative output.
fn pack(w: &mut GraphWriter, v: &str, dims: &[Dim], layout: Layout) -> Result<String, OnnxError> {
    let r = dims.len() as i64;
    Ok(match (layout, r) {
        (Layout::Onnx, 0) => v.to_string(),
        (Layout::Casadi, 0) => {
            let shape = w.ints(&[1, -1]);
            w.node("Reshape", &[v, &shape], vec![])
        }
        (Layout::Onnx, _) => {
            let perm: Vec<i64> = (1..=r).chain([0]).collect();
            w.node("Transpose", &[v], vec![("perm", Attr::Ints(perm))])
        }
        (Layout::Casadi, 1) => w.node("Transpose", &[v], vec![("perm", Attr::Ints(vec![1, 0]))]),
        (Layout::Casadi, 2) => {
            let t = w.node("Transpose", &[v], vec![("perm", Attr::Ints(vec![1, 0, 2]))]);
            let shape = w.ints(&[0, -1]);
            w.node("Reshape", &[&t, &shape], vec![])
        }
        (Layout::Casadi, _) => {
            let shape = w.ints(&[0, -1]);
            let flat = w.node("Reshape", &[v, &shape], vec![]);
            w.node("Transpose", &[&flat], vec![("perm", Attr::Ints(vec![1, 0]))])
        }
    })
}
