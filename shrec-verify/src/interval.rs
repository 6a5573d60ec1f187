//! Interval arithmetic on reference lanes, shared by the AGAL, PICA and Xenos interpreters: an
//! [`Expect`] stands for the interval `[value - err, value + err]`, and a result's bound covers
//! the exact-math range of the op over its inputs' intervals.

use crate::Expect;

/// The low end of the lane's interval.
pub fn lo(x: Expect) -> f64 {
    f64::from(x.value) - f64::from(x.err)
}

/// The high end of the lane's interval.
pub fn hi(x: Expect) -> f64 {
    f64::from(x.value) + f64::from(x.err)
}

/// Whether the lane is one exact value (no error bound).
pub fn is_exact(x: Expect) -> bool {
    x.err == 0.0
}

/// A result lane. `r` is the f32 result for the nominal inputs, `inputs_exact` whether every
/// input lane was exact, `range` the exact-math range of the op over the input intervals (None =
/// undetermined), `tol` the op's own bound. An exact op (`tol` 0) on exact inputs must give
/// these bits, inf and NaN included, except a subnormal result (Vulkan may flush it); otherwise
/// [`Expect::bounded`].
pub fn exact_or_bounded(r: f32, inputs_exact: bool, range: impl FnOnce() -> Option<(f64, f64)>, tol: f64) -> Expect {
    if inputs_exact && tol == 0.0 {
        if r != 0.0 && r.is_finite() && r.abs() < f32::MIN_POSITIVE {
            return Expect::UNKNOWN;
        }
        return Expect::exact(r);
    }
    Expect::bounded(r, inputs_exact, range, tol)
}

/// The lane's interval as (low, high).
pub fn iv(x: Expect) -> (f64, f64) {
    (lo(x), hi(x))
}

/// The range of `a × b` over two intervals.
pub fn mul_range(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    let p = [a.0 * b.0, a.0 * b.1, a.1 * b.0, a.1 * b.1];
    (p.iter().copied().fold(f64::INFINITY, f64::min), p.iter().copied().fold(f64::NEG_INFINITY, f64::max))
}
