//! The differentiation operators at a call site: `grad(f)(x, …)`, `grad(f, i)(…)`,
//! `jvp(f)(…)`, `vjp(f)(…)`, `hessian(f)(…)`, `jacobian(f)(…)`.
//!
//! The operand of an operator is a function name (a user or standard-library
//! function, possibly overloaded) or another operator application
//! (`hessian(grad(f))` is not valid, `grad(grad(f))` is when `grad(f)` is scalar).
//! Each candidate operand gives a derived signature (`deriv_sig`); the call's
//! arguments pick the candidate exactly as for an overloaded call. The call is
//! lowered to a call of a placeholder function with the derived signature
//! ([`Front::deriv_fref`]); its body is generated after every function body is
//! lowered, by [`crate::front::derive`].

use super::{FnCx, Front, Tv};
use crate::front::diagnostics::ErrorKind;
use crate::front::items::Def;
use crate::front::types::SurfaceType;
use crate::ir::{FuncRef, Function, OpKind};
use mad_grammar::ast::{Expr, ExprKind};
use mad_grammar::span::Span;

/// A differentiation operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DiffOp {
    Grad,
    Jvp,
    Vjp,
    Hessian,
    Jacobian,
}

impl DiffOp {
    pub fn from_name(name: &str) -> Option<DiffOp> {
        Some(match name {
            "grad" => DiffOp::Grad,
            "jvp" => DiffOp::Jvp,
            "vjp" => DiffOp::Vjp,
            "hessian" => DiffOp::Hessian,
            "jacobian" => DiffOp::Jacobian,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DiffOp::Grad => "grad",
            DiffOp::Jvp => "jvp",
            DiffOp::Vjp => "vjp",
            DiffOp::Hessian => "hessian",
            DiffOp::Jacobian => "jacobian",
        }
    }

    /// Whether the operator runs reverse mode (and so cannot pass a data-dependent loop).
    pub fn is_reverse(self) -> bool {
        matches!(self, DiffOp::Grad | DiffOp::Vjp | DiffOp::Hessian)
    }
}

/// What an operator is applied to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// A function item (index into `Items::fns`).
    Fn(usize),
    /// Another operator application.
    Deriv(Box<DerivKey>),
}

/// The most differentiation operators applied one inside another (`grad(grad(…))`): eight
/// levels build in well under a second, and each further one about doubles that.
pub const MAX_DIFF_NESTING: usize = 8;

/// How many operators `k` applies, one inside another (`grad(grad(f))`: 2).
fn nesting(k: &DerivKey) -> usize {
    1 + match &k.target {
        Target::Fn(_) => 0,
        Target::Deriv(d) => nesting(d),
    }
}

/// One operator application: `op(target)` or `grad(target, arg)`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DerivKey {
    pub op: DiffOp,
    /// `grad(f, i)` or `grad(f, (i, j, …))`: the selected arguments (0-based); the others
    /// are data.
    pub arg: Option<Wrt>,
    pub target: Target,
}

/// The arguments `grad` differentiates with respect to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Wrt {
    /// `grad(f, i)`: the partial with respect to argument `i`.
    One(usize),
    /// `grad(f, (i, j, …))`: a tuple of the partials, in the order written.
    Many(Vec<usize>),
}

impl Wrt {
    /// The selected arguments, in order.
    pub fn indices(&self) -> Vec<usize> {
        match self {
            Wrt::One(i) => vec![*i],
            Wrt::Many(is) => is.clone(),
        }
    }
}

impl std::fmt::Display for Wrt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Wrt::One(i) => write!(f, "{i}"),
            Wrt::Many(is) if is.len() == 1 => write!(f, "({},)", is[0]),
            Wrt::Many(is) => write!(f, "({})", is.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(", ")),
        }
    }
}

/// A surface signature.
#[derive(Clone, Debug, PartialEq)]
pub struct Sig {
    pub params: Vec<SurfaceType>,
    pub ret: SurfaceType,
}

