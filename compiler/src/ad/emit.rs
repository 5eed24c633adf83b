//! The emitter the differentiation passes build IR with: the IR builder
//! ([`crate::ir::Builder`], which infers result types and reopens regions) over the
//! function under construction, with the small arithmetic vocabulary the rules are
//! written in (constants of a float kind, zeros shaped like a value,
//! broadcasting a scalar to a tensor, summing a broadcast back, 0/1 masks).

use super::AdError;
use crate::ir::{BinaryOp, Builder, Dim, Function, Literal, OpKind, ScalarKind, Type, UnaryOp, ValueId};
use std::collections::HashSet;

pub struct Emitter {
    /// The builder of the function under construction (`Emitter` derefs to it).
    b: Builder<Function>,
    /// Forward mode only: a scalar tangent that is exactly 0 times an infinite local
    /// derivative gives 0, not NaN ([`Emitter::tangent_mul`]).
    pub strong_zero: bool,
    /// Reverse mode: the cotangents of a product `a·b` (`ḡ·b`, `ḡ·a`) take a strong zero
    /// ([`Emitter::strong_mul`]) as every other rule's do. Reverse mode turns it on per
    /// product, for those a routed zero adjoint can reach (`reverse::routed`); off
    /// throughout for the energy kernels, which multiply plainly
    /// ([`crate::ad::vjp_plain_products`]).
    pub strong_products: bool,
}

impl std::ops::Deref for Emitter {
    type Target = Builder<Function>;
    fn deref(&self) -> &Builder<Function> {
        &self.b
    }
}

impl std::ops::DerefMut for Emitter {
    fn deref_mut(&mut self) -> &mut Builder<Function> {
        &mut self.b
    }
}

impl Emitter {
    /// Starts appending to `func`'s body.
    pub fn new(func: Function) -> Emitter {
        Emitter {
            b: Builder::new(func),
            strong_zero: false,
            strong_products: true,
        }
    }

    /// The tangent `d` times the local derivative `f`. With [`Emitter::strong_zero`], a
    /// scalar `d` that is ±0 whose product is NaN (`f` infinite or NaN) gives `d` itself: a
    /// direction that does not move the input does not move the output, whatever the local
    /// derivative (0·∞ = 0, as reverse mode's zero adjoints). Every other product keeps its
    /// bits.
    pub fn tangent_mul(&mut self, d: ValueId, f: ValueId) -> Result<ValueId, AdError> {
        let p = self.mul(d, f)?;
        if !self.strong_zero
            || !matches!(self.ty(d), Type::Scalar(_))
            || !matches!(self.ty(p), Type::Scalar(_))
        {
            return Ok(p);
        }
        let zero = self.float(self.kind(d), 0.0);
        let is0 = self.binary(BinaryOp::Eq, d, zero)?;
        let nan = self.binary(BinaryOp::Ne, p, p)?;
        let both = self.binary(BinaryOp::And, is0, nan)?;
        self.op(OpKind::Select, vec![both, d, p])
    }

    /// Closes the body, which returns `ret`.
    pub fn finish(self, ret: ValueId) -> Function {
        self.b.finish(vec![ret])
    }

    /// The type of `v` (a copy).
    pub fn ty(&self, v: ValueId) -> Type {
        self.b.ty(v).clone()
    }

    /// Appends a one-result op whose type the op table infers (not for `call`, `scf.*`).
    pub fn op(&mut self, kind: OpKind, operands: Vec<ValueId>) -> Result<ValueId, AdError> {
        self.b.infer(kind, operands).map_err(AdError::Internal)
    }

    /// Whether `v` can change between runs of the innermost region being built
    /// (one loop trip to the next): an argument of that region, or a result of
    /// one of its ops that reads such a value, has regions, calls, prints or uses
    /// the tape. Values from enclosing regions, and ops of this region on those
    /// alone, are invariant in it: a reciprocal `1 / v` of one is computed once
    /// outside a loop. In the function's body every value counts as varying.
    pub fn varies(&self, v: ValueId) -> bool {
        let [_, .., r] = self.open_regions() else {
            return true;
        };
        let mut varying: HashSet<ValueId> = r.args.iter().copied().collect();
        for &id in &r.ops {
            let op = &self.func.ops[id];
            let effects = matches!(
                op.kind,
                OpKind::Call(_) | OpKind::Print | OpKind::PrintStr(_)
            ) || op.kind.is_tape()
                || !op.regions.is_empty();
            if effects || op.operands.iter().any(|x| varying.contains(x)) {
                varying.extend(op.results.iter().copied());
            }
            if op.results.contains(&v) {
                break;
            }
        }
        varying.contains(&v)
    }

    // ---- vocabulary ----

    pub fn konst(&mut self, lit: Literal) -> ValueId {
        self.constant(lit)
    }

    /// A float constant of kind `k`.
    pub fn float(&mut self, k: ScalarKind, x: f64) -> ValueId {
        match k {
            ScalarKind::F32 => self.konst(Literal::F32(x as f32)),
            _ => self.konst(Literal::F64(x)),
        }
    }

