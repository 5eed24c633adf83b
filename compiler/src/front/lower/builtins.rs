//! Builtin functions (lang-decisions "Builtins") and their IR: elementwise math
//! (`Unary`/`Binary`, `polygamma(n, x)` with its integer order cast to the float kind),
//! `select`, `len`/`rows`/`cols` (`DimOf`), `zeros`/`ones` (`Full`), `hadamard`
//! (`Binary(Mul)`), `sum`, `transpose`, and `print` (`Print`, or `PrintStr` for a string
//! literal); `concat` and `reshape` are lowered with slices in [`super::shape_ops`]. `min(v)`/`max(v)` with one argument are the standard library's reductions
//! (`std::reduce`), resolved as a call.

use super::ops::{is_literal, literal_hint};
use super::{FnCx, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::types::SurfaceType;
use crate::ir::{BinaryOp, Literal, OpKind, ScalarKind, Type, UnaryOp};
use mad_grammar::ast::{Expr, ExprKind};
use mad_grammar::span::Span;

/// Names of the builtin functions.
pub const BUILTINS: &[&str] = &[
    "print",
    "sqrt",
    "exp",
    "log",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "log1p",
    "expm1",
    "erf",
    "lgamma",
    "digamma",
    "trigamma",
    "polygamma",
    "softplus",
    "sigmoid",
    "abs",
    "floor",
    "ceil",
    "atan2",
    "pow",
    "min",
    "max",
    "select",
    "len",
    "zeros",
    "ones",
    "hadamard",
    "sum",
    "transpose",
    "rows",
    "cols",
    "concat",
    "reshape",
];

/// Reserved names of the differentiation operators.
pub const DIFF_OPERATORS: &[&str] = &["grad", "jvp", "vjp", "hessian", "jacobian"];

fn unary_op(name: &str) -> Option<UnaryOp> {
    UnaryOp::from_name(name).filter(|op| !matches!(op, UnaryOp::Neg | UnaryOp::Not))
}

impl FnCx<'_, '_> {
    pub fn builtin(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
        name_span: Span,
        expected: Option<&SurfaceType>,
    ) -> Tv {
        match name {
            "concat" => return self.concat_builtin(args, span),
            "reshape" => return self.reshape_builtin(args, span),
            _ => {}
        }
        let arity: &[usize] = match name {
            "zeros" | "ones" | "min" | "max" => &[1, 2],
            "atan2" | "pow" | "hadamard" | "polygamma" => &[2],
            "select" => &[3],
            _ => &[1],
        };
        if !arity.contains(&args.len()) {
            self.lower_args_for_errors(args);
            let expected = arity
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(" or ");
            self.error(
                ErrorKind::ArgCount {
                    name: name.to_string(),
                    expected,
                    found: args.len(),
                },
                span,
            );
            return self.poison();
        }
        if matches!(name, "min" | "max")
            && args.len() == 1
            && let Some(defs) = self.g.items.lookup_prelude(name)
        {
            // `max(v)`: the reduction of `std::reduce`, an ordinary call.
            return self.call_defs(&defs, name, args, span, name_span);
        }
        if name == "print" {
            if let ExprKind::Str(s) = &args[0].kind {
                self.b.set_span(span);
                let v = self
                    .b
                    .push1(OpKind::PrintStr(s.clone()), vec![], Type::unit());
                return Tv {
                    ty: SurfaceType::unit(),
                    v,
                };
            }
            let x = self.expr(&args[0], None);
            if x.ty.is_error() {
                return self.poison();
            }
            if let SurfaceType::Stencil(_) = x.ty {
                self.handle_escape(args[0].span);
                return self.poison();
            }
            self.b.set_span(span);
            let v = self.b.push1(OpKind::Print, vec![x.v], Type::unit());
            return Tv {
                ty: SurfaceType::unit(),
                v,
            };
        }
        if let Some(op) = unary_op(name) {
            let float_only = op.float_only();
            let hint = if float_only {
                Some(SurfaceType::F64)
            } else {
                expected.cloned()
            };
            let x = self.expr(&args[0], hint.as_ref());
            if x.ty.is_error() {
                return self.poison();
            }
            let ok = match x.ty.elem_kind() {
                Some(k) if x.ty.is_number() || x.ty.is_tensor() => {
                    k.is_float() || (!float_only && k == ScalarKind::I64)
                }
                _ => false,
            };
            if !ok {
                return self.bad_builtin(name, &[x.ty], span);
            }
            self.b.set_span(span);
            let v = self.b.push1(OpKind::Unary(op), vec![x.v], x.ty.ir_type());
            return Tv { ty: x.ty, v };
        }
        match name {
            "atan2" | "pow" | "min" | "max" | "hadamard" => {
                // Two integer literals adapt to the floats these two take (`pow(2, 3)`).
                let float_only = matches!(name, "atan2" | "pow");
                let exp = if float_only && super::ops::is_literal(&args[0]) && super::ops::is_literal(&args[1]) {
                    Some(&SurfaceType::F64)
                } else {
                    expected
                };
                let (a, mut b) = if name == "pow"
                    && super::ops::is_literal(&args[0])
                    && !super::ops::is_literal(&args[1])
                {
                    // `pow(2, n)` with `n: i64`: the literal base is a float (`pow(f64, i64)`).
                    let b = self.expr(&args[1], None);
                    let hint = if b.ty == SurfaceType::I64 { Some(SurfaceType::F64) } else { literal_hint(&b.ty) };
                    (self.expr(&args[0], hint.as_ref()), b)
                } else {
                    self.two_args(&args[0], &args[1], exp)
                };
                if a.ty.is_error() || b.ty.is_error() {
                    return self.poison();
                }
                if name == "pow" && a.ty.is_float() && b.ty == SurfaceType::I64 {
                    // `pow(x, n)` with an integer exponent, as `x ^ n`: n converted.
                    let k = a.ty.scalar().unwrap_or(ScalarKind::F64);
                    self.b.set_span(args[1].span);
                    let e = self.b.push1(OpKind::Cast(k), vec![b.v], Type::Scalar(k));
                    b = Tv { ty: a.ty.clone(), v: e };
                }
                let (op, ok) = match name {
                    "atan2" => (BinaryOp::Atan2, a.ty.is_float()),
                    "pow" => (BinaryOp::Pow, a.ty.is_float()),
                    "min" => (BinaryOp::Min, a.ty.is_number() || numeric_tensor(&a.ty)),
                    "max" => (BinaryOp::Max, a.ty.is_number() || numeric_tensor(&a.ty)),
                    _ => (BinaryOp::Mul, numeric_tensor(&a.ty)),
                };
                if !ok || !a.ty.compatible(&b.ty) {
                    return self.bad_builtin(name, &[a.ty, b.ty], span);
                }
                self.b.set_span(span);
                let v = self
                    .b
                    .push1(OpKind::Binary(op), vec![a.v, b.v], a.ty.ir_type());
                Tv { ty: a.ty, v }
            }
            "polygamma" => {
                let n = self.expr(&args[0], Some(&SurfaceType::I64));
                let x = self.expr(&args[1], Some(&SurfaceType::F64));
                if n.ty.is_error() || x.ty.is_error() {
                    return self.poison();
                }
                let k = match x.ty.elem_kind() {
                    Some(k) if k.is_float() && (x.ty.is_number() || x.ty.is_tensor()) => k,
                    _ => return self.bad_builtin(name, &[n.ty, x.ty], span),
                };
                if n.ty != SurfaceType::I64 {
                    return self.bad_builtin(name, &[n.ty, x.ty], span);
                }
                self.b.set_span(args[0].span);
                let order = self.b.push1(OpKind::Cast(k), vec![n.v], Type::Scalar(k));
                self.b.set_span(span);
                let v = self.b.push1(
                    OpKind::Binary(BinaryOp::Polygamma),
                    vec![order, x.v],
                    x.ty.ir_type(),
                );
                Tv { ty: x.ty, v }
            }
            "select" => {
                let c = self.expr(&args[0], Some(&SurfaceType::Bool));
                let c = self.expect(c, &SurfaceType::Bool, args[0].span);
                let (a, b) = self.two_args(&args[1], &args[2], expected);
                if a.ty.is_error() || b.ty.is_error() {
                    return self.poison();
                }
                if !a.ty.compatible(&b.ty) || matches!(a.ty, SurfaceType::Stencil(_)) {
                    return self.bad_builtin(name, &[SurfaceType::Bool, a.ty, b.ty], span);
                }
                self.b.set_span(span);
                let v = self
                    .b
                    .push1(OpKind::Select, vec![c.v, a.v, b.v], a.ty.ir_type());
                Tv { ty: a.ty, v }
            }
            "len" | "rows" | "cols" => {
                if name == "len"
                    && let Some(tv) = self.try_ring_len(&args[0])
                {
                    return tv;
                }
                let x = self.expr(&args[0], None);
                if x.ty.is_error() {
                    return self.poison();
                }
                let ok = match name {
                    "len" => x.ty.is_tensor(),
                    _ => matches!(x.ty, SurfaceType::Mat(..) | SurfaceType::Matrix),
                };
                if !ok {
                    return self.bad_builtin(name, &[x.ty], span);
                }
                self.b.set_span(span);
                let v = self.b.push1(
                    OpKind::DimOf(u32::from(name == "cols")),
                    vec![x.v],
                    Type::I64,
                );
                Tv {
                    ty: SurfaceType::I64,
                    v,
                }
            }
            "zeros" | "ones" => {
                let mut ops =
                    vec![self.konst(Literal::F64(if name == "ones" { 1.0 } else { 0.0 }))];
                let mut ok = true;
                for a in args {
                    let tv = self.expr(a, Some(&SurfaceType::I64));
                    ok &= tv.ty == SurfaceType::I64;
                    let tv = self.expect(tv, &SurfaceType::I64, a.span);
                    ops.push(tv.v);
                }
                if !ok {
                    return self.poison();
                }
                let ty = if args.len() == 1 {
                    SurfaceType::Vector
                } else {
                    SurfaceType::Matrix
                };
                self.b.set_span(span);
                let v = self.b.push1(OpKind::Full, ops, ty.ir_type());
                Tv { ty, v }
            }
            "sum" => {
                let x = self.expr(&args[0], None);
                if x.ty.is_error() {
                    return self.poison();
                }
                if !numeric_tensor(&x.ty) {
                    return self.bad_builtin(name, &[x.ty], span);
                }
                let k = x.ty.elem_kind().unwrap_or(ScalarKind::F64);
                self.b.set_span(span);
                let v = self.b.push1(OpKind::Sum, vec![x.v], Type::Scalar(k));
                Tv {
                    ty: SurfaceType::from_scalar(k),
                    v,
                }
            }
            "transpose" => {
                let x = self.expr(&args[0], None);
                let ty = match x.ty {
                    SurfaceType::Error => return self.poison(),
                    SurfaceType::Mat(r, c) => SurfaceType::Mat(c, r),
                    SurfaceType::Matrix => SurfaceType::Matrix,
                    _ => return self.bad_builtin(name, &[x.ty], span),
                };
                self.b.set_span(span);
                let v = self.b.push1(OpKind::Transpose, vec![x.v], ty.ir_type());
                Tv { ty, v }
            }
            _ => {
                self.lower_args_for_errors(args);
                self.unknown_name(name, name_span);
                self.poison()
            }
        }
    }

    /// Two arguments of one type; a literal adapts to the other argument.
    fn two_args(&mut self, x: &Expr, y: &Expr, expected: Option<&SurfaceType>) -> (Tv, Tv) {
        let exp = expected.filter(|t| t.is_number());
        match (is_literal(x), is_literal(y)) {
            (true, false) => {
                let b = self.expr(y, exp);
                let a = self.expr(x, literal_hint(&b.ty).as_ref());
                (a, b)
            }
            (false, true) => {
                let a = self.expr(x, exp);
                let b = self.expr(y, literal_hint(&a.ty).as_ref());
                (a, b)
            }
            (true, true) => {
                let float = super::ops::has_float_literal(x) || super::ops::has_float_literal(y);
                let hint = exp.cloned().or(float.then_some(SurfaceType::F64));
                (self.expr(x, hint.as_ref()), self.expr(y, hint.as_ref()))
            }
            (false, false) => (self.expr(x, exp), self.expr(y, exp)),
        }
    }

    fn bad_builtin(&mut self, name: &str, tys: &[SurfaceType], span: Span) -> Tv {
        let args = tys
            .iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        self.error(
            ErrorKind::NoOverload {
                name: name.to_string(),
                args,
                candidates: builtin_signatures(name),
            },
            span,
        );
        self.poison()
    }
}

fn numeric_tensor(t: &SurfaceType) -> bool {
    t.is_tensor() && matches!(t.elem_kind(), Some(k) if k != ScalarKind::Bool)
}

/// What a builtin accepts, for "no overload" help.
fn builtin_signatures(name: &str) -> Vec<String> {
    let s: &[&str] = match name {
        "abs" => &["abs(T) -> T for T = f64, f32, i64 or a tensor of those"],
        "atan2" => &["(T, T) -> T for T = f64 or f32"],
        "pow" => &["(T, T) -> T for T = f64 or f32", "(T, i64) -> T for T = f64 or f32"],
        "min" | "max" => &[
            "(T, T) -> T for T = a number or a tensor of numbers",
            "(T) -> f64 for T = vector or vecN, N from 2 to 16 (std::reduce)",
        ],
        "polygamma" => &["polygamma(i64, T) -> T for T = f64, f32 or a tensor of those"],
        "hadamard" => &["hadamard(T, T) -> T for T = a vec, mat, array, vector or matrix"],
        "select" => &["select(bool, T, T) -> T"],
        "len" => &["len(T) -> i64 for T = a vec, mat, array, slice, vector or matrix"],
        "rows" | "cols" => &["(T) -> i64 for T = a mat or matrix"],
        "sum" => &["sum(T) -> elem for T = a tensor of numbers"],
        "transpose" => &["transpose(matRxC) -> matCxR", "transpose(matrix) -> matrix"],
        _ => &["(T) -> T for T = f64, f32 or a tensor of those"],
    };
    s.iter().map(|x| x.to_string()).collect()
}
