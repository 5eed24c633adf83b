//! The rule table: for every [`OpKind`] its forward (JVP) rule and its transpose
//! (VJP) rule, in one place. Both matches are exhaustive without a wildcard arm, so
//! a new op does not compile until it has rules here.
//!
//! Every op is one of:
//! - **smooth or piecewise smooth** (arithmetic, elementwise functions, `select`,
//!   float casts, tensor construction and access, `matmul`, `transpose`, `sum`,
//!   tuples): rules below;
//! - **non-differentiable** (comparisons, `and`/`or`/`not`, `floor`, `ceil`, integer
//!   arithmetic, `tensor.dim`, `print`, casts to or from integers, constants, the order
//!   operand of `polygamma`): its
//!   tangent is zero and no cotangent flows through it (they are locally constant
//!   wherever they are differentiable at all, or produce values without a tangent);
//! - **structural** (`call`, `scf.if`, `scf.for`, `scf.while`): transformed by the
//!   forward and reverse passes, which recurse into the callee or the regions.
//!
//! Rules receive the operands and results of the op in the function being built and
//! the (co)tangents as [`Tan`]s; a symbolic zero produces no IR. Elementwise binary
//! ops broadcast a scalar against a tensor: the tangent of such a result is a
//! tensor (a broadcast scalar tangent is widened with `tensor.full`) and the adjoint
//! of the broadcast scalar operand is the `tensor.sum` of its tensor contribution.
//! `matmul` is differentiated as whole tensors (`dA = G Bᵀ`, `dB = Aᵀ G`).
//!
//! Numerical conventions at singular points are listed in [`crate::ad`].

use super::AdError;
use super::emit::Emitter;
use super::tangent::{Tan, as_opt, materialize, project};
use crate::ir::{BinaryOp, OpKind, Reduce, ScalarKind, Type, UnaryOp, ValueId};

/// What a JVP rule produced.
pub enum Jvp {
    /// One tangent per result.
    Tangents(Vec<Tan>),
    /// The op is transformed by the pass itself (calls and control flow).
    Structural,
}

/// One contribution to an operand's adjoint.
pub enum Ct {
    Tan(Tan),
    /// `g` added at `t[idx..]` of a tensor operand `t` (the adjoint of a read).
    Scatter(ValueId, Vec<ValueId>),
}

/// What a VJP rule produced.
pub enum Vjp {
    /// One contribution per operand.
    Cotangents(Vec<Ct>),
    Structural,
}

fn is_float(e: &Emitter, v: ValueId) -> bool {
    e.ty(v).scalar_kind().is_some_and(ScalarKind::is_float)
}

fn zeros(n: usize) -> Vec<Ct> {
    (0..n).map(|_| Ct::Tan(Tan::Zero)).collect()
}

fn tan(v: Option<ValueId>) -> Ct {
    Ct::Tan(Tan::from_opt(v))
}

/// `v` (of a `ReduceTo`'s result shape) stretched back to `like`'s extents and type.
fn broadcast_like(e: &mut Emitter, v: ValueId, like: ValueId) -> Result<ValueId, AdError> {
    let mut ops = vec![v];
    ops.extend(e.extents(like)?);
    let ty = e.ty(like);
    let id = e.push(OpKind::Broadcast, ops, vec![ty]);
    Ok(e.results(id)[0])
}

/// `t` summed down to the extents `extents` with `like`'s type.
fn reduce_like(e: &mut Emitter, t: ValueId, like: ValueId, extents: &[ValueId]) -> Result<ValueId, AdError> {
    let mut ops = vec![t];
    ops.extend_from_slice(extents);
    let ty = e.ty(like);
    let id = e.push(OpKind::ReduceTo(Reduce::Sum), ops, vec![ty]);
    Ok(e.results(id)[0])
}

/// Where `x` attains the extremum `y = max_to(x, extents)` (or `min_to`): a bool tensor of
/// `x`'s shape, and how many positions of `x` attain each element of `y` (as a float tensor
/// of `y`'s shape).
fn extremum_positions(e: &mut Emitter, x: ValueId, y: ValueId, extents: &[ValueId]) -> Result<(ValueId, ValueId), AdError> {
    let spread = broadcast_like(e, y, x)?;
    let hit = e.op(OpKind::Binary(BinaryOp::Eq), vec![x, spread])?;
    let k = e.kind(x);
    let (one, zero) = (e.float(k, 1.0), e.float(k, 0.0));
    let ones = e.full_like(one, x)?;
    let zeros = e.full_like(zero, x)?;
    let marks = e.op(OpKind::Select, vec![hit, ones, zeros])?;
    let count = reduce_like(e, marks, y, extents)?;
    Ok((hit, count))
}

/// The most rows of a fixed-size operand of `concat` whose adjoint is packed row by row
/// (beyond it, a slice copied into the fixed shape).
const MAX_PACKED_ROWS: u64 = 64;

fn rank(e: &Emitter, v: ValueId) -> usize {
    match e.ty(v) {
        Type::Tensor { shape, .. } => shape.len(),
        _ => 0,
    }
}

