//! Size-generic functions of the standard library: one definition for every fixed size.
//!
//! `dot` has to exist for `vec2` up to `vec16` and `transpose` for every `matRxC` up to
//! `mat16x16` (256 shapes). Rather than one overload per size written out (or generated as
//! text), the library writes each such function once, with size variables:
//!
//! ```text
//! @sizes(N)
//! fn dot(a: vecN, b: vecN) -> f64 {
//!     let mut s = a[0] * b[0];
//!     for i in 1..N { s += a[i] * b[i]; }
//!     s
//! }
//! ```
//!
//! `@sizes(N)` (or `@sizes(R, C)`) declares the variables, single capital letters. Item
//! collection gives the function one overload per assignment of sizes from 1 to
//! [`MAX_FIXED_SIZE`] under which every type of its signature exists (`vecN` needs N ≥ 2,
//! `matRxC` takes R, C ≥ 1): ordinary functions for everything downstream (calls pick
//! among them by argument types, `use` imports them, `grad(dot)` differentiates one,
//! diagnostics list the family once). An instance's body is written out only when the
//! function is lowered ([`instantiate`], in [`rewrite`]): type names (`vecN`, `matCxR`,
//! `matN::identity()`) get the sizes, a size variable in an expression is an integer
//! literal, and a `for` loop whose bounds are then literals is unrolled, so that every
//! instance is straight-line code on constant indices, as a hand-written `vec3` version
//! would be (fixed-size values stay in registers, and nothing is indexed at run time).
//!
//! The mechanism is the standard library's own: in a user's file `@sizes` is an unknown
//! attribute.

pub mod rewrite;

use super::types::{MAX_FIXED_SIZE, named_type};
use mad_grammar::ast;

pub use rewrite::instantiate;

/// The attribute that makes a function size-generic.
pub const ATTRIBUTE: &str = "sizes";

/// The sizes of one instance: each variable with its value (`N = 7`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sizes(Vec<(char, u8)>);

impl Sizes {
    /// The value of a variable named `name`, if it is one.
    pub fn value(&self, name: &str) -> Option<u8> {
        let mut chars = name.chars();
        let (Some(c), None) = (chars.next(), chars.next()) else {
            return None;
        };
        self.0.iter().find(|(v, _)| *v == c).map(|(_, n)| *n)
    }

    /// A type name with the sizes put in (`vecN` → `vec7`, `matRxC` → `mat5x3`, `matN` →
    /// `mat7`); `None` when the name has no size variable.
    pub fn type_name(&self, name: &str) -> Option<String> {
        if let Some(n) = name.strip_prefix("vec") {
            return self.value(n).map(|n| format!("vec{n}"));
        }
        let dims = name.strip_prefix("mat")?;
        if let Some(n) = self.value(dims) {
            return Some(format!("mat{n}"));
        }
        let (r, c) = dims.split_once('x')?;
        let dim = |d: &str| self.value(d).map(|n| n.to_string());
        match (dim(r), dim(c)) {
            (None, None) => None,
            (rv, cv) => Some(format!(
                "mat{}x{}",
                rv.unwrap_or_else(|| r.to_string()),
                cv.unwrap_or_else(|| c.to_string())
            )),
        }
    }
}

/// One overload of a size-generic function: its sizes, and the family it belongs to as
/// diagnostics list it (`std::vec::dot(vecN, vecN) -> f64, N from 2 to 16`).
#[derive(Clone, Debug)]
pub struct Instance {
    pub sizes: Sizes,
    pub family: std::sync::Arc<str>,
}

/// The size variables an item's attributes declare: `None` without `@sizes`, `Err` with
/// what is wrong with a malformed one.
pub fn size_vars(attrs: &[ast::Attribute]) -> Option<Result<Vec<char>, String>> {
    let a = attrs.iter().find(|a| a.name.node == ATTRIBUTE)?;
    let mut vars = Vec::new();
    for arg in &a.args {
        let mut chars = arg.node.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) if c.is_ascii_uppercase() && !vars.contains(&c) => vars.push(c),
            _ => {
                return Some(Err(format!(
                    "`@sizes` takes distinct single capital letters, found `{}`",
                    arg.node
                )));
            }
        }
    }
    if vars.is_empty() {
        return Some(Err("`@sizes` needs at least one size variable".into()));
    }
    Some(Ok(vars))
}