/// The tangent (and cotangent) type of a value of type `t`; `None` if it has none.
/// Floats and float tensors are their own tangent type; a tuple's tangent is the
/// tuple of its parts' tangents, `()` standing for a part that has none.
pub fn tangent(t: &SurfaceType) -> Option<SurfaceType> {
    match t {
        SurfaceType::Tuple(items) => {
            let parts: Vec<Option<SurfaceType>> = items.iter().map(tangent).collect();
            parts.iter().any(Option::is_some).then(|| {
                SurfaceType::Tuple(
                    parts
                        .into_iter()
                        .map(|p| p.unwrap_or_else(SurfaceType::unit))
                        .collect(),
                )
            })
        }
        SurfaceType::Stencil(_) | SurfaceType::Str | SurfaceType::Error => None,
        _ => t.elem_kind().filter(|k| k.is_float()).map(|_| t.clone()),
    }
}

/// Whether `t` is an `f64` tensor of any extents (`vector`, `matrix`, `[f64]`, `[vec3]`, a
/// fixed-size one): an argument `jacobian` and `hessian` flatten, looping over its scalars
/// when an extent is dynamic.
fn dense_f64(t: &SurfaceType) -> bool {
    match t {
        SurfaceType::Vector | SurfaceType::Matrix => true,
        SurfaceType::Slice(e) => dense_f64(e) || fixed_f64_size(e).is_some(),
        _ => fixed_f64_size(t).is_some(),
    }
}

/// The number of `f64` scalars in a value of a fixed-size `f64` type (scalar,
/// vec, mat, array of those); `None` for any other type.
pub fn fixed_f64_size(t: &SurfaceType) -> Option<u64> {
    match t {
        SurfaceType::F64 => Some(1),
        SurfaceType::Vec(n) => Some(u64::from(*n)),
        SurfaceType::Mat(r, c) => Some(u64::from(*r) * u64::from(*c)),
        SurfaceType::Array(e, n) => fixed_f64_size(e).map(|s| s * n),
        _ => None,
    }
}

/// One value, or a tuple of several.
fn one_or_tuple(mut ts: Vec<SurfaceType>) -> SurfaceType {
    if ts.len() == 1 {
        ts.remove(0)
    } else {
        SurfaceType::Tuple(ts)
    }
}

/// Whether `t` is a result `jacobian` accepts: `f64` or a rank-1 `f64` tensor.
fn jacobian_result(t: &SurfaceType) -> bool {
    match t {
        SurfaceType::F64 | SurfaceType::Vec(_) | SurfaceType::Vector => true,
        SurfaceType::Array(e, _) | SurfaceType::Slice(e) => **e == SurfaceType::F64,
        _ => false,
    }
}

impl Front {
    /// The display name of a target: `f`, `std::vec::norm`, `grad(f, 1)`.
    pub fn target_name(&self, t: &Target) -> String {
        match t {
            Target::Fn(i) => self.items.fns[*i].qual.clone(),
            Target::Deriv(k) => self.deriv_name(k, false),
        }
    }

    /// `grad(f)`; with `ir`, the function's unique IR name (overloads included).
    pub fn deriv_name(&self, k: &DerivKey, ir: bool) -> String {
        let inner = match &k.target {
            Target::Fn(i) if ir => self.items.fns[*i].ir_name.clone(),
            Target::Fn(i) => self.items.fns[*i].qual.clone(),
            Target::Deriv(d) => self.deriv_name(d, ir),
        };
        match &k.arg {
            Some(a) => format!("{}({inner}, {a})", k.op.name()),
            None => format!("{}({inner})", k.op.name()),
        }
    }

    /// How a list of candidates names the application `k` with signature `sig`:
    /// `grad(f)(vec3) -> vec3`, or, applied to an overload of a size-generic function,
    /// the operator and the family once for all its sizes.
    pub fn deriv_description(&self, k: &DerivKey, sig: &Sig) -> String {
        let mut inner = &k.target;
        while let Target::Deriv(d) = inner {
            inner = &d.target;
        }
        if let Target::Fn(i) = inner
            && let Some(inst) = &self.items.fns[*i].instance
        {
            return format!("{} of {}", self.deriv_name(k, false), inst.family);
        }
        let ps: Vec<String> = sig.params.iter().map(ToString::to_string).collect();
        format!("{}({}) -> {}", self.deriv_name(k, false), ps.join(", "), sig.ret)
    }

