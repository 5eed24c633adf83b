//! The type rule of every op (the "results" column of the op table in [`crate::ir::op`]).
//!
//! Shapes are compared leniently where they cannot be known: a dynamic extent (`?`)
//! or a symbolic one (`N`) is compatible with any extent, two fixed extents must be
//! equal. When two compatible shapes meet, the result keeps the more precise extent
//! (fixed over symbolic over dynamic).

use crate::ir::function::Module;
use crate::ir::op::{BinaryOp, OpKind, UnaryOp};
use crate::ir::types::{Dim, ScalarKind, Type};

/// Whether two extents may be equal at run time.
pub fn dims_compatible(a: &Dim, b: &Dim) -> bool {
    match (a, b) {
        (Dim::Fixed(x), Dim::Fixed(y)) => x == y,
        _ => true,
    }
}

/// The more precise of two compatible extents.
pub fn merge_dim(a: &Dim, b: &Dim) -> Dim {
    match (a, b) {
        (Dim::Fixed(_), _) => a.clone(),
        (_, Dim::Fixed(_)) => b.clone(),
        (Dim::Sym(_), _) => a.clone(),
        (_, Dim::Sym(_)) => b.clone(),
        _ => Dim::Dyn,
    }
}

/// Whether a value of type `a` may be used where `b` is expected: same structure,
/// same scalar kinds, same ranks and compatible extents.
pub fn types_compatible(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (Type::Scalar(x), Type::Scalar(y)) => x == y,
        (
            Type::Tensor {
                elem: ea,
                shape: sa,
            },
            Type::Tensor {
                elem: eb,
                shape: sb,
            },
        ) => {
            ea == eb
                && sa.len() == sb.len()
                && sa.iter().zip(sb).all(|(x, y)| dims_compatible(x, y))
        }
        (Type::Tuple(xs), Type::Tuple(ys)) => {
            xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| types_compatible(x, y))
        }
        _ => false,
    }
}

/// The more precise of two compatible types.
pub fn merge_types(a: &Type, b: &Type) -> Type {
    match (a, b) {
        (Type::Tensor { elem, shape: sa }, Type::Tensor { shape: sb, .. })
            if sa.len() == sb.len() =>
        {
            Type::Tensor {
                elem: *elem,
                shape: sa.iter().zip(sb).map(|(x, y)| merge_dim(x, y)).collect(),
            }
        }
        (Type::Tuple(xs), Type::Tuple(ys)) if xs.len() == ys.len() => {
            Type::Tuple(xs.iter().zip(ys).map(|(x, y)| merge_types(x, y)).collect())
        }
        _ => a.clone(),
    }
}

fn count(op: &OpKind, operands: &[Type], n: usize) -> Result<(), String> {
    if operands.len() == n {
        Ok(())
    } else {
        Err(format!(
            "`{}` takes {n} operand(s), found {}",
            op.name(),
            operands.len()
        ))
    }
}

fn tensor_of<'t>(op: &OpKind, t: &'t Type) -> Result<(ScalarKind, &'t [Dim]), String> {
    match t {
        Type::Tensor { elem, shape } => Ok((*elem, shape)),
        other => Err(format!(
            "`{}` expects a tensor operand, found {other}",
            op.name()
        )),
    }
}

fn expect_i64(op: &OpKind, what: &str, t: &Type) -> Result<(), String> {
    if *t == Type::I64 {
        Ok(())
    } else {
        Err(format!("`{}`: {what} must be i64, found {t}", op.name()))
    }
}

/// `t` with its first `k` axes removed (a scalar when none remain).
fn drop_axes(elem: ScalarKind, shape: &[Dim], k: usize) -> Type {
    if k >= shape.len() {
        Type::Scalar(elem)
    } else {
        Type::Tensor {
            elem,
            shape: shape[k..].to_vec(),
        }
    }
}

fn with_kind(t: &Type, kind: ScalarKind) -> Type {
    match t {
        Type::Tensor { shape, .. } => Type::Tensor {
            elem: kind,
            shape: shape.clone(),
        },
        _ => Type::Scalar(kind),
    }
}