/// The attributes without `@sizes` (what an instance keeps, e.g. `@ad(...)`).
pub fn other_attributes(attrs: &[ast::Attribute]) -> Vec<ast::Attribute> {
    attrs.iter().filter(|a| a.name.node != ATTRIBUTE).cloned().collect()
}

/// The named types of a signature, as written.
fn signature_names(decl: &ast::FnDecl) -> Vec<&str> {
    fn names<'a>(t: &'a ast::TypeExpr, out: &mut Vec<&'a str>) {
        match &t.kind {
            ast::TypeExprKind::Named(n) => out.push(n),
            ast::TypeExprKind::Array(e, _) | ast::TypeExprKind::Slice(e) => names(e, out),
            ast::TypeExprKind::Tuple(ts) => ts.iter().for_each(|t| names(t, out)),
        }
    }
    let mut out = Vec::new();
    for p in &decl.params {
        names(&p.ty, &mut out);
    }
    if let Some(r) = &decl.ret {
        names(r, &mut out);
    }
    out
}

/// Every assignment of sizes under which each type of the signature exists, in order (the
/// first variable slowest). `Err` when a variable appears in no type of the signature
/// (its instances could not be told apart).
pub fn instances(decl: &ast::FnDecl, vars: &[char]) -> Result<Vec<Sizes>, String> {
    let names = signature_names(decl);
    for v in vars {
        let probe = Sizes(vars.iter().map(|&w| (w, 2)).collect());
        let mut other = probe.clone();
        other.0.iter_mut().filter(|(w, _)| w == v).for_each(|(_, n)| *n = 3);
        if names.iter().all(|n| probe.type_name(n) == other.type_name(n)) {
            return Err(format!("the size variable `{v}` appears in no type of the signature"));
        }
    }
    let mut out = Vec::new();
    let mut values = vec![1u8; vars.len()];
    loop {
        let sizes = Sizes(vars.iter().copied().zip(values.iter().copied()).collect());
        let exists = |n: &&str| named_type(&sizes.type_name(n).unwrap_or_else(|| n.to_string())).is_some();
        if names.iter().all(exists) {
            out.push(sizes);
        }
        // The next assignment, the last variable fastest.
        let Some(k) = values.iter().rposition(|&n| n < MAX_FIXED_SIZE) else {
            return Ok(out);
        };
        values[k] += 1;
        values[k + 1..].iter_mut().for_each(|n| *n = 1);
    }
}

/// How diagnostics list a size-generic function: its signature as written and the sizes
/// its variables take (`std::mat::transpose(matRxC) -> matCxR, R and C from 1 to 16`).
pub fn family(qual: &str, decl: &ast::FnDecl, vars: &[char], found: &[Sizes]) -> String {
    let params: Vec<String> = decl.params.iter().map(|p| type_text(&p.ty)).collect();
    let ret = decl.ret.as_ref().map_or_else(|| "()".to_string(), type_text);
    let range = |v: char| {
        let values = found.iter().filter_map(|s| s.value(&v.to_string()));
        let lo = values.clone().min().unwrap_or(1);
        let hi = values.max().unwrap_or(MAX_FIXED_SIZE);
        (lo, hi)
    };
    let mut groups: Vec<(Vec<char>, (u8, u8))> = Vec::new();
    for &v in vars {
        let r = range(v);
        match groups.iter_mut().find(|(_, g)| *g == r) {
            Some((vs, _)) => vs.push(v),
            None => groups.push((vec![v], r)),
        }
    }
    let ranges: Vec<String> = groups
        .iter()
        .map(|(vs, (lo, hi))| {
            let names: Vec<String> = vs.iter().map(char::to_string).collect();
            let names = match names.split_last() {
                Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
                _ => names.join(""),
            };
            format!("{names} from {lo} to {hi}")
        })
        .collect();
    format!("{qual}({}) -> {ret}, {}", params.join(", "), ranges.join("; "))
}

