//! Calls: the call-depth limit and running a function body in a fresh frame (arguments
//! are checked against the signature by [`crate::ir::check_args`]).

use super::Machine;
use super::frame::Frame;
use crate::ir::{FuncRef, Function, check_args};
use mad_runtime::{RtError, Value};

impl Machine<'_> {
    /// Runs `f` on `args` (whose shapes are checked against its signature).
    pub(super) fn call_function(&mut self, f: FuncRef, args: Vec<Value>) -> Result<Value, RtError> {
        let module = self.module;
        let func = module
            .functions
            .get(f)
            .ok_or_else(|| RtError::Other(format!("function #{} does not exist", f.index())))?;
        check_args(func, &args).map_err(RtError::ShapeMismatch)?;
        if self.depth >= self.max_depth {
            return Err(RtError::RecursionLimit);
        }
        self.depth += 1;
        let result = self.run_body(f, func, args);
        self.depth -= 1;
        result
    }

    fn run_body(&mut self, f: FuncRef, func: &Function, args: Vec<Value>) -> Result<Value, RtError> {
        let inplace = self
            .inplace
            .entry(f)
            .or_insert_with(|| std::rc::Rc::new(crate::codegen::inplace::analyze(func)))
            .clone();
        let mut frame = Frame::new(func.values.len(), inplace);
        frame.set_all(func.params(), args)?;
        let mut yields = self.run_region(func, &mut frame, &func.body)?;
        match yields.len() {
            1 => Ok(yields.pop().unwrap_or(Value::UNIT)),
            n => Err(RtError::Other(format!(
                "`{}` yields {n} values, a function returns one",
                func.name
            ))),
        }
    }
}
