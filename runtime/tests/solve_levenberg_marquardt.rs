//! Levenberg–Marquardt (Gauss-Newton with damping, assembled and matrix-free) on residual
//! problems with known minimizers: Rosenbrock as residuals, a noise-free curve fit, a
//! rank-deficient fit; rejected steps, infeasible and NaN trial points, fixed dofs, stopping.

use std::cell::Cell;
use std::rc::Rc;

use mad_runtime::solve::{
    CgOptions, Control, GaussNewton, GaussNewtonLinear, IterationInfo, JacobianPattern, Objective,
    ShiftOptions, SolveError, SolveOptions, Solver, Status,
};

/// `f(x, r, jac)`: writes the residuals and, when asked, the dense row-major Jacobian.
type ResidualFn = dyn FnMut(&[f64], &mut [f64], Option<&mut [f64]>);

/// A residual objective with a dense Jacobian, counting its evaluations.
struct Residuals {
    n: usize,
    pattern: JacobianPattern,
    f: Box<ResidualFn>,
    residual_calls: usize,
    jacobian_calls: usize,
}

impl Residuals {
    fn new(
        m: usize,
        n: usize,
        f: impl FnMut(&[f64], &mut [f64], Option<&mut [f64]>) + 'static,
    ) -> Residuals {
        let pattern = JacobianPattern::from_entries(
            m,
            n,
            (0..m as u32).flat_map(|r| (0..n as u32).map(move |c| (r, c))),
        );
        Residuals {
            n,
            pattern,
            f: Box::new(f),
            residual_calls: 0,
            jacobian_calls: 0,
        }
    }
}

impl Objective for Residuals {
    fn num_dofs(&self) -> usize {
        self.n
    }
    fn value(&mut self, x: &[f64]) -> Result<f64, SolveError> {
        let mut r = vec![0.0; self.pattern.rows];
        (self.f)(x, &mut r, None);
        Ok(0.5 * r.iter().map(|v| v * v).sum::<f64>())
    }
    fn value_grad(&mut self, _x: &[f64], _g: &mut [f64]) -> Result<f64, SolveError> {
        Err(SolveError::Unsupported(
            "a gradient (residual-only test objective)",
        ))
    }
    fn jacobian_pattern(&self) -> Option<&JacobianPattern> {
        Some(&self.pattern)
    }
    fn residuals(&mut self, x: &[f64], r: &mut [f64]) -> Result<(), SolveError> {
        self.residual_calls += 1;
        (self.f)(x, r, None);
        Ok(())
    }
    fn residuals_jacobian(
        &mut self,
        x: &[f64],
        r: &mut [f64],
        jac: &mut [f64],
    ) -> Result<(), SolveError> {
        self.jacobian_calls += 1;
        (self.f)(x, r, Some(jac));
        Ok(())
    }
}

/// Rosenbrock as residuals: r = (10(y − x²), 1 − x), minimizer (1, 1). With a `wall`, the
/// residuals are +∞ where y < −1 (an infeasible region the first Gauss-Newton step enters),
/// and the wall counts the evaluations that hit it.
fn rosenbrock(wall: Option<Rc<Cell<usize>>>) -> Residuals {
    Residuals::new(2, 2, move |x, r, jac| {
        let inf = wall.as_ref().is_some_and(|w| {
            let hit = x[1] < -1.0;
            w.set(w.get() + hit as usize);
            hit
        });
        r[0] = if inf {
            f64::INFINITY
        } else {
            10.0 * (x[1] - x[0] * x[0])
        };
        r[1] = 1.0 - x[0];
        if let Some(j) = jac {
            j.copy_from_slice(&[-20.0 * x[0], 10.0, -1.0, 0.0]);
        }
    })
}

fn lm(linear: GaussNewtonLinear) -> GaussNewton {
    GaussNewton::levenberg_marquardt(linear)
}

fn both() -> [GaussNewtonLinear; 2] {
    [
        GaussNewtonLinear::Assembled,
        GaussNewtonLinear::MatrixFree(Default::default()),
    ]
}