    pub fn target_sig(&self, t: &Target) -> Result<Sig, String> {
        match t {
            Target::Fn(i) => {
                let f = &self.items.fns[*i];
                Ok(Sig {
                    params: f.params.clone(),
                    ret: f.ret.clone(),
                })
            }
            Target::Deriv(k) => self.deriv_sig(k),
        }
    }

    /// The signature of `op(target)`, or why the operator does not apply.
    pub fn deriv_sig(&self, k: &DerivKey) -> Result<Sig, String> {
        let Sig { params, ret } = self.target_sig(&k.target)?;
        let floats: Vec<(usize, SurfaceType)> = params
            .iter()
            .enumerate()
            .filter_map(|(i, p)| tangent(p).map(|t| (i, t)))
            .collect();
        if floats.is_empty() {
            return Err(
                "it has no floating-point argument to differentiate with respect to".into(),
            );
        }
        let fixed_inputs = || -> Result<u64, String> {
            let mut n = 0;
            for (i, _) in &floats {
                match fixed_f64_size(&params[*i]) {
                    Some(s) => n += s,
                    // A dynamic f64 tensor: the derivative loops over its scalars.
                    None if dense_f64(&params[*i]) => {}
                    None => {
                        return Err(format!(
                            "argument {i} has type {}; `{}` needs f64 arguments (f64, vecN, matRxC, [f64; N], vector, matrix, [f64], [vecN])",
                            params[*i],
                            k.op.name()
                        ));
                    }
                }
            }
            Ok(n)
        };
        let sig = match k.op {
            DiffOp::Grad => {
                if ret != SurfaceType::F64 {
                    return Err(format!(
                        "its result is {ret}, not f64; `grad` needs a scalar function"
                    ));
                }
                let ret = match &k.arg {
                    None => one_or_tuple(floats.into_iter().map(|(_, t)| t).collect()),
                    Some(wrt) => {
                        let mut parts = Vec::new();
                        let indices = wrt.indices();
                        for (j, &a) in indices.iter().enumerate() {
                            if a >= params.len() {
                                return Err(format!(
                                    "it has {} argument(s), so there is no argument {a}",
                                    params.len()
                                ));
                            }
                            if indices[..j].contains(&a) {
                                return Err(format!("argument {a} is named twice"));
                            }
                            match tangent(&params[a]) {
                                Some(t) => parts.push(t),
                                None => {
                                    return Err(format!(
                                        "argument {a} has type {}, which has no derivative",
                                        params[a]
                                    ));
                                }
                            }
                        }
                        match wrt {
                            Wrt::One(_) => parts.remove(0),
                            Wrt::Many(_) => SurfaceType::Tuple(parts),
                        }
                    }
                };
                Sig { params, ret }
            }
            DiffOp::Hessian => {
                if ret != SurfaceType::F64 {
                    return Err(format!(
                        "its result is {ret}, not f64; `hessian` needs a scalar function"
                    ));
                }
                fixed_inputs()?;
                Sig {
                    params,
                    ret: SurfaceType::Matrix,
                }
            }
            DiffOp::Jacobian => {
                if !jacobian_result(&ret) {
                    return Err(format!(
                        "its result is {ret}; `jacobian` needs an f64 or a vector result (vecN, [f64; N], vector)"
                    ));
                }
                fixed_inputs()?;
                Sig {
                    params,
                    ret: SurfaceType::Matrix,
                }
            }
            DiffOp::Jvp => {
                let Some(rt) = tangent(&ret) else {
                    return Err(format!("its result is {ret}, which has no derivative"));
                };
                let mut ps = params.clone();
                ps.extend(floats.into_iter().map(|(_, t)| t));
                Sig {
                    params: ps,
                    ret: SurfaceType::Tuple(vec![ret, rt]),
                }
            }
            DiffOp::Vjp => {
                let Some(rt) = tangent(&ret) else {
                    return Err(format!("its result is {ret}, which has no derivative"));
                };
                let mut ps = params.clone();
                ps.push(rt);
                let adj = one_or_tuple(floats.into_iter().map(|(_, t)| t).collect());
                Sig {
                    params: ps,
                    ret: SurfaceType::Tuple(vec![ret, adj]),
                }
            }
        };
        Ok(sig)
    }

