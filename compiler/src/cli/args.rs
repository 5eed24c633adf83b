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
    /// Solve a file's mesh energies, or compile a file with the JIT and run its
    /// entry function.
    ///
    /// A file that declares `energy` or `residual` terms is minimized over a mesh
    /// (options from its `solve { ... }` block, overridden by the flags below)
    /// unless `--entry` is given. Otherwise `main` (or `--entry`) runs:
    /// arguments after `--` are passed to its parameters (numbers for f64, f32,
    /// i64, bool; a path ending in `.npy` for a scalar or an array: `vector`,
    /// `matrix`, `vecN`, `matRxC`, `[i64]`, ...) and a non-unit return value is
    /// printed (or written with `--out-npy`).
    Run {
        /// The `.mad` source file.
        file: PathBuf,
        /// The function to run (default `main`); forces running a function in a
        /// file that declares energies.
        #[arg(long)]
        entry: Option<String>,
        #[command(flatten)]
        solve: super::solve_command::SolveArgs,
        /// Run on the reference interpreter instead of the JIT.
        #[arg(long)]
        interp: bool,
        /// Write the function's result to a `.npy` file instead of printing it (a
        /// scalar as a 0-d array, a vector 1-D, a matrix 2-D; a tuple is an error).
        #[arg(long, value_name = "PATH")]
        out_npy: Option<PathBuf>,
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
    /// Evaluate a program's mesh energies over a mesh.
    ///
    /// The energy is printed as `energy <value>` in Rust's shortest round-trip
    /// form (reading it back gives the same f64). Arrays are `.npy` (float64),
    /// sparse matrices Matrix Market `coordinate real general`.
    Eval(EvalArgs),
    /// Time one evaluation kind over a mesh; the first line is `median X ms`.
    Bench(BenchArgs),
    /// Convert an instance file of Microsoft's ADBench (GMM, BA or LSTM) to `.npy` files,
    /// one per array parameter of the problem's program, and print the arguments to pass
    /// after `--` (the `.npy` paths and the scalars, in parameter order).
    Adbench {
        /// The problem the file is an instance of.
        #[arg(value_enum)]
        problem: super::adbench::AdbenchProblem,
        /// The ADBench instance file (text).
        file: PathBuf,
        /// Prefix of the `.npy` files (`PREFIX_alphas.npy`, …; default: FILE without its
        /// extension).
        #[arg(short, long, value_name = "PREFIX")]
        out: Option<PathBuf>,
    },
    /// ONNX: derivative models of a graph (forward, reverse, family) with onnx-ad's and
    /// CasADi's conventions, and a `.mad` function written as a model (export).
    Onnx {
        #[command(subcommand)]
        command: super::onnx::OnnxCommand,
    },
}

/// The mesh, unknowns, data and params of `madc eval` / `madc bench`.
#[derive(clap::Args, Debug)]
pub struct MeshInputs {
    /// The `.mad` source file.
    pub file: PathBuf,
    /// A mesh file (.obj, .off, .ply) or generator (`grid:NxM`, `sphere:L`, `disk:N`, `torus:N,M`).
    #[arg(long)]
    pub mesh: Option<String>,
    /// The unknowns, (V, d) or flat `.npy` (default: where `madc run` starts: a field's
    /// `= INIT` if it has one, else the mesh's positions for the first dof field when it is a
    /// vertex field of dimension ≤ 3, zeros for the other fields).
    #[arg(long, value_name = "X.npy")]
    pub x: Option<PathBuf>,
    /// Set a param: `NAME=VALUE` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Fill a data field from a `.npy` file: `NAME=FILE.npy` (repeatable).
    #[arg(long = "data", value_name = "NAME=FILE.npy")]
    pub data: Vec<String>,
    /// Vertex tuples for the `pair` terms: an (n, arity) integer or float `.npy` of vertex ids.
    #[arg(long, value_name = "P.npy")]
    pub pairs: Option<PathBuf>,
    /// Worker threads, 1 to 1024 (default: one per CPU core; results are identical for every
    /// count; work too small to pay for the other threads stays on the calling thread).
    #[arg(long, allow_negative_numbers = true)]
    pub threads: Option<usize>,
}

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    #[command(flatten)]
    pub inputs: MeshInputs,
    /// Print the objective of the energy terms (`residual` terms are not in it:
    /// see `--jacobian`).
    #[arg(long)]
    pub energy: bool,
    /// Write the gradient: shape (V, d) for one dof field, else flat (ndofs,).
    #[arg(long, value_name = "G.npy")]
    pub grad: Option<PathBuf>,
    /// Write the sparse Hessian.
    #[arg(long, value_name = "H.mtx")]
    pub hessian: Option<PathBuf>,
    /// Write the sparse Jacobian of the residual terms.
    #[arg(long, value_name = "J.mtx")]
    pub jacobian: Option<PathBuf>,
    /// Hessian-vector product: read V, write H·V (`V.npy:OUT.npy`; shaped as `--x`).
    #[arg(long, value_name = "V.npy:OUT.npy")]
    pub hvp: Option<String>,
    /// Mixed second derivative ∂²E/∂x∂θ for the `f64` param θ: write the
    /// derivative of the gradient along θ, shaped as `--grad` (`PARAM:OUT.npy`, repeatable).
    #[arg(long, value_name = "PARAM:OUT.npy")]
    pub mixed: Vec<String>,
    /// Project each element's Hessian block to positive semi-definite (for `--hessian`).
    #[arg(long)]
    pub project_psd: bool,
}

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(flatten)]
    pub inputs: MeshInputs,
    /// What to time over the mesh: `hessian` is energy + gradient + Hessian values.
    #[arg(long, value_enum, required_unless_present = "entry")]
    pub what: Option<BenchWhat>,
    /// Time calls of function NAME instead (no mesh): its arguments follow `--`, as for
    /// `madc run` (numbers, `.npy` files); each run is one call, after 3 untimed ones.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["what", "mesh", "x", "set", "data", "pairs", "threads"])]
    pub entry: Option<String>,
    /// Timed evaluations (after warm-up).
    #[arg(long, default_value_t = 20, allow_negative_numbers = true)]
    pub runs: usize,
    /// The arguments of `--entry`.
    #[arg(last = true)]
    pub args: Vec<String>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchWhat {
    Energy,
    Grad,
    Hessian,
    /// `hessian` with every element block projected to positive semi-definite, as
    /// projected Newton evaluates it (the upper triangle of the values, which its
    /// Cholesky reads).
    HessianPsd,
    Hvp,
    /// One product with the assembled Hessian (assembled once, not timed).
    Spmv,
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

/// A clap value parser for numbers that must be finite (`--tol`, `--dt`, `--step`): a value
/// that overflows `f64` (`1e400`) or is infinite or NaN is refused with the text as typed.
pub fn finite_f64(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(format!("'{text}' is not a finite number")),
        Err(_) => Err(format!("'{text}' is not a number")),
    }
}