/// Both linear solvers, CG solving to 1e-12 relative so that both take the same steps.
fn both_exact() -> [GaussNewtonLinear; 2] {
    [
        GaussNewtonLinear::Assembled,
        GaussNewtonLinear::MatrixFree(CgOptions {
            forcing: 1e-12,
            max_iters: 0,
        }),
    ]
}

fn tight() -> SolveOptions {
    SolveOptions {
        grad_abs_tol: 1e-12,
        max_iters: 100,
        ..Default::default()
    }
}

#[test]
fn rosenbrock_residuals_reach_the_minimizer() {
    for linear in both() {
        let mut obj = rosenbrock(None);
        let mut x = [-1.2, 1.0];
        let rep = lm(linear).solve(&mut obj, &mut x, &tight(), None).unwrap();
        assert!(rep.status.converged(), "{linear:?}: {:?}", rep.status);
        assert!(
            (x[0] - 1.0).abs() < 1e-9 && (x[1] - 1.0).abs() < 1e-9,
            "{linear:?}: {x:?}"
        );
        // Measured: 25 assembled, 35 with the default inexact CG (forcing 0.5).
        eprintln!("{linear:?}: {} iterations", rep.iterations);
        assert!(rep.iterations <= 50, "{linear:?}: {}", rep.iterations);
    }
}

#[test]
fn a_rejected_step_raises_mu_and_costs_one_residual_evaluation() {
    let mut obj = rosenbrock(None);
    let mut x = [-1.2, 1.0];
    let mut solver = lm(GaussNewtonLinear::Assembled);
    let mu0 = solver.damping.unwrap().initial_mu;
    let rep = solver.solve(&mut obj, &mut x, &tight(), None).unwrap();
    // The undamped step from (−1.2, 1) lands at (1, −3.84), energy 1171 > 12.1: rejected.
    let first = &rep.history[0];
    let k = first.backtracks;
    assert!(k >= 1, "the first step was not rejected");
    // Nielsen: rejection i multiplies μ by ν = 2^i.
    let grown = mu0 * 2f64.powi((k * (k + 1) / 2) as i32);
    assert_eq!(first.mu, Some(grown));
    assert!(rep.history.iter().all(|h| h.mu.is_some_and(|m| m > 0.0)));
    // One Jacobian per accepted point (plus the start); one residual evaluation per trial.
    let rejected: usize = rep.history.iter().map(|h| h.backtracks).sum();
    assert_eq!(obj.jacobian_calls, rep.iterations + 1);
    assert_eq!(obj.residual_calls, rep.iterations + rejected);
    // Assembled: one symbolic factorization, one numeric one per trial.
    assert_eq!(solver.symbolic_factorizations(), 1);
    assert_eq!(solver.numeric_factorizations(), rep.iterations + rejected);
}

#[test]
fn an_infinite_trial_energy_is_rejected() {
    for linear in both_exact() {
        let hits = Rc::new(Cell::new(0));
        let mut obj = rosenbrock(Some(hits.clone()));
        let mut x = [-1.2, 1.0];
        let mut energies = Vec::new();
        let mut cb = |it: &IterationInfo| {
            energies.push(it.energy);
            Control::Continue
        };
        let rep = lm(linear)
            .solve(&mut obj, &mut x, &tight(), Some(&mut cb))
            .unwrap();
        assert!(rep.status.converged(), "{linear:?}: {:?}", rep.status);
        assert!(rep.history[0].backtracks >= 1);
        assert!(
            hits.get() >= 1,
            "{linear:?}: no trial point behind the wall"
        );
        assert!(energies.iter().all(|e| e.is_finite()));
        assert!((x[0] - 1.0).abs() < 1e-9 && (x[1] - 1.0).abs() < 1e-9);
    }
}