    /// The placeholder function of `op(target)` (created, with those of nested
    /// operands, on first use; its body is generated after lowering).
    pub fn deriv_fref(&mut self, k: &DerivKey, file: usize, span: Span) -> Option<FuncRef> {
        if let Some(&f) = self.derivs.get(k) {
            return Some(f);
        }
        let of = match &k.target {
            Target::Fn(i) => self.fref(*i),
            Target::Deriv(d) => self.deriv_fref(d, file, span)?,
        };
        let sig = self.deriv_sig(k).ok()?;
        let params: Vec<_> = sig.params.iter().map(SurfaceType::ir_type).collect();
        let name = self.deriv_name(k, true);
        let func = Function::new(name.clone(), &params, sig.ret.ir_type());
        let key = crate::ir::DerivedKey { of, derivation: crate::ir::Derivation::Operator { name } };
        let f = self.module.add_derived(key, func);
        self.derivs.insert(k.clone(), f);
        self.pending_derivs.push(PendingDeriv {
            func: f,
            key: k.clone(),
            file,
            span,
        });
        Some(f)
    }

    /// The function a target denotes (its placeholder for an operator application).
    pub fn target_fref(&self, t: &Target) -> Option<FuncRef> {
        match t {
            Target::Fn(i) => self.items.fns[*i].fref,
            Target::Deriv(k) => self.derivs.get(k).copied(),
        }
    }
}

/// A derivative function whose body is still to be generated.
#[derive(Clone, Debug)]
pub struct PendingDeriv {
    pub func: FuncRef,
    pub key: DerivKey,
    /// Where the operator was first used.
    pub file: usize,
    pub span: Span,
}

impl FnCx<'_, '_> {
    /// Whether `name` denotes a differentiation operator here (not shadowed by a
    /// local variable or a user item).
    pub fn is_diff_operator(&self, name: &str) -> bool {
        super::builtins::DIFF_OPERATORS.contains(&name)
            && self.env.lookup(name).is_none()
            && self.g.items.lookup_local_items(self.module, name).is_none()
    }

    /// `op(op_args…)(args…)`.
    pub fn diff_call(
        &mut self,
        op: &str,
        op_args: &[Expr],
        op_span: Span,
        args: &[Expr],
        span: Span,
    ) -> Tv {
        let Some(keys) = self.diff_keys(op, op_args, op_span) else {
            self.lower_args_for_errors(args);
            return self.poison();
        };
        let mut ok = Vec::new();
        let mut first_err = None;
        for k in keys {
            match self.g.deriv_sig(&k) {
                Ok(sig) => ok.push((k, sig)),
                Err(e) => {
                    first_err.get_or_insert((self.g.target_name(&k.target), e));
                }
            }
        }
        if ok.is_empty() {
            self.lower_args_for_errors(args);
            if let Some((func, detail)) = first_err {
                self.error(
                    ErrorKind::DiffSignature {
                        op: op.to_string(),
                        func,
                        detail,
                    },
                    op_span,
                );
            }
            return self.poison();
        }
        let name = self.g.deriv_name(&ok[0].0, false);
        let (chosen, vals) = if ok.len() == 1 {
            let params = ok[0].1.params.clone();
            if params.len() != args.len() {
                self.lower_args_for_errors(args);
                self.error(
                    ErrorKind::ArgCount {
                        name,
                        expected: params.len().to_string(),
                        found: args.len(),
                    },
                    span,
                );
                return self.poison();
            }
            let mut vals = Vec::new();
            let mut poisoned = false;
            for (a, p) in args.iter().zip(&params) {
                let tv = self.expr(a, Some(p));
                poisoned |= tv.ty.is_error();
                let tv = self.expect(tv, p, a.span);
                vals.push(tv.v);
            }
            if poisoned {
                return self.poison();
            }
            (0, vals)
        } else {
            let params: Vec<Vec<SurfaceType>> = ok.iter().map(|(_, s)| s.params.clone()).collect();
            let descs = |cx: &Self| -> Vec<String> {
                ok.iter().map(|(k, s)| cx.g.deriv_description(k, s)).collect()
            };
            match self.pick_overload(&params, &descs, &name, args, span) {
                Some(c) => c,
                None => return self.poison(),
            }
        };
        let (key, sig) = ok.swap_remove(chosen);
        let Some(fref) = self.g.deriv_fref(&key, self.file, op_span) else {
            return self.poison();
        };
        self.b.set_span(span);
        let v = self.b.push1(OpKind::Call(fref), vals, sig.ret.ir_type());
        Tv { ty: sig.ret, v }
    }

