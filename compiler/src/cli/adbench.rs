//! `madc adbench PROBLEM FILE`: an instance file of Microsoft's ADBench (GMM, BA, LSTM) as
//! `.npy` files, one per array parameter of the problem's program, and the argument list
//! to pass after `--` (the `.npy` paths and the scalars, in parameter order). The formats
//! and the arrays are those of [`mad_runtime::adbench`].

use std::path::{Path, PathBuf};

use mad_runtime::adbench::{self, Argument, Problem};

/// The problem named on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum AdbenchProblem {
    /// Gaussian mixture model: `alphas means icf x gamma m`.
    Gmm,
    /// Bundle adjustment: `cams x w obs feats`.
    Ba,
    /// LSTM: `main_params extra_params state sequence`.
    Lstm,
}

/// Converts `file`; writes `PREFIX_NAME.npy` per array. Returns the exit code: 0, or 1 when
/// the file cannot be read or does not fit the format, or a `.npy` cannot be written.
pub fn convert(problem: AdbenchProblem, file: &Path, out: Option<&Path>) -> i32 {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", file.display());
            return 1;
        }
    };
    let problem = match problem {
        AdbenchProblem::Gmm => Problem::Gmm,
        AdbenchProblem::Ba => Problem::Ba,
        AdbenchProblem::Lstm => Problem::Lstm,
    };
    let args = match adbench::read(problem, &text) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {}: {e}", file.display());
            return 1;
        }
    };
    let prefix: PathBuf = out.map(Path::to_path_buf).unwrap_or_else(|| file.with_extension(""));
    let mut words = Vec::new();
    for a in args {
        match a {
            Argument::Array(name, t) => {
                let mut path = prefix.clone().into_os_string();
                path.push(format!("_{name}.npy"));
                let path = PathBuf::from(path);
                if let Err(e) = mad_runtime::npy::save(&path, &t) {
                    eprintln!("error: cannot write {}: {e}", path.display());
                    return 1;
                }
                words.push(path.display().to_string());
            }
            Argument::Scalar(_, v) => words.push(v.to_string()),
        }
    }
    println!("{}", words.join(" "));
    0
}