/// `t` with its last two axes swapped.
fn swap_last(e: &mut Emitter, t: ValueId) -> Result<ValueId, AdError> {
    let r = rank(e, t) as u32;
    let perm: Vec<u32> = (0..r - 2).chain([r - 1, r - 2]).collect();
    e.op(OpKind::Permute(perm), vec![t])
}

/// `t` (a contribution of the shape of a matrix product's batch) summed down to `like`'s
/// extents and type, where the product broadcast `like`'s batch axes.
fn sum_to_like(e: &mut Emitter, t: ValueId, like: ValueId) -> Result<ValueId, AdError> {
    if e.ty(t) == e.ty(like) && e.ty(like).fixed_shape().is_some() {
        return Ok(t);
    }
    let mut ops = vec![t];
    ops.extend(e.extents(like)?);
    let ty = e.ty(like);
    let id = e.push(OpKind::ReduceTo(Reduce::Sum), ops, vec![ty]);
    Ok(e.results(id)[0])
}

/// `v` with a unit axis appended (`[…, m]` → `[…, m, 1]`) or prepended (`[k]` → `[1, k]`).
fn with_unit_axis(e: &mut Emitter, v: ValueId, append: bool) -> Result<ValueId, AdError> {
    let Type::Tensor { elem, shape } = e.ty(v) else {
        return Err(AdError::Internal("a unit axis on a non-tensor".into()));
    };
    let mut extents = e.extents(v)?;
    let mut dims = shape.clone();
    let one = e.int(1);
    if append {
        extents.push(one);
        dims.push(crate::ir::Dim::Fixed(1));
    } else {
        extents.insert(0, one);
        dims.insert(0, crate::ir::Dim::Fixed(1));
    }
    let mut ops = vec![v];
    ops.extend(extents);
    let id = e.push(OpKind::Reshape, ops, vec![Type::Tensor { elem, shape: dims }]);
    Ok(e.results(id)[0])
}

/// The transpose rule of a matrix product with batch axes: `Ā = Ḡ Bᵀ`, `B̄ = Aᵀ Ḡ` per
/// batch, summed over the batch axes an operand was broadcast along; a vector `b` is the
/// column `[k, 1]`.
fn batched_matmul_vjp(e: &mut Emitter, a: ValueId, b: ValueId, g: ValueId) -> Result<Vjp, AdError> {
    let at = swap_last(e, a)?;
    let (ga, gb) = if rank(e, b) == 1 {
        let gcol = with_unit_axis(e, g, true)?;
        let brow = with_unit_axis(e, b, false)?;
        let ga = e.op(OpKind::MatMul, vec![gcol, brow])?;
        let gb = e.op(OpKind::MatMul, vec![at, gcol])?;
        // [batch…, k, 1] summed to [k, 1], then the vector [k].
        let col = with_unit_axis(e, b, true)?;
        let gb = sum_to_like(e, gb, col)?;
        let mut ops = vec![gb];
        ops.extend(e.extents(b)?);
        let ty = e.ty(b);
        let id = e.push(OpKind::Reshape, ops, vec![ty]);
        (ga, e.results(id)[0])
    } else {
        let bt = swap_last(e, b)?;
        (e.op(OpKind::MatMul, vec![g, bt])?, e.op(OpKind::MatMul, vec![at, g])?)
    };
    let ga = sum_to_like(e, ga, a)?;
    let gb = sum_to_like(e, gb, b)?;
    Ok(Vjp::Cotangents(vec![tan(Some(ga)), tan(Some(gb))]))
}

/// `f'(x)` for an elementwise unary float function with result `y`; `None` if zero.
/// `t` (a tensor of dynamic extents with the elements of `like`, row-major) as a value of
/// `like`'s type: itself when `like` has a dynamic extent, else a reshape declared with
/// `like`'s fixed type (the adjoint of a fixed-size operand of a slice or `concat` must have
/// that operand's type).
fn shaped_like(e: &mut Emitter, t: ValueId, like: ValueId) -> Result<ValueId, AdError> {
    let Some(shape) = e.ty(like).fixed_shape() else {
        return Ok(t);
    };
    let mut ops = vec![t];
    for &d in &shape {
        ops.push(e.int(d as i64));
    }
    let ty = e.ty(like);
    let id = e.push(OpKind::Reshape, ops, vec![ty]);
    Ok(e.results(id)[0])
}

