//! Random symmetric blocks shared by the eigensolver and PSD-projection tests: a small LCG,
//! blocks with a chosen spectrum, and element-Hessian-like blocks with a translation null space.
#![allow(dead_code)]

/// A 64-bit linear congruential generator (uniform numbers in [-1, 1)).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// A k×k symmetric matrix with uniform entries.
pub fn random_sym(k: usize, rng: &mut Lcg) -> Vec<f64> {
    let mut a = vec![0.0; k * k];
    for i in 0..k {
        for j in i..k {
            let v = rng.uniform();
            a[i * k + j] = v;
            a[j * k + i] = v;
        }
    }
    a
}

/// Q·diag(l)·Qᵀ with Q a product of three random Householder reflections.
pub fn with_spectrum(l: &[f64], rng: &mut Lcg) -> Vec<f64> {
    let k = l.len();
    let mut q = vec![0.0; k * k];
    for i in 0..k {
        q[i * k + i] = 1.0;
    }
    for _ in 0..3 {
        let v: Vec<f64> = (0..k).map(|_| rng.uniform()).collect();
        let vv: f64 = v.iter().map(|x| x * x).sum();
        // q ← q (I - 2 v vᵀ / vᵀv)
        for r in 0..k {
            let qv: f64 = (0..k).map(|c| q[r * k + c] * v[c]).sum();
            for c in 0..k {
                q[r * k + c] -= 2.0 * qv * v[c] / vv;
            }
        }
    }
    let mut a = vec![0.0; k * k];
    for i in 0..k {
        for j in 0..k {
            a[i * k + j] = (0..k).map(|m| q[i * k + m] * l[m] * q[j * k + m]).sum();
        }
    }
    a
}

pub fn max_abs(a: &[f64]) -> f64 {
    a.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

pub fn frob(a: &[f64]) -> f64 {
    a.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// Σ_r w_r g_r g_rᵀ over n vertices of d components (vertex-major), each g_r summing to zero
/// per component over the vertices unless `invariant` is false: then the translations are an
/// exact null space (up to the rounding of forming the sum), as in element Hessians. Negative
/// weights make it indefinite.
pub fn block(n: usize, d: usize, weights: &[f64], invariant: bool, rng: &mut Lcg) -> Vec<f64> {
    let k = n * d;
    let mut a = vec![0.0; k * k];
    for &w in weights {
        let mut g: Vec<f64> = (0..k).map(|_| rng.uniform()).collect();
        if invariant {
            for c in 0..d {
                let mean = (0..n).map(|v| g[v * d + c]).sum::<f64>() / n as f64;
                for v in 0..n {
                    g[v * d + c] -= mean;
                }
            }
        }
        for i in 0..k {
            for j in i..k {
                a[i * k + j] += w * g[i] * g[j];
            }
        }
    }
    for i in 0..k {
        for j in 0..i {
            a[i * k + j] = a[j * k + i];
        }
    }
    a
}

/// [`block`] with the translation null space, over n vertices of d components.
pub fn invariant_block(n: usize, d: usize, weights: &[f64], rng: &mut Lcg) -> Vec<f64> {
    block(n, d, weights, true, rng)
}

/// [`block`] with the translation null space over k/3 vertices in 3-D.
pub fn element_like(k: usize, weights: &[f64], rng: &mut Lcg) -> Vec<f64> {
    block(k / 3, 3, weights, true, rng)
}
