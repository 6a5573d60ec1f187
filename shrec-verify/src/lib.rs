//! Verification by execution: run the SPIR-V shrec produces on a real Vulkan driver (Mesa
//! lavapipe, on the CPU) and compare every output lane with a reference interpreter of the
//! ORIGINAL instruction set.
//!
//! Layers, from the bottom:
//! - [`vk`]: family-agnostic Vulkan harness ([`vk::VertexJob`], [`vk::FragmentJob`]): SPIR-V in,
//!   captured outputs out;
//! - this module: family-agnostic comparison ([`Expect`], [`Tolerance`], [`Comparison`]);
//! - [`check`]: family-agnostic driver: compiles a translated IR module as the build does, builds
//!   the job from the module's interface, runs it and compares with a reference callback;
//! - one adapter per family ([`agal`]): translate a program with shrec, turn its inputs into
//!   [`vk::VertexInvocation`]s / [`vk::FragmentQuad`]s, call [`check`] with the family's reference
//!   interpreter (`formats::<family>::interp`); plus that family's random program and input
//!   generator.
//!
//! A new family plugs in with an interpreter that returns [`Expect`] per output lane and an input
//! generator; the harness, the comparison and the reporting are shared.
//!
//! Reference values carry an error bound: 0 means the GPU must produce the same bits (with
//! `-0 == +0` and any NaN equal to any NaN), a positive bound allows that much absolute
//! difference, and an infinite bound means "not determined" (e.g. a comparison whose operands are
//! within the error of an earlier approximate op): such lanes are counted as inconclusive, never
//! as matches.

pub mod agal;
pub mod agal_shaped;
pub mod check;
pub mod gx2;
pub mod gx2_gs;
pub mod gx2_stream;
pub mod interp;
pub mod interval;
pub mod mutation;
pub mod pica;
pub mod pica_shaped;
pub mod shrec_cpp;
pub mod vk;
pub mod xenos;
pub mod xenosrecomp;

use std::collections::BTreeSet;

/// A reference lane: the value and how far the GPU may be from it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Expect {
    pub value: f32,
    /// Allowed absolute difference: 0 = bitwise exact, `INFINITY` = unknown (not compared).
    pub err: f32,
}

impl Expect {
    pub const UNKNOWN: Expect = Expect { value: f32::NAN, err: f32::INFINITY };

    pub fn exact(value: f32) -> Expect {
        Expect { value, err: 0.0 }
    }

    /// The interpreters' rule for an inexact result: `r` is the f32 result for the nominal
    /// inputs, `range` the exact-math result range over the input intervals (`None` =
    /// undetermined), `tol` the op's own bound. Non-finite and subnormal results are
    /// undetermined (Vulkan may flush denormals and does not pin down inf/NaN arithmetic); the
    /// bound is rounded up to the next f32.
    pub fn bounded(r: f32, inputs_exact: bool, range: impl FnOnce() -> Option<(f64, f64)>, tol: f64) -> Expect {
        if !r.is_finite() || (r != 0.0 && r.abs() < f32::MIN_POSITIVE) {
            return Expect::UNKNOWN;
        }
        let mut err = tol;
        if !inputs_exact {
            match range() {
                Some((l, h)) if l.is_finite() && h.is_finite() => {
                    let rv = f64::from(r);
                    err += (h - rv).max(rv - l).max(0.0) + ulp(rv);
                }
                _ => return Expect::UNKNOWN,
            }
        }
        if err.is_nan() || err >= 1e30 {
            return Expect::UNKNOWN;
        }
        let e = err as f32;
        let e = if f64::from(e) < err { f32::from_bits(e.to_bits() + 1) } else { e };
        Expect { value: r, err: e }
    }
    pub fn is_known(&self) -> bool {
        self.err.is_finite()
    }
    /// The value when it is known, exact (no error bound) and finite: what a reference can
    /// compute further with (derivatives, LODs) without carrying an error.
    pub fn exact_finite(&self) -> Option<f32> {
        (self.is_known() && self.err == 0.0 && self.value.is_finite()).then_some(self.value)
    }
    /// True when `got` is acceptable.
    pub fn accepts(&self, got: f32) -> bool {
        if !self.is_known() {
            return true;
        }
        if self.err == 0.0 {
            return bits_equal(got, self.value);
        }
        if self.value.is_nan() || got.is_nan() {
            return self.value.is_nan() && got.is_nan();
        }
        (f64::from(got) - f64::from(self.value)).abs() <= f64::from(self.err)
    }
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.is_known() {
            f.write_str("unknown")
        } else if self.err == 0.0 {
            write!(f, "{:?} (0x{:08X})", self.value, self.value.to_bits())
        } else {
            write!(f, "{:?} ± {:e}", self.value, self.err)
        }
    }
}

