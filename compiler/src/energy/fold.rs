//! Kernel-local folding after inlining (see the numerics note in [`super`]).
