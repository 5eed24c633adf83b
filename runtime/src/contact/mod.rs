//! Contact: the broad phase that finds the pairs a `pair` energy term runs over,
//! exact primitive distances, and the step rule that keeps a solver from stepping
//! through contact.
//!
//! - [`BroadPhase`]`::new(num_vertices, faces, kinds)`, `pairs(positions, dhat)` (R*-tree
//!   candidates from `rstar`, exact-distance filter), `pairs_brute_force` (every pair; the
//!   reference), `max_step(positions, direction, t0, fraction)` (the step rule).
//! - [`ContactKind`] `VertexVertex | VertexFace | EdgeEdge` and its tuple size.
//! - [`distance`]: `point_point_sq`, `point_segment_sq`, `point_triangle_sq`, `segment_segment_sq`.
//!
//! # How a solve stays out of contact
//!
//! The pair list is recomputed at **every** energy evaluation (every iterate and every
//! line-search trial point), so the energy is a function of the positions alone and a
//! trial point where a pair comes within d̂ is charged its barrier. That alone cannot see
//! a pair that passes through zero distance and out again between two trial points, so
//! the first trial step of each line search is also capped by [`BroadPhase::max_step`]: no
//! pair that is apart at the iterate can touch anywhere along the capped segment (additive
//! continuous collision detection with a conservative bound on each pair's closing speed).
//! Together: every accepted point is separated, and so is the whole path to it.

pub mod broad;
pub mod distance;

pub use broad::{BroadPhase, ContactError, ContactKind};
