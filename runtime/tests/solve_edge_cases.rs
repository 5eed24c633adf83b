//! Indefinite and singular Hessians, barrier energies returning +∞, NaN appearing mid-solve.

use crate::solve_common;

use mad_runtime::solve::{Newton, Objective, SolveError, SolveOptions, Status};
use solve_common::{Dense, GENERAL, solver};

/// (x² − 1)²/4 + (y − x/2)²/2: minimizers (±1, ±½); the Hessian is indefinite for |x| < 1/√3.
fn double_well() -> Dense {
    Dense::new(2, |x, g, h| {
        let (a, b) = (x[0] * x[0] - 1.0, x[1] - 0.5 * x[0]);
        if let Some(g) = g {
            g[0] += x[0] * a - 0.5 * b;
            g[1] += b;
        }
        if let Some(h) = h {
            h[0] += 3.0 * x[0] * x[0] - 1.0 + 0.25;
            h[1] += -0.5;
            h[2] += -0.5;
            h[3] += 1.0;
        }
        0.25 * a * a + 0.5 * b * b
    })
}

#[test]
fn indefinite_hessian_newton_shifts_and_converges() {
    let mut obj = double_well();
    let mut x = vec![0.1, 1.0];
    let mut newton = Newton::new();
    let rep = newton
        .solve(&mut obj, &mut x, &SolveOptions::default(), None)
        .unwrap();
    assert_eq!(rep.status, Status::GradientTolerance);
    assert!(
        rep.history[0].shift > 0.0,
        "the first Hessian is indefinite: a shift is needed"
    );
    assert!(
        (x[0] - 1.0).abs() < 1e-8 && (x[1] - 0.5).abs() < 1e-8,
        "{x:?}"
    );
    assert_eq!(
        newton.symbolic_factorizations(),
        1,
        "one pattern: one symbolic factorization"
    );
    for name in GENERAL {
        let mut obj = double_well();
        let mut x = vec![0.1, 1.0];
        let rep = solver(name)
            .solve(&mut obj, &mut x, &SolveOptions::default(), None)
            .unwrap();
        assert!(rep.status.converged(), "{name}");
        assert!(
            (x[0].abs() - 1.0).abs() < 1e-6 && (x[1] - 0.5 * x[0]).abs() < 1e-6,
            "{name}: {x:?}"
        );
    }
}

/// (x + y − 2)² + (z − 1)⁴: the Hessian is singular everywhere (x − y is free) and at z = 1.
fn singular() -> Dense {
    Dense::new(3, |x, g, h| {
        let a = x[0] + x[1] - 2.0;
        let c = x[2] - 1.0;
        if let Some(g) = g {
            g[0] += 2.0 * a;
            g[1] += 2.0 * a;
            g[2] += 4.0 * c * c * c;
        }
        if let Some(h) = h {
            for k in [0, 1, 3, 4] {
                h[k] += 2.0;
            }
            h[8] += 12.0 * c * c;
        }
        a * a + c * c * c * c
    })
}

#[test]
fn singular_hessian_converges_without_blowing_up() {
    for name in GENERAL {
        let mut obj = singular();
        let mut x = vec![3.0, -4.0, 3.0];
        let opts = SolveOptions {
            max_iters: 2000,
            ..Default::default()
        };
        let rep = solver(name).solve(&mut obj, &mut x, &opts, None).unwrap();
        assert!(rep.status.converged(), "{name}: {:?}", rep.status);
        assert!((x[0] + x[1] - 2.0).abs() < 1e-6, "{name}: {x:?}");
        assert!((x[2] - 1.0).abs() < 5e-3, "{name}: {x:?}");
        assert!(
            x[0].abs() < 10.0 && x[1].abs() < 10.0,
            "{name}: null direction blew up: {x:?}"
        );
    }
}

/// Σ c_i x_i − log x_i (+∞ for x_i ≤ 0): minimizer x_i = 1/c_i.
fn barrier(n: usize) -> Dense {
    Dense::new(n, move |x, g, h| {
        if x.iter().any(|&v| v <= 0.0) {
            return f64::INFINITY;
        }
        let f: f64 = x
            .iter()
            .enumerate()
            .map(|(i, &v)| (i + 1) as f64 * v - v.ln())
            .sum();
        if let Some(g) = g {
            for i in 0..n {
                g[i] += (i + 1) as f64 - 1.0 / x[i];
            }
        }
        if let Some(h) = h {
            for i in 0..n {
                h[i * n + i] += 1.0 / (x[i] * x[i]);
            }
        }
        f
    })
}

#[test]
fn barrier_energy_keeps_iterates_feasible() {
    let n = 5;
    for name in GENERAL {
        let mut obj = barrier(n);
        let mut x = vec![10.0; n];
        let opts = SolveOptions {
            max_iters: 1000,
            ..Default::default()
        };
        let rep = solver(name).solve(&mut obj, &mut x, &opts, None).unwrap();
        assert!(rep.status.converged(), "{name}: {:?}", rep.status);
        assert!(
            rep.history.iter().all(|i| i.energy.is_finite()),
            "{name}: infeasible iterate"
        );
        for (i, &v) in x.iter().enumerate() {
            assert!((v - 1.0 / (i + 1) as f64).abs() < 1e-6, "{name}: {x:?}");
        }
    }
    // Starting outside the domain is an error, not a solve.
    let mut obj = barrier(2);
    let mut x = vec![-1.0, 1.0];
    let err = solver("newton").solve(&mut obj, &mut x, &SolveOptions::default(), None);
    assert!(matches!(err, Err(SolveError::InfeasibleStart { .. })));
}

