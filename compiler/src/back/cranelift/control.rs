//! Control flow and calls: `If`/`For`/`While` become Cranelift blocks whose
//! parameters carry the flattened loop-carried and result values; loops also
//! stop once a run-time error is recorded. Calls pass the context first. Each
//! function's entry checks the call depth and the stack pointer against the
//! context's limits and, past them, records `RecursionLimit` and returns zeros;
//! once any error is recorded, calls return zeros at once.

use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, condcodes::IntCC, types};
use mad_runtime::jit::{MAX_CALL_DEPTH, TensorOp};
use mad_runtime::jit::context::{OFFSET_DEPTH, OFFSET_STACK_LIMIT};

use super::JitError;
use super::imports::Routine;
use super::layout::clif_types;
use super::lower::{FnLower, unsupported};
use crate::analysis::op_count;
use crate::ir::{FuncRef, Op, Region, Type, ValueId};

/// What each copy of a versioned `for` loop ([`super::version`]) shares.
struct ForCopy<'r> {
    body: &'r Region,
    hi: Value,
    result_tys: &'r [Type],
    carried_tys: &'r [types::Type],
    mark: Option<Value>,
    exit: cranelift_codegen::ir::Block,
    poll: bool,
}

impl FnLower<'_, '_> {
    fn types_of(&self, vs: &[ValueId]) -> Vec<types::Type> {
        vs.iter().flat_map(|&v| clif_types(self.ty(v))).collect()
    }

    /// Binds a region's arguments to consecutive slots.
    fn bind_args(&mut self, args: &[ValueId], slots: &[Value]) -> Result<(), JitError> {
        self.set_many(args, slots)
    }