fn unary_factor(
    e: &mut Emitter,
    op: UnaryOp,
    x: ValueId,
    y: ValueId,
) -> Result<Option<ValueId>, AdError> {
    let k = e.kind(x);
    let one = |e: &mut Emitter| e.float(k, 1.0);
    Ok(Some(match op {
        UnaryOp::Not | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Detach => return Ok(None),
        UnaryOp::Neg => {
            let m1 = e.float(k, -1.0);
            return Ok(Some(m1));
        }
        UnaryOp::Sqrt => {
            // 1 / (2 sqrt x), and 0 where sqrt x == 0 (the documented choice).
            let (safe, is0) = e.nonzero(y)?;
            let half = e.float(k, 0.5);
            let f = e.div(half, safe)?;
            e.zero_where(f, is0)?
        }
        UnaryOp::Exp => y,
        // exp(x), not y + 1: that loses the small values' precision where y is near −1.
        UnaryOp::Expm1 => e.unary(UnaryOp::Exp, x)?,
        UnaryOp::Log | UnaryOp::Log1p | UnaryOp::Atan | UnaryOp::Asin | UnaryOp::Acos => {
            let Some((num, d)) = unary_quotient(e, op, x)? else {
                return Err(AdError::Internal(format!(
                    "no quotient for `{}`",
                    op.name()
                )));
            };
            let n = e.float(k, num);
            e.div(n, d)?
        }
        UnaryOp::Sin => e.unary(UnaryOp::Cos, x)?,
        UnaryOp::Cos => {
            let s = e.unary(UnaryOp::Sin, x)?;
            e.neg(s)?
        }
        UnaryOp::Tan => {
            let y2 = e.mul(y, y)?;
            let o = one(e);
            e.add(o, y2)?
        }
        UnaryOp::Sinh => e.unary(UnaryOp::Cosh, x)?,
        UnaryOp::Cosh => e.unary(UnaryOp::Sinh, x)?,
        UnaryOp::Tanh => {
            let y2 = e.mul(y, y)?;
            let o = one(e);
            e.sub(o, y2)?
        }
        UnaryOp::Erf => {
            // 2/√π · e^(−x²).
            let x2 = e.mul(x, x)?;
            let nx2 = e.neg(x2)?;
            let g = e.unary(UnaryOp::Exp, nx2)?;
            let c = e.float(k, std::f64::consts::FRAC_2_SQRT_PI);
            e.mul(c, g)?
        }
        // The gamma family: each derivative is the next polygamma function, to every order
        // (`polygamma`'s own rule below).
        UnaryOp::Lgamma => e.unary(UnaryOp::Digamma, x)?,
        UnaryOp::Digamma => e.unary(UnaryOp::Trigamma, x)?,
        UnaryOp::Trigamma => {
            let two = e.float(k, 2.0);
            e.binary(BinaryOp::Polygamma, two, x)?
        }
        UnaryOp::Softplus => e.unary(UnaryOp::Sigmoid, x)?,
        UnaryOp::Sigmoid => {
            // σ(x)·σ(−x): relatively accurate on both tails, where σ(x)·(1 − σ(x)) is not.
            let nx = e.neg(x)?;
            let s = e.unary(UnaryOp::Sigmoid, nx)?;
            e.mul(y, s)?
        }
        UnaryOp::Abs => {
            // sign(x), with sign(0) = 0.
            let z = e.float(k, 0.0);
            let pos = e.binary(BinaryOp::Gt, x, z)?;
            let negc = e.binary(BinaryOp::Lt, x, z)?;
            let mp = e.mask(pos, k)?;
            let mn = e.mask(negc, k)?;
            e.sub(mp, mn)?
        }
    }))
}

/// For the elementwise unary functions whose derivative is a quotient `num / d`
/// (`num` = ±1): `num` and `d`. Forward mode multiplies each tangent by the
/// factor `num / d` (shared by every seed direction); reverse mode divides its
/// one cotangent by `d` instead (`g / d`, one division and no multiplication)
/// where `x` varies in the region being built ([`Emitter::varies`]).
fn unary_quotient(
    e: &mut Emitter,
    op: UnaryOp,
    x: ValueId,
) -> Result<Option<(f64, ValueId)>, AdError> {
    let k = e.kind(x);
    Ok(Some(match op {
        UnaryOp::Log => (1.0, x),
        UnaryOp::Log1p => {
            let o = e.float(k, 1.0);
            (1.0, e.add(o, x)?)
        }
        UnaryOp::Asin | UnaryOp::Acos => {
            let x2 = e.mul(x, x)?;
            let o = e.float(k, 1.0);
            let d = e.sub(o, x2)?;
            let s = e.unary(UnaryOp::Sqrt, d)?;
            (if op == UnaryOp::Asin { 1.0 } else { -1.0 }, s)
        }
        UnaryOp::Atan => {
            let x2 = e.mul(x, x)?;
            let o = e.float(k, 1.0);
            let d = e.add(o, x2)?;
            (1.0, d)
        }
        _ => return Ok(None),
    }))
}

