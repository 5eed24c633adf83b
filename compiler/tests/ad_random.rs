//! Forward against reverse on random programs: uᵀ(J v) from a `jvp` walk and from a
//! `vjp` walk must agree to ~1e-12.

use crate::ad_support;
use ad_support::*;
use mad_runtime::Value;

/// A random straight-line program over three f64 parameters, with bounded ops, an
/// `scf.if` and an `scf.for` thrown in.
fn program(rng: &mut Rng) -> String {
    let mut lines = Vec::new();
    let mut vals = vec!["%x0".to_string(), "%x1".to_string(), "%x2".to_string()];
    let mut next = 0;
    let fresh = |next: &mut usize| {
        *next += 1;
        format!("%v{next}")
    };
    for step in 0..12 {
        let a = vals[rng.below(vals.len())].clone();
        let b = vals[rng.below(vals.len())].clone();
        let r = fresh(&mut next);
        match rng.below(9) {
            0 => lines.push(format!("  {r} = add {a}, {b} : f64")),
            1 => lines.push(format!("  {r} = sub {a}, {b} : f64")),
            2 => lines.push(format!("  {r} = mul {a}, {b} : f64")),
            3 => lines.push(format!("  {r} = sin {a} : f64")),
            4 => lines.push(format!("  {r} = tanh {a} : f64")),
            5 => {
                let t = fresh(&mut next);
                let u = fresh(&mut next);
                let one = fresh(&mut next);
                lines.push(format!("  {t} = mul {b}, {b} : f64"));
                lines.push(format!("  {one} = const 1.0 : f64"));
                lines.push(format!("  {u} = add {t}, {one} : f64"));
                lines.push(format!("  {r} = div {a}, {u} : f64"));
            }
            6 => {
                let c = fresh(&mut next);
                lines.push(format!("  {c} = lt {a}, {b} : bool"));
                lines.push(format!("  {r} = scf.if {c} : f64 {{\n    %p{step} = mul {a}, {b} : f64\n    yield %p{step}\n  }} else {{\n    %q{step} = cos {a} : f64\n    yield %q{step}\n  }}"));
            }
            7 => {
                let lo = fresh(&mut next);
                let hi = fresh(&mut next);
                lines.push(format!("  {lo} = const 0 : i64"));
                lines.push(format!("  {hi} = const 3 : i64"));
                lines.push(format!(
                    "  {r} = scf.for {lo}, {hi}, {a} : f64 {{\n  ^(%i{step}: i64, %c{step}: f64):\n    %m{step} = mul %c{step}, {b} : f64\n    %s{step} = sin %m{step} : f64\n    %t{step} = add %s{step}, %c{step} : f64\n    yield %t{step}\n  }}"
                ));
            }
            _ => {
                let t = fresh(&mut next);
                lines.push(format!("  {t} = tanh {a} : f64"));
                lines.push(format!("  {r} = exp {t} : f64"));
            }
        }
        vals.push(r);
    }
    // Return a combination of the last few values.
    let mut acc = vals[vals.len() - 1].clone();
    for v in vals.iter().rev().skip(1).take(3) {
        let r = fresh(&mut next);
        lines.push(format!("  {r} = add {acc}, {v} : f64"));
        acc = r;
    }
    format!(
        "func @f(%x0: f64, %x1: f64, %x2: f64) -> f64 {{\n{}\n  return {acc}\n}}\n",
        lines.join("\n")
    )
}

#[test]
fn forward_and_reverse_agree_on_random_programs() {
    let mut rng = Rng(0x1234_5678_9ABC_DEF1);
    for _ in 0..60 {
        let src = program(&mut rng);
        let mut m = module(&src);
        let f = func(&m, "f");
        let x: Vec<f64> = (0..3).map(|_| rng.uniform(-1.5, 1.5)).collect();
        let v: Vec<f64> = (0..3).map(|_| rng.uniform(-1.0, 1.0)).collect();
        let u = rng.uniform(-2.0, 2.0);
        let args: Vec<Value> = x.iter().map(|&a| Value::F64(a)).collect();
        // Forward: J v.
        let j = mad::ad::jvp(&mut m, f, 1).unwrap();
        let mut a = args.clone();
        a.extend(v.iter().map(|&t| Value::F64(t)));
        let jv = flat(&run(&m, j, &a))[1];
        // Reverse: uᵀ J.
        let r = mad::ad::vjp(&mut m, f).unwrap();
        let mut a = args.clone();
        a.push(Value::F64(u));
        let ut_j = flat(&run(&m, r, &a));
        let rev: f64 = ut_j[1..].iter().zip(&v).map(|(g, t)| g * t).sum();
        assert_valid(&m);
        assert!(
            close(u * jv, rev, 1e-12),
            "uᵀJv: forward {} reverse {rev}\n{src}",
            u * jv
        );
    }
}
