//! Implicit Euler of a damped harmonic oscillator against the scheme's analytic decay rate.
//!
//! For x'' = −ω²x − αx', implicit Euler's update matrix has determinant 1/(1 + hα + h²ω²), so
//! the area x_n v_{n+1} − v_n x_{n+1} spanned by consecutive states shrinks by exactly that factor
//! per step, and the amplitude decays at rate ln(1 + hα + h²ω²)/(2h) → α/2 (the continuous rate)
//! as h → 0.


use mad_runtime::solve::{ImplicitEuler, Objective, SolveError, SolveOptions, Solver};
use mad_runtime::sparse::CsrPattern;

/// P(x) = ½ k Σ x_i² (independent oscillators, one per dof).
struct Spring {
    k: f64,
    pattern: CsrPattern,
}

impl Objective for Spring {
    fn num_dofs(&self) -> usize {
        self.pattern.n
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        Ok(0.5 * self.k * x.iter().map(|v| v * v).sum::<f64>())
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        for (gi, xi) in g.iter_mut().zip(x) {
            *gi += self.k * xi;
        }
        self.value(x)
    }
    fn hessian_pattern(&self) -> Option<&CsrPattern> {
        Some(&self.pattern)
    }
    fn hessian_values(&mut self, _x: &[f64], _p: bool, v: &mut [f64]) -> Result<(), SolveError> {
        v.iter_mut().for_each(|a| *a += self.k);
        Ok(())
    }
}

#[test]
fn damped_oscillator_decays_at_the_analytic_rate() {
    let (m, k, alpha) = (2.0, 8.0, 0.3);
    let omega2 = k / m;
    for name in ["newton", "newton-cg", "lbfgs"] {
        for h in [0.05, 0.01] {
            let spring = Spring {
                k,
                pattern: CsrPattern::from_entries(1, [(0, 0)]),
            };
            let mut euler = ImplicitEuler::new(spring, vec![m], h, vec![1.0], vec![0.0])
                .unwrap()
                .with_damping(alpha);
            let mut solver = Solver::from_name(name).unwrap();
            let opts = SolveOptions {
                grad_abs_tol: 1e-13,
                ..Default::default()
            };
            let steps = (4.0 / h) as usize;
            let mut states = vec![(1.0, 0.0)];
            for _ in 0..steps {
                let rep = euler.step(&mut solver, &opts, None).unwrap();
                assert!(rep.status.converged(), "{name}: {:?}", rep.status);
                states.push((euler.positions()[0], euler.velocities()[0]));
            }
            let area = |n: usize| states[n].0 * states[n + 1].1 - states[n].1 * states[n + 1].0;
            let per_step = 1.0 / (1.0 + h * alpha + h * h * omega2);
            for n in 0..steps - 1 {
                let ratio = area(n + 1) / area(n);
                assert!(
                    (ratio - per_step).abs() < 1e-9,
                    "{name} h={h} step {n}: {ratio} vs {per_step}"
                );
            }
            let measured = -(area(steps - 1) / area(0)).ln() / (2.0 * h * (steps - 1) as f64);
            let discrete = (1.0 + h * alpha + h * h * omega2).ln() / (2.0 * h);
            assert!(
                (measured - discrete).abs() < 1e-7,
                "{name}: {measured} vs {discrete}"
            );
            // The continuous rate α/2, to first order in h: |error| ≤ h·ω²/2.
            assert!(
                (measured - alpha / 2.0).abs() <= h * omega2 / 2.0 + 1e-12,
                "{name} h={h}: {measured}"
            );
        }
    }
}

#[test]
fn fixed_dofs_stay_and_free_ones_fall() {
    // Two unit masses under gravity (potential m g y), the first pinned: after N steps the
    // free one has v = −g·t exactly (implicit Euler is exact for constant forces in v).
    struct Gravity(CsrPattern);
    impl Objective for Gravity {
        fn num_dofs(&self) -> usize {
            2
        }
        fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
            Ok(9.81 * (x[0] + x[1]))
        }
        fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
            g[0] += 9.81;
            g[1] += 9.81;
            self.value(x)
        }
        fn hessian_pattern(&self) -> Option<&CsrPattern> {
            Some(&self.0)
        }
        fn hessian_values(&mut self, _: &[f64], _: bool, _: &mut [f64]) -> Result<(), SolveError> {
            Ok(())
        }
    }
    let h = 0.1;
    let mut euler = ImplicitEuler::new(
        Gravity(CsrPattern::empty(2)),
        vec![1.0, 1.0],
        h,
        vec![0.0, 0.0],
        vec![0.0, 0.0],
    )
    .unwrap();
    let mut solver = Solver::from_name("newton").unwrap();
    let opts = SolveOptions {
        fixed: Some(vec![true, false]),
        ..Default::default()
    };
    for _ in 0..10 {
        euler.step(&mut solver, &opts, None).unwrap();
    }
    assert_eq!(euler.positions()[0], 0.0);
    assert!((euler.velocities()[1] + 9.81).abs() < 1e-9);
    // y_N = −g h² N(N+1)/2 for implicit Euler.
    assert!((euler.positions()[1] + 9.81 * h * h * 55.0).abs() < 1e-9);
}

/// A time step or mass out of range is an option error (as `SolveOptions` are), not a
/// failure of the objective; a step whose square rounds to 0 too (the tolerances scale by h²).
#[test]
fn bad_time_steps_and_masses_are_option_errors() {
    let spring = || Spring { k: 1.0, pattern: CsrPattern::from_entries(1, [(0, 0)]) };
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-200] {
        let r = ImplicitEuler::new(spring(), vec![1.0], h, vec![0.0], vec![0.0]);
        assert!(matches!(r, Err(SolveError::InvalidOption(_))), "{h}");
    }
    for m in [-1.0, f64::NAN] {
        let r = ImplicitEuler::new(spring(), vec![m], 0.01, vec![0.0], vec![0.0]);
        assert!(matches!(r, Err(SolveError::InvalidOption(_))), "{m}");
    }
}
