//! grad and hessian.
