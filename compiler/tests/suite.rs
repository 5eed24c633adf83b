//! Every integration test of the compiler, one module per file of this folder, in one test
//! binary: each binary links the whole compiler, so one binary instead of one per file keeps
//! building the tests fast.

#[allow(dead_code)]
mod ad_support;
#[allow(dead_code)]
mod cli_common;
#[allow(dead_code)]
mod common;
#[allow(dead_code)]
mod energy_common;
#[allow(dead_code)]
mod program_common;
mod ad_analytic;
mod ad_emit;
mod ad_language;
mod ad_ops;
mod ad_quotients;
mod ad_random;
mod ad_recursion;
mod ad_smoke;
mod ad_tape;
mod adbench_programs;
mod api_calls;
mod app_cli;
mod app_cloth_sphere;
mod app_embedded_deformation;
mod app_shells_contact;
mod applications;
mod builtins_special;
mod cli;
mod conformance;
mod dense_derivatives;
mod diagnostics;
mod energy_cli;
mod energy_derivatives;
mod energy_dof_vertices;
mod energy_face_dofs;
mod energy_linear_terms;
mod energy_locality;
mod energy_mass_spring;
mod energy_pairs;
mod energy_projected;
mod energy_renumber;
mod energy_ring;
mod energy_threads;
mod energy_translation_seeds;
mod examples;
mod explain;
mod fixed_sizes;
mod front;
mod interp;
mod ir_files;
mod ir_text;
mod ir_validate;
mod jit;
mod jit_codegen_prep;
mod jit_diff_ops;
mod jit_diff_programs;
mod jit_direct;
mod jit_inplace;
mod jit_loop_versions;
mod jit_pairs;
mod jit_release;
mod modules_files;
mod onnx_models;
mod op_table;
mod passes_accum;
mod passes_simplify;
mod shape_ops;
mod raw_call;
mod raw_leaf;
mod raw_registers;
mod robustness;
mod run_cli_inputs;
mod run_npy;
mod solve_cli;
mod solve_combined_evaluation;
mod solve_library;
mod solve_translation_gauge;
mod state_static;
mod state_update;
mod stdlib;
mod stdlib_linalg;
mod stdlib_reduce;
mod tensors_linear;
