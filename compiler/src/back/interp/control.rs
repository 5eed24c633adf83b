//! Regions and structured control flow: `scf.if`, `scf.for`, `scf.while`.

use super::Machine;
use super::frame::Frame;
use crate::ir::{Function, Op, Region};
use mad_runtime::{RtError, Value};

impl Machine<'_> {
    /// Runs the ops of `region` (its arguments already bound) and returns its yields. A
    /// yield defined in the region (one of its arguments or op results) is moved out: nothing
    /// reads it after the region; one defined outside is copied.
    pub(super) fn run_region(
        &mut self,
        func: &Function,
        frame: &mut Frame,
        region: &Region,
    ) -> Result<Vec<Value>, RtError> {
        for &op in &region.ops {
            self.eval_op(func, frame, op)?;
        }
        let mut out = Vec::with_capacity(region.yields.len());
        for (j, &y) in region.yields.iter().enumerate() {
            let inside = region.args.contains(&y)
                || region.ops.iter().any(|&o| func.ops[o].results.contains(&y));
            // A value yielded twice is copied at its first yield.
            let again = region.yields[j + 1..].contains(&y);
            out.push(if inside && !again { frame.take(y)? } else { frame.get(y)?.clone() });
        }
        Ok(out)
    }

    fn region_of(op: &Op, i: usize) -> Result<&Region, RtError> {
        op.regions
            .get(i)
            .ok_or_else(|| RtError::Other(format!("`{}` lacks region {i}", op.kind.name())))
    }

    pub(super) fn eval_if(
        &mut self,
        func: &Function,
        frame: &mut Frame,
        op: &Op,
        operands: Vec<Value>,
    ) -> Result<Vec<Value>, RtError> {
        let taken = match operands.as_slice() {
            [Value::Bool(true)] => 0,
            [Value::Bool(false)] => 1,
            _ => return Err(RtError::BadOperand("scf.if")),
        };
        self.run_region(func, frame, Self::region_of(op, taken)?)
    }

    pub(super) fn eval_for(
        &mut self,
        func: &Function,
        frame: &mut Frame,
        op: &Op,
        operands: Vec<Value>,
    ) -> Result<Vec<Value>, RtError> {
        let mut operands = operands.into_iter();
        let (Some(Value::I64(lo)), Some(Value::I64(hi))) = (operands.next(), operands.next())
        else {
            return Err(RtError::BadOperand("scf.for"));
        };
        let body = Self::region_of(op, 0)?;
        let mut carried: Vec<Value> = operands.collect();
        let mut i = lo;
        while i < hi {
            let mut args = Vec::with_capacity(carried.len() + 1);
            args.push(Value::I64(i));
            args.extend(carried);
            frame.set_all(&body.args, args)?;
            carried = self.run_region(func, frame, body)?;
            i += 1;
        }
        Ok(carried)
    }

    pub(super) fn eval_while(
        &mut self,
        func: &Function,
        frame: &mut Frame,
        op: &Op,
        operands: Vec<Value>,
    ) -> Result<Vec<Value>, RtError> {
        let cond = Self::region_of(op, 0)?;
        let body = Self::region_of(op, 1)?;
        let mut carried = operands;
        loop {
            // The condition reads the carried values; they are moved in and back out.
            frame.set_all(&cond.args, carried)?;
            for &op in &cond.ops {
                self.eval_op(func, frame, op)?;
            }
            let go = frame.get_all(&cond.yields)?;
            carried = cond.args.iter().map(|&a| frame.take(a)).collect::<Result<_, _>>()?;
            match go.as_slice() {
                [Value::Bool(true)] => {}
                [Value::Bool(false)] => return Ok(carried),
                _ => return Err(RtError::BadOperand("scf.while")),
            }
            frame.set_all(&body.args, carried)?;
            carried = self.run_region(func, frame, body)?;
        }
    }
}