#[test]
fn a_nan_trial_energy_is_an_error() {
    // r = x − 3, NaN beyond x = 1: the first step (to x = 3) gives NaN.
    let mut obj = Residuals::new(1, 1, |x, r, jac| {
        r[0] = if x[0] > 1.0 { f64::NAN } else { x[0] - 3.0 };
        if let Some(j) = jac {
            j[0] = 1.0;
        }
    });
    let res = lm(GaussNewtonLinear::Assembled).solve(&mut obj, &mut [0.0], &tight(), None);
    assert!(
        matches!(
            res,
            Err(SolveError::NonFinite {
                iteration: 1,
                what: "energy at a trial point"
            })
        ),
        "{res:?}"
    );
}

/// y = a·exp(−b·t) + c·sin(d·t) sampled without noise.
const TRUE: [f64; 4] = [2.0, 0.7, 0.5, 1.3];

fn curve_fit() -> Residuals {
    let t: Vec<f64> = (0..40).map(|i| i as f64 * 0.15).collect();
    let model = |p: &[f64], t: f64| {
        let e = (-p[1] * t).exp();
        let (s, c) = (p[3] * t).sin_cos();
        (p[0] * e + p[2] * s, [e, -p[0] * t * e, s, p[2] * t * c])
    };
    let y: Vec<f64> = t.iter().map(|&t| model(&TRUE, t).0).collect();
    Residuals::new(t.len(), 4, move |x, r, mut jac| {
        for i in 0..t.len() {
            let (m, d) = model(x, t[i]);
            r[i] = m - y[i];
            if let Some(j) = jac.as_deref_mut() {
                j[4 * i..4 * i + 4].copy_from_slice(&d);
            }
        }
    })
}

#[test]
fn curve_fit_recovers_known_parameters() {
    for linear in both() {
        for start in [[1.5, 0.5, 0.8, 1.2], [1.0, 0.2, 1.0, 1.0]] {
            let mut obj = curve_fit();
            let mut x = start;
            let rep = lm(linear).solve(&mut obj, &mut x, &tight(), None).unwrap();
            assert!(
                rep.status.converged(),
                "{linear:?} {start:?}: {:?}",
                rep.status
            );
            for k in 0..4 {
                assert!((x[k] - TRUE[k]).abs() < 1e-8, "{linear:?} {start:?}: {x:?}");
            }
            assert!(rep.energy < 1e-20);
        }
    }
}

/// r_i = (a + b)·exp(−c·t_i) − y_i with y from a + b = 1.5, c = 0.8, and a fourth unknown no
/// residual touches: J has two equal columns and a zero column, so JᵀJ is singular.
fn rank_deficient() -> Residuals {
    let t: Vec<f64> = (0..20).map(|i| i as f64 * 0.25).collect();
    let y: Vec<f64> = t.iter().map(|&t| 1.5 * (-0.8 * t).exp()).collect();
    Residuals::new(t.len(), 4, move |x, r, mut jac| {
        for i in 0..t.len() {
            let e = (-x[2] * t[i]).exp();
            r[i] = (x[0] + x[1]) * e - y[i];
            if let Some(j) = jac.as_deref_mut() {
                j[4 * i..4 * i + 4].copy_from_slice(&[e, e, -(x[0] + x[1]) * t[i] * e, 0.0]);
            }
        }
    })
}

#[test]
fn a_rank_deficient_jacobian_is_handled() {
    // Plain Gauss-Newton without a diagonal shift cannot factor JᵀJ.
    let mut plain = GaussNewton::new(GaussNewtonLinear::Assembled);
    plain.shift = ShiftOptions {
        initial: 0.0,
        max_attempts: 3,
        ..Default::default()
    };
    let res = plain.solve(
        &mut rank_deficient(),
        &mut [0.2, 0.4, 0.3, 7.0],
        &tight(),
        None,
    );
    assert!(
        matches!(res, Err(SolveError::Factorization { .. })),
        "{res:?}"
    );
    for linear in both() {
        let mut obj = rank_deficient();
        let mut x = [0.2, 0.4, 0.3, 7.0];
        let rep = lm(linear).solve(&mut obj, &mut x, &tight(), None).unwrap();
        assert!(rep.status.converged(), "{linear:?}: {:?}", rep.status);
        // The minimizers form the line a + b = 1.5, c = 0.8. Marquardt damping treats the
        // equal columns alike, so every step changes a and b equally: a − b stays −0.2.
        assert!((x[0] + x[1] - 1.5).abs() < 1e-9, "{linear:?}: {x:?}");
        assert!((x[0] - x[1] + 0.2).abs() < 1e-9, "{linear:?}: {x:?}");
        assert!((x[2] - 0.8).abs() < 1e-9, "{linear:?}: {x:?}");
        assert_eq!(x[3], 7.0);
    }
}

