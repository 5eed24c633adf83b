//! `madc explain`: which differentiation mode each region of a function gets in
//! reverse mode, and why.
//!
//! It prints the function's AD mode plan ([`super::plan`]), the one reverse mode
//! follows; this file only words it and places each region at its source position.

use std::fmt::Write;

use super::plan::{AdPlan, CallMode, IfMode, LoopMode, Mode, TapeReason};
use super::recursion::NoSplit;
use super::tangent::tangent_type;
use crate::ir::{AdMode, FuncRef, Function, Module, Op, OpId, OpKind, Region, Type};

/// The explanation of `f`: one line per region (loops, ifs, calls), nested
/// regions indented, positions `line:column` in `source` (the text the spans of
/// `f` point into).
pub fn explain_function(module: &Module, f: FuncRef, source: &str) -> String {
    let func = &module.functions[f];
    let mut out = String::new();
    let header = match func.ad_mode {
        Some(AdMode::Tape) => "  @ad(tape): every loop that carries derivatives goes on the tape\n",
        Some(AdMode::Sct) => {
            "  @ad(sct): source transformation only; a loop that needs the tape is an error (E0155)\n"
        }
        None => "",
    };
    out.push_str(header);
    let mut ex = Explainer {
        module,
        plan: AdPlan::of(module, f),
        func,
        source,
        out: String::new(),
    };
    ex.region(&func.body, 1);
    if ex.out.is_empty() {
        out.push_str("  straight-line code: source transformation\n");
    } else {
        out.push_str(&ex.out);
    }
    out
}

struct Explainer<'a> {
    module: &'a Module,
    plan: AdPlan,
    func: &'a Function,
    source: &'a str,
    out: String,
}

/// `1 value`, `3 values`, or `values of run-time size`.
fn values(types: &[Type]) -> String {
    match types.iter().map(Type::static_size).sum::<Option<u64>>() {
        Some(1) => "1 value".into(),
        Some(n) => format!("{n} values"),
        None => "values of run-time size".into(),
    }
}