/// A quadratic whose energy becomes NaN everywhere after `after` evaluations.
struct NanAfter {
    inner: Dense,
    after: usize,
    calls: usize,
    nan_gradient: bool,
}

impl Objective for NanAfter {
    fn num_dofs(&self) -> usize {
        self.inner.num_dofs()
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        self.calls += 1;
        let f = self.inner.value(x)?;
        Ok(if self.calls > self.after && !self.nan_gradient {
            f64::NAN
        } else {
            f
        })
    }
    fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
        self.calls += 1;
        let f = self.inner.value_grad(x, g)?;
        if self.calls > self.after {
            if self.nan_gradient {
                g[0] = f64::NAN;
                return Ok(f);
            }
            return Ok(f64::NAN);
        }
        Ok(f)
    }
    fn hessian_pattern(&self) -> Option<&mad_runtime::sparse::CsrPattern> {
        self.inner.hessian_pattern()
    }
    fn hessian_values(&mut self, x: &[f64], p: bool, v: &mut [f64]) -> Result<(), SolveError> {
        self.inner.hessian_values(x, p, v)
    }
}

#[test]
fn nan_mid_solve_is_an_error_not_a_hang() {
    for nan_gradient in [false, true] {
        for name in GENERAL {
            let mut obj = NanAfter {
                inner: solve_common::rosenbrock(2),
                after: 4,
                calls: 0,
                nan_gradient,
            };
            let mut x = vec![-1.2, 1.0];
            let res = solver(name).solve(&mut obj, &mut x, &SolveOptions::default(), None);
            assert!(
                matches!(res, Err(SolveError::NonFinite { .. })),
                "{name} (NaN gradient: {nan_gradient}): {res:?}"
            );
            assert!(obj.calls < 200, "{name}: {} evaluations", obj.calls);
            assert!(x.iter().all(|v| v.is_finite()), "{name}: {x:?}");
        }
    }
}

#[test]
fn wrong_lengths_are_errors() {
    let mut obj = barrier(3);
    let mut x = vec![1.0; 2];
    let res = solver("lbfgs").solve(&mut obj, &mut x, &SolveOptions::default(), None);
    assert!(matches!(res, Err(SolveError::Dimension { .. })));
    let mut x = vec![1.0; 3];
    let opts = SolveOptions {
        fixed: Some(vec![true]),
        ..Default::default()
    };
    let res = solver("newton").solve(&mut obj, &mut x, &opts, None);
    assert!(matches!(res, Err(SolveError::Dimension { .. })));
    // Newton on an objective without a Hessian.
    struct NoHessian;
    impl Objective for NoHessian {
        fn num_dofs(&self) -> usize {
            1
        }
        fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
            Ok(x[0] * x[0])
        }
        fn value_grad(&mut self, x: &[f64], g: &mut [f64]) -> Result<f64, SolveError> {
            g[0] = 2.0 * x[0];
            Ok(x[0] * x[0])
        }
    }
    let res = solver("newton").solve(&mut NoHessian, &mut [1.0], &SolveOptions::default(), None);
    assert!(matches!(res, Err(SolveError::Unsupported(_))));
    // Newton-CG falls back on the finite-difference HVP.
    let mut x = [1.0];
    let rep = solver("newton-cg").solve(&mut NoHessian, &mut x, &SolveOptions::default(), None);
    assert!(rep.unwrap().status.converged() && x[0].abs() < 1e-8);
}

/// (x₀ − 3)² + x₁², NaN where x₀ > 2: the minimizer lies beyond a NaN wall, and the line
/// searches shorten their steps towards it until they fall below the step tolerance.
fn nan_wall() -> Dense {
    Dense::new(2, |x, g, h| {
        if x[0] > 2.0 {
            return f64::NAN;
        }
        if let Some(g) = g {
            g[0] += 2.0 * (x[0] - 3.0);
            g[1] += 2.0 * x[1];
        }
        if let Some(h) = h {
            h[0] += 2.0;
            h[3] += 2.0;
        }
        (x[0] - 3.0).powi(2) + x[1] * x[1]
    })
}

#[test]
fn a_step_shortened_against_a_nan_wall_is_stalled_not_converged() {
    let mut stalled = 0;
    for name in GENERAL {
        let mut obj = nan_wall();
        let mut x = vec![0.0, 1.0];
        let rep = solver(name).solve(&mut obj, &mut x, &SolveOptions::default(), None);
        let rep = match rep {
            Ok(r) => r,
            // Solvers that meet NaN at the smallest trial report it; that is not convergence either.
            Err(SolveError::NonFinite { .. }) => continue,
            Err(e) => panic!("{name}: {e:?}"),
        };
        assert_eq!(rep.status, Status::Stalled, "{name}: ‖g‖ {}", rep.grad_norm);
        assert!(!rep.status.converged());
        assert!(x[0] <= 2.0 && rep.grad_norm > 1.0, "{name}: {x:?}");
        stalled += 1;
    }
    assert!(stalled >= 3, "{stalled} solvers reached the wall");
}

