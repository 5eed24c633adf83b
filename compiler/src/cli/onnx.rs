//! `madc onnx …`: derivative models of ONNX graphs (`forward`, `reverse`, `family`) with
//! onnx-ad's command line and conventions, and `export` of a `.mad` function as a model.
//! Exit codes: 0 on success, 1 when a file cannot be read or written, the model has an op
//! or construct mad cannot handle, or a convention's name is taken.

use std::path::{Path, PathBuf};

use prost::Message;

use crate::back::onnx::{OnnxOptions, export};
use crate::onnx::{self, Layout, OnnxError, Options};

/// The seed layout named on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default)]
pub enum LayoutArg {
    /// CasADi's matrix reading: the seeds of an r×c value as one r×(n·c) matrix.
    #[default]
    Casadi,
    /// A trailing seed axis on the value's own shape.
    Onnx,
}

/// The options of `madc onnx forward|reverse`.
#[derive(clap::Args, Debug)]
pub struct DeriveArgs {
    /// The primal model.
    pub input: PathBuf,
    /// Where the derivative model goes.
    pub output: PathBuf,
    /// Graph inputs to differentiate [every floating-point one].
    #[arg(long, num_args = 1..)]
    pub inputs: Option<Vec<String>>,
    /// Graph outputs to differentiate [every floating-point one].
    #[arg(long, num_args = 1..)]
    pub outputs: Option<Vec<String>>,
    /// Derivative-tensor prefix [CasADi's rule: adj_/fwd_, then adj2_/fwd2_, …].
    #[arg(long)]
    pub prefix: Option<String>,
    /// Symbolic seed dimension [n + the prefix without its `_`].
    #[arg(long)]
    pub dim: Option<String>,
    /// Seed layout.
    #[arg(long, value_enum, default_value_t)]
    pub layout: LayoutArg,
}

/// The subcommands of `madc onnx`.
#[derive(clap::Subcommand, Debug)]
pub enum OnnxCommand {
    /// Write a model computing fwd_y = J·fwd_x.
    Forward(DeriveArgs),
    /// Write a model computing adj_x = Jᵀ·adj_y.
    Reverse(DeriveArgs),
    /// Write the primal model to OUTPUT and, beside it, adj_<name> and fwd_adj_<name>
    /// (and fwd_<name> with --forward-sibling): the files CasADi's ONNX import discovers.
    Family {
        input: PathBuf,
        output: PathBuf,
        /// Graph inputs to differentiate [every floating-point one].
        #[arg(long, num_args = 1..)]
        inputs: Option<Vec<String>>,
        /// Graph outputs to differentiate [every floating-point one].
        #[arg(long, num_args = 1..)]
        outputs: Option<Vec<String>>,
        /// Also write fwd_<name>.
        #[arg(long)]
        forward_sibling: bool,
        /// Skip fwd_adj_<name>.
        #[arg(long = "no-second-order")]
        no_second_order: bool,
    },
    /// Write a function of a `.mad` file as an ONNX model (inputs named after its
    /// parameters, outputs `y0`, `y1`, … per result field).
    Export {
        /// The `.mad` source file.
        file: PathBuf,
        /// The function to write.
        #[arg(long = "fn", value_name = "NAME")]
        function: String,
        /// Where the model goes.
        output: PathBuf,
    },
}

pub fn run(command: OnnxCommand, color: bool) -> i32 {
    let result = match command {
        OnnxCommand::Forward(a) => derive_file(&a, onnx::forward),
        OnnxCommand::Reverse(a) => derive_file(&a, onnx::reverse),
        OnnxCommand::Family { input, output, inputs, outputs, forward_sibling, no_second_order } => {
            onnx::read_model(&input).and_then(|m| onnx::family(&m, &output, &Options { inputs, outputs, ..Default::default() }, forward_sibling, !no_second_order)).map(|paths| {
                for p in paths {
                    println!("{}", p.display());
                }
            })
        }
        OnnxCommand::Export { file, function, output } => return export_file(&file, &function, &output, color),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

fn options(a: &DeriveArgs) -> Options {
    Options {
        inputs: a.inputs.clone(),
        outputs: a.outputs.clone(),
        prefix: a.prefix.clone(),
        dim: a.dim.clone(),
        layout: match a.layout {
            LayoutArg::Casadi => Layout::Casadi,
            LayoutArg::Onnx => Layout::Onnx,
        },
    }
}

fn write(path: &Path, model: &onnx::proto::ModelProto) -> Result<(), OnnxError> {
    std::fs::write(path, model.encode_to_vec()).map_err(|e| OnnxError::Read(format!("cannot write {}: {e}", path.display())))
}

fn derive_file(a: &DeriveArgs, pass: fn(&onnx::proto::ModelProto, &Options) -> Result<onnx::proto::ModelProto, OnnxError>) -> Result<(), OnnxError> {
    let model = onnx::read_model(&a.input)?;
    write(&a.output, &pass(&model, &options(a))?)
}

fn export_file(file: &Path, function: &str, output: &Path, color: bool) -> i32 {
    let (compiled, _) = match super::commands::front_end(file) {
        Ok(c) => c,
        Err(e) => return super::commands::report(&e, color),
    };
    let Some(sig) = compiled.function(function) else {
        eprintln!("error: {} has no function `{function}`", file.display());
        return 1;
    };
    let name = compiled.module.functions[sig.func].name.clone();
    let options = OnnxOptions { function: Some(name), inputs: sig.param_names.clone(), outputs: Vec::new() };
    match export(&compiled.module, &options).and_then(|m| write(output, &m)) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