/// A type as written (`vecN`, `[f64; 3]`, `(matN, vecN)`).
fn type_text(t: &ast::TypeExpr) -> String {
    match &t.kind {
        ast::TypeExprKind::Named(n) => n.clone(),
        ast::TypeExprKind::Array(e, n) => format!("[{}; {n}]", type_text(e)),
        ast::TypeExprKind::Slice(e) => format!("[{}]", type_text(e)),
        ast::TypeExprKind::Tuple(ts) => {
            let parts: Vec<String> = ts.iter().map(type_text).collect();
            match parts.len() {
                1 => format!("({},)", parts[0]),
                _ => format!("({})", parts.join(", ")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(src: &str) -> (Vec<ast::Attribute>, ast::FnDecl) {
        let (file, diags) = mad_grammar::parse(src, 0);
        assert!(diags.is_empty(), "{diags:?}");
        let item = file.items.into_iter().next().expect("one item");
        match item.kind {
            ast::ItemKind::Fn(d) => (item.attrs, d),
            _ => panic!("a function"),
        }
    }

    #[test]
    fn type_names_take_the_sizes() {
        let s = Sizes(vec![('R', 5), ('C', 3)]);
        assert_eq!(s.type_name("vecR").as_deref(), Some("vec5"));
        assert_eq!(s.type_name("matRxC").as_deref(), Some("mat5x3"));
        assert_eq!(s.type_name("matCxR").as_deref(), Some("mat3x5"));
        assert_eq!(s.type_name("matRx1").as_deref(), Some("mat5x1"));
        assert_eq!(s.type_name("matC").as_deref(), Some("mat3"));
        assert_eq!(s.type_name("vec3"), None);
        assert_eq!(s.type_name("vecN"), None);
        assert_eq!(s.type_name("vector"), None);
        assert_eq!(s.value("R"), Some(5));
        assert_eq!(s.value("RC"), None);
    }

    #[test]
    fn instances_are_the_sizes_whose_types_exist() {
        let (attrs, d) = decl("@sizes(N) fn dot(a: vecN, b: vecN) -> f64 { 0.0 }");
        let vars = size_vars(&attrs).unwrap().unwrap();
        let found = instances(&d, &vars).unwrap();
        assert_eq!(found.len(), usize::from(MAX_FIXED_SIZE) - 1);
        assert_eq!(found[0], Sizes(vec![('N', 2)]));
        assert_eq!(
            family("std::vec::dot", &d, &vars, &found),
            "std::vec::dot(vecN, vecN) -> f64, N from 2 to 16"
        );
        let (attrs, d) = decl("@sizes(R, C) fn t(m: matRxC) -> matCxR { m }");
        let vars = size_vars(&attrs).unwrap().unwrap();
        let found = instances(&d, &vars).unwrap();
        assert_eq!(found.len(), 256);
        assert_eq!(found[1], Sizes(vec![('R', 1), ('C', 2)]));
        assert_eq!(family("t", &d, &vars, &found), "t(matRxC) -> matCxR, R and C from 1 to 16");
    }

    #[test]
    fn malformed_declarations_are_reported() {
        let (attrs, _) = decl("@sizes(n) fn f(a: vecN) -> f64 { 0.0 }");
        assert!(size_vars(&attrs).unwrap().is_err());
        let (attrs, d) = decl("@sizes(N, M) fn f(a: vecN) -> f64 { 0.0 }");
        let vars = size_vars(&attrs).unwrap().unwrap();
        assert!(instances(&d, &vars).unwrap_err().contains("`M`"));
        let (attrs, _) = decl("@ad(tape) fn f(a: vec3) -> f64 { 0.0 }");
        assert!(size_vars(&attrs).is_none());
    }
}
