//! `madc`'s arguments, declared with clap.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// The mad compiler: check, run and inspect `.mad` programs.
#[derive(Parser, Debug)]
#[command(name = "madc", version, about, long_about = None)]
pub struct Cli {
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, global = true)]
    pub color: ColorWhen,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Parse and type-check a file; report every error found.
    Check {
        /// The `.mad` source file.
        file: PathBuf,
    },
    /// Compile a file with the JIT and run its entry function.
    ///
    /// Arguments after `--` are passed to the entry function's parameters
    /// (scalars: f64, f32, i64, bool). A non-unit return value is printed.
    Run {
        /// The `.mad` source file.
        file: PathBuf,
        /// The function to run.
        #[arg(long, default_value = "main")]
        entry: String,
        /// Run on the reference interpreter instead of the JIT.
        #[arg(long)]
        interp: bool,
        /// Arguments for the entry function.
        #[arg(last = true)]
        args: Vec<String>,
    },
    /// Print, for every function of a file and every region in it (loops, ifs,
    /// calls), the differentiation mode reverse mode uses and why.
    Explain {
        /// The `.mad` source file.
        file: PathBuf,
    },
    /// Print an intermediate form of a file.
    Emit {
        /// What to print: the mad IR or the Cranelift IR.
        #[arg(value_enum)]
        kind: EmitKind,
        /// The `.mad` source file.
        file: PathBuf,
        /// Print the cleaned IR of the gradient of function NAME (`ir` only).
        #[arg(long, value_name = "NAME", group = "derivative")]
        grad: Option<String>,
        /// Print the cleaned IR of the Hessian of function NAME (`ir` only).
        #[arg(long, value_name = "NAME", group = "derivative")]
        hessian: Option<String>,
        /// Print the cleaned IR of the forward-mode derivative (one direction) of function NAME (`ir` only).
        #[arg(long, value_name = "NAME", group = "derivative")]
        jvp: Option<String>,
        /// Print the cleaned IR of the reverse-mode derivative of function NAME (`ir` only).
        #[arg(long, value_name = "NAME", group = "derivative")]
        vjp: Option<String>,
    },
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitKind {
    /// The mad IR (text form).
    Ir,
    /// Cranelift IR (CLIF) of every function.
    Clif,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}