/// The partial derivatives `(∂y/∂a, ∂y/∂b)` of a smooth elementwise binary op
/// (`None`: zero), for the ops that have them as plain factors.
fn binary_factors(
    e: &mut Emitter,
    op: BinaryOp,
    a: ValueId,
    b: ValueId,
    y: ValueId,
) -> Result<(Option<ValueId>, Option<ValueId>), AdError> {
    let k = e.kind(y);
    Ok(match op {
        BinaryOp::Mul => (Some(b), Some(a)),
        BinaryOp::Div => {
            let one = e.float(k, 1.0);
            let inv = e.div(one, b)?;
            let q = e.mul(y, inv)?;
            let nq = e.neg(q)?;
            (Some(inv), Some(nq))
        }
        BinaryOp::Pow => {
            // ∂a = b a^(b-1), taken as 0 where b == 0 (x^0 is constant: no 0·∞ at a == 0,
            // and so the second derivative of x^1 is 0 too); ∂b = a^b log a, taken as 0
            // where a == 0 (pow(0, y)).
            let one = e.float(k, 1.0);
            let bm1 = e.sub(b, one)?;
            let p = e.binary(BinaryOp::Pow, a, bm1)?;
            let fa = e.mul(b, p)?;
            // On scalars only where that product is NaN (b == 0 at a == 0): elsewhere at
            // b == 0 it is 0 already and keeps its derivative in b (the mixed second
            // derivative of a^b at b = 0 is 1/a, not 0). Tensors take the mask.
            let fa = if matches!(e.ty(fa), Type::Scalar(_)) {
                e.strong_zero(b, fa)?
            } else {
                let (_, b_is0) = e.nonzero(b)?;
                e.zero_where(fa, b_is0)?
            };
            let (safe, _) = e.nonzero(a)?;
            let ps = e.binary(BinaryOp::Pow, safe, b)?;
            let l = e.unary(UnaryOp::Log, safe)?;
            let fb = e.mul(ps, l)?;
            (Some(fa), Some(fb))
        }
        BinaryOp::Atan2 => {
            // atan2(a, b): ∂a = b / (a² + b²), ∂b = -a / (a² + b²); 0 at (0, 0).
            let a2 = e.mul(a, a)?;
            let b2 = e.mul(b, b)?;
            let den = e.add(a2, b2)?;
            let (safe, _) = e.nonzero(den)?;
            let fa = e.div(b, safe)?;
            let na = e.neg(a)?;
            let fb = e.div(na, safe)?;
            (Some(fa), Some(fb))
        }
        BinaryOp::Polygamma => {
            // ∂/∂x ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x); the order n takes integer values only: no derivative.
            let one = e.float(k, 1.0);
            let n1 = e.add(a, one)?;
            (None, Some(e.binary(BinaryOp::Polygamma, n1, b)?))
        }
        BinaryOp::Rem => {
            // a % b = a - b trunc(a / b): ∂a = 1, ∂b = -(a - y) / b.
            let one = e.float(k, 1.0);
            let d = e.sub(a, y)?;
            let q = e.div(d, b)?;
            let nq = e.neg(q)?;
            (Some(one), Some(nq))
        }
        _ => return Err(AdError::Internal(format!("no factors for `{}`", op.name()))),
    })
}

/// The condition under which `min`/`max` takes `a` (ties go to `a`).
fn takes_a(e: &mut Emitter, op: BinaryOp, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
    let cmp = if op == BinaryOp::Min {
        BinaryOp::Le
    } else {
        BinaryOp::Ge
    };
    e.binary(cmp, a, b)
}