    fn region<'r>(&self, op: &'r Op, i: usize) -> Result<&'r Region, JitError> {
        op.regions.get(i).ok_or_else(|| unsupported(format!("`{}` is missing a region", op.kind.name())))
    }

    pub fn lower_call(&mut self, callee: FuncRef, args: &[ValueId], results: &[ValueId]) -> Result<(), JitError> {
        let id = *self.user_ids.get(callee.index()).ok_or_else(|| unsupported("call of an unknown function"))?;
        let fr = match self.user_refs.get(&callee.index()) {
            Some(fr) => *fr,
            None => {
                use cranelift_module::Module;
                let fr = self.module.declare_func_in_func(id, self.b.func);
                self.user_refs.insert(callee.index(), fr);
                fr
            }
        };
        let callee_f = self.module_funcs.get(callee).ok_or_else(|| unsupported("call of an unknown function"))?;
        let params = callee_f.param_types();
        let ret = callee_f.ret.clone();
        let mut all = vec![self.ctx];
        all.extend(self.get_many_as(args, &params)?);
        // The call's source site: a callee that fails on entry (too deep a recursion) records
        // its error at this call, as the interpreter does.
        self.store_site();
        let inst = self.b.ins().call(fr, &all);
        let out = self.b.inst_results(inst).to_vec();
        match results {
            [r] => self.set_many_from(&[*r], &[ret], &out),
            _ => Err(unsupported("a call has one result")),
        }
    }

    pub fn lower_print(&mut self, v: ValueId, results: &[ValueId]) -> Result<(), JitError> {
        let id = self.tables.layout_id(self.ty(v));
        let slots = self.get(v)?;
        let addr = self.spill(&slots, 1);
        let idv = self.b.ins().iconst(types::I32, id as i64);
        self.call_routine(Routine::Print, &[self.ctx, idv, addr])?;
        self.set_many(results, &[])
    }

    pub fn lower_print_str(&mut self, text: &str, results: &[ValueId]) -> Result<(), JitError> {
        let boxed: Box<str> = text.into();
        let (ptr, len) = (boxed.as_ptr() as i64, boxed.len() as i64);
        self.tables.strings.push(boxed);
        let ptr = self.b.ins().iconst(types::I64, ptr);
        let len = self.b.ins().iconst(types::I64, len);
        self.call_routine(Routine::PrintStr, &[self.ctx, ptr, len])?;
        self.set_many(results, &[])
    }

    pub fn lower_if(&mut self, op: &Op) -> Result<(), JitError> {
        let cond = self.get1(*op.operands.first().ok_or_else(|| unsupported("scf.if needs a condition"))?)?;
        let (then_r, else_r) = (self.region(op, 0)?, self.region(op, 1)?);
        if self.b.func.dfg.value_type(cond).is_vector() {
            return self.lower_lane_if(op, cond, then_r, else_r);
        }
        let then_b = self.b.create_block();
        let else_b = self.b.create_block();
        let merge = self.b.create_block();
        let result_tys: Vec<Type> = op.results.iter().map(|&r| self.ty(r).clone()).collect();
        for t in self.types_of(&op.results) {
            self.b.append_block_param(merge, t);
        }
        self.b.ins().brif(cond, then_b, &[], else_b, &[]);
        for (block, region) in [(then_b, then_r), (else_b, else_r)] {
            self.b.switch_to_block(block);
            self.lower_ops(&region.ops)?;
            let ys = self.get_many_as(&region.yields, &result_tys)?;
            self.b.ins().jump(merge, &Self::block_args(&ys));
        }
        self.b.switch_to_block(merge);
        let params = self.b.block_params(merge).to_vec();
        self.set_many(&op.results, &params)
    }

    /// An `if` whose condition differs per lane ([`FnLower::wide`]): both branches run and
    /// each result is selected per lane (no run-time error may be raised there, see
    /// [`FnLower::converting`]). When one branch is much smaller than the other (a barrier's
    /// far side), lanes that both take it run it alone, so pairs of far elements cost no
    /// more than in the one-element loop. Inside branches that run for both lanes, nested
    /// per-lane `if`s are selects.
    fn lower_lane_if(&mut self, op: &Op, cond: Value, then_r: &Region, else_r: &Region) -> Result<(), JitError> {
        let result_tys: Vec<Type> = op.results.iter().map(|&r| self.ty(r).clone()).collect();
        // A branch's results, `bool`s as per-lane masks so that every path agrees on types.
        let branch = |me: &mut Self, region: &Region| -> Result<Vec<Value>, JitError> {
            me.lower_ops(&region.ops)?;
            let ys = me.get_many_as(&region.yields, &result_tys)?;
            Ok(ys
                .into_iter()
                .map(|y| if me.b.func.dfg.value_type(y) == types::I8 { me.lane_mask(y) } else { y })
                .collect())
        };
        let selected = |me: &mut Self| -> Result<Vec<Value>, JitError> {
            me.converting += 1;
            let both = branch(me, then_r).and_then(|t| Ok((t, branch(me, else_r)?)));
            me.converting -= 1;
            let (t, e) = both?;
            Ok(t.iter().zip(&e).map(|(&x, &y)| me.select_slot(cond, x, y)).collect())
        };
        let (then_size, else_size) = (op_count(self.f, then_r), op_count(self.f, else_r));
        let small_then = 4 * then_size <= else_size;
        if self.converting > 0 || !(small_then || 4 * else_size <= then_size) {
            let picked = selected(self)?;
            return self.set_many(&op.results, &picked);
        }
        let (alone_b, both_b, merge) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        if small_then {
            let all = self.b.ins().vall_true(cond);
            self.b.ins().brif(all, alone_b, &[], both_b, &[]);
        } else {
            let any = self.b.ins().vany_true(cond);
            self.b.ins().brif(any, both_b, &[], alone_b, &[]);
        }
        self.b.switch_to_block(alone_b);
        let ys = branch(self, if small_then { then_r } else { else_r })?;
        for &y in &ys {
            let t = self.b.func.dfg.value_type(y);
            self.b.append_block_param(merge, t);
        }
        self.b.ins().jump(merge, &Self::block_args(&ys));
        self.b.switch_to_block(both_b);
        let ys = selected(self)?;
        self.b.ins().jump(merge, &Self::block_args(&ys));
        self.b.switch_to_block(merge);
        let params = self.b.block_params(merge).to_vec();
        self.set_many(&op.results, &params)
    }

    pub fn lower_for(&mut self, op: &Op) -> Result<(), JitError> {
        let [lo, hi, ref init @ ..] = op.operands[..] else { return Err(unsupported("scf.for needs bounds")) };
        let body = self.region(op, 0)?;
        let (lo, hi) = (self.get1(lo)?, self.get1(hi)?);
        let result_tys: Vec<Type> = op.results.iter().map(|&r| self.ty(r).clone()).collect();
        let mut init = self.get_many_as(init, &result_tys)?;
        // Carried tensors another value still holds: the loop updates a copy in place.
        if let Some(id) = self.cur_op {
            let mut at = 0;
            for (k, ty) in result_tys.iter().enumerate() {
                let n = clif_types(ty).len();
                if self.info.inplace.copied_inits.contains(&(id, k)) {
                    let layout = crate::codegen::layout::flat_layout(ty);
                    let copied = self.apply_slots(TensorOp::Copy, vec![layout.clone()], &init[at..at + n], layout)?;
                    init.splice(at..at + n, copied);
                }
                at += n;
            }
        }
        let carried_tys = self.types_of(&op.results);
        let exit = self.b.create_block();
        for &t in &carried_tys {
            self.b.append_block_param(exit, t);
        }
        let mut start = vec![lo];
        start.extend(init);
        // `cur_op` is this loop until its body is lowered.
        let loop_id = self.cur_op;
        let mark = match loop_id {
            Some(id) if self.releases && self.info.release.contains(&id) => Some(self.arena_mark()?),
            _ => None,
        };
        let views = self.enter_loop(op)?;
        let poll = loop_id.is_some_and(|id| self.info.polls.contains(&id));
        let copy = ForCopy { body, hi, result_tys: &result_tys, carried_tys: &carried_tys, mark, exit, poll };
        match self.proved_reads(loop_id, lo, hi)? {
            Some((safe, proved)) => {
                let fast = self.for_header(&carried_tys);
                let checked = self.for_header(&carried_tys);
                // Each copy is entered from a block of its own: Cranelift
                // hoists loop-invariant loads of a loop to the block that
                // dominates its header, and the fast copy's proved loads must
                // not run on the checked path.
                let (fast_in, checked_in) = (self.b.create_block(), self.b.create_block());
                self.b.ins().brif(safe, fast_in, &[], checked_in, &[]);
                let args = Self::block_args(&start);
                for (pre, header) in [(fast_in, fast), (checked_in, checked)] {
                    self.b.switch_to_block(pre);
                    self.b.ins().jump(header, &args);
                }
                let outer = std::mem::replace(&mut self.unchecked, proved);
                let lowered = self.lower_for_copy(&copy, fast);
                self.unchecked = outer;
                lowered?;
                self.lower_for_copy(&copy, checked)?;
            }
            None => {
                let header = self.for_header(&carried_tys);
                self.b.ins().jump(header, &Self::block_args(&start));
                self.lower_for_copy(&copy, header)?;
            }
        }

        self.b.switch_to_block(exit);
        self.leave_loop(views);
        let out = self.b.block_params(exit).to_vec();
        self.set_many(&op.results, &out)
    }

    /// A loop header block: the induction variable, then the carried slots.
    fn for_header(&mut self, carried_tys: &[types::Type]) -> cranelift_codegen::ir::Block {
        let header = self.b.create_block();
        self.b.append_block_param(header, types::I64);
        for &t in carried_tys {
            self.b.append_block_param(header, t);
        }
        header
    }

    /// Fills `header` (made by [`FnLower::for_header`]) and the body of one
    /// copy of a `for` loop, leaving to `copy.exit`.
    fn lower_for_copy(&mut self, copy: &ForCopy<'_>, header: cranelift_codegen::ir::Block) -> Result<(), JitError> {
        let body = copy.body;
        let body_b = self.b.create_block();
        self.b.switch_to_block(header);
        let params = self.b.block_params(header).to_vec();
        let (i, carried) = (params[0], params[1..].to_vec());
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, copy.hi);
        let go = if copy.poll {
            let ok = self.no_error();
            self.b.ins().band(more, ok)
        } else {
            more
        };
        self.b.ins().brif(go, body_b, &[], copy.exit, &Self::block_args(&carried));

        self.b.switch_to_block(body_b);
        let mut arg_tys = vec![Type::I64];
        arg_tys.extend(copy.result_tys.iter().cloned());
        self.set_many_from(&body.args, &arg_tys, &params)?;
        self.lower_ops(&body.ops)?;
        let mut next = vec![self.b.ins().iadd_imm_s(i, 1)];
        next.extend(self.get_many_as(&body.yields, copy.result_tys)?);
        if let Some(mark) = copy.mark {
            self.arena_release(mark, &next[1..])?;
        }
        debug_assert_eq!(next.len() - 1, copy.carried_tys.len());
        self.b.ins().jump(header, &Self::block_args(&next));
        Ok(())
    }

    pub fn lower_while(&mut self, op: &Op) -> Result<(), JitError> {
        let (cond_r, body) = (self.region(op, 0)?, self.region(op, 1)?);
        let result_tys: Vec<Type> = op.results.iter().map(|&r| self.ty(r).clone()).collect();
        let init = self.get_many_as(&op.operands, &result_tys)?;
        let carried_tys = self.types_of(&op.results);
        let header = self.b.create_block();
        let body_b = self.b.create_block();
        let exit = self.b.create_block();
        for &t in &carried_tys {
            self.b.append_block_param(header, t);
            self.b.append_block_param(exit, t);
        }
        let views = self.enter_loop(op)?;
        self.b.ins().jump(header, &Self::block_args(&init));

        self.b.switch_to_block(header);
        let carried = self.b.block_params(header).to_vec();
        self.set_many_from(&cond_r.args, &result_tys, &carried)?;
        self.lower_ops(&cond_r.ops)?;
        let c = self.get1(*cond_r.yields.first().ok_or_else(|| unsupported("scf.while condition yields nothing"))?)?;
        let ok = self.no_error();
        let go = self.b.ins().band(c, ok);
        self.b.ins().brif(go, body_b, &[], exit, &Self::block_args(&carried));

        self.b.switch_to_block(body_b);
        self.set_many_from(&body.args, &result_tys, &carried)?;
        self.lower_ops(&body.ops)?;
        let next = self.get_many_as(&body.yields, &result_tys)?;
        self.b.ins().jump(header, &Self::block_args(&next));

        self.b.switch_to_block(exit);
        self.leave_loop(views);
        let out = self.b.block_params(exit).to_vec();
        self.set_many(&op.results, &out)
    }

    /// Lowers the trampoline of the function with its body inline: parameters
    /// loaded from the argument slots, results stored to the result slots. The
    /// host enters a trampoline only with a fresh or reset context (no error,
    /// depth 0) and a stack limit far below its own frame, so the entry checks
    /// of [`FnLower::lower_body`] cannot fire and are left out; the depth is 1
    /// while the body runs, as in the function called from depth 0, unless the
    /// body calls no compiled function ([`crate::codegen::leaf`]), which leaves it at 0.
    pub fn lower_trampoline_body(&mut self) -> Result<(), JitError> {
        self.lower_entry_body(false)
    }

    /// The body of a register entry ([`super::abi::register_entry`]): the
    /// function's own signature, its body inline as in a trampoline (no
    /// entry checks), arguments and results in registers.
    pub fn lower_register_entry_body(&mut self) -> Result<(), JitError> {
        self.lower_entry_body(true)
    }

    fn lower_entry_body(&mut self, in_registers: bool) -> Result<(), JitError> {
        let f = self.f;
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let p = self.b.block_params(entry).to_vec();
        self.ctx = p[0];
        let slots = if in_registers {
            p[1..].to_vec()
        } else {
            let tys: Vec<types::Type> = f.param_types().iter().flat_map(clif_types).collect();
            self.load_slots(p[1], &tys)
        };
        self.bind_args(&f.body.args, &slots)?;
        // Only the entries of called functions read the depth: a leaf's
        // body leaves it at 0.
        let leaf = self.info.calls_nothing;
        if !leaf {
            let one = self.b.ins().iconst(types::I64, 1);
            self.b.ins().store(MemFlagsData::trusted(), one, self.ctx, OFFSET_DEPTH);
        }
        self.lower_ops(&f.body.ops)?;
        let ret = self.get_many_as(&f.body.yields, std::slice::from_ref(&f.ret))?;
        if ret.len() != clif_types(&f.ret).len() {
            return Err(unsupported(format!("`{}` yields a value of the wrong type", f.name)));
        }
        if !leaf {
            let zero = self.b.ins().iconst(types::I64, 0);
            self.b.ins().store(MemFlagsData::trusted(), zero, self.ctx, OFFSET_DEPTH);
        }
        if in_registers {
            self.b.ins().return_(&ret);
        } else {
            for (i, v) in ret.iter().enumerate() {
                self.b.ins().store(MemFlagsData::trusted(), *v, p[2], 8 * i as i32);
            }
            self.b.ins().return_(&[]);
        }
        Ok(())
    }

    /// Lowers the whole function body: depth and stack checks, the body, the return.
    pub fn lower_body(&mut self) -> Result<(), JitError> {
        let f = self.f;
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let params = self.b.block_params(entry).to_vec();
        self.ctx = params[0];
        self.bind_args(&f.body.args, &params[1..])?;

        let depth = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, OFFSET_DEPTH);
        let limit = self.b.ins().load(types::I64, MemFlagsData::trusted(), self.ctx, OFFSET_STACK_LIMIT);
        let sp = self.b.ins().get_stack_pointer(types::I64);
        let too_deep = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, depth, MAX_CALL_DEPTH as i64);
        let too_low = self.b.ins().icmp(IntCC::UnsignedLessThan, sp, limit);
        let limits = self.b.ins().bor(too_deep, too_low);
        // Once an error is recorded, calls return at once (the result is discarded).
        let ok = self.no_error();
        let failed = self.b.ins().bxor_imm_s(ok, 1);
        let bail = self.b.ins().bor(limits, failed);
        let bail_b = self.b.create_block();
        let body_b = self.b.create_block();
        self.b.set_cold_block(bail_b);
        self.b.ins().brif(bail, bail_b, &[], body_b, &[]);

        let ret_tys = clif_types(&f.ret);
        self.b.switch_to_block(bail_b);
        self.call_routine(Routine::ErrorRecursion, &[self.ctx])?;
        let zeros: Vec<Value> = ret_tys.iter().map(|t| self.zero(*t)).collect();
        self.b.ins().return_(&zeros);

        self.b.switch_to_block(body_b);
        let deeper = self.b.ins().iadd_imm_s(depth, 1);
        self.b.ins().store(MemFlagsData::trusted(), deeper, self.ctx, OFFSET_DEPTH);
        self.lower_ops(&f.body.ops)?;
        let ret = self.get_many_as(&f.body.yields, std::slice::from_ref(&f.ret))?;
        if ret.len() != ret_tys.len() {
            return Err(unsupported(format!("`{}` yields a value of the wrong type", f.name)));
        }
        self.b.ins().store(MemFlagsData::trusted(), depth, self.ctx, OFFSET_DEPTH);
        self.b.ins().return_(&ret);
        Ok(())
    }
}

