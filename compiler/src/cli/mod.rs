//! The `madc` command line: argument parsing (clap) and dispatch. Each
//! subcommand lives in its own file and returns an exit code; the library never
//! prints, this layer does.

mod adbench;
mod onnx;
mod args;
mod commands;
mod mesh_commands;
mod progress;
mod run_function;
mod solve_command;
mod stdout;
mod svg_plot;

use clap::Parser;
use std::io::IsTerminal;

pub use args::{BenchArgs, BenchWhat, Cli, ColorWhen, Command, EmitKind, EvalArgs, MeshInputs};

/// Stack size of the thread that compiles and runs programs: deep recursion in
/// user code and deeply nested (but accepted) sources need more than the default.
const STACK_SIZE: usize = 512 << 20;

/// Runs `madc` with the process's arguments; returns the exit code.
///
/// A usage error (an unknown flag, a value that does not parse) is bad input: exit status 1
/// (clap's own convention would be 2, which `madc` keeps for run-time and solver failures);
/// `--help` and `--version` exit with 0. Output into a closed pipe (`madc … | head -1`) ends
/// the process quietly, as it does other command-line tools: `SIGPIPE` is restored to its
/// default action where Rust's runtime ignores it.
pub fn main() -> i32 {
    restore_sigpipe();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // `--help` and `--version` print to standard output: one that cannot be
            // written is an error, as for every command.
            let printed = e.print();
            if !e.use_stderr()
                && let Err(w) = printed.and_then(|()| std::io::Write::flush(&mut std::io::stdout()))
            {
                stdout::error_line(&format!("error: cannot write the output: {w}"));
                return 1;
            }
            return if e.use_stderr() { 1 } else { 0 };
        }
    };
    // `print!` panics when standard output cannot be written: that is recorded and
    // reported as an error below, not as a crash.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if stdout::is_print_failure(message) {
            let m = message.trim_start_matches("failed printing to stdout: ");
            stdout::record(m.trim_start_matches("failed printing to stderr: ").to_string());
        } else {
            default_hook(info);
        }
    }));
    let handle = match std::thread::Builder::new()
        .stack_size(STACK_SIZE)
        .name("madc".into())
        .spawn(move || run(cli))
    {
        Ok(h) => h,
        Err(e) => {
            // No room for the stack deep programs need (a tight `ulimit -v`, say).
            stdout::error_line(&format!(
                "error: cannot start madc's thread with a stack of {} MiB: {e}",
                STACK_SIZE >> 20
            ));
            return 1;
        }
    };
    let code = match handle.join() {
        Ok(code) => {
            stdout::note(std::io::Write::flush(&mut std::io::stdout()));
            code
        }
        _ if stdout::take_failure().is_some_and(|m| {
            stdout::error_line(&format!("error: cannot write the output: {m}"));
            true
        }) =>
        {
            return 1;
        }
        _ => {
            stdout::error_line("error: madc failed unexpectedly");
            return 101;
        }
    };
    match stdout::take_failure() {
        Some(m) => {
            stdout::error_line(&format!("error: cannot write the output: {m}"));
            if code == 0 { 1 } else { code }
        }
        None => code,
    }
}

/// Restores the default action of `SIGPIPE` (terminate), which the Rust runtime sets to
/// "ignore": a write into a closed pipe then ends `madc` instead of failing every later
/// `print!` with a panic.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists; `signal` with
    // `SIG_DFL` only resets the disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Whether diagnostics on standard error are coloured.
pub fn use_color(when: ColorWhen) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    }
}

/// Runs one parsed command line; returns the exit code.
pub fn run(cli: Cli) -> i32 {
    let color = use_color(cli.color);
    match cli.command {
        Command::Check { file } => commands::check(&file, color),
        Command::Explain { file } => commands::explain(&file, color),
        Command::Run {
            file,
            entry,
            solve,
            interp,
            out_npy,
            args,
        } => solve_command::run(&file, entry.as_deref(), &solve, interp, out_npy.as_deref(), &args, color),
        Command::Eval(a) => mesh_commands::eval(&a, color),
        Command::Bench(a) => mesh_commands::bench(&a, color),
        Command::Adbench { problem, file, out } => adbench::convert(problem, &file, out.as_deref()),
        Command::Onnx { command } => onnx::run(command, color),
        Command::Emit {
            kind,
            file,
            grad,
            hessian,
            jvp,
            vjp,
        } => {
            use crate::ad::show::Derivative;
            let derivative = [
                (grad, Derivative::Grad),
                (hessian, Derivative::Hessian),
                (jvp, Derivative::Jvp),
                (vjp, Derivative::Vjp),
            ]
            .into_iter()
            .find_map(|(name, d)| name.map(|n| (n, d)));
            match derivative {
                None => commands::emit(kind, &file, color),
                Some((name, d)) => commands::emit_derivative(kind, &file, &name, d, color),
            }
        }
    }
}