/// The forward rule of `kind` applied at operands `xs` with results `ys` and
/// operand tangents `dx` (one seed direction).
pub fn jvp(
    e: &mut Emitter,
    kind: &OpKind,
    xs: &[ValueId],
    ys: &[ValueId],
    dx: &[Tan],
) -> Result<Jvp, AdError> {
    let zero = || Ok(Jvp::Tangents(vec![Tan::Zero]));
    let one = |v: Option<ValueId>| Ok(Jvp::Tangents(vec![Tan::from_opt(v)]));
    match kind {
        OpKind::Const(_) | OpKind::DimOf(_) | OpKind::Print | OpKind::PrintStr(_) => zero(),
        OpKind::Unary(op) => {
            let (x, y) = (xs[0], ys[0]);
            if !is_float(e, x) {
                return zero();
            }
            let Some(d) = as_opt(e, &dx[0], x)? else {
                return zero();
            };
            if *op == UnaryOp::Neg {
                return one(Some(e.neg(d)?));
            }
            match unary_factor(e, *op, x, y)? {
                None => zero(),
                Some(f) => one(Some(e.tangent_mul(d, f)?)),
            }
        }
        OpKind::Binary(op) => {
            let (a, b, y) = (xs[0], xs[1], ys[0]);
            if !is_float(e, y) {
                return zero();
            }
            let da = as_opt(e, &dx[0], a)?;
            let db = as_opt(e, &dx[1], b)?;
            if da.is_none() && db.is_none() {
                return zero();
            }
            let t = match op {
                BinaryOp::Add => e.oadd(da, db)?,
                BinaryOp::Sub => e.osub(da, db)?,
                BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Pow
                | BinaryOp::Atan2
                | BinaryOp::Rem
                | BinaryOp::Polygamma => {
                    let (fa, fb) = binary_factors(e, *op, a, b, y)?;
                    // The factors of `/`, `pow`, `atan2`, `%` can be infinite at finite
                    // inputs, and so can those of `*` inside a reverse pass that a forward
                    // pass differentiates (`hessian`: an adjoint such as ȳ·x^(−1/2) is
                    // infinite at x = 0): a zero tangent stays zero there.
                    let times = |e: &mut Emitter, d, f| e.tangent_mul(d, f);
                    let ta = match (da, fa) {
                        (Some(d), Some(f)) => Some(times(e, d, f)?),
                        _ => None,
                    };
                    let tb = match (db, fb) {
                        (Some(d), Some(f)) => Some(times(e, d, f)?),
                        _ => None,
                    };
                    e.oadd(ta, tb)?
                }
                BinaryOp::Min | BinaryOp::Max => {
                    let c = takes_a(e, *op, a, b)?;
                    if let Type::Scalar(_) = e.ty(c) {
                        let ta = match da {
                            Some(d) => d,
                            None => e.zero_like(a)?,
                        };
                        let tb = match db {
                            Some(d) => d,
                            None => e.zero_like(b)?,
                        };
                        Some(e.op(OpKind::Select, vec![c, ta, tb])?)
                    } else {
                        let k = e.kind(y);
                        let m = e.mask(c, k)?;
                        let nc = e.unary(UnaryOp::Not, c)?;
                        let nm = e.mask(nc, k)?;
                        let ta = e.omul(da, m)?;
                        let tb = e.omul(db, nm)?;
                        e.oadd(ta, tb)?
                    }
                }
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::And
                | BinaryOp::Or => None,
            };
            match t {
                Some(t) => one(Some(e.fit(t, y)?)),
                None => zero(),
            }
        }
        OpKind::Select => {
            if dx[1].is_zero() && dx[2].is_zero() {
                return zero();
            }
            let Some(ta) = materialize(e, &dx[1], xs[1])? else {
                return zero();
            };
            let Some(tb) = materialize(e, &dx[2], xs[2])? else {
                return zero();
            };
            one(Some(e.op(OpKind::Select, vec![xs[0], ta, tb])?))
        }
        OpKind::Cast(k) => {
            if !k.is_float() || !is_float(e, xs[0]) {
                return zero();
            }
            match as_opt(e, &dx[0], xs[0])? {
                None => zero(),
                Some(d) => one(Some(e.op(OpKind::Cast(*k), vec![d])?)),
            }
        }
        OpKind::Pack => {
            if !is_float(e, ys[0]) || dx.iter().all(Tan::is_zero) {
                return zero();
            }
            let mut parts = Vec::new();
            for (t, &x) in dx.iter().zip(xs) {
                parts.push(
                    materialize(e, t, x)?
                        .ok_or_else(|| AdError::Internal("pack tangent".into()))?,
                );
            }
            one(Some(e.op(OpKind::Pack, parts)?))
        }
        OpKind::ReduceTo(Reduce::Max | Reduce::Min) => {
            if !is_float(e, xs[0]) {
                return zero();
            }
            let Some(d) = as_opt(e, &dx[0], xs[0])? else {
                return zero();
            };
            // The tangents at the positions that attain the extremum, averaged over ties.
            let (hit, count) = extremum_positions(e, xs[0], ys[0], &xs[1..])?;
            let z = e.zero_like(xs[0])?;
            let picked = e.op(OpKind::Select, vec![hit, d, z])?;
            let total = reduce_like(e, picked, ys[0], &xs[1..])?;
            one(Some(e.div(total, count)?))
        }
        OpKind::Permute(_) => {
            if !is_float(e, xs[0]) {
                return zero();
            }
            match as_opt(e, &dx[0], xs[0])? {
                None => zero(),
                Some(d) => one(Some(e.op(kind.clone(), vec![d])?)),
            }
        }
        // Linear in the first operand, with the result's (declared) type.
        OpKind::Full | OpKind::Broadcast | OpKind::ReduceTo(Reduce::Sum) | OpKind::Reshape => {
            if !is_float(e, ys[0]) {
                return zero();
            }
            match as_opt(e, &dx[0], xs[0])? {
                None => zero(),
                Some(d) => {
                    let mut operands = vec![d];
                    operands.extend_from_slice(&xs[1..]);
                    let ty = e.ty(ys[0]);
                    let id = e.push(kind.clone(), operands, vec![ty]);
                    one(Some(e.results(id)[0]))
                }
            }
        }
        OpKind::Extract(_) | OpKind::Index | OpKind::Transpose | OpKind::Sum | OpKind::Slice => {
            if !is_float(e, xs[0]) {
                return zero();
            }
            match as_opt(e, &dx[0], xs[0])? {
                None => zero(),
                Some(d) => {
                    let mut operands = vec![d];
                    operands.extend_from_slice(&xs[1..]);
                    one(Some(e.op(kind.clone(), operands)?))
                }
            }
        }
        OpKind::Concat => {
            if !is_float(e, xs[0]) || dx.iter().all(Tan::is_zero) {
                return zero();
            }
            let mut parts = Vec::new();
            for (&x, d) in xs.iter().zip(dx) {
                parts.push(match as_opt(e, d, x)? {
                    Some(d) => d,
                    None => e.zero_like(x)?,
                });
            }
            one(Some(e.op(OpKind::Concat, parts)?))
        }
        OpKind::Insert => {
            if !is_float(e, xs[0]) || (dx[0].is_zero() && dx[1].is_zero()) {
                return zero();
            }
            let Some(dt) = materialize(e, &dx[0], xs[0])? else {
                return zero();
            };
            let Some(dv) = materialize(e, &dx[1], xs[1])? else {
                return zero();
            };
            let mut operands = vec![dt, dv];
            operands.extend_from_slice(&xs[2..]);
            one(Some(e.op(OpKind::Insert, operands)?))
        }
        OpKind::MatMul => {
            let da = as_opt(e, &dx[0], xs[0])?;
            let db = as_opt(e, &dx[1], xs[1])?;
            let ta = da
                .map(|d| e.op(OpKind::MatMul, vec![d, xs[1]]))
                .transpose()?;
            let tb = db
                .map(|d| e.op(OpKind::MatMul, vec![xs[0], d]))
                .transpose()?;
            one(e.oadd(ta, tb)?)
        }
        OpKind::Tuple => Ok(Jvp::Tangents(vec![Tan::Tuple(dx.to_vec())])),
        OpKind::TupleGet(i) => {
            let field = e.ty(ys[0]);
            Ok(Jvp::Tangents(vec![project(
                e,
                &dx[0],
                *i as usize,
                &field,
            )?]))
        }
        OpKind::Call(_)
        | OpKind::If
        | OpKind::For
        | OpKind::While
        | OpKind::TapePush
        | OpKind::TapePop => Ok(Jvp::Structural),
    }
}