    /// The candidate applications of `op(op_args…)`: one per overload of the operand.
    fn diff_keys(&mut self, op: &str, op_args: &[Expr], span: Span) -> Option<Vec<DerivKey>> {
        let dop = DiffOp::from_name(op)?;
        let arity_ok = match dop {
            DiffOp::Grad => matches!(op_args.len(), 1 | 2),
            _ => op_args.len() == 1,
        };
        if !arity_ok {
            let expected = if dop == DiffOp::Grad { "1 or 2" } else { "1" };
            self.error(
                ErrorKind::ArgCount {
                    name: op.to_string(),
                    expected: expected.into(),
                    found: op_args.len(),
                },
                span,
            );
            return None;
        }
        let index = |e: &Expr| match e.kind {
            ExprKind::Int(i) if i >= 0 => Some(i as usize),
            _ => None,
        };
        let arg = match op_args.get(1) {
            None => None,
            Some(e) => {
                let wrt = match &e.kind {
                    ExprKind::Tuple(xs) if !xs.is_empty() => xs.iter().map(index).collect::<Option<Vec<_>>>().map(Wrt::Many),
                    _ => index(e).map(Wrt::One),
                };
                match wrt {
                    Some(w) => Some(w),
                    None => {
                        let detail = "the arguments of `grad(f, i)` are a non-negative integer literal or a tuple of them, `grad(f, (0, 2))`"
                            .to_string();
                        self.error(
                            ErrorKind::NotDiffTarget {
                                op: op.to_string(),
                                detail,
                            },
                            e.span,
                        );
                        return None;
                    }
                }
            }
        };
        let targets = self.diff_targets(op, &op_args[0])?;
        Some(
            targets
                .into_iter()
                .map(|target| DerivKey {
                    op: dop,
                    arg: arg.clone(),
                    target,
                })
                .collect(),
        )
    }

