//! The IR validator: checks every invariant of a [`Module`] and reports all
//! violations it finds. It runs after the front end and after every pass.
//!
//! Checked:
//! - function names are unique (calls and the text form name functions);
//! - every value is defined exactly once (a parameter, a region argument or an op
//!   result) and every op appears in exactly one region;
//! - every use is dominated: the value is defined earlier in the same region or in an
//!   enclosing region (never in a sibling or nested region, never by the op itself);
//! - operand and result counts and types follow the op table ([`rules::result_types`]),
//!   including broadcasting, matmul shapes (fixed, symbolic and dynamic extents) and
//!   static `tensor.extract` indices;
//! - region counts, region argument types and yield types of `scf.if`, `scf.for`,
//!   `scf.while`;
//! - a function body yields one value of the return type; calls match the callee's
//!   signature.

pub mod rules;

use std::fmt;

use super::function::{FuncRef, Function, Module, OpId, Region, ValueId};
use super::op::OpKind;
use super::print::function_ref_text;
use super::types::Type;
pub use rules::{dims_compatible, merge_dim, merge_types, result_types, types_compatible};

/// One violated invariant.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationError {
    /// The function's name.
    pub function: String,
    /// The offending op and its text-form name, when the problem is in one op.
    pub op: Option<(OpId, &'static str)>,
    pub message: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in {}", function_ref_text(&self.function))?;
        if let Some((id, name)) = self.op {
            write!(f, ", op {} (`{name}`)", id.index())?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for ValidationError {}

/// Checks the whole module; `Err` lists every violation found.
pub fn validate_module(module: &Module) -> Result<(), Vec<ValidationError>> {
    let mut errors = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (_, f) in module.functions.iter() {
        if !seen.insert(f.name.as_str()) {
            errors.push(ValidationError {
                function: f.name.clone(),
                op: None,
                message: "another function has the same name".into(),
            });
        }
    }
    for (h, _) in module.functions.iter() {
        validate_function_into(module, h, &mut errors);
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Checks one function of `module`.
pub fn validate_function(module: &Module, f: FuncRef) -> Result<(), Vec<ValidationError>> {
    let mut errors = Vec::new();
    validate_function_into(module, f, &mut errors);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn validate_function_into(module: &Module, f: FuncRef, errors: &mut Vec<ValidationError>) {
    let Some(func) = module.functions.get(f) else {
        return;
    };
    let mut v = Checker {
        module,
        func,
        errors,
        defined: vec![0; func.values.len()],
        visible: vec![false; func.values.len()],
        op_seen: vec![false; func.ops.len()],
    };
    v.region(&func.body, None);
    if func.body.yields.len() != 1 {
        v.error(
            None,
            format!(
                "the body yields {} values, a function returns exactly one",
                func.body.yields.len()
            ),
        );
    } else if let Some(t) = v.ty(func.body.yields[0])
        && !types_compatible(t, &func.ret)
    {
        let msg = format!(
            "returns a value of type {t}, the function's return type is {}",
            func.ret
        );
        v.error(None, msg);
    }
}

struct Checker<'a, 'e> {
    module: &'a Module,
    func: &'a Function,
    errors: &'e mut Vec<ValidationError>,
    /// How many times each value is defined so far.
    defined: Vec<u32>,
    /// Values that may be used at the current point.
    visible: Vec<bool>,
    op_seen: Vec<bool>,
}

impl Checker<'_, '_> {
    fn error(&mut self, op: Option<OpId>, message: String) {
        let op = op.and_then(|id| self.func.ops.get(id).map(|o| (id, o.kind.name())));
        self.errors.push(ValidationError {
            function: self.func.name.clone(),
            op,
            message,
        });
    }

    fn ty(&self, v: ValueId) -> Option<&Type> {
        self.func.values.get(v).map(|d| &d.ty)
    }

    /// Records a definition of `v`; returns whether it is a fresh, valid value.
    fn define(&mut self, v: ValueId, at: Option<OpId>, scope: &mut Vec<ValueId>) {
        match self.defined.get_mut(v.index()) {
            None => self.error(
                at,
                format!("defines value #{} which does not exist", v.index()),
            ),
            Some(n) => {
                *n += 1;
                if *n > 1 {
                    self.error(
                        at,
                        format!("value #{} is defined more than once", v.index()),
                    );
                } else {
                    self.visible[v.index()] = true;
                    scope.push(v);
                }
            }
        }
    }

    fn check_use(&mut self, v: ValueId, at: Option<OpId>, what: &str) -> bool {
        match self.visible.get(v.index()) {
            None => {
                self.error(
                    at,
                    format!("{what} is value #{} which does not exist", v.index()),
                );
                false
            }
            Some(false) => {
                let msg = if self.defined[v.index()] == 0 {
                    format!(
                        "{what} (value #{}) is used before its definition",
                        v.index()
                    )
                } else {
                    format!(
                        "{what} (value #{}) is not defined in this region or an enclosing one",
                        v.index()
                    )
                };
                self.error(at, msg);
                false
            }
            Some(true) => true,
        }
    }

    /// Walks a region (`owner` is the op it belongs to; `None` for the body) and
    /// returns the types of its yields (when all are valid values).
    fn region(&mut self, region: &Region, owner: Option<OpId>) -> Option<Vec<Type>> {
        let mut scope = Vec::new();
        for &a in &region.args {
            self.define(a, owner, &mut scope);
        }
        for &op in &region.ops {
            self.op(op, &mut scope);
        }
        let mut ok = true;
        for (i, &y) in region.yields.iter().enumerate() {
            ok &= self.check_use(y, owner, &format!("yielded value {i}"));
        }
        let types = ok.then(|| {
            region
                .yields
                .iter()
                .map(|&y| self.func.values[y].ty.clone())
                .collect()
        });
        for v in scope {
            self.visible[v.index()] = false;
        }
        types
    }

    fn op(&mut self, id: OpId, scope: &mut Vec<ValueId>) {
        let Some(op) = self.func.ops.get(id) else {
            self.error(
                None,
                format!("a region lists op #{} which does not exist", id.index()),
            );
            return;
        };
        if std::mem::replace(&mut self.op_seen[id.index()], true) {
            self.error(
                Some(id),
                "the op appears more than once in the function's regions".into(),
            );
            return;
        }
        let mut operands_ok = true;
        for (i, &v) in op.operands.iter().enumerate() {
            operands_ok &= self.check_use(v, Some(id), &format!("operand {i}"));
        }
        let expected_regions = op.kind.region_count();
        let regions_ok = op.regions.len() == expected_regions;
        if !regions_ok {
            self.error(
                Some(id),
                format!(
                    "has {} region(s), `{}` has {expected_regions}",
                    op.regions.len(),
                    op.kind.name()
                ),
            );
        }
        let region_yields: Vec<Option<Vec<Type>>> = op
            .regions
            .iter()
            .map(|r| self.region(r, Some(id)))
            .collect();
        let results_ok = op
            .results
            .iter()
            .all(|&r| r.index() < self.func.values.len());
        if operands_ok && results_ok && regions_ok {
            let operand_types: Vec<Type> = op
                .operands
                .iter()
                .map(|&v| self.func.values[v].ty.clone())
                .collect();
            let result_types: Vec<Type> = op
                .results
                .iter()
                .map(|&v| self.func.values[v].ty.clone())
                .collect();
            self.types(
                id,
                &op.kind,
                &operand_types,
                &result_types,
                &op.regions,
                &region_yields,
            );
        }
        for &r in &op.results {
            self.define(r, Some(id), scope);
        }
    }

    fn types(
        &mut self,
        id: OpId,
        kind: &OpKind,
        operands: &[Type],
        results: &[Type],
        regions: &[Region],
        yields: &[Option<Vec<Type>>],
    ) {
        let module = self.module;
        if let OpKind::If = kind {
            if operands.len() != 1 || operands[0] != Type::BOOL {
                self.error(Some(id), "`scf.if` takes one bool condition".into());
            }
            for (r, name) in regions.iter().zip(["then", "else"]) {
                if !r.args.is_empty() {
                    self.error(
                        Some(id),
                        format!("the {name} region of `scf.if` takes no arguments"),
                    );
                }
            }
            for (y, name) in yields.iter().zip(["then", "else"]) {
                if let Some(y) = y {
                    self.check_list(
                        id,
                        &format!("the {name} region yields"),
                        y,
                        "the results",
                        results,
                    );
                }
            }
            return;
        }
        if let OpKind::TapePop = kind {
            if !operands.is_empty() {
                self.error(Some(id), "`tape.pop` takes no operands".into());
            }
            if results.is_empty() {
                self.error(Some(id), "`tape.pop` declares at least one result".into());
            }
            return;
        }
        let inferred = match result_types(kind, operands, module) {
            Ok(t) => t,
            Err(m) => return self.error(Some(id), m),
        };
        match kind {
            OpKind::Full => {
                let ok = results.len() == 1
                    && matches!((&results[0], &inferred[0]),
                        (Type::Tensor { elem: a, shape: sa }, Type::Tensor { elem: b, shape: sb })
                            if a == b && sa.len() == sb.len());
                if !ok {
                    self.error(
                        Some(id),
                        format!(
                            "declares {}, the operands give {}",
                            list(results),
                            list(&inferred)
                        ),
                    );
                }
            }
            _ => self.check_list(
                id,
                "declares results",
                results,
                "the op's type rule gives",
                &inferred,
            ),
        }
        match kind {
            OpKind::For => {
                let carried = &inferred;
                let body = &regions[0];
                let arg_types: Vec<Type> = body
                    .args
                    .iter()
                    .filter_map(|&a| self.ty(a).cloned())
                    .collect();
                let mut expected = vec![Type::I64];
                expected.extend(carried.iter().cloned());
                self.check_list(
                    id,
                    "the body's arguments are",
                    &arg_types,
                    "(i64, carried...) is",
                    &expected,
                );
                if let Some(y) = &yields[0] {
                    self.check_list(id, "the body yields", y, "the carried values are", carried);
                }
            }
            OpKind::While => {
                let carried = &inferred;
                for (r, name) in regions.iter().zip(["cond", "body"]) {
                    let arg_types: Vec<Type> =
                        r.args.iter().filter_map(|&a| self.ty(a).cloned()).collect();
                    self.check_list(
                        id,
                        &format!("the {name} region's arguments are"),
                        &arg_types,
                        "the carried values are",
                        carried,
                    );
                }
                if let Some(y) = &yields[0]
                    && (y.len() != 1 || y[0] != Type::BOOL)
                {
                    self.error(
                        Some(id),
                        format!("the cond region yields {}, it must yield one bool", list(y)),
                    );
                }
                if let Some(y) = &yields[1] {
                    self.check_list(id, "the body yields", y, "the carried values are", carried);
                }
            }
            _ => {}
        }
    }

    fn check_list(
        &mut self,
        id: OpId,
        what: &str,
        found: &[Type],
        against: &str,
        expected: &[Type],
    ) {
        let ok = found.len() == expected.len()
            && found
                .iter()
                .zip(expected)
                .all(|(a, b)| types_compatible(a, b));
        if !ok {
            self.error(
                Some(id),
                format!("{what} {}, {against} {}", list(found), list(expected)),
            );
        }
    }
}

fn list(ts: &[Type]) -> String {
    format!(
        "({})",
        ts.iter()
            .map(Type::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    )
}
