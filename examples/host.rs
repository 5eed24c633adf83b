//! A small Rust host that embeds the mad compiler and JIT: it compiles a program
//! from a string, looks functions up with typed signatures, and calls them.
//!
//! Run: `cargo run -p mad --example host`

use mad::{Program, Value};

const SOURCE: &str = r#"
// Arc length of a polyline given as a dynamic list of 2-D points (x0, y0, x1, y1, ...).
fn arc_length(xy: [f64]) -> f64 {
    let mut total = 0.0;
    let n = len(xy) / 2;
    for i in 1..n {
        let d = vec2(xy[2*i] - xy[2*i - 2], xy[2*i + 1] - xy[2*i - 1]);
        total += norm(d);
    }
    total
}

fn rotate(v: vec2, angle: f64) -> vec2 {
    let r = mat2(cos(angle), -sin(angle), sin(angle), cos(angle));
    r * v
}

fn fib(n: i64) -> i64 {
    if n < 2 { n } else { fib(n - 1) + fib(n - 2) }
}
"#;

fn main() -> Result<(), mad::Error> {
    let prog = Program::compile_str("host.mad", SOURCE)?;

    let arc_length = prog.function::<(Vec<f64>,), f64>("arc_length")?;
    let square = vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0];
    println!(
        "perimeter of the unit square: {}",
        arc_length.call((square,))?
    );

    let rotate = prog.function::<([f64; 2], f64), [f64; 2]>("rotate")?;
    let r = rotate.call(([1.0, 0.0], std::f64::consts::FRAC_PI_2))?;
    println!("(1, 0) rotated by 90 degrees: ({:.3}, {:.3})", r[0], r[1]);

    let fib = prog.function::<(i64,), i64>("fib")?;
    println!("fib(30) = {}", fib.call((30,))?);

    // Dynamically typed calls check their arguments too.
    match prog.call("fib", &[Value::F64(1.0)]) {
        Err(e) => println!("as expected: {e}"),
        Ok(v) => println!("unexpected success: {v}"),
    }
    // A wrong Rust signature is an error, not a panic.
    if let Err(e) = prog.function::<(f64,), f64>("fib") {
        println!("as expected: {e}");
    }
    Ok(())
}
