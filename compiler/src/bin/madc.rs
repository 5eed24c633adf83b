//! `madc`: the mad compiler's command line. A thin layer over [`mad::cli`].

fn main() {
    std::process::exit(mad::cli::main());
}
