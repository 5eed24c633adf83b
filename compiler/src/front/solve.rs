//! The `solve { key = value; ... }` block: how `madc run` minimizes a file's
//! energies when no flags say otherwise.
//!
//! ```text
//! solve {
//!     mesh = "grid:20x20";     // a mesh file or generator
//!     solver = "newton";       // newton | newton-cg | lbfgs | gd | gauss-newton | gauss-newton-cg
//!     max_iters = 100;         // per solve (per time step for dynamics)
//!     tol = 1e-6;              // absolute gradient-norm tolerance
//!     project_psd = true;      // projected Newton
//!     steps = 50; dt = 0.01;   // implicit Euler dynamics
//!     fix = [0, 19];           // vertex ids, "boundary", or a file of ids
//!     out = "flag.obj";        // result mesh (frames OUT_0001.EXT … with steps)
//!     plot = "conv.svg";       // convergence plot
//! }
//! ```
//!
//! Values are literals: strings, numbers, `true`/`false`, and arrays of
//! integers; `solver` and `fix` also take a bare name (`solver = newton;`).
//! Relative paths are relative to the current directory, as on the command line.

/// Which vertices are fixed.
#[derive(Clone, Debug, PartialEq)]
pub enum FixSpec {
    /// Vertex ids.
    Ids(Vec<usize>),
    /// Every vertex on the mesh boundary.
    Boundary,
    /// A file of vertex ids (separated by whitespace or commas).
    File(String),
}

impl FixSpec {
    /// Parses the command-line form: `boundary`, comma-separated ids, or a file name.
    pub fn parse(text: &str) -> FixSpec {
        let t = text.trim();
        if t == "boundary" {
            return FixSpec::Boundary;
        }
        let ids: Result<Vec<usize>, _> = t.split(',').map(|s| s.trim().parse::<usize>()).collect();
        match ids {
            Ok(ids) => FixSpec::Ids(ids),
            Err(_) => FixSpec::File(t.to_string()),
        }
    }
}

/// The settings of a `solve` block (every key optional).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SolveSettings {
    pub mesh: Option<String>,
    pub solver: Option<String>,
    pub max_iters: Option<usize>,
    pub tol: Option<f64>,
    pub project_psd: Option<bool>,
    pub steps: Option<usize>,
    pub dt: Option<f64>,
    pub fix: Option<FixSpec>,
    pub out: Option<String>,
    pub plot: Option<String>,
}
