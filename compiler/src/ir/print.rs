//! The IR's text form (printer side; [`super::parse`] reads it back).
//!
//! ```text
//! @ad(tape) func @f(%0: f64, %1: tensor<f64; 3>) -> f64 {
//!   %2 = const 2.0 : f64
//!   %3 = mul %0, %2 : f64
//!   %4 = tensor.extract[1] %1 : f64
//!   %5 = call @"std::vec::dot$1"(%1, %1) : f64
//!   %6, %7 = scf.for %lo, %hi, %3, %4 : (f64, f64) {
//!   ^(%8: i64, %9: f64, %10: f64):
//!     yield %9, %10
//!   }
//!   %11 = scf.if %c : f64 {
//!     yield %6
//!   } else {
//!     yield %7
//!   }
//!   return %11
//! }
//! ```
//!
//! - Every op prints as `results = name[attr] operands : types`, then its regions.
//!   With one result the type after `:` is that result's type; with none or several
//!   it is a parenthesised list (so a single tuple-typed result and two results differ
//!   by the number of names on the left).
//! - Attributes: `const` takes its literal (its kind is the result type's); `cast`
//!   takes its target kind from the result type; `tensor.extract[i]`, `tensor.dim[axis]`,
//!   `tuple.get[i]` print their index in brackets; `call @callee(args)`.
//! - Regions print as `{ ^(args): ops yield ... }`; an `scf.if`'s second region
//!   follows `} else {`, an `scf.while`'s body follows `} do {`.
//! - Values are renumbered densely in print order (parameters first), so printing a
//!   parsed module gives the same text.
//! - Floats print in Rust's shortest round-trip form (`0.1`, `1e-7`, `inf`, `-inf`, `NaN`).
//! - Function names that are not plain identifiers print quoted: `@"std::vec::dot$1"`.

use std::fmt::{self, Write};

use super::function::{AdMode, FuncRef, Function, Module, Region, ValueId};
use super::op::{Literal, OpKind};
use super::types::Type;

/// The whole module, functions separated by blank lines.
pub fn print_module(module: &Module) -> String {
    let mut out = String::new();
    for (i, (h, _)) in module.functions.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&print_function(module, h));
    }
    out
}

/// One function (callee names are looked up in `module`).
pub fn print_function(module: &Module, f: FuncRef) -> String {
    match module.functions.get(f) {
        Some(func) => {
            let mut p = Printer {
                module,
                func,
                names: vec![None; func.values.len()],
                next: 0,
                out: String::new(),
            };
            p.function();
            p.out
        }
        None => format!("// no function {f:?}\n"),
    }
}

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&print_module(self))
    }
}

/// `@name` for plain identifiers, `@"name"` (with `\"` and `\\` escaped) otherwise.
pub fn function_ref_text(name: &str) -> String {
    if is_plain_ident(name) {
        format!("@{name}")
    } else {
        let mut s = String::from("@\"");
        for c in name.chars() {
            match c {
                '"' => s.push_str("\\\""),
                '\\' => s.push_str("\\\\"),
                '\n' => s.push_str("\\n"),
                c => s.push(c),
            }
        }
        s.push('"');
        s
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_plain_ident(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        _ => false,
    }
}

/// A literal in the text form: floats in shortest round-trip form.
pub fn literal_text(lit: Literal) -> String {
    match lit {
        Literal::F64(x) => format!("{x:?}"),
        Literal::F32(x) => format!("{x:?}"),
        Literal::I64(x) => format!("{x}"),
        Literal::Bool(x) => format!("{x}"),
    }
}

struct Printer<'a> {
    module: &'a Module,
    func: &'a Function,
    names: Vec<Option<usize>>,
    next: usize,
    out: String,
}