    /// The candidate functions an operator's operand denotes.
    fn diff_targets(&mut self, op: &str, e: &Expr) -> Option<Vec<Target>> {
        let not_target = |cx: &mut Self, detail: String| {
            cx.error(
                ErrorKind::NotDiffTarget {
                    op: op.to_string(),
                    detail,
                },
                e.span,
            );
            None
        };
        match &e.kind {
            ExprKind::Path(path) => {
                let name = path
                    .iter()
                    .map(|i| i.node.as_str())
                    .collect::<Vec<_>>()
                    .join("::");
                let defs = if path.len() == 1 {
                    let n = path[0].node.as_str();
                    if let Some(pos) = self.env.lookup(n) {
                        let ty = self.env.get(pos).ty.clone();
                        return not_target(
                            self,
                            format!("`{n}` is a variable of type {ty}, not a function"),
                        );
                    }
                    if let Some(d) = self.g.items.lookup_local_items(self.module, n) {
                        Some(d)
                    } else if super::builtins::DIFF_OPERATORS.contains(&n) {
                        return not_target(
                            self,
                            format!("`{n}` must be applied to a function, as in `{n}(f)`"),
                        );
                    } else if n == "print" {
                        return not_target(self, "`print` returns nothing to differentiate".to_string());
                    } else if super::builtins::BUILTINS.contains(&n) {
                        return not_target(
                            self,
                            {
                                // An example that compiles: the builtin's own arity.
                                let example = match n {
                                    "atan2" | "pow" | "min" | "max" => format!("fn g(x: f64, y: f64) -> f64 {{ {n}(x, y) }}"),
                                    "polygamma" => "fn g(x: f64) -> f64 { polygamma(2, x) }".to_string(),
                                    "hadamard" => "fn g(a: vec3, b: vec3) -> f64 { sum(hadamard(a, b)) }".to_string(),
                                    "sum" => "fn g(v: vec3) -> f64 { sum(v) }".to_string(),
                                    "select" => "fn g(x: f64) -> f64 { select(x > 0.0, x, -x) }".to_string(),
                                    "transpose" => "fn g(m: mat2) -> f64 { frob2(transpose(m)) }".to_string(),
                                    "zeros" | "ones" => format!("fn g(x: f64) -> f64 {{ x * sum({n}(3)) }}"),
                                    // Sizes: integers, no derivative to take.
                                    "len" | "rows" | "cols" => {
                                        return not_target(
                                            self,
                                            format!("`{n}` is a builtin that returns an integer size, which has no derivative"),
                                        );
                                    }
                                    _ => format!("fn g(x: f64) -> f64 {{ {n}(x) }}"),
                                };
                                format!("`{n}` is a builtin; differentiate a function that calls it, e.g. `{example}`")
                            },
                        );
                    } else if let Some(ty) = crate::front::types::named_type(n)
                        && self.g.items.lookup_prelude(n).is_none()
                    {
                        let example = match ty {
                            SurfaceType::Vec(k) => {
                                let parts: Vec<String> = (1..=k).map(|i| format!("{i}.0 * x")).collect();
                                format!(", e.g. `fn g(x: f64) -> f64 {{ norm({n}({})) }}`", parts.join(", "))
                            }
                            _ => String::new(),
                        };
                        return not_target(
                            self,
                            format!(
                                "`{n}` names the type {ty}, not a function; differentiate a function \
                                 that builds one{example}"
                            ),
                        );
                    } else {
                        self.g.items.lookup_prelude(n)
                    }
                } else {
                    self.g.items.lookup_path(self.module, path)
                };
                let Some(defs) = defs else {
                    self.unknown_name(&name, e.span);
                    return None;
                };
                let fns: Vec<Target> = defs
                    .iter()
                    .filter_map(|d| match d {
                        Def::Fn(i) => Some(Target::Fn(*i)),
                        _ => None,
                    })
                    .collect();
                if fns.is_empty() {
                    return not_target(self, format!("`{name}` is not a function"));
                }
                Some(fns)
            }
            ExprKind::Call { callee, args } => {
                if let ExprKind::Path(p) = &callee.kind
                    && p.len() == 1
                    && self.is_diff_operator(&p[0].node)
                {
                    let keys = self.diff_keys(&p[0].node, args, e.span)?;
                    // Each level of nesting about doubles the derivative code (and the time to
                    // build it): beyond MAX_DIFF_NESTING levels, an error rather than minutes.
                    if let Some(k) = keys.first()
                        && nesting(k) >= MAX_DIFF_NESTING
                    {
                        let func = self.g.deriv_name(k, false);
                        self.error(ErrorKind::DiffTooDeep { func }, e.span);
                        return None;
                    }
                    // Keep only applications that are themselves valid.
                    let valid: Vec<Target> = keys
                        .iter()
                        .filter(|k| self.g.deriv_sig(k).is_ok())
                        .map(|k| Target::Deriv(Box::new(k.clone())))
                        .collect();
                    if valid.is_empty() {
                        if let Some(k) = keys.first()
                            && let Err(detail) = self.g.deriv_sig(k)
                        {
                            let func = self.g.target_name(&k.target);
                            self.error(
                                ErrorKind::DiffSignature {
                                    op: p[0].node.clone(),
                                    func,
                                    detail,
                                },
                                e.span,
                            );
                        }
                        return None;
                    }
                    return Some(valid);
                }
                not_target(
                    self,
                    "expected a function name or a differentiation operator applied to one".into(),
                )
            }
            _ => not_target(self, "expected a function name".into()),
        }
    }
}