/// `range` cut into `parts` consecutive pieces of (almost) equal length, for running one
/// piece per thread.
pub fn split_range(range: std::ops::Range<u64>, parts: u64) -> Vec<std::ops::Range<u64>> {
    let len = range.end - range.start;
    (0..parts).map(|t| range.start + len * t / parts..range.start + len * (t + 1) / parts).collect()
}

/// A number from the environment for the long-mode tests (`SHREC_FUZZ_PROGRAMS`,
/// `SHREC_FUZZ_SEED`, ...): `default` when the variable is unset or not a number.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// The programs a long mode runs: `SHREC_FUZZ_PROGRAMS` of them (default `default_count`) from
/// program `SHREC_FUZZ_FROM` (default 0), so that every family's long run can be done in parts
/// with the same two variables.
pub fn long_run_programs(default_count: u64) -> std::ops::Range<u64> {
    let from = env_u64("SHREC_FUZZ_FROM", 0);
    from..from + env_u64("SHREC_FUZZ_PROGRAMS", default_count)
}

/// Exact comparison: same bits, except that `-0 == +0` and every NaN equals every NaN.
/// With `SHREC_VERIFY_ZERO_SIGNS=1` (a measurement, not a verdict: see
/// docs/spirv-direct.md "What is left") the sign of a zero counts too.
pub fn bits_equal(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a == 0.0 && b == 0.0 && !zero_signs_compared()) || (a.is_nan() && b.is_nan())
}

/// `SHREC_VERIFY_ZERO_SIGNS=1`: exact lanes compare the sign of a zero. Off by default: the
/// interpreters do not model which zero a driver's constant folds leave (lavapipe's gallivm adds
/// `x + 0.0` as `x` and multiplies `x · 0.0` as `+0` before any IEEE rule).
pub fn zero_signs_compared() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("SHREC_VERIFY_ZERO_SIGNS").as_deref() == Ok("1"))
}

/// Size of one unit in the last place at `x` (for 0: the smallest normal's ULP).
/// Largest |texel-space coordinate| (texels from the edge) whose nearest texel the interpreters
/// claim to know. Beyond it the GPU's float → integer texel conversion may overflow, and Vulkan
/// leaves that result undefined: lavapipe turns FLT_MAX · size into +inf and then into texel 0 of
/// a clamped 2D texture, where clamp-to-edge arithmetic says the last texel (Xenos `long_fuzz`
/// seed 1 #2276, coordinates that a loop had driven to FLT_MAX). 2^24 keeps every integer exact.
pub const TEXEL_COORD_LIMIT: f64 = 16_777_216.0;

/// The shape of a texture a harness binds and a reference interpreter samples: a 2D texture (1D
/// fetches read a one-texel-high one), a cube map (six square faces +X −X +Y −Y +Z −Z), a
/// volume (square slices front to back) or a 2D array (slices of one size, bound as a
/// `Texture2DArray` view). A fetch of another dimension is undetermined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TextureShape {
    #[default]
    Flat,
    Cube,
    Volume,
    FlatArray,
    /// Cubes of six faces each (`layers` cubes).
    CubeArray,
}