impl Explainer<'_> {
    /// `line:column` (1-based) of the loop keyword at or before `offset` on its
    /// line (`keyword`), else of `offset` itself.
    /// Whether the source at `offset` is the keyword `if`: the position a source `if`'s
    /// `scf.if` has (the lowering of `&&`, `||` and early exits makes others).
    fn source_if(&self, offset: usize) -> bool {
        let rest = self.source.get(offset..).unwrap_or("");
        rest.starts_with("if") && !rest[2..].starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
    }

    fn position(&self, offset: usize, keyword: &str) -> (usize, usize, bool) {
        let offset = offset.min(self.source.len());
        let line_start = self.source[..offset].rfind('\n').map_or(0, |i| i + 1);
        let line = self.source[..offset].matches('\n').count() + 1;
        let before = &self.source[line_start..offset];
        let at = |k: &str| {
            before
                .rfind(k)
                .filter(|&i| i == 0 || !before.as_bytes()[i - 1].is_ascii_alphanumeric())
        };
        let found = if keyword.is_empty() {
            None
        } else {
            at(keyword)
        };
        match found {
            Some(i) => (line, before[..i].chars().count() + 1, true),
            None => (line, before.chars().count() + 1, false),
        }
    }


    fn line(&mut self, depth: usize, text: String) {
        let _ = writeln!(self.out, "{}{text}", "  ".repeat(depth));
    }

    fn region(&mut self, r: &Region, depth: usize) {
        for &id in &r.ops {
            let op = &self.func.ops[id];
            let start = self.func.span(id).start as usize;
            match &op.kind {
                OpKind::While => {
                    // A `for` with `break`/`return` lowers to a `while`: name the
                    // keyword nearest before the loop's span on its line.
                    let kw = |k| {
                        Some(self.position(start, k))
                            .filter(|p| p.2)
                            .map(|p| (p.0, p.1))
                    };
                    let (what, (l, c)) = match (kw("while"), kw("for")) {
                        (Some(w), Some(f)) if f > w => ("for (with break or return)", f),
                        (Some(w), _) => ("while", w),
                        (None, Some(f)) => ("for (with break or return)", f),
                        (None, None) => {
                            let p = self.position(start, "");
                            ("while", (p.0, p.1))
                        }
                    };
                    let text = self.loop_text(id, op);
                    self.line(depth, format!("{what} at {l}:{c}: {text}"));
                    self.region(&op.regions[1], depth + 1);
                }
                OpKind::For => {
                    let (l, c, _) = self.position(start, "for");
                    let text = self.loop_text(id, op);
                    self.line(depth, format!("for at {l}:{c}: {text}"));
                    self.region(&op.regions[0], depth + 1);
                }
                OpKind::If if !self.source_if(start) => {
                    // An `if` the compiler made (`&&`, `||`, `return`, `break`, `continue`):
                    // not a region of the source; what it holds is listed as if inline.
                    for nr in &op.regions {
                        self.region(nr, depth);
                    }
                }
                OpKind::If => {
                    let (l, c, _) = self.position(start, "if");
                    let text = match self.plan.mode(id) {
                        Some(Mode::If(IfMode::Split)) => {
                            "split on the tape (it holds a recursive call: the forward pass pushes the condition, the reverse pass takes the same branch)"
                        }
                        Some(Mode::If(IfMode::Sct)) => {
                            "source transformation (the adjoint is an `if` on the same condition; each branch recomputes its values)"
                        }
                        _ => "no derivative flows through its results",
                    };
                    self.line(depth, format!("if at {l}:{c}: {text}"));
                    for nr in &op.regions {
                        self.region(nr, depth + 1);
                    }
                }
                OpKind::Call(g) => {
                    let (l, c, _) = self.position(start, "");
                    let name = self
                        .module
                        .functions
                        .get(*g)
                        .map_or("?", |h| h.name.as_str());
                    let text = if let Some(Mode::Call(m)) = self.plan.mode(id)
                        && m != CallMode::Derivative
                    {
                        recursion_text(m, name)
                    } else if self.module.is_operator_function(*g) {
                        "a derivative function, differentiated again by the same rules".to_string()
                    } else {
                        format!("the derivative of `{name}` (explained with that function)")
                    };
                    self.line(depth, format!("call `{name}` at {l}:{c}: {text}"));
                }
                _ => {}
            }
        }
    }

    fn carried_types(&self, op: &Op) -> Vec<Type> {
        op.results
            .iter()
            .map(|&v| self.func.ty(v).clone())
            .collect()
    }

    /// The words for a loop by source transformation: what its forward sweep stores per
    /// iteration (whole carried values, or, for a tensor the body writes element by element,
    /// the elements it overwrites: [`super::reverse::undo`]).
    fn sct_loop_text(&self, op: &Op) -> String {
        let plans: Vec<Option<super::reverse::undo::UndoPlan>> =
            (0..op.results.len()).map(|c| super::reverse::undo::plan(self.func, op, c)).collect();
        let whole: Vec<Type> = op.results.iter().zip(&plans).filter(|(_, p)| p.is_none()).map(|(&v, _)| self.func.ty(v).clone()).collect();
        let elements: usize = plans.iter().flatten().map(|p| p.inserts.len()).sum();
        let logs = plans.iter().flatten().count();
        if logs == 0 {
            return format!("source transformation (static trip count, {} stored per iteration)", values(&whole));
        }
        let plural = |n: usize, one: &str, many: &str| if n == 1 { one.to_string() } else { format!("{n} {many}") };
        let undo = format!(
            "{}: {} overwritten element{} per iteration instead of {}",
            if logs == 1 { "undo log" } else { "undo logs" },
            elements,
            if elements == 1 { "" } else { "s" },
            plural(logs, "the whole written tensor", "whole written tensors"),
        );
        if whole.is_empty() {
            format!("source transformation (static trip count; {undo})")
        } else {
            format!("source transformation (static trip count, {} stored per iteration; {undo})", values(&whole))
        }
    }

    /// The words for loop `id` (`op`) of the plan.
    fn loop_text(&self, id: OpId, op: &Op) -> String {
        let values = values(&self.carried_types(op));
        match self.plan.loop_mode(id) {
            LoopMode::Inactive if op.results.iter().any(|&v| tangent_type(self.func.ty(v)).is_some()) => {
                "no derivative flows (its carried values do not depend on the arguments)".into()
            }
            LoopMode::Inactive => "no derivative flows (no floating-point carried values)".into(),
            LoopMode::SctImpossible(TapeReason::TupleCarried) => {
                "error: needs the tape (tuple-valued carried values), but the function is marked @ad(sct) (E0155)".into()
            }
            LoopMode::SctImpossible(_) => {
                "error: needs the tape (trip count depends on data), but the function is marked @ad(sct) (E0155)".into()
            }
            LoopMode::Tape(TapeReason::DataDependentTrips) => format!(
                "tape (trip count depends on data; {values} pushed per iteration; the body is one tape node whose reverse pass is its compiled adjoint)"
            ),
            LoopMode::Tape(TapeReason::TupleCarried) => {
                format!("tape (tuple-valued carried values; {values} pushed per iteration)")
            }
            LoopMode::Tape(TapeReason::Requested) => format!("tape (@ad(tape); {values} pushed per iteration)"),
            LoopMode::Sct => self.sct_loop_text(op),
        }
    }
}

/// The words for a call of `name` back into the function's own cycle.
fn recursion_text(mode: CallMode, name: &str) -> String {
    const RECOMPUTE: &str = "source transformation of the callee, which recomputes its primal at every level (O(depth²) work)";
    match mode {
        CallMode::Derivative => format!("the derivative of `{name}` (explained with that function)"),
        CallMode::RecursionInactive => "recursion: no derivative flows through its result".into(),
        CallMode::RecursionSplit => {
            "recursion: split on the tape, O(depth) (the forward pass pushes each level's live values; the reverse pass pops them, recomputes and sweeps that level, and calls the callee's reverse pass)".into()
        }
        CallMode::RecursionRecompute { own: None, callee } => {
            let why = match callee {
                Some(NoSplit::Sct) => "it is marked @ad(sct)",
                Some(NoSplit::CallInLoop) => "it calls back from inside a loop",
                _ => "it cannot be split",
            };
            format!("recursion: `{name}` is not split on the tape ({why}): {RECOMPUTE}")
        }
        CallMode::RecursionRecompute { own: Some(NoSplit::Sct), .. } => {
            format!("recursion: {RECOMPUTE}; @ad(sct) keeps it off the tape")
        }
        CallMode::RecursionRecompute { own: Some(NoSplit::CallInLoop), .. } => format!(
            "recursion: {RECOMPUTE}; not split on the tape because a recursive call of this function sits inside a loop"
        ),
        CallMode::RecursionRecompute { own: Some(_), .. } => format!("recursion: {RECOMPUTE}"),
    }
}