#[test]
fn fixed_dofs_keep_their_values() {
    for linear in both() {
        let mut obj = rank_deficient();
        let mut x = [0.2, 0.4, 0.3, 7.0];
        let opts = SolveOptions {
            fixed: Some(vec![false, true, false, false]),
            ..tight()
        };
        let rep = lm(linear).solve(&mut obj, &mut x, &opts, None).unwrap();
        assert!(rep.status.converged(), "{linear:?}: {:?}", rep.status);
        assert_eq!(x[1], 0.4);
        assert!(
            (x[0] - 1.1).abs() < 1e-9 && (x[2] - 0.8).abs() < 1e-9,
            "{x:?}"
        );
    }
}

#[test]
fn stopping_rules_and_callbacks() {
    let mut obj = curve_fit();
    let opts = SolveOptions {
        max_iters: 2,
        ..tight()
    };
    let rep = lm(GaussNewtonLinear::Assembled)
        .solve(&mut obj, &mut [1.0, 0.2, 1.0, 1.0], &opts, None)
        .unwrap();
    assert_eq!((rep.status, rep.iterations), (Status::MaxIterations, 2));
    let mut seen = 0;
    let mut cb = |it: &IterationInfo| {
        seen += 1;
        assert_eq!(it.iteration, seen);
        assert!(it.step_norm > 0.0 && it.timings.total() > std::time::Duration::ZERO);
        if seen == 3 {
            Control::Stop
        } else {
            Control::Continue
        }
    };
    let rep = lm(GaussNewtonLinear::Assembled)
        .solve(&mut obj, &mut [1.0, 0.2, 1.0, 1.0], &tight(), Some(&mut cb))
        .unwrap();
    assert_eq!((rep.status, rep.iterations), (Status::Stopped, 3));
    // Energies never rise: every accepted step has ρ > 0.
    let rep = lm(GaussNewtonLinear::Assembled)
        .solve(&mut curve_fit(), &mut [1.0, 0.2, 1.0, 1.0], &tight(), None)
        .unwrap();
    let mut last = rep.initial_energy;
    for h in &rep.history {
        assert!(h.energy < last);
        last = h.energy;
    }
    // A start at the minimizer stops on the gradient rule at once.
    let rep = lm(GaussNewtonLinear::Assembled)
        .solve(&mut curve_fit(), &mut TRUE.clone(), &tight(), None)
        .unwrap();
    assert_eq!((rep.status, rep.iterations), (Status::GradientTolerance, 0));
}

#[test]
fn chosen_by_name() {
    for name in [
        "levenberg-marquardt",
        "lm",
        "levenberg-marquardt-cg",
        "lm-cg",
    ] {
        assert!(Solver::NAMES.contains(&name));
        let mut s = Solver::from_name(name).unwrap();
        let mut x = [-1.2, 1.0];
        let rep = s
            .solve(&mut rosenbrock(None), &mut x, &tight(), None)
            .unwrap();
        assert!(rep.status.converged(), "{name}");
        assert!(rep.history.iter().all(|h| h.mu.is_some()), "{name}");
        assert!((x[0] - 1.0).abs() < 1e-9, "{name}: {x:?}");
    }
    let mut gn = Solver::from_name("gauss-newton").unwrap();
    let rep = gn
        .solve(&mut rosenbrock(None), &mut [-1.2, 1.0], &tight(), None)
        .unwrap();
    assert!(rep.history.iter().all(|h| h.mu.is_none()));
}