impl TextureShape {
    /// The shape an IR texture of dimension `dim` is bound as (1D on a 2D texture).
    pub fn of(dim: shrec::ir::TexDim) -> TextureShape {
        match dim {
            shrec::ir::TexDim::Cube => TextureShape::Cube,
            shrec::ir::TexDim::CubeArray => TextureShape::CubeArray,
            shrec::ir::TexDim::D3 => TextureShape::Volume,
            shrec::ir::TexDim::D1 | shrec::ir::TexDim::D2 => TextureShape::Flat,
            shrec::ir::TexDim::D1Array | shrec::ir::TexDim::D2Array => TextureShape::FlatArray,
        }
    }
}

/// The texel nearest filtering picks on an axis of `n` texels, clamped to the edge, for a
/// texel-space coordinate known to lie in [`lo`, `hi`]. None when the interval, widened by
/// `margin` on both sides, reaches a texel boundary inside the texture (the GPU's rounding
/// could go either way), or leaves ±[`TEXEL_COORD_LIMIT`]. Shared by the Xenos and GX2
/// interpreters; cube faces use [`cube_texel`] (no clamping there).
pub fn nearest_clamped(lo: f64, hi: f64, n: u32, margin: f64) -> Option<u32> {
    if !(lo.abs() <= TEXEL_COORD_LIMIT && hi.abs() <= TEXEL_COORD_LIMIT) {
        return None;
    }
    let last = f64::from(n.max(1) - 1);
    let (a, b) = ((lo - margin).floor().clamp(0.0, last), (hi + margin).floor().clamp(0.0, last));
    (a == b).then_some(a as u32)
}

/// Nearest sampling of a cube map from face coordinates, shared by the GX2 and Xenos
/// interpreters (both GPUs' fetches take s, t in [1, 2] and a face id, `formats::cube`): `s`
/// and `t` are the intervals the coordinates are known to lie in, `face` 0-5 (+x −x +y −y +z −z),
/// `texels` six faces of `size`×`size` (Vulkan layer order, rows top to bottom). The texel is
/// floor((c − 1) · size) in each direction; None when an interval reaches within 1/64 texel of a
/// texel boundary or leaves the face (face edges included: the host's choice of face there is
/// not the guest's).
pub fn cube_texel(texels: &[[f32; 4]], size: u32, face: usize, s: (f64, f64), t: (f64, f64)) -> Option<[f32; 4]> {
    let n = size as usize;
    if face > 5 || texels.len() < 6 * n * n {
        return None;
    }
    let size = f64::from(size);
    let texel = |(lo, hi): (f64, f64)| -> Option<usize> {
        let margin = 1.0 / 64.0;
        let (lo, hi) = ((lo - 1.0) * size - margin, (hi - 1.0) * size + margin);
        (lo >= 0.0 && hi < size && lo.floor() == hi.floor()).then_some(lo.floor() as usize)
    };
    let (i, j) = (texel(s)?, texel(t)?);
    Some(texels[face * n * n + j * n + i])
}

pub fn ulp(x: f64) -> f64 {
    let x = (x.abs() as f32).max(f32::MIN_POSITIVE);
    if !x.is_finite() {
        return f64::INFINITY;
    }
    f64::from(f32::from_bits(x.to_bits() + 1) - x)
}

/// The error an operation may add on top of what its inputs carried:
/// `ulps·ulp(max(|r|, scale)) + abs + rel·|r| + abs_per_scale·scale + rel_per_scale·scale·|r|`,
/// where `r` is the exact result and `scale` an op-specific conditioning number chosen by the
/// interpreter (e.g. `Σ|aᵢbᵢ|` for a dot product, `|x|` for `sin x`, `|b·log2 a|` for `pow`).
/// All zero = exact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub ulps: f64,
    pub abs: f64,
    pub rel: f64,
    pub abs_per_scale: f64,
    pub rel_per_scale: f64,
}

impl Tolerance {
    pub const EXACT: Tolerance = Tolerance { ulps: 0.0, abs: 0.0, rel: 0.0, abs_per_scale: 0.0, rel_per_scale: 0.0 };

    pub const fn ulps(n: f64) -> Tolerance {
        Tolerance { ulps: n, ..Self::EXACT }
    }
    pub fn is_exact(&self) -> bool {
        *self == Self::EXACT
    }
    pub fn bound(&self, result: f64, scale: f64) -> f64 {
        let r = result.abs();
        let s = scale.abs();
        self.ulps * ulp(r.max(s)) + self.abs + self.rel * r + self.abs_per_scale * s + self.rel_per_scale * s * r
    }
}