    pub fn int(&mut self, x: i64) -> ValueId {
        self.konst(Literal::I64(x))
    }

    pub fn kind(&self, v: ValueId) -> ScalarKind {
        self.ty(v).scalar_kind().unwrap_or(ScalarKind::F64)
    }

    pub fn unary(&mut self, op: UnaryOp, x: ValueId) -> Result<ValueId, AdError> {
        self.op(OpKind::Unary(op), vec![x])
    }

    pub fn binary(&mut self, op: BinaryOp, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
        self.op(OpKind::Binary(op), vec![a, b])
    }

    pub fn add(&mut self, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
        self.binary(BinaryOp::Add, a, b)
    }
    pub fn sub(&mut self, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
        self.binary(BinaryOp::Sub, a, b)
    }
    pub fn mul(&mut self, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
        self.binary(BinaryOp::Mul, a, b)
    }
    pub fn div(&mut self, a: ValueId, b: ValueId) -> Result<ValueId, AdError> {
        self.binary(BinaryOp::Div, a, b)
    }
    pub fn neg(&mut self, a: ValueId) -> Result<ValueId, AdError> {
        self.unary(UnaryOp::Neg, a)
    }

    /// `a + b` where either may be a symbolic zero.
    pub fn oadd(
        &mut self,
        a: Option<ValueId>,
        b: Option<ValueId>,
    ) -> Result<Option<ValueId>, AdError> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.add(a, b)?),
            (x, None) | (None, x) => x,
        })
    }

    /// `a - b` where either may be a symbolic zero.
    pub fn osub(
        &mut self,
        a: Option<ValueId>,
        b: Option<ValueId>,
    ) -> Result<Option<ValueId>, AdError> {
        Ok(match (a, b) {
            (Some(a), Some(b)) => Some(self.sub(a, b)?),
            (a, None) => a,
            (None, Some(b)) => Some(self.neg(b)?),
        })
    }

    /// `a * b` where `a` may be a symbolic zero.
    pub fn omul(&mut self, a: Option<ValueId>, b: ValueId) -> Result<Option<ValueId>, AdError> {
        a.map(|a| self.mul(a, b)).transpose()
    }

    /// The extents of tensor `v` as `i64` values (constants where fixed).
    pub fn extents(&mut self, v: ValueId) -> Result<Vec<ValueId>, AdError> {
        let Type::Tensor { shape, .. } = self.ty(v) else {
            return Err(AdError::Internal("extents of a non-tensor".into()));
        };
        let mut out = Vec::new();
        for (axis, d) in shape.iter().enumerate() {
            out.push(match d {
                Dim::Fixed(n) => self.int(*n as i64),
                _ => self.op(OpKind::DimOf(axis as u32), vec![v])?,
            });
        }
        Ok(out)
    }

    /// A tensor shaped like `like` (and of its type, with `s`'s kind) filled with scalar `s`.
    pub fn full_like(&mut self, s: ValueId, like: ValueId) -> Result<ValueId, AdError> {
        let Type::Tensor { shape, .. } = self.ty(like) else {
            return Ok(s);
        };
        let elem = self.kind(s);
        let mut operands = vec![s];
        operands.extend(self.extents(like)?);
        let id = self.push(OpKind::Full, operands, vec![Type::Tensor { elem, shape }]);
        Ok(self.func.ops[id].results[0])
    }

    /// The zero of `v`'s tangent type (see [`super::tangent::tangent_type`]).
    pub fn zero_like(&mut self, v: ValueId) -> Result<ValueId, AdError> {
        match self.ty(v) {
            Type::Scalar(k) => Ok(self.float(k, 0.0)),
            Type::Tensor { elem, .. } => {
                let z = self.float(elem, 0.0);
                self.full_like(z, v)
            }
            Type::Tuple(items) => {
                let mut parts = Vec::new();
                for (i, t) in items.iter().enumerate() {
                    if super::tangent::tangent_type(t).is_some() {
                        let c = self.op(OpKind::TupleGet(i as u32), vec![v])?;
                        parts.push(self.zero_like(c)?);
                    } else {
                        parts.push(self.op(OpKind::Tuple, vec![])?);
                    }
                }
                self.op(OpKind::Tuple, parts)
            }
        }
    }

    /// Gives a tangent computed as a scalar the shape of tensor result `y`.
    pub fn fit(&mut self, t: ValueId, y: ValueId) -> Result<ValueId, AdError> {
        match (self.ty(t), self.ty(y)) {
            (Type::Scalar(_), Type::Tensor { .. }) => self.full_like(t, y),
            _ => Ok(t),
        }
    }

    /// The adjoint of an operand that was broadcast: sums a tensor contribution to a
    /// scalar operand `x`.
    pub fn unbroadcast(&mut self, g: ValueId, x: ValueId) -> Result<ValueId, AdError> {
        match (self.ty(g), self.ty(x)) {
            (Type::Tensor { .. }, Type::Scalar(_)) => self.op(OpKind::Sum, vec![g]),
            _ => Ok(g),
        }
    }

    /// A float 0/1 of kind `k` shaped like the bool (tensor) `c`.
    pub fn mask(&mut self, c: ValueId, k: ScalarKind) -> Result<ValueId, AdError> {
        match self.ty(c) {
            Type::Scalar(_) => {
                let one = self.float(k, 1.0);
                let zero = self.float(k, 0.0);
                self.op(OpKind::Select, vec![c, one, zero])
            }
            _ => {
                let i = self.op(OpKind::Cast(ScalarKind::I64), vec![c])?;
                self.op(OpKind::Cast(k), vec![i])
            }
        }
    }

    /// `x` with its exact zeros replaced by one (so dividing by it or taking its log
    /// is finite); the caller routes the result away where `x == 0`.
    pub fn nonzero(&mut self, x: ValueId) -> Result<(ValueId, ValueId), AdError> {
        let k = self.kind(x);
        let zero = self.float(k, 0.0);
        let is0 = self.binary(BinaryOp::Eq, x, zero)?;
        let safe = match self.ty(x) {
            Type::Scalar(_) => {
                let one = self.float(k, 1.0);
                self.op(OpKind::Select, vec![is0, one, x])?
            }
            _ => {
                let m = self.mask(is0, k)?;
                self.add(x, m)?
            }
        };
        Ok((safe, is0))
    }

    /// `t` where `is0` is false and zero where it is true (a select for scalars, a
    /// multiplication by a 0/1 mask of a finite `t` for tensors).
    pub fn zero_where(&mut self, t: ValueId, is0: ValueId) -> Result<ValueId, AdError> {
        let k = self.kind(t);
        match self.ty(is0) {
            Type::Scalar(_) => {
                let zero = self.zero_like(t)?;
                self.op(OpKind::Select, vec![is0, zero, t])
            }
            _ => {
                let not = self.unary(UnaryOp::Not, is0)?;
                let m = self.mask(not, k)?;
                self.mul(t, m)
            }
        }
    }

    /// `g * f` with a strong zero: 0 where the cotangent `g` is exactly 0 and `f` is
    /// infinite or NaN (scalars; tensors multiply plainly).
    pub fn strong_mul(&mut self, g: ValueId, f: ValueId) -> Result<ValueId, AdError> {
        // With [`Emitter::strong_products`] (a cotangent that a routed zero can reach, see
        // `reverse::routed`): where g is exactly 0, f enters detached (same value, no
        // tangent), so a forward pass over this product (`hessian`) gets ġ·f there, not
        // ġ·f + 0·ḟ, which is NaN where f's own derivative is infinite or NaN (the untaken
        // side of a `select`: `x ^ 1.5`, `tanh(log(x)) * y` at 0). Elsewhere nothing changes.
        let f = match (self.strong_products, self.ty(g), self.ty(f)) {
            (true, Type::Scalar(k), Type::Scalar(_)) => {
                let zero = self.float(k, 0.0);
                let is0 = self.binary(BinaryOp::Eq, g, zero)?;
                let detached = self.unary(UnaryOp::Detach, f)?;
                self.op(OpKind::Select, vec![is0, detached, f])?
            }
            _ => f,
        };
        let p = self.mul(g, f)?;
        self.strong_zero(g, p)
    }

    /// The cotangent `g` times a product's other factor `f`: [`Emitter::strong_mul`], or a
    /// plain product without [`Emitter::strong_products`].
    pub fn product_cotangent(&mut self, g: ValueId, f: ValueId) -> Result<ValueId, AdError> {
        if self.strong_products {
            self.strong_mul(g, f)
        } else {
            self.mul(g, f)
        }
    }

    /// `p`, a contribution formed from the cotangent `g` (a product or quotient
    /// with it), with a strong zero: 0 where `g` is exactly 0 and the other factor made
    /// `p` NaN (infinite or NaN; scalars; tensors pass `p` unchanged). Where that factor is
    /// finite `p` itself is kept, so a forward pass over this reverse pass (`hessian`,
    /// the Hessian kernels of energies) still differentiates `g·f` there: the term ġ·f of
    /// its tangent is what makes the second derivative of (x − 1)² at x = 1 equal to 2.
    pub fn strong_zero(&mut self, g: ValueId, p: ValueId) -> Result<ValueId, AdError> {
        match (self.ty(g), self.ty(p)) {
            (Type::Scalar(k), Type::Scalar(_)) => {
                let zero = self.float(k, 0.0);
                let is0 = self.binary(BinaryOp::Eq, g, zero)?;
                let nan = self.binary(BinaryOp::Ne, p, p)?;
                let both = self.binary(BinaryOp::And, is0, nan)?;
                self.op(OpKind::Select, vec![both, zero, p])
            }
            _ => Ok(p),
        }
    }
}
