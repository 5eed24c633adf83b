//! Run time: an [`EnergyProgram`](crate::energy::EnergyProgram) bound to a mesh and evaluated.
//!
//! - [`bind`]: [`MeshEnergy`], the program bound to a mesh (dof layout, data, params,
//!   element lists, the CSR pattern); [`layout`]: each element's local dofs;
//! - [`evaluate`]: energy, gradient, Hessian values, HVPs and Jacobians over the whole mesh,
//!   element loops in the fixed schedule of [`mad_runtime::sparse::Coloring`];
//! - [`batched`]: that schedule running the compiled batched loops, with their CSR slot
//!   tables (`slots`); [`parallel`]: which colours run on the thread pool;
//!   [`first_touch`]: outputs zeroed where they are first written;
//! - `psd`: PSD projection of Hessian blocks; `gauge`: translation classes;
//! - [`ring`]: `ring` terms element by element; [`pairs`]: `pair` terms over host tuples;
//!   [`contact`]: the broad phase that keeps the pairs;
//! - [`state`]: initial values, `state` fields and `update` items;
//! - [`objective`]: [`MeshObjective`], the solver adapter.
//!
//! Everything here imports the compiled program from [`super::kernels`]; nothing there
//! imports from here.

pub mod batched;
pub mod bind;
pub mod contact;
pub mod evaluate;
pub mod first_touch;
pub(crate) mod gauge;
pub mod layout;
pub mod objective;
pub mod pairs;
pub mod parallel;
pub(crate) mod psd;
pub mod ring;
pub(crate) mod slots;
pub mod state;

pub use bind::MeshEnergy;
pub use contact::Contact;
pub use evaluate::{SparseMatrix, Timing};
pub use objective::MeshObjective;