/// The transpose rule of `kind`: contributions to the adjoints of operands `xs`
/// given the cotangents `g` of results `ys`.
pub fn vjp(
    e: &mut Emitter,
    kind: &OpKind,
    xs: &[ValueId],
    ys: &[ValueId],
    g: &[Tan],
) -> Result<Vjp, AdError> {
    let n = xs.len();
    let none = || Ok(Vjp::Cotangents(zeros(n)));
    match kind {
        OpKind::Const(_) | OpKind::DimOf(_) | OpKind::Print | OpKind::PrintStr(_) => none(),
        OpKind::Unary(op) => {
            let (x, y) = (xs[0], ys[0]);
            if !is_float(e, x) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], y)? else {
                return none();
            };
            if *op == UnaryOp::Neg {
                return Ok(Vjp::Cotangents(vec![tan(Some(e.neg(g)?))]));
            }
            let c = match unary_quotient(e, *op, x)? {
                // g·(±1/d) as ±g/d: a division instead of a reciprocal and a
                // product (the same special values, one rounding fewer). An `x`
                // invariant in this region (a loop body) keeps the reciprocal,
                // which is then computed once outside the loop.
                Some((num, d)) if e.varies(x) => {
                    let n = if num < 0.0 { e.neg(g)? } else { g };
                    let q = e.div(n, d)?;
                    Some(e.strong_zero(g, q)?)
                }
                Some((num, d)) => {
                    let k = e.kind(x);
                    let n = e.float(k, num);
                    let f = e.div(n, d)?;
                    Some(e.strong_mul(g, f)?)
                }
                None => match unary_factor(e, *op, x, y)? {
                    None => None,
                    Some(f) => Some(e.strong_mul(g, f)?),
                },
            };
            Ok(Vjp::Cotangents(vec![tan(c)]))
        }
        OpKind::Binary(op) => {
            let (a, b, y) = (xs[0], xs[1], ys[0]);
            if !is_float(e, y) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], y)? else {
                return none();
            };
            let (ga, gb) = match op {
                BinaryOp::Add => (Some(g), Some(g)),
                BinaryOp::Div if e.varies(b) => {
                    // ∂a = 1/b, ∂b = -y/b from one quotient q = g/b: g·∂a = q and
                    // g·∂b = -(q·y) (one division, one product; the same special
                    // values as g·(1/b) and g·(-(y·(1/b))); a `b` invariant in
                    // this region keeps the factors below, whose reciprocal is
                    // then computed once outside a loop).
                    let q = e.div(g, b)?;
                    let ga = e.strong_zero(g, q)?;
                    let qy = e.mul(q, y)?;
                    let nqy = e.neg(qy)?;
                    let gb = e.strong_zero(g, nqy)?;
                    (Some(ga), Some(gb))
                }
                BinaryOp::Sub => (Some(g), Some(e.neg(g)?)),
                BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Pow
                | BinaryOp::Atan2
                | BinaryOp::Rem
                | BinaryOp::Polygamma => {
                    let (fa, fb) = binary_factors(e, *op, a, b, y)?;
                    let ga = match (*op, fa) {
                        (BinaryOp::Rem, _) => Some(g),
                        (BinaryOp::Mul, Some(f)) => Some(e.product_cotangent(g, f)?),
                        (_, Some(f)) => Some(e.strong_mul(g, f)?),
                        (_, None) => None,
                    };
                    let gb = match (*op, fb) {
                        (BinaryOp::Mul, Some(f)) => Some(e.product_cotangent(g, f)?),
                        (_, Some(f)) => Some(e.strong_mul(g, f)?),
                        (_, None) => None,
                    };
                    (ga, gb)
                }
                BinaryOp::Min | BinaryOp::Max => {
                    let c = takes_a(e, *op, a, b)?;
                    if let Type::Scalar(_) = e.ty(c) {
                        let z = e.zero_like(g)?;
                        let ga = e.op(OpKind::Select, vec![c, g, z])?;
                        let gb = e.op(OpKind::Select, vec![c, z, g])?;
                        (Some(ga), Some(gb))
                    } else {
                        let k = e.kind(y);
                        let m = e.mask(c, k)?;
                        let nc = e.unary(UnaryOp::Not, c)?;
                        let nm = e.mask(nc, k)?;
                        (Some(e.mul(g, m)?), Some(e.mul(g, nm)?))
                    }
                }
                BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::And
                | BinaryOp::Or => (None, None),
            };
            let ga = ga.map(|c| e.unbroadcast(c, a)).transpose()?;
            let gb = gb.map(|c| e.unbroadcast(c, b)).transpose()?;
            Ok(Vjp::Cotangents(vec![tan(ga), tan(gb)]))
        }
        OpKind::Select => {
            if g[0].is_zero() {
                return none();
            }
            let Some(g) = materialize(e, &g[0], ys[0])? else {
                return none();
            };
            let z = e.zero_like(ys[0])?;
            let ga = e.op(OpKind::Select, vec![xs[0], g, z])?;
            let gb = e.op(OpKind::Select, vec![xs[0], z, g])?;
            Ok(Vjp::Cotangents(vec![
                Ct::Tan(Tan::Zero),
                tan(Some(ga)),
                tan(Some(gb)),
            ]))
        }
        OpKind::Cast(k) => {
            if !k.is_float() || !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let from = e.kind(xs[0]);
            Ok(Vjp::Cotangents(vec![tan(Some(
                e.op(OpKind::Cast(from), vec![g])?,
            ))]))
        }
        OpKind::Pack => {
            if !is_float(e, ys[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let mut out = Vec::new();
            for i in 0..n {
                out.push(tan(Some(e.op(OpKind::Extract(i as u64), vec![g])?)));
            }
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Full => {
            if !is_float(e, ys[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let mut out = zeros(n);
            out[0] = tan(Some(e.op(OpKind::Sum, vec![g])?));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::ReduceTo(Reduce::Max | Reduce::Min) => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            // The cotangent goes to the positions that attain the extremum, split over ties.
            let (hit, count) = extremum_positions(e, xs[0], ys[0], &xs[1..])?;
            let share = e.div(g, count)?;
            let spread = broadcast_like(e, share, xs[0])?;
            let z = e.zero_like(xs[0])?;
            let mut out = zeros(n);
            out[0] = tan(Some(e.op(OpKind::Select, vec![hit, spread, z])?));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Permute(perm) => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let mut inverse = vec![0u32; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                inverse[p as usize] = i as u32;
            }
            Ok(Vjp::Cotangents(vec![tan(Some(e.op(OpKind::Permute(inverse), vec![g])?))]))
        }
        // Each is the other's transpose: the adjoint goes back to the operand's extents.
        OpKind::Broadcast | OpKind::ReduceTo(Reduce::Sum) => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let back = if *kind == OpKind::Broadcast { OpKind::ReduceTo(Reduce::Sum) } else { OpKind::Broadcast };
            let mut ops = vec![g];
            ops.extend(e.extents(xs[0])?);
            let ty = e.ty(xs[0]);
            let id = e.push(back, ops, vec![ty]);
            let mut out = zeros(n);
            out[0] = tan(Some(e.results(id)[0]));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Extract(i) => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let idx = e.int(*i as i64);
            Ok(Vjp::Cotangents(vec![Ct::Scatter(g, vec![idx])]))
        }
        OpKind::Index => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let mut out = zeros(n);
            out[0] = Ct::Scatter(g, xs[1..].to_vec());
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Insert => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            // The element's cotangent is read before the element is zeroed, so that the
            // zeroing can update ḡ in place.
            let mut ops = vec![g];
            ops.extend_from_slice(&xs[2..]);
            let gv = e.op(OpKind::Index, ops)?;
            let zv = e.zero_like(xs[1])?;
            let mut ops = vec![g, zv];
            ops.extend_from_slice(&xs[2..]);
            let gt = e.op(OpKind::Insert, ops)?;
            let mut out = zeros(n);
            out[0] = tan(Some(gt));
            out[1] = tan(Some(gv));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::MatMul => {
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let (a, b) = (xs[0], xs[1]);
            if rank(e, a) > 2 || rank(e, b) > 2 {
                return batched_matmul_vjp(e, a, b, g);
            }
            let at = e.op(OpKind::Transpose, vec![a])?;
            let gb = e.op(OpKind::MatMul, vec![at, g])?;
            let ga = match e.ty(b) {
                Type::Tensor { shape, .. } if shape.len() == 2 => {
                    let bt = e.op(OpKind::Transpose, vec![b])?;
                    e.op(OpKind::MatMul, vec![g, bt])?
                }
                _ => {
                    // The outer product g bᵀ as [m,1] x [1,k].
                    let grow = e.op(OpKind::Pack, vec![g])?;
                    let gcol = e.op(OpKind::Transpose, vec![grow])?;
                    let brow = e.op(OpKind::Pack, vec![b])?;
                    e.op(OpKind::MatMul, vec![gcol, brow])?
                }
            };
            Ok(Vjp::Cotangents(vec![tan(Some(ga)), tan(Some(gb))]))
        }
        OpKind::Transpose => {
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            Ok(Vjp::Cotangents(vec![tan(Some(
                e.op(OpKind::Transpose, vec![g])?,
            ))]))
        }
        OpKind::Slice => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            // Zeros above and below the rows the slice took: `t̄ = [0; lo] ++ ḡ ++ [0; len − hi]`.
            let (t, lo, hi) = (xs[0], xs[1], xs[2]);
            let extents = e.extents(t)?;
            let below = e.sub(extents[0], hi)?;
            let Type::Tensor { elem, shape } = e.ty(t) else {
                return Err(AdError::Internal("tensor.slice of a non-tensor".into()));
            };
            let mut zero_rows = Vec::new();
            for rows in [lo, below] {
                let z = e.float(elem, 0.0);
                let mut ops = vec![z, rows];
                ops.extend_from_slice(&extents[1..]);
                let mut zshape = shape.clone();
                zshape[0] = crate::ir::Dim::Dyn;
                let id = e.push(OpKind::Full, ops, vec![Type::Tensor { elem, shape: zshape }]);
                zero_rows.push(e.results(id)[0]);
            }
            let whole = e.op(OpKind::Concat, vec![zero_rows[0], g, zero_rows[1]])?;
            let whole = shaped_like(e, whole, t)?;
            let mut out = zeros(n);
            out[0] = tan(Some(whole));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Concat => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            // Each operand's rows of ḡ, in order: a slice, or for an operand of a few fixed
            // rows (whose adjoint has its fixed type) those rows packed.
            let mut out = Vec::new();
            let mut at = e.int(0);
            for &x in xs {
                let rows = e.op(OpKind::DimOf(0), vec![x])?;
                let end = e.add(at, rows)?;
                let fixed_rows = e.ty(x).fixed_shape().and_then(|s| s.first().copied()).filter(|&r| (1..=MAX_PACKED_ROWS).contains(&r));
                let part = match fixed_rows {
                    Some(r) => {
                        let mut picked = Vec::with_capacity(r as usize);
                        for i in 0..r {
                            let offset = e.int(i as i64);
                            let row = e.add(at, offset)?;
                            picked.push(e.op(OpKind::Index, vec![g, row])?);
                        }
                        let packed = e.op(OpKind::Pack, picked)?;
                        shaped_like(e, packed, x)?
                    }
                    None => {
                        let rows_of_x = e.op(OpKind::Slice, vec![g, at, end])?;
                        shaped_like(e, rows_of_x, x)?
                    }
                };
                out.push(tan(Some(part)));
                at = end;
            }
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Reshape => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            let mut ops = vec![g];
            ops.extend(e.extents(xs[0])?);
            let ty = e.ty(xs[0]);
            let id = e.push(OpKind::Reshape, ops, vec![ty]);
            let mut out = zeros(n);
            out[0] = tan(Some(e.results(id)[0]));
            Ok(Vjp::Cotangents(out))
        }
        OpKind::Sum => {
            if !is_float(e, xs[0]) {
                return none();
            }
            let Some(g) = as_opt(e, &g[0], ys[0])? else {
                return none();
            };
            Ok(Vjp::Cotangents(vec![tan(Some(e.full_like(g, xs[0])?))]))
        }
        OpKind::Tuple => {
            let mut out = Vec::new();
            for (i, &x) in xs.iter().enumerate() {
                let t = e.ty(x);
                out.push(Ct::Tan(project(e, &g[0], i, &t)?));
            }
            Ok(Vjp::Cotangents(out))
        }
        OpKind::TupleGet(i) => {
            let Type::Tuple(items) = e.ty(xs[0]) else {
                return Err(AdError::Internal("tuple.get of a non-tuple".into()));
            };
            let mut parts = vec![Tan::Zero; items.len()];
            if let Some(p) = parts.get_mut(*i as usize) {
                *p = g[0].clone();
            }
            Ok(Vjp::Cotangents(vec![Ct::Tan(Tan::Tuple(parts))]))
        }
        OpKind::Call(_)
        | OpKind::If
        | OpKind::For
        | OpKind::While
        | OpKind::TapePush
        | OpKind::TapePop => Ok(Vjp::Structural),
    }
}
