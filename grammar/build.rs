//! Generates the parser from `src/grammar.lalrpop`.
fn main() {
    if let Err(e) = lalrpop::Configuration::new()
        .use_cargo_dir_conventions()
        .emit_rerun_directives(true)
        .process()
    {
        panic!("lalrpop failed: {e}");
    }
}
