//! `scf.if` clean-up: results nobody uses are dropped, results that repeat another
//! result (or a value from outside the `if`) are replaced by it, and two adjacent
//! `scf.if`s on the same condition become one.
//!
//! Forward mode over a reverse pass leaves both behind: the tangents of an `if`'s value
//! that only the Hessian's caller would read, and one `if` computing the value and its
//! tangents next to another computing the gradient and its tangents, each repeating the
//! branch's shared work (a barrier's `if det(J) <= 0 { inf } else { … }` is
//! differentiated into two such `if`s). Once fused, [`super::cse`] merges the repeated
//! work inside each branch.
//!
//! Differentiation also leaves results that repeat: a Hessian's symmetric tangents, or
//! the adjoint of a value read twice, yielded by both branches at two positions. Every
//! value that crosses an `if` is live at its join (after the code generator's lowering,
//! a block parameter each), so a repeat costs a register or a spill slot.
//!
//! The rewrites keep every value bit for bit and every run-time error in order:
//! * a dropped result is one whose yields only fed it; the ops computing them become
//!   dead for [`super::dce`] unless something else uses them;
//! * a result whose every branch yields the same values as an earlier result's is that
//!   result; a result whose every branch yields one value `v` from outside the `if` is
//!   `v` (it is visible there, as the branches read it);
//! * fusing `A` and the op right after it, `B` (same condition value, no effects in
//!   either), runs each branch of `A` then the same branch of `B`, as before; `B`'s
//!   branches read `A`'s results as the values that branch of `A` yields.

use std::collections::{HashMap, HashSet};

use super::subst;
use crate::analysis::defined_in;
use crate::ir::{Function, OpId, OpKind, Region, ValueId};

/// Drops unused `scf.if` results and fuses adjacent `scf.if`s on one condition, in every
/// region of `f`; returns whether anything changed.
pub fn fuse_ifs(f: &mut Function) -> bool {
    let mut used = HashSet::new();
    crate::analysis::used_in(f, &f.body, &mut used);
    let mut body = std::mem::take(&mut f.body);
    let mut changed = prune_region(f, &mut body, &used);
    changed |= fuse_region(f, &mut body);
    let mut same = HashMap::new();
    repeats_in_region(f, &body, &mut same);
    f.body = body;
    if !same.is_empty() {
        subst::apply(f, &same);
        changed = true;
    }
    changed
}


/// Maps, in `r` and below, each `scf.if` result that repeats an earlier result of the
/// same `if` (every branch yields the same value at both positions) to that result, and
/// each result whose branches all yield one value from outside the `if` to that value.
fn repeats_in_region(f: &Function, r: &Region, same: &mut HashMap<ValueId, ValueId>) {
    for &id in &r.ops {
        let op = &f.ops[id];
        for nr in &op.regions {
            repeats_in_region(f, nr, same);
        }
        if op.kind != OpKind::If
            || op.regions.len() != 2
            || op
                .regions
                .iter()
                .any(|nr| nr.yields.len() != op.results.len())
        {
            continue;
        }
        let mut inside = HashSet::new();
        for nr in &op.regions {
            defined_in(f, nr, &mut inside);
        }
        let mut first: HashMap<(ValueId, ValueId), ValueId> = HashMap::new();
        for (i, &res) in op.results.iter().enumerate() {
            let key = (op.regions[0].yields[i], op.regions[1].yields[i]);
            if key.0 == key.1 && !inside.contains(&key.0) {
                same.insert(res, key.0);
            } else if let Some(&earlier) = first.get(&key) {
                same.insert(res, earlier);
            } else {
                first.insert(key, res);
            }
        }
    }
}

/// Removes, in `r` and below, the results of `scf.if`s that `used` does not hold.
fn prune_region(f: &mut Function, r: &mut Region, used: &HashSet<ValueId>) -> bool {
    let mut changed = false;
    for &id in &r.ops {
        let mut regions = std::mem::take(&mut f.ops[id].regions);
        for nr in &mut regions {
            changed |= prune_region(f, nr, used);
        }
        let op = &mut f.ops[id];
        if op.kind == OpKind::If && regions.len() == 2 {
            let keep: Vec<bool> = op.results.iter().map(|v| used.contains(v)).collect();
            if keep.iter().any(|k| !k) && regions.iter().all(|nr| nr.yields.len() == keep.len()) {
                let kept = |xs: &[ValueId]| {
                    xs.iter()
                        .zip(&keep)
                        .filter(|(_, k)| **k)
                        .map(|(v, _)| *v)
                        .collect()
                };
                op.results = kept(&op.results);
                for nr in &mut regions {
                    nr.yields = kept(&nr.yields);
                }
                changed = true;
            }
        }
        f.ops[id].regions = regions;
    }
    changed
}

/// Whether the ops of `r` (and below) have no effect.
fn pure(f: &Function, r: &Region) -> bool {
    r.ops.iter().all(|&id| {
        let op = &f.ops[id];
        !op.kind.has_side_effect() && op.regions.iter().all(|nr| pure(f, nr))
    })
}