/// Counts and the first mismatches of a verification run.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Lanes compared (known reference values).
    pub comparisons: u64,
    pub mismatches: u64,
    /// Lanes whose reference value was not determined (not compared).
    pub inconclusive: u64,
    /// Opcodes the reference interpreter executed (for coverage).
    pub opcodes: BTreeSet<String>,
    /// Programs run.
    pub programs: u64,
    /// Largest observed `|gpu - reference|` on toleranced lanes: absolute, in ULPs of the
    /// reference (references below 2^-20 excluded), and as a fraction of the allowed bound (for
    /// measuring tolerances).
    pub worst_abs: f64,
    pub worst_ulps: f64,
    pub worst_fraction: f64,
    /// Reports of the first mismatching programs (capped at [`Comparison::MAX_REPORTS`]).
    pub reports: Vec<String>,
}

impl Comparison {
    pub const MAX_REPORTS: usize = 8;

    /// Compares one lane; returns true when it matched (or was not determined).
    pub fn lane(&mut self, got: f32, want: Expect) -> bool {
        if !want.is_known() {
            self.inconclusive += 1;
            return true;
        }
        self.comparisons += 1;
        if want.err > 0.0 && got.is_finite() {
            let d = (f64::from(got) - f64::from(want.value)).abs();
            self.worst_abs = self.worst_abs.max(d);
            if want.value.abs() >= 1.0 / 1048576.0 {
                self.worst_ulps = self.worst_ulps.max(d / ulp(f64::from(want.value)));
            }
            self.worst_fraction = self.worst_fraction.max(d / f64::from(want.err));
        }
        if want.accepts(got) {
            true
        } else {
            self.mismatches += 1;
            false
        }
    }

    /// Compares a boolean (e.g. "pixel written"); `None` = not determined.
    pub fn flag(&mut self, got: bool, want: Option<bool>) -> bool {
        match want {
            None => {
                self.inconclusive += 1;
                true
            }
            Some(w) => {
                self.comparisons += 1;
                if got != w {
                    self.mismatches += 1;
                }
                got == w
            }
        }
    }

    pub fn report(&mut self, text: String) {
        if self.reports.len() < Self::MAX_REPORTS {
            self.reports.push(text);
        }
    }

    pub fn merge(&mut self, o: Comparison) {
        self.comparisons += o.comparisons;
        self.mismatches += o.mismatches;
        self.inconclusive += o.inconclusive;
        self.programs += o.programs;
        self.opcodes.extend(o.opcodes);
        self.worst_abs = self.worst_abs.max(o.worst_abs);
        self.worst_ulps = self.worst_ulps.max(o.worst_ulps);
        self.worst_fraction = self.worst_fraction.max(o.worst_fraction);
        for r in o.reports {
            self.report(r);
        }
    }

    /// `verify <family>: N programs, M comparisons, K mismatches, I inconclusive, O opcodes executed`.
    pub fn summary(&self, family: &str) -> String {
        format!(
            "verify {family}: {} programs, {} comparisons, {} mismatches, {} inconclusive, {} opcodes executed",
            self.programs,
            self.comparisons,
            self.mismatches,
            self.inconclusive,
            self.opcodes.len()
        )
    }
}

/// A small deterministic PRNG (SplitMix64) for input and program generators: reproducible from a
/// seed with no dependency.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_B00C)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    pub fn range(&mut self, lo: i64, hi_inclusive: i64) -> i64 {
        lo + self.below((hi_inclusive - lo + 1) as u64) as i64
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
    /// A dyadic value `k / 2^frac_bits` with |k| < 2^int_bits·2^frac_bits: exact in f32 and
    /// through affine interpolation when the bits are few.
    pub fn dyadic(&mut self, int_bits: u32, frac_bits: u32) -> f32 {
        let span = 1i64 << (int_bits + frac_bits);
        let k = self.range(-span + 1, span - 1);
        k as f32 / (1u64 << frac_bits) as f32
    }
}
