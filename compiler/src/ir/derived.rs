//! Typed keys of derived functions: which derivative of which function a function of the
//! module is ([`DerivedKey`]), so that differentiation finds what it built before through a
//! map, and a pass recognizes a derivative without reading its name.
//!
//! Each derived function still has a readable name (`f$vjp`, `f$jvp3@101`, `grad(f)`):
//! [`Derivation::name`] makes it, and [`decode`] reads it back for the text form, which
//! carries names only.

use std::collections::HashMap;

use super::{FuncRef, Module, OpKind};

/// What a derived function computes from the function it is derived from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Derivation {
    /// Forward mode with `seeds` tangent directions; `active` marks the parameters that
    /// carry tangents (`None`: every one) — `f$jvp{seeds}` or `f$jvp{seeds}@{mask}`.
    Jvp { seeds: usize, active: Option<Vec<bool>> },
    /// Reverse mode — `f$vjp`.
    Vjp,
    /// Reverse mode with the cotangents of the function's own products formed plainly —
    /// `f$vjp@plain`.
    VjpPlainProducts,
    /// The source-transformed reverse mode of a function whose `vjp` is split on the tape —
    /// `f$vjp$st`.
    VjpTwin,
    /// The forward half of a split reverse mode — `f$rfwd`.
    SplitForward,
    /// The backward half of a split reverse mode — `f$rbwd`.
    SplitBackward,
    /// All partials of a scalar function — `f$grad`.
    Grad,
    /// The dense Hessian — `f$hessian`.
    Hessian,
    /// A language operator applied by the front end (`grad(f)`, `jvp(f, 1)`): its name
    /// is the operator's source text, `name`.
    Operator { name: String },
}

/// A derived function's key: the function it is derived from and how.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DerivedKey {
    pub of: FuncRef,
    pub derivation: Derivation,
}

impl Derivation {
    /// The name of this derivative of a function named `base`.
    pub fn name(&self, base: &str) -> String {
        match self {
            Derivation::Jvp { seeds, active: None } => format!("{base}$jvp{seeds}"),
            Derivation::Jvp { seeds, active: Some(mask) } => {
                let bits: String = mask.iter().map(|&b| if b { '1' } else { '0' }).collect();
                format!("{base}$jvp{seeds}@{bits}")
            }
            Derivation::Vjp => format!("{base}$vjp"),
            Derivation::VjpPlainProducts => format!("{base}$vjp@plain"),
            Derivation::VjpTwin => format!("{base}$vjp$st"),
            Derivation::SplitForward => format!("{base}$rfwd"),
            Derivation::SplitBackward => format!("{base}$rbwd"),
            Derivation::Grad => format!("{base}$grad"),
            Derivation::Hessian => format!("{base}$hessian"),
            Derivation::Operator { name } => name.clone(),
        }
    }
}

/// The derived functions of a module, both ways.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DerivedTable {
    by_key: HashMap<DerivedKey, FuncRef>,
    origin: HashMap<FuncRef, DerivedKey>,
}

impl DerivedTable {
    pub fn get(&self, key: &DerivedKey) -> Option<FuncRef> {
        self.by_key.get(key).copied()
    }

    pub fn origin(&self, f: FuncRef) -> Option<&DerivedKey> {
        self.origin.get(&f)
    }

    pub fn insert(&mut self, key: DerivedKey, f: FuncRef) {
        self.origin.insert(f, key.clone());
        self.by_key.insert(key, f);
    }
}

impl Module {
    /// Whether `f` is the function of a language operator applied to a function
    /// (`grad(f)`, `hessian(f)`, `grad(f, 1)`).
    pub fn is_operator_function(&self, f: FuncRef) -> bool {
        matches!(self.origin(f), Some(DerivedKey { derivation: Derivation::Operator { .. }, .. }))
    }

    /// Whether `f` is a reverse-mode derivative split on the tape: a `vjp` that calls the
    /// forward half of a split reverse mode.
    pub fn is_split_vjp(&self, f: FuncRef) -> bool {
        matches!(self.origin(f), Some(DerivedKey { derivation: Derivation::Vjp, .. }))
            && self.functions.get(f).is_some_and(|func| {
                func.ops.iter().any(|(_, op)| match op.kind {
                    OpKind::Call(g) => {
                        matches!(self.origin(g), Some(DerivedKey { derivation: Derivation::SplitForward, .. }))
                    }
                    _ => false,
                })
            })
    }
}

/// The key a function named `name` has under the naming of [`Derivation::name`], when
/// the function it is derived from is in `module`.
pub fn decode(module: &Module, name: &str) -> Option<DerivedKey> {
    if let Some(key) = decode_operator(module, name) {
        return Some(key);
    }
    let simple = [
        ("$vjp@plain", Derivation::VjpPlainProducts),
        ("$vjp$st", Derivation::VjpTwin),
        ("$vjp", Derivation::Vjp),
        ("$rfwd", Derivation::SplitForward),
        ("$rbwd", Derivation::SplitBackward),
        ("$grad", Derivation::Grad),
        ("$hessian", Derivation::Hessian),
    ];
    for (suffix, derivation) in simple {
        if let Some(base) = name.strip_suffix(suffix)
            && let Some(of) = module.find(base)
        {
            return Some(DerivedKey { of, derivation });
        }
    }
    let at = name.rfind("$jvp")?;
    let (base, rest) = (&name[..at], &name[at + 4..]);
    let (seeds, mask) = match rest.split_once('@') {
        Some((s, m)) => (s, Some(m)),
        None => (rest, None),
    };
    if seeds.is_empty() || !seeds.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seeds = seeds.parse().ok()?;
    let active = match mask {
        Some(m) if !m.is_empty() && m.bytes().all(|b| b == b'0' || b == b'1') => Some(m.bytes().map(|b| b == b'1').collect()),
        Some(_) => return None,
        None => None,
    };
    let of = module.find(base)?;
    Some(DerivedKey { of, derivation: Derivation::Jvp { seeds, active } })
}

/// An operator function's key: `op(inner)` or `op(inner, n)`, `inner` a function of
/// `module` (itself possibly an operator function).
fn decode_operator(module: &Module, name: &str) -> Option<DerivedKey> {
    let open = name.find('(')?;
    let inner = name.strip_suffix(')')?.get(open + 1..)?;
    let of = module.find(inner).or_else(|| {
        let (rest, n) = inner.rsplit_once(", ")?;
        n.bytes().all(|b| b.is_ascii_digit()).then(|| module.find(rest))?
    })?;
    Some(DerivedKey { of, derivation: Derivation::Operator { name: name.to_string() } })
}