/// Fuses adjacent `scf.if`s on one condition in `r` and below.
fn fuse_region(f: &mut Function, r: &mut Region) -> bool {
    let mut changed = false;
    for &id in &r.ops {
        let mut regions = std::mem::take(&mut f.ops[id].regions);
        for nr in &mut regions {
            changed |= fuse_region(f, nr);
        }
        f.ops[id].regions = regions;
    }
    let mut out: Vec<OpId> = Vec::with_capacity(r.ops.len());
    for id in std::mem::take(&mut r.ops) {
        if let Some(&prev) = out.last()
            && fusable(f, prev, id)
        {
            fuse_into(f, prev, id);
            changed = true;
            continue;
        }
        out.push(id);
    }
    r.ops = out;
    changed
}

fn fusable(f: &Function, a: OpId, b: OpId) -> bool {
    let (x, y) = (&f.ops[a], &f.ops[b]);
    x.kind == OpKind::If
        && y.kind == OpKind::If
        && x.operands.len() == 1
        && x.operands == y.operands
        && x.regions.len() == 2
        && y.regions.len() == 2
        && x.regions
            .iter()
            .chain(&y.regions)
            .all(|nr| nr.args.is_empty() && pure(f, nr))
}

/// Appends `b`'s branches and results to `a`'s; `b`'s ops read `a`'s results as the
/// values the same branch of `a` yields. `b` leaves every region (its handle stays unused).
fn fuse_into(f: &mut Function, a: OpId, b: OpId) {
    let mut b_op = std::mem::replace(
        &mut f.ops[b],
        crate::ir::Op {
            kind: OpKind::Tuple,
            operands: vec![],
            results: vec![],
            regions: vec![],
        },
    );
    let a_results = f.ops[a].results.clone();
    let mut a_regions = std::mem::take(&mut f.ops[a].regions);
    for (ar, mut br) in a_regions.iter_mut().zip(std::mem::take(&mut b_op.regions)) {
        let map: HashMap<ValueId, ValueId> = a_results
            .iter()
            .copied()
            .zip(ar.yields.iter().copied())
            .collect();
        subst::apply_in_region(f, &mut br, &map);
        ar.ops.extend(br.ops);
        ar.yields.extend(br.yields);
    }
    let a_op = &mut f.ops[a];
    a_op.regions = a_regions;
    a_op.results.extend(b_op.results);
}

#[cfg(test)]
mod tests {
    use crate::ir::parse::parse_module;
    use crate::ir::print::print_function;

    #[test]
    fn fuses_two_ifs_on_one_condition_and_drops_unused_results() {
        let mut m = parse_module(
            "func @f(%x: f64) -> f64 {
  %z = const 0.0 : f64
  %c = le %x, %z : bool
  %a, %da = scf.if %c : (f64, f64) {
    %i = const inf : f64
    yield %i, %z
  } else {
    %s = mul %x, %x : f64
    %t = add %s, %x : f64
    yield %s, %t
  }
  %b = scf.if %c : f64 {
    yield %a
  } else {
    %s2 = mul %x, %x : f64
    %u = add %s2, %a : f64
    yield %u
  }
  return %b
}",
        )
        .unwrap();
        let f = m.find("f").unwrap();
        crate::passes::cleanup(&mut m, f).unwrap();
        let text = print_function(&m, f);
        assert_eq!(text.matches("scf.if").count(), 1, "{text}");
        assert_eq!(text.matches("mul").count(), 1, "{text}");
        assert!(
            !text.contains("add %s, %x") && !text.contains(", %da"),
            "{text}"
        );
    }

    #[test]
    fn repeated_results_and_outside_values_leave_the_join() {
        let mut m = parse_module(
            "func @f(%x: f64, %y: f64) -> f64 {
  %z = const 0.0 : f64
  %c = le %x, %z : bool
  %a, %b, %d, %e = scf.if %c : (f64, f64, f64, f64) {
    yield %z, %z, %y, %z
  } else {
    %s = mul %x, %x : f64
    yield %s, %s, %y, %x
  }
  %t = add %a, %b : f64
  %u = add %t, %d : f64
  %w = add %u, %e : f64
  return %w
}",
        )
        .unwrap();
        let f = m.find("f").unwrap();
        crate::passes::cleanup(&mut m, f).unwrap();
        let text = print_function(&m, f);
        // %b repeats %a, %d is %y on both sides; %e differs from %a in the else branch.
        assert!(text.contains(": (f64, f64) {"), "{text}");
        assert!(text.contains("%4, %5 = scf.if"), "{text}");
        assert!(text.contains("add %4, %4"), "{text}");
        assert!(text.contains("add %7, %1"), "{text}");
    }

    #[test]
    fn keeps_apart_ifs_on_different_conditions() {
        let mut m = parse_module(
            "func @f(%x: f64) -> f64 {
  %z = const 0.0 : f64
  %c = le %x, %z : bool
  %d = ge %x, %z : bool
  %a = scf.if %c : f64 {
    yield %z
  } else {
    yield %x
  }
  %b = scf.if %d : f64 {
    yield %a
  } else {
    yield %x
  }
  return %b
}",
        )
        .unwrap();
        let f = m.find("f").unwrap();
        crate::passes::cleanup(&mut m, f).unwrap();
        assert_eq!(print_function(&m, f).matches("scf.if").count(), 2);
    }
}
