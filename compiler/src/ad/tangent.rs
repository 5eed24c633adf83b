//! Tangent types and symbolic tangents.
//!
//! The tangent (and cotangent) of a float scalar or tensor has the value's own type;
//! integers and bools have none; a tuple's tangent is the tuple of its parts'
//! tangents with the unit `()` standing for a part that has none.
//!
//! During a transformation a tangent is a [`Tan`]: a symbolic zero (no IR at all),
//! an IR value, or a tuple of tangents kept apart so that `tuple`/`tuple.get` do not
//! materialize zeros. [`materialize`] turns one into a value only where the IR needs
//! one (a return, a yield, a call argument).

use super::AdError;
use super::emit::Emitter;
use crate::ir::{OpKind, Type, ValueId};

/// The type of the tangent of a value of type `t`; `None` if it has none.
pub fn tangent_type(t: &Type) -> Option<Type> {
    match t {
        Type::Scalar(k) | Type::Tensor { elem: k, .. } => k.is_float().then(|| t.clone()),
        Type::Tuple(items) => {
            let parts: Vec<Option<Type>> = items.iter().map(tangent_type).collect();
            parts.iter().any(Option::is_some).then(|| {
                Type::Tuple(
                    parts
                        .into_iter()
                        .map(|p| p.unwrap_or_else(Type::unit))
                        .collect(),
                )
            })
        }
    }
}

/// A symbolic tangent or cotangent.
#[derive(Clone, Debug, PartialEq)]
pub enum Tan {
    Zero,
    Val(ValueId),
    Tuple(Vec<Tan>),
}

impl Tan {
    pub fn is_zero(&self) -> bool {
        match self {
            Tan::Zero => true,
            Tan::Val(_) => false,
            Tan::Tuple(parts) => parts.iter().all(Tan::is_zero),
        }
    }

    pub fn from_opt(v: Option<ValueId>) -> Tan {
        v.map_or(Tan::Zero, Tan::Val)
    }
}

/// The tangent `t` of primal value `p` as an IR value of type `tangent_type(p)`;
/// `None` when `p` has no tangent type.
pub fn materialize(e: &mut Emitter, t: &Tan, p: ValueId) -> Result<Option<ValueId>, AdError> {
    let pt = e.ty(p);
    if tangent_type(&pt).is_none() {
        return Ok(None);
    }
    Ok(Some(match t {
        Tan::Val(v) => *v,
        Tan::Zero => e.zero_like(p)?,
        Tan::Tuple(parts) => {
            let Type::Tuple(items) = pt else {
                return Err(AdError::Internal("tuple tangent of a non-tuple".into()));
            };
            let mut vals = Vec::new();
            for (i, part) in parts.iter().enumerate().take(items.len()) {
                let pi = e.op(OpKind::TupleGet(i as u32), vec![p])?;
                match materialize(e, part, pi)? {
                    Some(v) => vals.push(v),
                    None => vals.push(e.op(OpKind::Tuple, vec![])?),
                }
            }
            e.op(OpKind::Tuple, vals)?
        }
    }))
}

/// As [`materialize`], for a value that must be a plain scalar or tensor tangent
/// (the operands of arithmetic): `None` for a zero.
pub fn as_opt(e: &mut Emitter, t: &Tan, p: ValueId) -> Result<Option<ValueId>, AdError> {
    match t {
        Tan::Zero => Ok(None),
        Tan::Val(v) => Ok(Some(*v)),
        Tan::Tuple(_) if t.is_zero() => Ok(None),
        Tan::Tuple(_) => materialize(e, t, p),
    }
}

/// Field `i` of tuple tangent `t`, where `field` is the primal's field type.
pub fn project(e: &mut Emitter, t: &Tan, i: usize, field: &Type) -> Result<Tan, AdError> {
    Ok(match t {
        Tan::Zero => Tan::Zero,
        Tan::Tuple(parts) => parts.get(i).cloned().unwrap_or(Tan::Zero),
        Tan::Val(v) => {
            if tangent_type(field).is_none() {
                Tan::Zero
            } else {
                Tan::Val(e.op(OpKind::TupleGet(i as u32), vec![*v])?)
            }
        }
    })
}

/// `a + b` for tangents of the same primal value `p`.
pub fn add(e: &mut Emitter, a: Tan, b: Tan, p: ValueId) -> Result<Tan, AdError> {
    if a.is_zero() {
        return Ok(b);
    }
    if b.is_zero() {
        return Ok(a);
    }
    match (a, b) {
        (Tan::Val(x), Tan::Val(y)) => {
            if matches!(e.ty(p), Type::Tuple(_)) {
                let xs = split(e, x, p)?;
                let ys = split(e, y, p)?;
                add(e, xs, ys, p)
            } else {
                Ok(Tan::Val(e.add(x, y)?))
            }
        }
        (Tan::Tuple(xs), Tan::Tuple(ys)) => {
            let mut out = Vec::new();
            for (i, (x, y)) in xs.into_iter().zip(ys).enumerate() {
                let pi = e.op(OpKind::TupleGet(i as u32), vec![p])?;
                out.push(add(e, x, y, pi)?);
            }
            Ok(Tan::Tuple(out))
        }
        (Tan::Val(x), t @ Tan::Tuple(_)) | (t @ Tan::Tuple(_), Tan::Val(x)) => {
            let xs = split(e, x, p)?;
            add(e, xs, t, p)
        }
        (Tan::Zero, t) | (t, Tan::Zero) => Ok(t),
    }
}

/// A tuple-valued tangent as a tuple of its fields.
fn split(e: &mut Emitter, x: ValueId, p: ValueId) -> Result<Tan, AdError> {
    let Type::Tuple(items) = e.ty(p) else {
        return Ok(Tan::Val(x));
    };
    let mut parts = Vec::new();
    for (i, t) in items.iter().enumerate() {
        parts.push(project(e, &Tan::Val(x), i, t)?);
    }
    Ok(Tan::Tuple(parts))
}
