//! Solving a file's mesh energies as `madc run` does, from Rust: the settings of the file's
//! `solve { ... }` block with overrides over it, the fixed vertices, a static solve or
//! implicit Euler time steps, and typed records of every iteration and step.
//!
//! - [`settings`]: [`Overrides`] (what `madc run`'s flags say), [`merge`] with the file's
//!   block into [`Settings`], the default solver and the checks made before a solve;
//! - [`inputs`]: the mesh, params written `NAME=VALUE`, data and pairs from `.npy` files;
//! - [`fixed`]: the fixed-dof mask of a fix spec;
//! - [`problem`]: the mesh bound and the objective built at the start ([`Problem`]);
//! - [`run`]: the solve itself ([`solve`]), reporting each [`Event`] to a handler and
//!   returning an [`Outcome`];
//! - [`records`]: iteration, step, summary and error records, as `madc run --json` prints
//!   them ([`Record::to_json`]); [`json`]: their JSON text;
//! - [`output`]: writing the result mesh and frames ([`Frame::write_mesh`]);
//! - [`failure`]: why a run ended without a result ([`Failure`]).
//!
//! The library prints nothing and writes no file unasked: warnings, iterations and steps
//! reach the handler as they happen; the result mesh, frames and plots are written by the
//! caller (the `madc` command line does it from the events and the outcome).
//!
//! ```
//! use mad::energy::EnergyProgram;
//! use mad::solve::{Event, FixSpec, Overrides};
//!
//! let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/smooth.mad");
//! let prog = EnergyProgram::compile_file(path)?;
//! // `madc run examples/smooth.mad --mesh disk:6 --fix boundary`
//! let overrides = Overrides {
//!     mesh: Some("disk:6".into()),
//!     fix: Some(FixSpec::Boundary),
//!     ..Overrides::default()
//! };
//! let settings = mad::solve::merge(prog.decls(), &overrides, |w| eprintln!("warning: {w}"))?;
//! let mut energies = Vec::new();
//! let outcome = mad::solve::solve(&prog, &settings, |event| {
//!     if let Event::Iteration(it) = event {
//!         energies.push(it.energy);
//!     }
//!     Ok(())
//! })?;
//! assert!(outcome.success);
//! assert_eq!(outcome.report.iterations, energies.len());
//! assert!(energies.windows(2).all(|e| e[1] <= e[0]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod failure;
pub mod fixed;
pub mod inputs;
pub mod json;
pub mod output;
pub mod problem;
pub mod records;
pub mod run;
pub mod settings;

pub use crate::front::solve::FixSpec;
pub use crate::front::state::Init;
pub use failure::Failure;
pub use output::Frame;
pub use problem::Problem;
pub use records::{ErrorRecord, IterationRecord, Record, StepRecord, SummaryRecord};
pub use run::{Event, Outcome, solve};
pub use settings::{Overrides, Settings, merge};
