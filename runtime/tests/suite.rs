//! Every integration test of the runtime, one module per file of this folder, in one test binary.

#[allow(dead_code)]
mod blocks_common;
#[allow(dead_code)]
mod solve_common;
mod contact_broadphase;
mod mesh_fuzz;
mod mesh_io;
mod mesh_spheres2;
mod mesh_topology;
mod psd_bench;
mod psd_differences;
mod psd_skip;
mod psd_translation;
mod psd_translation_many;
mod solve_combined_evaluation;
mod solve_edge_cases;
mod solve_euler_start;
mod solve_factor_reuse;
mod solve_gauss_newton;
mod solve_implicit_euler;
mod solve_levenberg_marquardt;
mod solve_mass_spring;
mod solve_max_step;
mod solve_minimizers;
mod solve_pattern_generation;
mod solve_update_fixed;
mod sparse_assembly;
mod sparse_files;
mod sparse_pairs;
mod sym_eigen;
mod sym_eigen_ql;