fn unary_kind_ok(op: UnaryOp, k: ScalarKind) -> bool {
    match op {
        UnaryOp::Not => k == ScalarKind::Bool,
        UnaryOp::Neg | UnaryOp::Abs => k != ScalarKind::Bool,
        _ => k.is_float(),
    }
}

fn binary_kind_ok(op: BinaryOp, k: ScalarKind) -> bool {
    if op.is_logical() {
        k == ScalarKind::Bool
    } else if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
        true
    } else if op.float_only() {
        k.is_float()
    } else {
        k != ScalarKind::Bool
    }
}

/// The result types of `op` applied to operands of `operand_types`.
///
/// For `tensor.full` the extents are not known statically: the result is a tensor of
/// the right rank with dynamic extents (the op's declared type may be more precise).
/// For `scf.for` / `scf.while` the results are the carried (initial) types. An
/// `scf.if`'s results are declared by its branches, not its operand: this returns an
/// error for it (the validator checks `scf.if` against its regions instead).
pub fn result_types(
    op: &OpKind,
    operand_types: &[Type],
    module: &Module,
) -> Result<Vec<Type>, String> {
    let ts = operand_types;
    let name = op.name();
    let one = |t: Type| Ok(vec![t]);
    match op {
        OpKind::Const(lit) => {
            count(op, ts, 0)?;
            one(Type::Scalar(lit.kind()))
        }
        OpKind::Unary(u) => {
            count(op, ts, 1)?;
            match ts[0].scalar_kind() {
                Some(k) if unary_kind_ok(*u, k) => one(ts[0].clone()),
                _ => Err(format!("`{name}` does not accept {}", ts[0])),
            }
        }
        OpKind::Binary(b) => {
            count(op, ts, 2)?;
            let (ka, kb) = match (ts[0].scalar_kind(), ts[1].scalar_kind()) {
                (Some(ka), Some(kb)) => (ka, kb),
                _ => return Err(format!("`{name}` does not accept {} and {}", ts[0], ts[1])),
            };
            if ka != kb {
                return Err(format!(
                    "`{name}` operands differ in kind: {} and {}",
                    ts[0], ts[1]
                ));
            }
            if !binary_kind_ok(*b, ka) {
                return Err(format!(
                    "`{name}` does not accept operands of kind {}",
                    ka.name()
                ));
            }
            let shaped = match (&ts[0], &ts[1]) {
                (Type::Scalar(_), Type::Scalar(_)) => ts[0].clone(),
                (Type::Tensor { .. }, Type::Scalar(_)) => ts[0].clone(),
                (Type::Scalar(_), Type::Tensor { .. }) => ts[1].clone(),
                (a, c) => {
                    if !types_compatible(a, c) {
                        return Err(format!("`{name}` operand shapes differ: {a} and {c}"));
                    }
                    merge_types(a, c)
                }
            };
            if b.is_comparison() {
                one(with_kind(&shaped, ScalarKind::Bool))
            } else {
                one(shaped)
            }
        }
        OpKind::Select => {
            count(op, ts, 3)?;
            let elementwise = matches!(&ts[0], Type::Tensor { elem: ScalarKind::Bool, .. });
            if ts[0] != Type::BOOL && !elementwise {
                return Err(format!("`select` condition must be bool or a bool tensor, found {}", ts[0]));
            }
            if !types_compatible(&ts[1], &ts[2]) {
                return Err(format!("`select` branches differ: {} and {}", ts[1], ts[2]));
            }
            let merged = merge_types(&ts[1], &ts[2]);
            if elementwise {
                let (Type::Tensor { shape: c, .. }, Type::Tensor { elem, shape }) = (&ts[0], &merged) else {
                    return Err(format!("an elementwise `select` needs tensor branches, found {}", ts[1]));
                };
                if c.len() != shape.len() || !c.iter().zip(shape).all(|(a, b)| dims_compatible(a, b)) {
                    return Err(format!("`select` condition {} does not fit branches {}", ts[0], ts[1]));
                }
                return one(Type::Tensor { elem: *elem, shape: c.iter().zip(shape).map(|(a, b)| merge_dim(a, b)).collect() });
            }
            one(merged)
        }
        OpKind::Cast(k) => {
            count(op, ts, 1)?;
            let from = ts[0]
                .scalar_kind()
                .ok_or_else(|| format!("`cast` does not accept {}", ts[0]))?;
            if *k == ScalarKind::Bool {
                return Err("`cast` to bool is not allowed (compare with zero instead)".into());
            }
            if from == ScalarKind::Bool && *k != ScalarKind::I64 {
                return Err(format!(
                    "`cast` from bool goes to i64 only, not {}",
                    k.name()
                ));
            }
            one(with_kind(&ts[0], *k))
        }
        OpKind::Pack => {
            if ts.is_empty() {
                return Err("`tensor.pack` needs at least one operand".into());
            }
            let mut elem = ts[0].clone();
            for t in &ts[1..] {
                if !types_compatible(t, &elem) {
                    return Err(format!("`tensor.pack` operands differ: {} and {t}", ts[0]));
                }
                elem = merge_types(&elem, t);
            }
            let mut shape = vec![Dim::Fixed(ts.len() as u64)];
            let kind = match &elem {
                Type::Scalar(k) => *k,
                Type::Tensor { elem: k, shape: s } => {
                    shape.extend(s.iter().cloned());
                    *k
                }
                Type::Tuple(_) => return Err(format!("`tensor.pack` cannot pack tuples ({elem})")),
            };
            one(Type::Tensor { elem: kind, shape })
        }
        OpKind::Full => {
            let Some((v, extents)) = ts.split_first() else {
                return Err("`tensor.full` needs a value operand".into());
            };
            let Type::Scalar(k) = v else {
                return Err(format!("`tensor.full` value must be a scalar, found {v}"));
            };
            for (i, e) in extents.iter().enumerate() {
                expect_i64(op, &format!("extent {i}"), e)?;
            }
            one(Type::Tensor {
                elem: *k,
                shape: vec![Dim::Dyn; extents.len()],
            })
        }
        OpKind::Extract(i) => {
            count(op, ts, 1)?;
            let (k, shape) = tensor_of(op, &ts[0])?;
            if shape.is_empty() {
                return Err("`tensor.extract` needs a tensor of rank ≥ 1".into());
            }
            if let Dim::Fixed(n) = shape[0]
                && *i >= n
            {
                return Err(format!(
                    "`tensor.extract` index {i} is out of range for extent {n}"
                ));
            }
            one(drop_axes(k, shape, 1))
        }
        OpKind::Index => {
            let Some((t, idx)) = ts.split_first() else {
                return Err("`tensor.index` needs a tensor operand".into());
            };
            let (k, shape) = tensor_of(op, t)?;
            if idx.is_empty() || idx.len() > shape.len() {
                return Err(format!(
                    "`tensor.index` takes 1 to {} indices for {t}, found {}",
                    shape.len(),
                    idx.len()
                ));
            }
            for (i, e) in idx.iter().enumerate() {
                expect_i64(op, &format!("index {i}"), e)?;
            }
            one(drop_axes(k, shape, idx.len()))
        }
        OpKind::Insert => {
            if ts.len() < 3 {
                return Err(format!(
                    "`tensor.insert` takes a tensor, a value and indices, found {} operand(s)",
                    ts.len()
                ));
            }
            let (k, shape) = tensor_of(op, &ts[0])?;
            let idx = &ts[2..];
            if idx.len() > shape.len() {
                return Err(format!(
                    "`tensor.insert` takes at most {} indices for {}, found {}",
                    shape.len(),
                    ts[0],
                    idx.len()
                ));
            }
            for (i, e) in idx.iter().enumerate() {
                expect_i64(op, &format!("index {i}"), e)?;
            }
            let part = drop_axes(k, shape, idx.len());
            if !types_compatible(&ts[1], &part) {
                return Err(format!(
                    "`tensor.insert` value must be {part}, found {}",
                    ts[1]
                ));
            }
            one(ts[0].clone())
        }
        OpKind::DimOf(axis) => {
            count(op, ts, 1)?;
            let (_, shape) = tensor_of(op, &ts[0])?;
            if *axis as usize >= shape.len() {
                return Err(format!(
                    "`tensor.dim` axis {axis} is out of range for {}",
                    ts[0]
                ));
            }
            one(Type::I64)
        }
        OpKind::MatMul => {
            count(op, ts, 2)?;
            let (ka, sa) = tensor_of(op, &ts[0])?;
            let (kb, sb) = tensor_of(op, &ts[1])?;
            if ka != kb || !ka.is_float() {
                return Err(format!(
                    "`tensor.matmul` needs float tensors of one kind, found {} and {}",
                    ts[0], ts[1]
                ));
            }
            if sa.len() < 2 || sb.is_empty() {
                return Err(format!(
                    "`tensor.matmul` needs [..., m, k] x [..., k, n] or [..., m, k] x [k], found {} and {}",
                    ts[0], ts[1]
                ));
            }
            let vector = sb.len() == 1;
            let inner = if vector { &sb[0] } else { &sb[sb.len() - 2] };
            if !dims_compatible(&sa[sa.len() - 1], inner) {
                return Err(format!(
                    "`tensor.matmul` inner extents differ: {} and {}",
                    ts[0], ts[1]
                ));
            }
            // The batch extents broadcast (numpy's `matmul`).
            let (ba, bb) = (&sa[..sa.len() - 2], if vector { &sb[..0] } else { &sb[..sb.len() - 2] });
            let rank = ba.len().max(bb.len());
            let mut shape = Vec::with_capacity(rank + 2);
            for axis in 0..rank {
                let pick = |s: &[Dim]| (axis + s.len()).checked_sub(rank).map_or(Dim::Fixed(1), |i| s[i].clone());
                let (x, y) = (pick(ba), pick(bb));
                shape.push(match (&x, &y) {
                    (Dim::Fixed(1), _) => y,
                    (_, Dim::Fixed(1)) => x,
                    _ if dims_compatible(&x, &y) => merge_dim(&x, &y),
                    _ => return Err(format!("`tensor.matmul` batch extents differ: {} and {}", ts[0], ts[1])),
                });
            }
            shape.push(sa[sa.len() - 2].clone());
            if !vector {
                shape.push(sb[sb.len() - 1].clone());
            }
            one(Type::Tensor { elem: ka, shape })
        }
        OpKind::Transpose => {
            count(op, ts, 1)?;
            let (k, s) = tensor_of(op, &ts[0])?;
            if s.len() != 2 {
                return Err(format!(
                    "`tensor.transpose` needs a tensor of rank 2, found {}",
                    ts[0]
                ));
            }
            one(Type::Tensor {
                elem: k,
                shape: vec![s[1].clone(), s[0].clone()],
            })
        }
        OpKind::Sum => {
            count(op, ts, 1)?;
            let (k, _) = tensor_of(op, &ts[0])?;
            if k == ScalarKind::Bool {
                return Err("`tensor.sum` needs a numeric tensor, found bool".into());
            }
            one(Type::Scalar(k))
        }
        OpKind::Slice => {
            count(op, ts, 3)?;
            let (k, s) = tensor_of(op, &ts[0])?;
            if s.is_empty() || ts[1] != Type::I64 || ts[2] != Type::I64 {
                return Err(format!("`tensor.slice` needs a tensor of rank ≥ 1 and two i64 bounds, found {}, {}, {}", ts[0], ts[1], ts[2]));
            }
            let mut shape = s.to_vec();
            shape[0] = Dim::Dyn;
            one(Type::Tensor { elem: k, shape })
        }
        OpKind::Concat => {
            let Some(first) = ts.first() else {
                return Err("`tensor.concat` needs at least one operand".into());
            };
            let (k, s) = tensor_of(op, first)?;
            if s.is_empty() {
                return Err(format!("`tensor.concat` needs tensors of rank ≥ 1, found {first}"));
            }
            for t in &ts[1..] {
                let (k2, s2) = tensor_of(op, t)?;
                if k2 != k || s2.len() != s.len() || !s2[1..].iter().zip(&s[1..]).all(|(a, b)| dims_compatible(a, b)) {
                    return Err(format!("`tensor.concat` needs one kind and one row shape, found {first} and {t}"));
                }
            }
            let mut shape = s.to_vec();
            shape[0] = Dim::Dyn;
            one(Type::Tensor { elem: k, shape })
        }
        OpKind::Reshape => {
            let Some(first) = ts.first() else {
                return Err("`tensor.reshape` needs a tensor and its new extents".into());
            };
            let (k, _) = tensor_of(op, first)?;
            if ts.len() < 2 || ts[1..].iter().any(|t| *t != Type::I64) {
                return Err(format!("`tensor.reshape` needs a tensor and one or more i64 extents, found {} operand(s)", ts.len()));
            }
            one(Type::Tensor { elem: k, shape: vec![Dim::Dyn; ts.len() - 1] })
        }
        OpKind::Permute(perm) => {
            count(op, ts, 1)?;
            let (k, s) = tensor_of(op, &ts[0])?;
            let mut seen = vec![false; s.len()];
            let valid = perm.len() == s.len() && perm.iter().all(|&p| (p as usize) < s.len() && !std::mem::replace(&mut seen[p as usize], true));
            if !valid {
                return Err(format!("`tensor.permute` by {perm:?} needs a permutation of the axes of {}", ts[0]));
            }
            one(Type::Tensor { elem: k, shape: perm.iter().map(|&p| s[p as usize].clone()).collect() })
        }
        OpKind::Broadcast | OpKind::ReduceTo(_) => {
            let name = op.name();
            let Some((first, extents)) = ts.split_first() else {
                return Err(format!("`{name}` needs a tensor and its target extents"));
            };
            let (k, s) = tensor_of(op, first)?;
            for (i, e) in extents.iter().enumerate() {
                expect_i64(op, &format!("extent {i}"), e)?;
            }
            let fits = if *op == OpKind::Broadcast { extents.len() >= s.len() } else { extents.len() <= s.len() };
            if !fits {
                let relation = if *op == OpKind::Broadcast { "at most" } else { "at least" };
                return Err(format!("`{name}` to {n} extent(s) needs a tensor of rank {relation} {n}, found {first}", n = extents.len()));
            }
            if matches!(op, OpKind::ReduceTo(_)) && k == ScalarKind::Bool {
                return Err(format!("`{name}` needs a numeric tensor, found bool"));
            }
            one(Type::Tensor { elem: k, shape: vec![Dim::Dyn; extents.len()] })
        }
        OpKind::Tuple => one(Type::Tuple(ts.to_vec())),
        OpKind::TupleGet(i) => {
            count(op, ts, 1)?;
            match &ts[0] {
                Type::Tuple(items) => items
                    .get(*i as usize)
                    .map(|t| vec![t.clone()])
                    .ok_or_else(|| format!("`tuple.get` index {i} is out of range for {}", ts[0])),
                other => Err(format!("`tuple.get` expects a tuple, found {other}")),
            }
        }
        OpKind::Call(f) => {
            let callee = module
                .functions
                .get(*f)
                .ok_or_else(|| format!("`call` of a missing function #{}", f.index()))?;
            let params = callee.param_types();
            if params.len() != ts.len() {
                return Err(format!(
                    "`call` of `{}` passes {} argument(s), it takes {}",
                    callee.name,
                    ts.len(),
                    params.len()
                ));
            }
            for (i, (a, p)) in ts.iter().zip(&params).enumerate() {
                if !types_compatible(a, p) {
                    return Err(format!(
                        "`call` of `{}`: argument {i} is {a}, the parameter is {p}",
                        callee.name
                    ));
                }
            }
            one(callee.ret.clone())
        }
        OpKind::Print => {
            count(op, ts, 1)?;
            one(Type::unit())
        }
        OpKind::PrintStr(_) => {
            count(op, ts, 0)?;
            one(Type::unit())
        }
        OpKind::If => {
            count(op, ts, 1)?;
            if ts[0] != Type::BOOL {
                return Err(format!("`scf.if` condition must be bool, found {}", ts[0]));
            }
            Err("`scf.if` results are declared by its branches".into())
        }
        OpKind::For => {
            if ts.len() < 2 {
                return Err(format!(
                    "`scf.for` takes lo, hi and carried values, found {} operand(s)",
                    ts.len()
                ));
            }
            expect_i64(op, "lo", &ts[0])?;
            expect_i64(op, "hi", &ts[1])?;
            Ok(ts[2..].to_vec())
        }
        OpKind::While => Ok(ts.to_vec()),
        OpKind::TapePush => {
            if ts.is_empty() {
                return Err("`tape.push` takes at least one value".into());
            }
            Ok(Vec::new())
        }
        OpKind::TapePop => Err("`tape.pop` results are declared by the op".into()),
    }
}
