//! `madc`: the mad compiler's command line. A thin layer over [`mad::cli`].

/// mimalloc: the compiler's many small allocations are a third of `madc`'s time on large
/// inputs with the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    std::process::exit(mad::cli::main());
}
