//! Scalar instruction selection: constants, elementwise unary and binary ops
//! and casts on one Cranelift value each, matching `mad_runtime::ops` bit for
//! bit. Float `+ - * /`, `sqrt`, `abs`, `floor`, `ceil` and negation are single
//! instructions; transcendentals, the special functions (`erf`, `lgamma`, the polygamma
//! family, `softplus`, `sigmoid`), `%`, `pow`, `atan2`, `min` and `max` call the
//! same routines the run time uses (`f32` ones through `f64`, rounded once).
//! Integer `/` and `%` never trap: a zero divisor records an error and divides
//! by 1, and `i64::MIN / -1` wraps.

use cranelift_codegen::ir::{
    InstBuilder, InstructionData, Opcode, Value, ValueDef, condcodes::FloatCC, condcodes::IntCC,
    types,
};

use super::JitError;
use super::imports::Routine;
use super::lower::{FnLower, unsupported};
use crate::ir::{BinaryOp, Literal, ScalarKind, UnaryOp};

fn math1(op: UnaryOp) -> Option<&'static str> {
    Some(match op {
        UnaryOp::Exp => "exp",
        UnaryOp::Log => "log",
        UnaryOp::Sin => "sin",
        UnaryOp::Cos => "cos",
        UnaryOp::Tan => "tan",
        UnaryOp::Asin => "asin",
        UnaryOp::Acos => "acos",
        UnaryOp::Atan => "atan",
        UnaryOp::Sinh => "sinh",
        UnaryOp::Cosh => "cosh",
        UnaryOp::Tanh => "tanh",
        UnaryOp::Log1p => "log1p",
        UnaryOp::Expm1 => "expm1",
        UnaryOp::Erf => "mad_erf",
        UnaryOp::Lgamma => "mad_lgamma",
        UnaryOp::Digamma => "mad_digamma",
        UnaryOp::Trigamma => "mad_trigamma",
        UnaryOp::Softplus => "mad_softplus",
        UnaryOp::Sigmoid => "mad_sigmoid",
        UnaryOp::Neg
        | UnaryOp::Not
        | UnaryOp::Sqrt
        | UnaryOp::Abs
        | UnaryOp::Floor
        | UnaryOp::Ceil
        | UnaryOp::Detach => return None,
    })
}

fn math2(op: BinaryOp) -> Option<&'static str> {
    Some(match op {
        BinaryOp::Rem => "fmod",
        BinaryOp::Pow => "pow",
        BinaryOp::Atan2 => "atan2",
        BinaryOp::Min => "mad_min_f64",
        BinaryOp::Max => "mad_max_f64",
        BinaryOp::Polygamma => "mad_polygamma",
        _ => return None,
    })
}

fn float_cc(op: BinaryOp) -> Option<FloatCC> {
    Some(match op {
        BinaryOp::Eq => FloatCC::Equal,
        BinaryOp::Ne => FloatCC::NotEqual,
        BinaryOp::Lt => FloatCC::LessThan,
        BinaryOp::Le => FloatCC::LessThanOrEqual,
        BinaryOp::Gt => FloatCC::GreaterThan,
        BinaryOp::Ge => FloatCC::GreaterThanOrEqual,
        _ => return None,
    })
}