impl Printer<'_> {
    fn name(&mut self, v: ValueId) -> String {
        match self.names.get_mut(v.index()) {
            Some(slot) => {
                let n = *slot.get_or_insert_with(|| {
                    self.next += 1;
                    self.next - 1
                });
                format!("%{n}")
            }
            None => format!("%invalid{}", v.index()),
        }
    }

    fn ty(&self, v: ValueId) -> String {
        match self.func.values.get(v) {
            Some(d) => d.ty.to_string(),
            None => "<invalid>".to_string(),
        }
    }

    fn list(&mut self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|&v| self.name(v))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn typed_list(&mut self, vs: &[ValueId]) -> String {
        vs.iter()
            .map(|&v| format!("{}: {}", self.name(v), self.ty(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn function(&mut self) {
        let f = self.func;
        match f.ad_mode {
            Some(AdMode::Tape) => self.out.push_str("@ad(tape) "),
            Some(AdMode::Sct) => self.out.push_str("@ad(sct) "),
            None => {}
        }
        let params = self.typed_list(&f.body.args);
        let _ = writeln!(
            self.out,
            "func {}({params}) -> {} {{",
            function_ref_text(&f.name),
            f.ret
        );
        self.region_ops(&f.body, 1);
        let yields = self.list(&f.body.yields);
        self.line(1, format!("return {yields}").trim_end());
        self.out.push_str("}\n");
    }

    fn line(&mut self, depth: usize, text: &str) {
        for _ in 0..depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn region_ops(&mut self, region: &Region, depth: usize) {
        for &op in &region.ops {
            self.op(op, depth);
        }
    }

    fn op(&mut self, id: super::function::OpId, depth: usize) {
        let Some(op) = self.func.ops.get(id) else {
            self.line(depth, &format!("// missing op {id:?}"));
            return;
        };
        let mut text = String::new();
        if !op.results.is_empty() {
            text.push_str(&self.list(&op.results));
            text.push_str(" = ");
        }
        text.push_str(op.kind.name());
        match &op.kind {
            OpKind::Extract(i) => {
                let _ = write!(text, "[{i}]");
            }
            OpKind::DimOf(i) | OpKind::TupleGet(i) => {
                let _ = write!(text, "[{i}]");
            }
            OpKind::Permute(perm) => {
                let items: Vec<String> = perm.iter().map(u32::to_string).collect();
                let _ = write!(text, "[{}]", items.join(", "));
            }
            _ => {}
        }
        match &op.kind {
            OpKind::Const(lit) => {
                let _ = write!(text, " {}", literal_text(*lit));
            }
            OpKind::PrintStr(s) => {
                let _ = write!(text, " {}", function_ref_text(s));
            }
            OpKind::Call(callee) => {
                let callee_name = match self.module.functions.get(*callee) {
                    Some(g) => function_ref_text(&g.name),
                    None => format!("@\"<missing function {}>\"", callee.index()),
                };
                let args = self.list(&op.operands);
                let _ = write!(text, " {callee_name}({args})");
            }
            _ => {
                if !op.operands.is_empty() {
                    text.push(' ');
                    text.push_str(&self.list(&op.operands));
                }
            }
        }
        text.push_str(" : ");
        let types: Vec<String> = op.results.iter().map(|&v| self.ty(v)).collect();
        if types.len() == 1 {
            text.push_str(&types[0]);
        } else {
            let _ = write!(text, "({})", types.join(", "));
        }
        if op.regions.is_empty() {
            self.line(depth, &text);
            return;
        }
        text.push_str(" {");
        self.line(depth, &text);
        let sep = if matches!(op.kind, OpKind::If) {
            "} else {"
        } else {
            "} do {"
        };
        for (i, region) in op.regions.iter().enumerate() {
            if i > 0 {
                self.line(depth, sep);
            }
            if !region.args.is_empty() {
                let args = self.typed_list(&region.args);
                self.line(depth, &format!("^({args}):"));
            }
            self.region_ops(region, depth + 1);
            let yields = self.list(&region.yields);
            self.line(depth + 1, format!("yield {yields}").trim_end());
        }
        self.line(depth, "}");
    }
}

/// Types of a list, as the text form writes them after `:`.
pub fn result_types_text(types: &[Type]) -> String {
    if types.len() == 1 {
        types[0].to_string()
    } else {
        format!(
            "({})",
            types
                .iter()
                .map(Type::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}
