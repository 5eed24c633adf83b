//! Energy programs from the embedding API: compile a file or text, or take a compiled
//! [`Program`]'s, with its sources kept for the locations of run-time errors.

use super::{Error, Program};
use crate::energy::EnergyProgram;

impl EnergyProgram {
    /// Compiles a `.mad` file and its term kernels.
    pub fn compile_file(path: impl AsRef<std::path::Path>) -> Result<EnergyProgram, Error> {
        let prog = Program::compile_file(path)?;
        EnergyProgram::of_program(&prog)
    }

    /// Compiles source text (`name` is used in diagnostics) and its term kernels.
    pub fn compile_str(name: &str, source: &str) -> Result<EnergyProgram, Error> {
        let prog = Program::compile_str(name, source)?;
        EnergyProgram::of_program(&prog)
    }

    /// Builds the kernels of a compiled program, keeping its sources for the locations of
    /// run-time errors.
    pub fn of_program(prog: &Program) -> Result<EnergyProgram, Error> {
        let mut e = EnergyProgram::new(prog.compiled()).map_err(|e| Error::Backend(e.to_string()))?;
        e.files = Some(prog.files().clone());
        Ok(e)
    }
}