fn int_cc(op: BinaryOp, signed: bool) -> Option<IntCC> {
    Some(match (op, signed) {
        (BinaryOp::Eq, _) => IntCC::Equal,
        (BinaryOp::Ne, _) => IntCC::NotEqual,
        (BinaryOp::Lt, true) => IntCC::SignedLessThan,
        (BinaryOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (BinaryOp::Gt, true) => IntCC::SignedGreaterThan,
        (BinaryOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (BinaryOp::Lt, false) => IntCC::UnsignedLessThan,
        (BinaryOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (BinaryOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (BinaryOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        _ => return None,
    })
}

impl FnLower<'_, '_> {
    pub fn constant(&mut self, lit: Literal) -> Value {
        match lit {
            Literal::F64(x) if self.wide => {
                let c = self.b.ins().f64const(x);
                self.b.ins().splat(types::F64X2, c)
            }
            Literal::F64(x) => self.b.ins().f64const(x),
            Literal::F32(x) => self.b.ins().f32const(x),
            Literal::I64(x) => self.b.ins().iconst(types::I64, x),
            Literal::Bool(x) => self.b.ins().iconst(types::I8, x as i64),
        }
    }

    /// Calls an `f64` routine; `f32` operands are widened and the result rounded.
    ///
    /// An `f64` operand is passed as a copy of its own (lane 0 of a vector made
    /// from it: the same bits, and no value that other code shares): a call
    /// clobbers every float register, so an operand that is also
    /// used after the call lives in a stack slot across it, and the register
    /// allocator would then load the call's argument back from that slot just
    /// after storing it, putting a store-to-load round trip in front of the
    /// routine. The copy is made from the register the operand is still in.
    fn float_call(
        &mut self,
        k: ScalarKind,
        name: &'static str,
        args: &[Value],
    ) -> Result<Value, JitError> {
        let wide: Vec<Value> = if k == ScalarKind::F32 {
            args.iter()
                .map(|a| self.b.ins().fpromote(types::F64, *a))
                .collect()
        } else {
            args.iter()
                .map(|a| {
                    let v = self.b.ins().scalar_to_vector(types::F64X2, *a);
                    self.b.ins().extractlane(v, 0)
                })
                .collect()
        };
        let r = if wide.len() == 1 {
            Routine::Math1(name)
        } else {
            Routine::Math2(name)
        };
        let out = self.call_routine(r, &wide)?[0];
        Ok(if k == ScalarKind::F32 {
            self.b.ins().fdemote(types::F32, out)
        } else {
            out
        })
    }

    pub fn scalar_unary(
        &mut self,
        op: UnaryOp,
        k: ScalarKind,
        x: Value,
    ) -> Result<Value, JitError> {
        let bad = || unsupported(format!("`{}` on {}", op.name(), k.name()));
        if op == UnaryOp::Detach {
            // The value itself (it only stops derivatives, which code generation never sees).
            return Ok(x);
        }
        let lanes = self.b.func.dfg.value_type(x).is_vector();
        if lanes && k == ScalarKind::F64 && let Some(name) = math1(op) {
            return self.lane_call(name, &[x]);
        }
        if lanes && !matches!((k, op), (ScalarKind::F64, UnaryOp::Neg | UnaryOp::Sqrt | UnaryOp::Abs) | (ScalarKind::Bool, UnaryOp::Not)) {
            return Err(unsupported(format!("`{}` on two lanes", op.name())));
        }
        Ok(match k {
            ScalarKind::Bool if lanes => self.b.ins().bnot(x),
            ScalarKind::F64 | ScalarKind::F32 => match op {
                UnaryOp::Neg => match self.negated(x) {
                    Some(y) => y,
                    None => self.fneg(x),
                },
                UnaryOp::Sqrt => self.b.ins().sqrt(x),
                UnaryOp::Abs => self.b.ins().fabs(x),
                UnaryOp::Floor => self.b.ins().floor(x),
                UnaryOp::Ceil => self.b.ins().ceil(x),
                UnaryOp::Not => return Err(bad()),
                other => {
                    let name = math1(other).ok_or_else(bad)?;
                    self.float_call(k, name, &[x])?
                }
            },
            ScalarKind::I64 => match op {
                UnaryOp::Neg => self.b.ins().ineg(x),
                UnaryOp::Abs => self.b.ins().iabs(x),
                _ => return Err(bad()),
            },
            ScalarKind::Bool => match op {
                UnaryOp::Not => self.b.ins().bxor_imm_s(x, 1),
                _ => return Err(bad()),
            },
        })
    }

    pub fn scalar_binary(
        &mut self,
        op: BinaryOp,
        k: ScalarKind,
        a: Value,
        b: Value,
    ) -> Result<Value, JitError> {
        let bad = || unsupported(format!("`{}` on {}", op.name(), k.name()));
        let dfg = &self.b.func.dfg;
        let (la, lb) = (dfg.value_type(a).is_vector(), dfg.value_type(b).is_vector());
        if (la || lb) && k == ScalarKind::F64 && float_cc(op).is_none() && let Some(name) = math2(op) {
            let (a, b) = (self.lane_f64(a), self.lane_f64(b));
            return self.lane_call(name, &[a, b]);
        }
        if la || lb {
            let lane_wise = match k {
                ScalarKind::F64 => {
                    matches!(op, BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div)
                        || float_cc(op).is_some()
                }
                ScalarKind::Bool => matches!(op, BinaryOp::And | BinaryOp::Or),
                _ => false,
            };
            if !lane_wise {
                return Err(unsupported(format!("`{}` on two lanes", op.name())));
            }
            if k == ScalarKind::Bool {
                let (a, b) = (self.lane_mask(a), self.lane_mask(b));
                return Ok(if op == BinaryOp::And {
                    self.b.ins().band(a, b)
                } else {
                    self.b.ins().bor(a, b)
                });
            }
        }
        Ok(match k {
            ScalarKind::F64 | ScalarKind::F32 => match op {
                BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => self.float_arith(op, a, b),
                BinaryOp::And | BinaryOp::Or => return Err(bad()),
                other => match (float_cc(other), math2(other)) {
                    (Some(cc), _) => self.b.ins().fcmp(cc, a, b),
                    (None, Some(name)) => self.float_call(k, name, &[a, b])?,
                    (None, None) => return Err(bad()),
                },
            },
            ScalarKind::I64 => match op {
                BinaryOp::Add => self.b.ins().iadd(a, b),
                BinaryOp::Sub => self.b.ins().isub(a, b),
                BinaryOp::Mul => self.b.ins().imul(a, b),
                BinaryOp::Div | BinaryOp::Rem => self.int_div(op == BinaryOp::Div, a, b)?,
                BinaryOp::Pow => {
                    self.store_site();
                    self.call_routine(Routine::IPow, &[self.ctx, a, b])?[0]
                }
                BinaryOp::Min => self.b.ins().smin(a, b),
                BinaryOp::Max => self.b.ins().smax(a, b),
                BinaryOp::Atan2 | BinaryOp::Polygamma | BinaryOp::And | BinaryOp::Or => {
                    return Err(bad());
                }
                other => {
                    let cc = int_cc(other, true).ok_or_else(bad)?;
                    self.b.ins().icmp(cc, a, b)
                }
            },
            ScalarKind::Bool => match op {
                BinaryOp::And => self.b.ins().band(a, b),
                BinaryOp::Or => self.b.ins().bor(a, b),
                BinaryOp::Eq | BinaryOp::Ne => {
                    let cc = int_cc(op, false).ok_or_else(bad)?;
                    self.b.ins().icmp(cc, a, b)
                }
                _ => return Err(bad()),
            },
        })
    }

    /// `a / b` or `a % b` on `i64` without traps.
    fn int_div(&mut self, div: bool, a: Value, b: Value) -> Result<Value, JitError> {
        // A constant divisor other than 0 and -1 needs neither the error branch
        // nor the guards (and Cranelift turns the division into a multiplication).
        if let Some(c) = self.iconst_value(b)
            && c != 0
            && c != -1
        {
            return Ok(if div {
                self.b.ins().sdiv(a, b)
            } else {
                self.b.ins().srem(a, b)
            });
        }
        let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        self.error_if(is_zero, Routine::ErrorDivZero, &[])?;
        let is_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
        let unsafe_divisor = self.b.ins().bor(is_zero, is_m1);
        let one = self.b.ins().iconst(types::I64, 1);
        let safe = self.b.ins().select(unsafe_divisor, one, b);
        Ok(if div {
            let q = self.b.ins().sdiv(a, safe);
            let neg = self.b.ins().ineg(a);
            self.b.ins().select(is_m1, neg, q)
        } else {
            let r = self.b.ins().srem(a, safe);
            let zero = self.b.ins().iconst(types::I64, 0);
            self.b.ins().select(is_m1, zero, r)
        })
    }

    /// `a op b` for a float `+ - * /`, with the operations that are known to give one of
    /// the operands left out: −0 added, +0 subtracted, a constant 1 multiplied or divided
    /// by, a negation that an addition or subtraction absorbs (`a + (−b)` is `a − b`,
    /// `(−a) + b` is `b − a`, `a − (−b)` is `a + b`) or that cancels (`(−a)·(−b)`,
    /// `(−a)/(−b)`), and −1 as a factor (a negation). A negated factor moves to the product
    /// (`(−a)·b` is `−(a·b)`), where a later sum can absorb it. Each is an IEEE identity: the
    /// same bits, signs of zeros included (`x + 0` is not one: it turns −0 into +0). The
    /// scalarized small tensors of derivative code are full of such operations: the unit
    /// seeds of forward mode become matrices of zeros and ones, inverses negate entries.
    fn float_arith(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let (ca, cb) = (self.fconst_value(a), self.fconst_value(b));
        let (na, nb) = (self.negated(a), self.negated(b));
        match op {
            BinaryOp::Add => match (ca, cb, na, nb) {
                (_, Some(z), _, _) if is_negative_zero(z) => a,
                (Some(z), _, _, _) if is_negative_zero(z) => b,
                (_, _, _, Some(nb)) => self.b.ins().fsub(a, nb),
                (_, _, Some(na), _) => self.b.ins().fsub(b, na),
                _ => self.b.ins().fadd(a, b),
            },
            BinaryOp::Sub => match (cb, nb) {
                (Some(z), _) if z == 0.0 && !is_negative_zero(z) => a,
                (_, Some(nb)) => self.b.ins().fadd(a, nb),
                _ => self.b.ins().fsub(a, b),
            },
            BinaryOp::Mul => match (ca, cb, na, nb) {
                (_, Some(1.0), _, _) => a,
                (Some(1.0), _, _, _) => b,
                (_, Some(-1.0), _, _) => self.fneg(a),
                (Some(-1.0), _, _, _) => self.fneg(b),
                (_, _, Some(na), Some(nb)) => self.b.ins().fmul(na, nb),
                (_, _, Some(na), None) => {
                    let m = self.b.ins().fmul(na, b);
                    self.fneg(m)
                }
                (_, _, None, Some(nb)) => {
                    let m = self.b.ins().fmul(a, nb);
                    self.fneg(m)
                }
                _ => self.b.ins().fmul(a, b),
            },
            _ => match (cb, na, nb) {
                (Some(1.0), _, _) => a,
                (_, Some(na), Some(nb)) => self.b.ins().fdiv(na, nb),
                (_, Some(na), None) => {
                    let m = self.b.ins().fdiv(na, b);
                    self.fneg(m)
                }
                (_, None, Some(nb)) => {
                    let m = self.b.ins().fdiv(a, nb);
                    self.fneg(m)
                }
                _ => self.b.ins().fdiv(a, b),
            },
        }
    }

    /// The math routine `name` on each lane of 2×f64 `args`: one call per lane, so each
    /// lane gets the bits of the one-element code.
    fn lane_call(&mut self, name: &'static str, args: &[Value]) -> Result<Value, JitError> {
        let mut out = None;
        for lane in 0..2u8 {
            let scalars: Vec<Value> = args.iter().map(|&a| self.b.ins().extractlane(a, lane)).collect();
            let r = self.float_call(ScalarKind::F64, name, &scalars)?;
            out = Some(match out {
                None => self.b.ins().scalar_to_vector(types::F64X2, r),
                Some(v) => self.b.ins().insertlane(v, r, 1),
            });
        }
        Ok(out.expect("two lanes"))
    }

    /// An `f64` as 2×f64 (a scalar, the same in both lanes, splatted).
    fn lane_f64(&mut self, v: Value) -> Value {
        if self.b.func.dfg.value_type(v).is_vector() {
            v
        } else {
            self.b.ins().splat(types::F64X2, v)
        }
    }

    /// A `bool` as a per-lane mask (`i64x2`, all bits set where true): a mask as it is, a
    /// scalar (the same in both lanes) widened.
    pub fn lane_mask(&mut self, v: Value) -> Value {
        if self.b.func.dfg.value_type(v).is_vector() {
            return v;
        }
        let wide = self.b.ins().uextend(types::I64, v);
        let all = self.b.ins().ineg(wide);
        self.b.ins().splat(types::I64X2, all)
    }

    /// The value of `v` when it is a float constant (in every lane, for a vector).
    fn fconst_value(&self, v: Value) -> Option<f64> {
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        if let InstructionData::Unary { opcode: Opcode::Splat, arg } = dfg.insts[inst] {
            return self.fconst_value(arg);
        }
        match dfg.insts[inst] {
            InstructionData::UnaryIeee64 { opcode: Opcode::F64const, imm } => Some(f64::from_bits(imm.bits())),
            InstructionData::UnaryIeee32 { opcode: Opcode::F32const, imm } => Some(f32::from_bits(imm.bits()) as f64),
            _ => None,
        }
    }

    /// `-x`: the sign bit flipped, as `fneg` does, but written as an `xor` with a constant
    /// sign mask. Cranelift's x64 backend builds the mask of an `fneg` in registers at every
    /// use (three instructions: all ones, a shift, the `xor`); a constant mask is one `xor`
    /// with a constant-pool operand. The bits are the same.
    fn fneg(&mut self, x: Value) -> Value {
        let ty = self.b.func.dfg.value_type(x);
        let mask = match ty {
            types::F64 => self.b.ins().f64const(-0.0),
            types::F32 => self.b.ins().f32const(-0.0),
            types::F64X2 => {
                let m = self.b.ins().f64const(-0.0);
                self.b.ins().splat(types::F64X2, m)
            }
            _ => return self.b.ins().fneg(x),
        };
        self.b.ins().bxor(x, mask)
    }

    /// `x` when `v` is `-x` ([`Self::fneg`], or an `fneg`).
    fn negated(&self, v: Value) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            InstructionData::Unary { opcode: Opcode::Fneg, arg } => Some(arg),
            InstructionData::Binary { opcode: Opcode::Bxor, args: [x, m] } => {
                self.fconst_value(m).filter(|c| c.to_bits() == (-0.0f64).to_bits()).map(|_| x)
            }
            _ => None,
        }
    }

    /// The value of `v` when it is an integer constant.
    fn iconst_value(&self, v: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        let ValueDef::Result(inst, 0) = dfg.value_def(v) else {
            return None;
        };
        match dfg.insts[inst] {
            InstructionData::UnaryImm {
                opcode: Opcode::Iconst,
                imm,
            } => Some(imm.bits()),
            _ => None,
        }
    }

    /// `x as to` (see `mad_runtime::jit::scalar::cast`): between numbers, and `bool` to `i64`.
    pub fn scalar_cast(
        &mut self,
        from: ScalarKind,
        to: ScalarKind,
        x: Value,
    ) -> Result<Value, JitError> {
        use ScalarKind::*;
        if self.wide {
            let lanes = self.b.func.dfg.value_type(x).is_vector();
            return match (from, to) {
                (F64, F64) | (I64, I64) => Ok(x),
                (I64, F64) if !lanes => {
                    let f = self.b.ins().fcvt_from_sint(types::F64, x);
                    Ok(self.b.ins().splat(types::F64X2, f))
                }
                (Bool, I64) if !lanes => Ok(self.b.ins().uextend(types::I64, x)),
                _ => Err(unsupported(format!(
                    "cast from {} to {} on two lanes",
                    from.name(),
                    to.name()
                ))),
            };
        }
        let ins = self.b.ins();
        Ok(match (from, to) {
            (F64, F64) | (F32, F32) | (I64, I64) => x,
            (F32, F64) => ins.fpromote(types::F64, x),
            (F64, F32) => ins.fdemote(types::F32, x),
            (F64 | F32, I64) => ins.fcvt_to_sint_sat(types::I64, x),
            (I64, F64 | F32) => ins.fcvt_from_sint(super::layout::clif_kind(to), x),
            (Bool, I64) => ins.uextend(types::I64, x),
            (_, Bool) | (Bool, F64 | F32) => {
                return Err(unsupported(format!(
                    "cast from {} to {}",
                    from.name(),
                    to.name()
                )));
            }
        })
    }
}

impl FnLower<'_, '_> {
    /// `select(c, x, y)` of one slot. An `f64` select on an `f64` comparison
    /// becomes a lane-0 vector compare mask and bit-select (`cmpsd`/`andpd`-like
    /// code), which x86-64 runs without the branches of a scalar float select.
    pub fn select_slot(&mut self, c: Value, x: Value, y: Value) -> Value {
        use cranelift_codegen::ir::{Endianness, InstructionData, MemFlagsData, ValueDef};
        if self.wide {
            let ty = |me: &Self, v: Value| me.b.func.dfg.value_type(v);
            let lanes = ty(self, c).is_vector() || ty(self, x).is_vector() || ty(self, y).is_vector();
            if lanes {
                // Per lane: a mask (or a condition the same in both lanes, widened to one).
                let (x, y) = if ty(self, x) == types::I8 || ty(self, y) == types::I8 {
                    (self.lane_mask(x), self.lane_mask(y))
                } else {
                    (x, y)
                };
                let mask = self.lane_mask(c);
                let mask = if ty(self, x) == types::F64X2 {
                    self.b.ins().bitcast(
                        types::F64X2,
                        MemFlagsData::new().with_endianness(Endianness::Little),
                        mask,
                    )
                } else {
                    mask
                };
                return self.b.ins().bitselect(mask, x, y);
            }
        }
        let dfg = &self.b.func.dfg;
        let compare = match dfg.value_def(c) {
            ValueDef::Result(inst, 0) => match dfg.insts[inst] {
                InstructionData::FloatCompare { cond, args, .. } => Some((cond, args[0], args[1])),
                _ => None,
            },
            _ => None,
        };
        let f64s = |v: Value| dfg.value_type(v) == types::F64;
        let is_positive_zero = match dfg.value_def(x) {
            ValueDef::Result(inst, 0) => {
                matches!(dfg.insts[inst], InstructionData::UnaryIeee64 { imm, .. } if imm.bits() == 0)
            }
            _ => false,
        };
        match compare {
            // `select(p == q, +0.0, y)` (the strong zero of a derivative) is
            // `y` with its bits kept where `p != q` (true also when either is
            // NaN, where `p == q` is false): a compare and one scalar `and`,
            // `y` staying where it is.
            Some((FloatCC::Equal, p, q)) if is_positive_zero && f64s(y) && f64s(p) && f64s(q) => {
                let pv = self.b.ins().splat(types::F64X2, p);
                let qv = self.b.ins().splat(types::F64X2, q);
                let keep = self.b.ins().fcmp(FloatCC::NotEqual, pv, qv);
                let keep = self.b.ins().bitcast(
                    types::F64X2,
                    MemFlagsData::new().with_endianness(Endianness::Little),
                    keep,
                );
                let keep = self.b.ins().extractlane(keep, 0);
                self.b.ins().band(y, keep)
            }
            Some((cond, p, q)) if f64s(x) && f64s(y) && f64s(p) && f64s(q) => {
                let v = |me: &mut Self, s: Value| me.b.ins().splat(types::F64X2, s);
                let (pv, qv, xv, yv) = (v(self, p), v(self, q), v(self, x), v(self, y));
                let mask = self.b.ins().fcmp(cond, pv, qv);
                let mask = self.b.ins().bitcast(
                    types::F64X2,
                    MemFlagsData::new().with_endianness(Endianness::Little),
                    mask,
                );
                // `select(c, +0.0, y)` is `y` with its bits cleared where `c`
                // holds: one and-not.
                let r = if is_positive_zero {
                    self.b.ins().band_not(yv, mask)
                } else {
                    self.b.ins().bitselect(mask, xv, yv)
                };
                self.b.ins().extractlane(r, 0)
            }
            _ => self.b.ins().select(c, x, y),
        }
    }
}

/// Whether `z` is −0 (the additive identity of IEEE addition: `x + (−0)` is `x` for every x).
fn is_negative_zero(z: f64) -> bool {
    z.to_bits() == (-0.0f64).to_bits()
}
