//! Values computed in front of a loop stay in front of it.
//!
//! Cranelift's optimizer places every pure instruction at its first use and
//! does not move it back out of a loop, so a value the IR computes once before
//! a loop ([`crate::passes::licm`]) would be recomputed on every trip, and so
//! would the header reads of a heap tensor indexed in the loop. Before jumping
//! into a loop, [`FnLower::enter_loop`]:
//!
//! - stores every instruction result defined outside the loop and read inside
//!   it into a stack slot of its own (one store per loop entry). A store is an
//!   effect, so the value is computed where the store is, in front of the loop,
//!   and the loop's uses read that one computation. Constants are left alone:
//!   Cranelift rematerializes them next to each use anyway;
//! - computes the header view ([`super::heap::HeapView`]: extents and element
//!   address) of every heap tensor defined outside the loop and indexed inside
//!   it, stores its values the same way, and lets the loop's element reads use
//!   it. [`FnLower::leave_loop`] forgets the views after the loop.

use std::collections::HashSet;

use cranelift_codegen::ir::{
    InstBuilder, InstructionData, MemFlagsData, Opcode, StackSlotData, StackSlotKind, Value,
    ValueDef,
};
use mad_runtime::jit::context::HEAP_INLINE_RANK;
use mad_runtime::jit::layout::FlatLayout;

use super::JitError;
use super::lower::FnLower;
use crate::codegen::layout::flat_layout;
use crate::analysis::defined_in;
use crate::ir::{Function, Op, OpKind, Region, ValueId};

/// The most values one loop entry stores (beyond, the rest are left as they are).
const MAX_PINNED: usize = 64;


/// The operands read in `r` (nested regions included) and the tensors indexed there.
fn reads_in(f: &Function, r: &Region, operands: &mut Vec<ValueId>, indexed: &mut Vec<ValueId>) {
    for &id in &r.ops {
        let op = &f.ops[id];
        operands.extend(op.operands.iter().copied());
        operands.extend(op.regions.iter().flat_map(|nr| nr.yields.iter().copied()));
        if op.kind == OpKind::Index
            && let Some(&t) = op.operands.first()
        {
            indexed.push(t);
        }
        for nr in &op.regions {
            reads_in(f, nr, operands, indexed);
        }
    }
    operands.extend(r.yields.iter().copied());
}


impl FnLower<'_, '_> {
    /// Whether `v` is an instruction result other than a constant.
    fn computed(&self, v: Value) -> bool {
        let dfg = &self.b.func.dfg;
        match dfg.value_def(v) {
            ValueDef::Result(inst, _) => !matches!(
                dfg.insts[inst],
                InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    ..
                } | InstructionData::UnaryIeee64 {
                    opcode: Opcode::F64const,
                    ..
                } | InstructionData::UnaryIeee32 {
                    opcode: Opcode::F32const,
                    ..
                }
            ),
            _ => false,
        }
    }

    /// Prepares the loop `op` (called in front of it): keeps the values it
    /// reads from outside in front of it and records the header views of the
    /// heap tensors it indexes. Returns the tensors whose views were added.
    pub fn enter_loop(&mut self, op: &Op) -> Result<Vec<ValueId>, JitError> {
        let f = self.f;
        let mut inside = HashSet::new();
        let (mut operands, mut indexed) = (Vec::new(), Vec::new());
        for r in &op.regions {
            defined_in(f, r, &mut inside);
            reads_in(f, r, &mut operands, &mut indexed);
        }
        let mut added = Vec::new();
        let mut pinned: Vec<Value> = Vec::new();
        let mut seen_t = HashSet::new();
        for t in indexed {
            if inside.contains(&t)
                || self.heap_views.contains_key(&t)
                || !seen_t.insert(t)
                || self.info.inplace.mutable.contains(&t)
            {
                continue;
            }
            let FlatLayout::Heap { shape, .. } = flat_layout(self.ty(t)) else {
                continue;
            };
            if shape.len() > HEAP_INLINE_RANK
                || self.vals.get(t.index()).is_none_or(|v| v.is_none())
            {
                continue;
            }
            let view = self.heap_view(t, shape.len())?;
            pinned.extend(view.extents.iter().copied());
            pinned.push(view.base);
            self.heap_views.insert(t, view);
            added.push(t);
        }
        let mut seen = HashSet::new();
        for v in operands {
            if inside.contains(&v) || !seen.insert(v) {
                continue;
            }
            let Some(Some(slots)) = self.vals.get(v.index()) else {
                continue;
            };
            for &s in slots.clone().iter() {
                if self.computed(s) {
                    pinned.push(s);
                }
            }
        }
        let mut unique = HashSet::new();
        pinned.retain(|v| unique.insert(*v));
        pinned.truncate(MAX_PINNED);
        if !pinned.is_empty() {
            let ss = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                8 * pinned.len() as u32,
                3,
            ));
            let addr = self
                .b
                .ins()
                .stack_addr(cranelift_codegen::ir::types::I64, ss, 0);
            for (k, v) in pinned.into_iter().enumerate() {
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, addr, 8 * k as i32);
            }
        }
        Ok(added)
    }

    /// Forgets the header views [`FnLower::enter_loop`] added (after the loop).
    pub fn leave_loop(&mut self, added: Vec<ValueId>) {
        for t in added {
            self.heap_views.remove(&t);
        }
    }
}