/// −x₀ below a `+∞` wall at x₀ ≥ 1, with a zero Hessian: Newton's shifted step is huge
/// (1/shift times the gradient), and near the wall even its smallest backtracked trial is
/// still beyond it. That is a wall ahead, not a NaN: the search retries along the gradient,
/// and the solve ends `stalled` against the wall, for every solver.
fn linear_under_a_wall() -> Dense {
    Dense::new(1, |x, g, _h| {
        if x[0] >= 1.0 {
            return f64::INFINITY;
        }
        if let Some(g) = g {
            g[0] -= 1.0;
        }
        -x[0]
    })
}

#[test]
fn an_infinite_wall_beyond_the_smallest_trial_is_stalled_not_an_error() {
    for name in GENERAL {
        let mut obj = linear_under_a_wall();
        let mut x = vec![0.0];
        let rep = solver(name).solve(&mut obj, &mut x, &SolveOptions::default(), None);
        let rep = rep.unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(rep.status, Status::Stalled, "{name}: x {x:?}");
        assert!(x[0] < 1.0 && x[0] > 0.99, "{name}: {x:?}");
    }
}

/// Options outside their documented ranges (a shrink factor of 1 or NaN, c₁ ≥ 1, a NaN
/// tolerance) are an error before the solve, for every solver, not a stall or a misleading
/// "non-finite energy".
#[test]
fn options_outside_their_ranges_are_refused() {
    use mad_runtime::solve::LineSearch;
    let bad = [
        LineSearch { shrink: f64::NAN, ..LineSearch::default() },
        LineSearch { shrink: 1.0, ..LineSearch::default() },
        LineSearch { shrink: 0.0, ..LineSearch::default() },
        LineSearch { c1: 2.0, ..LineSearch::default() },
        LineSearch { max_backtracks: 0, ..LineSearch::default() },
    ];
    for name in GENERAL.iter().chain(&["gauss-newton", "lm"]) {
        for ls in &bad {
            let opts = SolveOptions { line_search: *ls, ..SolveOptions::default() };
            let mut x = vec![0.1, 1.0];
            let r = solver(name).solve(&mut double_well(), &mut x, &opts, None);
            assert!(matches!(r, Err(SolveError::InvalidOption(_))), "{name} {ls:?}: {r:?}");
            assert_eq!(x, vec![0.1, 1.0], "{name}: x moved");
        }
        let opts = SolveOptions { grad_abs_tol: f64::NAN, ..SolveOptions::default() };
        let r = solver(name).solve(&mut double_well(), &mut [0.1, 1.0], &opts, None);
        assert!(matches!(r, Err(SolveError::InvalidOption(_))), "{name}: {r:?}");
    }
}

/// The solvers' own settings out of range are errors before the solve too: a NaN or negative
/// Levenberg–Marquardt μ ended as "stalled" after no iteration, a shift growth of 1 as "no
/// diagonal shift up to 0".
#[test]
fn solver_settings_outside_their_ranges_are_refused() {
    use mad_runtime::solve::{GaussNewton, GaussNewtonLinear, GradientDescent, Lbfgs, LevenbergMarquardt, NewtonCg, Solver};
    let mut cases: Vec<(&str, Solver)> = Vec::new();
    for mu in [f64::NAN, -1.0, 0.0] {
        let mut gn = GaussNewton::new(GaussNewtonLinear::Assembled);
        gn.damping = Some(LevenbergMarquardt { initial_mu: mu, ..LevenbergMarquardt::default() });
        cases.push(("initial_mu", Solver::GaussNewton(gn)));
    }
    let mut n = Newton::new();
    n.shift.growth = 1.0;
    cases.push(("shift.growth", Solver::Newton(n)));
    let mut n = Newton::new();
    n.shift.initial = f64::NAN;
    cases.push(("shift.initial", Solver::Newton(n)));
    let mut cg = NewtonCg::new();
    cg.cg.forcing = f64::NAN;
    cases.push(("cg.forcing", Solver::NewtonCg(cg)));
    let mut l = Lbfgs::new(5);
    l.memory = 0;
    cases.push(("memory", Solver::Lbfgs(l)));
    let mut gd = GradientDescent::new();
    gd.step = Some(-1.0);
    cases.push(("step", Solver::GradientDescent(gd)));
    for (field, mut s) in cases {
        let mut x = vec![0.1, 1.0];
        let r = s.solve(&mut double_well(), &mut x, &SolveOptions::default(), None);
        match r {
            Err(SolveError::InvalidOption(m)) => assert!(m.starts_with(field), "{field}: {m}"),
            other => panic!("{field}: {other:?}"),
        }
        assert_eq!(x, vec![0.1, 1.0], "{field}: x moved");
    }
}
