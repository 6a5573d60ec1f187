//! Reference interpreter of Xenos microcode, for verification by execution (`src/verify/xenos.rs`).
//!
//! Written from docs/isa/xenos.md and the per-opcode pseudo-code of Xenia's `ucode.h` (the D3D9
//! "0 × anything = 0" multiply, the rcp/rsq/log variants, `a >= b ? a : b` max, the predicate
//! counter ops, `cube` and tfetchCube's face coordinates as Xenia's translators read them), NOT
//! from `lower.rs` or `formats::cube` (cube-map texel choice: `verify::cube_texel`, shared with
//! the GX2 interpreter). It uses the bit-field decoder of `ucode.rs` (instruction
//! layouts are facts of the encoding) and nothing of the lowering except the ABI's interpolator
//! locations.
//!
//! Every register lane is an [`Expect`]: a value plus an error bound, so that approximate ops
//! (exp, log, rcp, rsq, sqrt, sin, cos) carry their error through later instructions. A
//! comparison, select, texel choice or control-flow decision whose operands are within that error
//! of the threshold makes the affected lanes (or, for control flow, the whole run) undetermined.

use super::cube_face;
use crate::interval::{exact_or_bounded, hi, is_exact, lo};
use crate::{ulp, Expect, TextureShape};
use shrec::formats::xenos::container::Container;
use shrec::formats::xenos::memexport::{self, EA, EM0, EM_COUNT};
use shrec::formats::xenos::ucode::{Addr, Alu, Cf, CfOp, Fetch, FetchOp, Instr, Operand, Program, ScalarOp, VectorOp};
use std::collections::{BTreeMap, BTreeSet};

type V = Expect;
type R4 = [V; 4];
const UNKNOWN: V = Expect::UNKNOWN;
const fn ex(v: f32) -> V {
    Expect { value: v, err: 0.0 }
}
const ZERO4: R4 = [ex(0.0); 4];

/// Executed-notes of a conditional `jmp` (on a boolean constant or on p0) taken / not taken.
pub const JMP_TAKEN: &str = "jmp (taken)";
pub const JMP_NOT_TAKEN: &str = "jmp (not taken)";

/// Instructions executed before the interpreter gives up.
pub const STEP_LIMIT: u64 = 100_000;

/// Float constant registers per stage (XenosRecomp's buffers; reads past them give 0).
pub const VS_CONSTANTS: usize = 256;
pub const PS_CONSTANTS: usize = 224;

/// Error bounds of the approximate ops on lavapipe (same family of bounds as the AGAL/PICA
/// interpreters, docs/verification.md): rcp/sqrt 1 ulp, rsq 2 ulp, exp
/// 2⁻²⁰ + 2⁻²²·|x| relative, log 2⁻²¹ absolute + 2 ulp, sin/cos 2⁻²⁰ + 2⁻²⁴·|x| absolute.
fn tolerance(op: &str, x: f64, r: f64) -> f64 {
    match op {
        "rcp" | "sqrt" => ulp(r),
        "rsq" => 2.0 * ulp(r),
        "exp" => r.abs() * (1.0 / 1048576.0 + x.abs() / 4194304.0),
        "log" => 1.0 / 2097152.0 + 2.0 * ulp(r),
        "sin" | "cos" => 1.0 / 1048576.0 + x.abs() / 16777216.0,
        _ => 0.0,
    }
}

/// A 2D or cube texture bound to a fetch-constant slot: `size`×`size` RGBA texels, rows top to
/// bottom (a cube map: six such faces, +x −x +y −y +z −z), sampled with nearest filtering and
/// clamp-to-edge (mip levels: nearest level). A fetch whose dimension does not match the texture
/// is undetermined.
#[derive(Clone, Debug)]
pub struct Texture {
    pub size: u32,
    /// Cube: six faces of `size`² texels; volume: `size`³ texels, slices front to back (z), each
    /// rows top to bottom.
    pub shape: TextureShape,
    pub texels: Vec<[f32; 4]>,
    /// Mip levels 1, 2, … (level k: `max(size >> k, 1)` square, six faces of it for a cube map,
    /// cubed for a volume: every axis halves); sampled with the nearest level.
    pub mips: Vec<Vec<[f32; 4]>>,
}

/// Inputs and uniform state of one invocation (vertex) or one pixel.
#[derive(Clone, Debug, Default)]
pub struct State {
    /// Float constants c0.. as the guest uploads them (literal `def`s are part of them).
    pub c: Vec<[f32; 4]>,
    /// This stage's booleans b0-b15 (bit n = b n), XenosRecomp's g_Booleans.
    pub booleans: u16,
    /// This stage's booleans b16-b255: bit b % 32 of word b / 32 (bits 0-15 of word 0 unused).
    pub ext_booleans: [u32; 8],
    /// This stage's run-time loop constants i0-i31 (count | start << 8 | step << 16); a literal
    /// `defi` of the container takes precedence.
    pub loop_constants: [u32; 32],
    /// Vertex shaders: the value each vertex element's fetch reads, by vfetch slot address
    /// (raw f32 lanes as the host input delivers them).
    pub vertex_inputs: BTreeMap<u32, [f32; 4]>,
    /// Pixel shaders: the interpolated value per interpolator register (r0-r15).
    pub interpolators: BTreeMap<u32, [f32; 4]>,
    /// Textures by fetch-constant slot.
    pub textures: BTreeMap<u32, Texture>,
    /// XenosRecomp's g_HalfPixelOffset (vertex epilogue).
    pub half_pixel_offset: [f32; 2],
    /// Pixel shaders: XenosRecomp's g_AlphaThreshold when the pipeline's SPEC_CONSTANT_ALPHA_TEST
    /// bit is set (the pixel epilogue's `clip(oC0.w - g_AlphaThreshold)`); `None` = bit clear.
    pub alpha_test: Option<f32>,
    /// Pixel shaders: the source derivatives of the k-th getGradients / getCompTexLOD this pixel
    /// executes, (ddx x, ddy x, ddx y, ddy y, ddx z, ddy z), when the harness has worked them out
    /// from the quad's `Outcome::gradient_sources` (a second run).
    pub gradients: Vec<[V; 6]>,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// Export register → value (vertex: 62 = oPos, 0-15 interpolators; pixel: 0-3 oCn, 61 oDepth).
    pub exports: BTreeMap<u32, R4>,
    /// Pixel shaders: whether the pixel survives (None = a kill decision was undetermined).
    pub written: Option<bool>,
    /// Vertex shaders that write oPts.z (export 63, "kill vertex"): whether the vertex is killed
    /// (bits 0-30 of the value not all zero, as Xenia reads it; None = not determined).
    pub vertex_killed: Option<bool>,
    /// Mnemonics executed (CF, vector, scalar, fetch; plus "relative", "predicated", "saturate").
    pub executed: BTreeSet<String>,
    /// Control flow depended on an undetermined value: all outputs are unknown.
    pub undetermined: bool,
    pub runaway: bool,
    /// Outcomes of every cexec_pred / exec_pred condition evaluated (for coverage checks).
    pub pred_exec_outcomes: Vec<bool>,
    pub steps: u64,
    /// Pixel shaders: the source (x, y, z) of every getGradients and getCompTexLOD executed, in
    /// order; the quad's four lists give the derivatives (see `State::gradients`).
    pub gradient_sources: Vec<[V; 3]>,
    /// Memory-export stores, in execution order (`memexport`).
    pub memory: Vec<memexport::Store>,
    /// Some store's address or data was not determined (or the run was undetermined while eM#
    /// were written): `memory` is incomplete.
    pub memory_undetermined: bool,
}

/// The kill-vertex test of an oPts.z value: any of bits 0-30 set (±0 keeps the vertex; every
/// other value, NaN and denormals included, kills it).
fn kill_flag(z: V) -> Option<bool> {
    if !z.is_known() {
        None
    } else if z.value.is_nan() {
        Some(true)
    } else if z.err == 0.0 {
        Some(z.value.to_bits() & 0x7FFF_FFFF != 0)
    } else if lo(z) > 0.0 || hi(z) < 0.0 {
        Some(true)
    } else {
        None
    }
}

/// Xenos `cube` of the direction (x, y, z) (Xenia's ucode.h and translators): the major axis is
/// the component of largest magnitude, z before y before x on ties (`|z| >= |x| && |z| >= |y|`,
/// else `|y| >= |x|`); a major axis `< 0` selects the negative face (so −0 and NaN select the
/// positive one). Result (tc, sc, 2 × major axis, face): +x (−y, −z, 0), −x (−y, z, 1),
/// +y (z, x, 2), −y (−z, x, 3), +z (−y, x, 4), −z (−y, −x, 5). A comparison within the
/// operands' error, or a denormal component (the host may flush it), leaves every lane
/// undetermined.
fn cube(x: V, y: V, z: V) -> R4 {
    const NO: R4 = [UNKNOWN; 4];
    if !known(&[x, y, z]) || [x, y, z].iter().any(|v| v.value != 0.0 && v.value.abs() < f32::MIN_POSITIVE) {
        return NO;
    }
    let mag = |v: V| Expect { value: v.value.abs(), err: v.err };
    let xyz = [x, y, z];
    let Some(axis) = cube_face::major_axis(|a, b| decide(Cmp::Ge, mag(xyz[a]), mag(xyz[b]))) else { return NO };
    let major = xyz[axis];
    let Some(negative) = decide(Cmp::Lt, major, ex(0.0)) else { return NO };
    let face = cube_face::face(axis, negative);
    let pick = |c: cube_face::FaceCoord| if c.negate { neg(xyz[c.component]) } else { xyz[c.component] };
    let (tc, sc) = (pick(cube_face::FACE_COORDS[face].0), pick(cube_face::FACE_COORDS[face].1));
    let twice = if is_exact(major) {
        ex(major.value * 2.0)
    } else {
        exact_or_bounded(major.value * 2.0, false, || Some((2.0 * lo(major), 2.0 * hi(major))), 0.0)
    };
    [tc, sc, twice, ex(face as f32)]
}

fn known(xs: &[V]) -> bool {
    xs.iter().all(|x| x.is_known())
}

fn add(a: V, b: V) -> V {
    if !known(&[a, b]) {
        return UNKNOWN;
    }
    exact_or_bounded(a.value + b.value, is_exact(a) && is_exact(b), || Some((lo(a) + lo(b), hi(a) + hi(b))), 0.0)
}
fn neg(a: V) -> V {
    Expect { value: -a.value, err: a.err }
}
fn sub(a: V, b: V) -> V {
    add(a, neg(b))
}

/// The D3D9 / Xenos multiply: 0 × anything (inf, NaN) = +0 (ucode.h `mul`, "legacy" multiply).
pub fn xenos_mul(a: f32, b: f32) -> f32 {
    if a == 0.0 || b == 0.0 {
        0.0
    } else {
        a * b
    }
}

fn mul(a: V, b: V) -> V {
    if (is_exact(a) && a.value == 0.0) || (is_exact(b) && b.value == 0.0) {
        return ex(0.0);
    }
    if !known(&[a, b]) {
        return UNKNOWN;
    }
    // An approximate operand whose interval contains 0: the result is 0 or a·b, both near 0.
    let r = xenos_mul(a.value, b.value);
    exact_or_bounded(
        r,
        is_exact(a) && is_exact(b),
        || {
            let touches_zero = (lo(a) <= 0.0 && hi(a) >= 0.0) || (lo(b) <= 0.0 && hi(b) >= 0.0);
            let z = if touches_zero { 0.0 } else { lo(a) * lo(b) };
            let p = [lo(a) * lo(b), lo(a) * hi(b), hi(a) * lo(b), hi(a) * hi(b), z];
            Some((p.iter().copied().fold(f64::INFINITY, f64::min), p.iter().copied().fold(f64::NEG_INFINITY, f64::max)))
        },
        0.0,
    )
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Cmp {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
}

fn cmp_f(c: Cmp, a: f32, b: f32) -> bool {
    match c {
        Cmp::Eq => a == b,
        Cmp::Ne => a != b,
        Cmp::Gt => a > b,
        Cmp::Ge => a >= b,
        Cmp::Lt => a < b,
    }
}

/// `a OP b`, or None when the operands' error makes the outcome uncertain.
fn decide(c: Cmp, a: V, b: V) -> Option<bool> {
    if !known(&[a, b]) {
        return None;
    }
    let r = cmp_f(c, a.value, b.value);
    if is_exact(a) && is_exact(b) {
        return Some(r);
    }
    if a.value.is_nan() || b.value.is_nan() {
        return None;
    }
    // Certain only when the intervals do not touch.
    if hi(a) < lo(b) || hi(b) < lo(a) {
        Some(r)
    } else {
        None
    }
}

fn select(c: Option<bool>, t: V, f: V) -> V {
    match c {
        Some(true) => t,
        Some(false) => f,
        None => UNKNOWN,
    }
}

fn unary(op: &'static str, a: V, f: impl Fn(f64) -> f64) -> V {
    if !a.is_known() {
        return UNKNOWN;
    }
    let r = f(f64::from(a.value)) as f32;
    let tol = tolerance(op, f64::from(a.value), f64::from(r));
    if r.is_nan() || r.is_infinite() || a.value.is_infinite() {
        // Special results (NaN, ±inf, and what inf inputs give) are exact on the GPU only for
        // exact inputs; otherwise undetermined.
        return if is_exact(a) { ex(r) } else { UNKNOWN };
    }
    if is_exact(a) && tol == 0.0 {
        return ex(r);
    }
    exact_or_bounded(
        r,
        is_exact(a),
        || {
            // Monotonic pieces: sample the ends (and reject intervals crossing a pole / 0).
            let (l, h) = (lo(a), hi(a));
            if matches!(op, "rcp" | "rsq" | "log" | "sqrt") && l <= 0.0 && h >= 0.0 {
                return None;
            }
            if matches!(op, "sin" | "cos") {
                let w = h - l;
                let r = f64::from(r);
                return Some((r - w, r + w));
            }
            let (x, y) = (f(l), f(h));
            Some((x.min(y), x.max(y)))
        },
        tol,
    )
}

fn saturate(x: V) -> V {
    if !x.is_known() || x.value.is_nan() {
        return UNKNOWN;
    }
    let r = x.value.clamp(0.0, 1.0);
    if is_exact(x) {
        return ex(if r == 0.0 { 0.0 } else { r });
    }
    exact_or_bounded(r, false, || Some((lo(x).clamp(0.0, 1.0), hi(x).clamp(0.0, 1.0))), 0.0)
}

fn floor_v(a: V) -> V {
    if !a.is_known() {
        return UNKNOWN;
    }
    let r = a.value.floor();
    if is_exact(a) {
        return ex(r);
    }
    if lo(a).floor() != hi(a).floor() {
        return UNKNOWN;
    }
    ex(r)
}

fn trunc_v(a: V) -> V {
    // ucode.h: src >= 0 ? floor(src) : -floor(-src)
    if !a.is_known() {
        return UNKNOWN;
    }
    let r = a.value.trunc();
    if is_exact(a) {
        return ex(r);
    }
    if lo(a).trunc() != hi(a).trunc() || (lo(a) < 0.0 && hi(a) > 0.0) {
        return UNKNOWN;
    }
    ex(r)
}

fn frac_v(a: V) -> V {
    // ucode.h: src - floor(src), so NaN for ±inf and NaN (the D3D10 `frc` table agrees). The
    // HLSL computes those lanes apart (`shrec_frac` in shader_common.h): HLSL `frac` alone is
    // GLSL.std.450 Fract, where llvmpipe gives 0.99999994 (compiler-shaped seed 1 #9127).
    if !a.is_known() {
        return UNKNOWN;
    }
    if !a.value.is_finite() {
        return ex(f32::NAN);
    }
    let f = floor_v(a);
    if !f.is_known() {
        return UNKNOWN;
    }
    sub(a, f)
}

/// Address-register value from a float: clamp((int)floor(x), -256, 255).
fn a0_from(x: V, round: bool) -> Option<i32> {
    let v = if round { add(x, ex(0.5)) } else { x };
    let f = floor_v(v);
    if !f.is_known() || f.value.is_nan() {
        return None;
    }
    Some((f.value.clamp(-256.0, 255.0)) as i32)
}

struct M<'a> {
    c: &'a Container,
    s: &'a State,
    vertex: bool,
    r: Vec<R4>,
    ps: V,
    p0: Option<bool>,
    a0: Option<i32>,
    al: i32,
    exports: BTreeMap<u32, R4>,
    killed: Option<bool>,
    executed: BTreeSet<String>,
    undetermined: bool,
    /// Fetch state: the register LOD (setTexLOD) and the gradients (setGradientsH / V).
    reg_lod: V,
    grad_h: [V; 3],
    grad_v: [V; 3],
    gradient_sources: Vec<[V; 3]>,
    /// eM0-eM4 written since the last memory-export store (bits 0-4).
    em_written: u8,
    memory: Vec<memexport::Store>,
    memory_undetermined: bool,
}

/// The raw bits of an exactly known lane; None when the lane is not bit-exact (an error bound,
/// or a NaN / denormal whose bits the host may change).
fn exact_bits(v: V, raw: bool) -> Option<u32> {
    if !v.is_known() || v.err != 0.0 {
        return None;
    }
    if raw && (v.value.is_nan() || (v.value != 0.0 && v.value.abs() < f32::MIN_POSITIVE)) {
        return None;
    }
    Some(v.value.to_bits())
}

impl M<'_> {
    /// Stores the eM# written since the previous store under the current eA, then clears them
    /// (every `alloc`, the end, a kill; see `memexport`).
    fn memexport_flush(&mut self) {
        if self.em_written == 0 {
            return;
        }
        self.note("memexport");
        let ea = self.exports.get(&EA).copied().unwrap_or(ZERO4);
        let ea: Option<Vec<u32>> = ea.iter().map(|&v| exact_bits(v, false)).collect();
        match (self.killed, ea) {
            (Some(true), _) => {}
            (None, _) | (_, None) => self.memory_undetermined = true,
            (Some(false), Some(ea)) => {
                let ea = [ea[0], ea[1], ea[2], ea[3]];
                for e in 0..EM_COUNT {
                    if self.em_written & (1 << e) == 0 {
                        continue;
                    }
                    let data = self.exports.get(&(EM0 + e)).copied().unwrap_or(ZERO4);
                    // raw (32-bit float) formats store the bits; fixed-point ones convert values
                    let raw = memexport::Address::decode(ea)
                        .and_then(|a| memexport::format(a.format_id()))
                        .is_some_and(|f| matches!(f.kind, memexport::Kind::Float32(_)));
                    let bits: Option<Vec<u32>> = data.iter().map(|&v| exact_bits(v, raw)).collect();
                    match bits {
                        Some(b) => {
                            if let Some(st) = memexport::store(ea, e, [b[0], b[1], b[2], b[3]]) {
                                self.memory.push(st);
                            }
                        }
                        None => self.memory_undetermined = true,
                    }
                }
            }
        }
        for e in 0..EM_COUNT {
            if self.em_written & (1 << e) != 0 {
                self.exports.insert(EM0 + e, ZERO4);
            }
        }
        self.em_written = 0;
    }

    fn note(&mut self, what: &str) {
        if !self.executed.contains(what) {
            self.executed.insert(what.to_string());
        }
    }

    fn constant(&mut self, index: i64) -> R4 {
        // Literal `def`s live in the register file (the microcode's literal constants).
        for d in &self.c.float_defs {
            let k = index - d.register as i64;
            if k >= 0 && (k as usize) * 4 < d.values.len() {
                let v = &d.values[k as usize * 4..];
                return std::array::from_fn(|l| ex(v.get(l).copied().unwrap_or(0.0)));
            }
        }
        let count = if self.vertex { VS_CONSTANTS } else { PS_CONSTANTS } as i64;
        if index < 0 || index >= count {
            return ZERO4;
        }
        self.s.c.get(index as usize).map_or(ZERO4, |v| v.map(ex))
    }

    fn temp_index(&mut self, index: u32, rel: bool) -> Option<usize> {
        let i = if rel {
            self.note("relative");
            index as i64 + self.al as i64
        } else {
            index as i64
        };
        if (0..64).contains(&i) {
            Some(i as usize)
        } else {
            None
        }
    }

    /// Reads an operand with its swizzle, then |x| and negation (as the hardware: abs first).
    fn operand(&mut self, o: &Operand) -> R4 {
        let raw = if o.is_temp {
            match self.temp_index(o.index, o.addr != Addr::Static) {
                Some(i) => self.r[i],
                None => [UNKNOWN; 4],
            }
        } else {
            let idx = match o.addr {
                Addr::Static => Some(o.index as i64),
                Addr::A0 => {
                    self.note("relative");
                    self.a0.map(|a| o.index as i64 + a as i64)
                }
                Addr::AL => {
                    self.note("relative");
                    Some(o.index as i64 + self.al as i64)
                }
            };
            match idx {
                Some(i) => self.constant(i),
                None => [UNKNOWN; 4],
            }
        };
        std::array::from_fn(|k| {
            let mut v = raw[o.swizzle[k] as usize];
            if o.abs {
                v.value = v.value.abs();
            }
            if o.negate {
                v = neg(v);
            }
            v
        })
    }

    fn kill(&mut self, c: Option<bool>) -> V {
        match c {
            Some(true) => {
                if self.killed != Some(true) {
                    self.memexport_flush();
                }
                self.killed = Some(true);
                ex(1.0)
            }
            Some(false) => ex(0.0),
            None => {
                if self.killed != Some(true) {
                    self.killed = None;
                }
                UNKNOWN
            }
        }
    }

    /// Vector op: result (None when the op only changes state and writes its result in place).
    fn vector(&mut self, a: &Alu) -> R4 {
        // The lowering refuses the two codes that are not opcodes (30, 31) before anything runs.
        let Some(op) = a.vector_op() else { return [UNKNOWN; 4] };
        let n = u32::from(op.info().srcs);
        let s: Vec<R4> = (1..=n).map(|i| self.operand(&a.vector_src(i))).collect();
        let per = |f: &dyn Fn(usize) -> V| -> R4 { std::array::from_fn(f) };
        let bool1 = |c: Option<bool>| match c {
            Some(true) => ex(1.0),
            Some(false) => ex(0.0),
            None => UNKNOWN,
        };
        match op {
            VectorOp::Add => per(&|k| add(s[0][k], s[1][k])),
            VectorOp::Mul => per(&|k| mul(s[0][k], s[1][k])),
            VectorOp::Max => per(&|k| select(decide(Cmp::Ge, s[0][k], s[1][k]), s[0][k], s[1][k])),
            VectorOp::Min => per(&|k| select(decide(Cmp::Lt, s[0][k], s[1][k]), s[0][k], s[1][k])),
            VectorOp::Seq => per(&|k| bool1(decide(Cmp::Eq, s[0][k], s[1][k]))),
            VectorOp::Sgt => per(&|k| bool1(decide(Cmp::Gt, s[0][k], s[1][k]))),
            VectorOp::Sge => per(&|k| bool1(decide(Cmp::Ge, s[0][k], s[1][k]))),
            VectorOp::Sne => per(&|k| bool1(decide(Cmp::Ne, s[0][k], s[1][k]))),
            VectorOp::Frc => per(&|k| frac_v(s[0][k])),
            VectorOp::Trunc => per(&|k| trunc_v(s[0][k])),
            VectorOp::Floor => per(&|k| floor_v(s[0][k])),
            VectorOp::Mad => per(&|k| add(mul(s[0][k], s[1][k]), s[2][k])),
            VectorOp::CndEq => per(&|k| select(decide(Cmp::Eq, s[0][k], ex(0.0)), s[1][k], s[2][k])),
            VectorOp::CndGe => per(&|k| select(decide(Cmp::Ge, s[0][k], ex(0.0)), s[1][k], s[2][k])),
            VectorOp::CndGt => per(&|k| select(decide(Cmp::Gt, s[0][k], ex(0.0)), s[1][k], s[2][k])),
            VectorOp::Dp4 | VectorOp::Dp3 => {
                let m = if op == VectorOp::Dp4 { 4 } else { 3 };
                let mut acc = mul(s[0][0], s[1][0]);
                for k in 1..m {
                    acc = add(acc, mul(s[0][k], s[1][k]));
                }
                [acc; 4]
            }
            VectorOp::Dp2Add => {
                let d = add(add(mul(s[0][0], s[1][0]), mul(s[0][1], s[1][1])), s[2][0]);
                [d; 4]
            }
            VectorOp::Cube => cube(s[0][2], s[0][3], s[0][0]),
            VectorOp::Max4 => {
                // max(x, y, z, w) as a chain of `a >= b ? a : b`.
                let mut m = s[0][0];
                for k in 1..4 {
                    m = select(decide(Cmp::Ge, m, s[0][k]), m, s[0][k]);
                }
                [m; 4]
            }
            VectorOp::SetpEqPush | VectorOp::SetpNePush | VectorOp::SetpGtPush | VectorOp::SetpGePush => {
                let c = match op {
                    VectorOp::SetpEqPush => Cmp::Eq,
                    VectorOp::SetpNePush => Cmp::Ne,
                    VectorOp::SetpGtPush => Cmp::Gt,
                    _ => Cmp::Ge,
                };
                let and = |x: Option<bool>, y: Option<bool>| match (x, y) {
                    (Some(false), _) | (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                };
                self.p0 = and(decide(Cmp::Eq, s[0][3], ex(0.0)), decide(c, s[1][3], ex(0.0)));
                let hit = and(decide(Cmp::Eq, s[0][0], ex(0.0)), decide(c, s[1][0], ex(0.0)));
                [select(hit, ex(0.0), add(s[0][0], ex(1.0))); 4]
            }
            VectorOp::KillEq | VectorOp::KillGt | VectorOp::KillGe | VectorOp::KillNe => {
                let c = match op {
                    VectorOp::KillEq => Cmp::Eq,
                    VectorOp::KillGt => Cmp::Gt,
                    VectorOp::KillGe => Cmp::Ge,
                    _ => Cmp::Ne,
                };
                let mut any = Some(false);
                for k in 0..4 {
                    any = match (any, decide(c, s[0][k], s[1][k])) {
                        (Some(true), _) | (_, Some(true)) => Some(true),
                        (Some(false), Some(false)) => Some(false),
                        _ => None,
                    };
                }
                [self.kill(any); 4]
            }
            VectorOp::Dst => [ex(1.0), mul(s[0][1], s[1][1]), s[0][2], s[1][3]],
            VectorOp::MaxA => {
                self.a0 = a0_from(s[0][3], true);
                per(&|k| select(decide(Cmp::Ge, s[0][k], s[1][k]), s[0][k], s[1][k]))
            }
        }
    }

    fn scalar(&mut self, a: &Alu) -> V {
        // Every 6-bit value but 51-63 is an opcode; the lowering refuses those (and 41).
        let Some(op) = a.scalar_op() else { return UNKNOWN };
        let srcs: Vec<R4> = a.scalar_srcs().iter().map(|o| self.operand(o)).collect();
        let av = srcs.first().map_or(UNKNOWN, |s| s[0]);
        let bv = srcs.first().map_or(UNKNOWN, |s| s[1]);
        let ps = self.ps;
        let one = ex(1.0);
        let zero = ex(0.0);
        let fmax = f32::MAX;
        let b = |c: Option<bool>, t: V, f: V| select(c, t, f);
        // Predicate set: (condition) → dest 0, p0 = 1; else dest `other`, p0 = 0.
        let setp = |m: &mut Self, c: Option<bool>, other: V| {
            m.p0 = c;
            b(c, zero, other)
        };
        match op {
            ScalarOp::Adds => add(av, bv),
            ScalarOp::AddsPrev => add(av, ps),
            ScalarOp::Muls => mul(av, bv),
            ScalarOp::MulsPrev => mul(av, ps),
            ScalarOp::MulsPrev2 => {
                // muls_prev2: ps == -FLT_MAX || !isfinite(ps) || !isfinite(b) || b <= 0 ? -FLT_MAX : a * ps
                if !is_exact(ps) || !is_exact(bv) {
                    return UNKNOWN;
                }
                if ps.value == -fmax || !ps.value.is_finite() || !bv.value.is_finite() || bv.value <= 0.0 {
                    ex(-fmax)
                } else {
                    mul(av, ps)
                }
            }
            ScalarOp::Maxs => b(decide(Cmp::Ge, av, bv), av, bv),
            ScalarOp::Mins => b(decide(Cmp::Lt, av, bv), av, bv),
            ScalarOp::Seqs => b(decide(Cmp::Eq, av, zero), one, zero),
            ScalarOp::Sgts => b(decide(Cmp::Gt, av, zero), one, zero),
            ScalarOp::Sges => b(decide(Cmp::Ge, av, zero), one, zero),
            ScalarOp::Snes => b(decide(Cmp::Ne, av, zero), one, zero),
            ScalarOp::Frcs => frac_v(av),
            ScalarOp::Truncs => trunc_v(av),
            ScalarOp::Floors => floor_v(av),
            ScalarOp::Exp => {
                // exp: src == 0 ? 1 : 2^src
                if is_exact(av) && av.value == 0.0 {
                    return one;
                }
                unary("exp", av, f64::exp2)
            }
            ScalarOp::Logc | ScalarOp::Log => {
                // log: src == 1 ? 0 : log2(src); logc: -inf → -FLT_MAX.
                if is_exact(av) && av.value == 1.0 {
                    return zero;
                }
                let r = unary("log", av, f64::log2);
                if op == ScalarOp::Logc && r.is_known() && r.value == f32::NEG_INFINITY {
                    return ex(-fmax);
                }
                r
            }
            ScalarOp::Rcpc | ScalarOp::Rcpf | ScalarOp::Rcp | ScalarOp::Rsqc | ScalarOp::Rsqf | ScalarOp::Rsq => {
                // rcp / rsq: src == 1 ? 1 : 1/src (1/sqrt(src)); c: ±inf → ±FLT_MAX; f: ±inf → ±0.
                if is_exact(av) && av.value == 1.0 {
                    return one;
                }
                // rsq of -0: IEEE gives 1/sqrt(-0) = -inf, but lavapipe's reciprocal square root
                // of -0 does not go through the clamp (observed: rsqf(-0) = -inf); not
                // determined (docs/xenos.md, verification limits).
                let is_rsq = matches!(op, ScalarOp::Rsqc | ScalarOp::Rsqf | ScalarOp::Rsq);
                if is_rsq && av.is_known() && av.value == 0.0 && av.value.is_sign_negative() {
                    return UNKNOWN;
                }
                let r = if !is_rsq { unary("rcp", av, |x| 1.0 / x) } else { unary("rsq", av, |x| 1.0 / x.sqrt()) };
                if r.is_known() && r.value.is_infinite() {
                    let sign = r.value.signum();
                    return match op {
                        ScalarOp::Rcpc | ScalarOp::Rsqc => ex(sign * fmax),
                        ScalarOp::Rcpf | ScalarOp::Rsqf => ex(sign * 0.0),
                        _ => r,
                    };
                }
                r
            }
            ScalarOp::MaxAs | ScalarOp::MaxAsf => {
                self.a0 = a0_from(av, op == ScalarOp::MaxAs);
                b(decide(Cmp::Ge, av, bv), av, bv)
            }
            ScalarOp::Subs => sub(av, bv),
            ScalarOp::SubsPrev => sub(av, ps),
            ScalarOp::SetpEq | ScalarOp::SetpNe | ScalarOp::SetpGt | ScalarOp::SetpGe => {
                let c = match op {
                    ScalarOp::SetpEq => Cmp::Eq,
                    ScalarOp::SetpNe => Cmp::Ne,
                    ScalarOp::SetpGt => Cmp::Gt,
                    _ => Cmp::Ge,
                };
                let d = decide(c, av, zero);
                setp(self, d, one)
            }
            ScalarOp::SetpInv => {
                // setp_inv: src == 1 → 0, p0 = 1; else (src == 0 ? 1 : src), p0 = 0.
                let d = decide(Cmp::Eq, av, one);
                let other = b(decide(Cmp::Eq, av, zero), one, av);
                setp(self, d, other)
            }
            ScalarOp::SetpPop => {
                // setp_pop: src - 1 <= 0 → 0, p0 = 1; else src - 1, p0 = 0.
                let m1 = sub(av, one);
                let d = decide(Cmp::Ge, zero, m1);
                setp(self, d, m1)
            }
            ScalarOp::SetpClr => {
                self.p0 = Some(false);
                ex(fmax)
            }
            ScalarOp::SetpRstr => {
                let d = decide(Cmp::Eq, av, zero);
                setp(self, d, av)
            }
            ScalarOp::KillsEq | ScalarOp::KillsGt | ScalarOp::KillsGe | ScalarOp::KillsNe | ScalarOp::KillsOne => {
                let d = match op {
                    ScalarOp::KillsEq => decide(Cmp::Eq, av, zero),
                    ScalarOp::KillsGt => decide(Cmp::Gt, av, zero),
                    ScalarOp::KillsGe => decide(Cmp::Ge, av, zero),
                    ScalarOp::KillsNe => decide(Cmp::Ne, av, zero),
                    _ => decide(Cmp::Eq, av, one),
                };
                self.kill(d)
            }
            ScalarOp::Sqrt => unary("sqrt", av, f64::sqrt),
            ScalarOp::Mulsc0 | ScalarOp::Mulsc1 | ScalarOp::Addsc0 | ScalarOp::Addsc1 | ScalarOp::Subsc0 | ScalarOp::Subsc1 => {
                let c = srcs[0][0];
                let r = srcs[1][0];
                match op {
                    ScalarOp::Mulsc0 | ScalarOp::Mulsc1 => mul(c, r),
                    ScalarOp::Addsc0 | ScalarOp::Addsc1 => add(c, r),
                    _ => sub(c, r),
                }
            }
            ScalarOp::Sin => unary("sin", av, f64::sin),
            ScalarOp::Cos => unary("cos", av, f64::cos),
            ScalarOp::RetainPrev => ps,
            // Not an opcode (a hole in the table): the lowering refuses it.
            ScalarOp::Undefined41 => UNKNOWN,
        }
    }

    fn write(&mut self, export: bool, reg: u32, rel: bool, mask: u32, value: R4, clamp: bool) {
        if mask == 0 {
            return;
        }
        if clamp {
            self.note("saturate");
        }
        let value = if clamp { value.map(saturate) } else { value };
        if export && (EM0..EM0 + EM_COUNT).contains(&reg) {
            self.em_written |= 1 << (reg - EM0);
        }
        let target: &mut R4 = if export {
            self.exports.entry(reg).or_insert(ZERO4)
        } else {
            match self.temp_index(reg, rel) {
                Some(i) => &mut self.r[i],
                None => {
                    self.undetermined = true;
                    return;
                }
            }
        };
        for k in 0..4 {
            if mask & (1 << k) != 0 {
                target[k] = value[k];
            }
        }
    }

    fn pred_ok(&mut self, predicated: bool, condition: bool) -> Option<bool> {
        if !predicated {
            return Some(true);
        }
        self.note("predicated");
        self.p0.map(|p| p == condition)
    }

    fn alu(&mut self, a: &Alu) {
        match self.pred_ok(a.is_predicated(), a.pred_condition()) {
            Some(true) => {}
            Some(false) => return,
            None => {
                self.undetermined = true;
                return;
            }
        }
        let has_v = a.has_vector_op();
        let has_s = a.has_scalar_op();
        // Both operations read their sources before either writes.
        let (mut vres, mut sres) = ([UNKNOWN; 4], UNKNOWN);
        // a0 (maxa / maxas / maxasf) changes after both operations read their sources.
        let a0_before = self.a0;
        let mut a0_after = None;
        if has_v {
            self.note(a.vector_op().map_or("?", VectorOp::name));
            vres = self.vector(a);
            if a.vector_op() == Some(VectorOp::MaxA) {
                a0_after = Some(self.a0);
                self.a0 = a0_before;
            }
        }
        if has_s {
            self.note(a.scalar_op().map_or("?", ScalarOp::name));
            sres = self.scalar(a);
        }
        if let Some(v) = a0_after {
            self.a0 = v;
        }
        if has_v {
            self.write(a.is_export(), a.vector_dest(), a.vector_dest_rel(), a.vector_result_mask(), vres, a.vector_clamp());
        }
        if has_s {
            let (reg, rel) = if a.is_export() { (a.vector_dest(), false) } else { (a.scalar_dest(), a.scalar_dest_rel()) };
            self.write(a.is_export(), reg, rel, a.scalar_result_mask(), [sres; 4], a.scalar_clamp());
            // ps is the unclamped result (the clamp applies to the register write), as in Xenia's
            // translator, which stores the scalar result to ps before StoreResult clamps it.
            self.ps = sres;
        }
        if a.is_export() {
            let c1 = a.const1_mask() & !(a.vector_result_mask() | a.scalar_result_mask());
            self.write(true, a.vector_dest(), false, c1, [ex(1.0); 4], false);
            self.write(true, a.vector_dest(), false, a.const0_mask(), [ex(0.0); 4], false);
        }
    }

    fn fetch(&mut self, f: &Fetch, address: u32) {
        match self.pred_ok(f.is_predicated(), f.pred_condition()) {
            Some(true) => {}
            Some(false) => return,
            None => {
                self.undetermined = true;
                return;
            }
        }
        // The lowering refuses the 23 values of the field that are not opcodes.
        let Some(op) = f.op() else { return };
        let value: R4 = match op {
            FetchOp::VertexFetch => {
                self.note("vfetch");
                // ExpAdjust: times 2^n (an exact power of two, 2^-32 to 2^31; a denormal product
                // is undetermined, hosts may flush it)
                match (self.s.vertex_inputs.get(&address), f.exp_adjust()) {
                    (Some(v), 0) => v.map(ex),
                    (Some(v), n) => v.map(|x| mul(ex(x), ex(2f32.powi(n)))),
                    (None, _) => [UNKNOWN; 4],
                }
            }
            FetchOp::TextureFetch => {
                let dim = f.dimension();
                self.note(["tfetch1D", "tfetch2D", "tfetch3D", "tfetchCube"][dim as usize]);
                let [s, t, r] = self.fetch_source(f);
                match self.level(f, dim, [s, t, r]) {
                    None => [UNKNOWN; 4],
                    Some(level) if dim == 3 => self.sample_cube(f, level, s, t, r),
                    Some(level) if dim == 2 => self.sample_volume(f, level, [s, t, r]),
                    Some(level) => self.sample(f, level, s, if dim == 0 { None } else { Some(t) }),
                }
            }
            FetchOp::GetTextureGradients => {
                // (ddx(s.x), ddy(s.x), ddx(s.y), ddy(s.y)) of the source (Xenia's translators),
                // computed by the harness from the quad; vertex shaders have none: 0.
                self.note("getGradients");
                if self.vertex {
                    [ex(0.0); 4]
                } else {
                    let (_, d) = self.source_derivatives(f);
                    [d[0], d[1], d[2], d[3]]
                }
            }
            FetchOp::GetTextureComputedLod => {
                // getCompTexLOD (Xenia's translators): the LOD an implicit-derivative fetch at the
                // source would compute, not clamped, without bias, in x; y, z and w are 0. Where
                // the fetch would not compute a LOD from derivatives (a vertex shader, no
                // UseComputedLOD, or UseRegisterGradients) Xenia stores 0 in every lane (its
                // translators flag it as contradicting MSDN).
                let dim = f.dimension();
                self.note(["getCompTexLOD1D", "getCompTexLOD2D", "getCompTexLOD3D", "getCompTexLODCube"][dim as usize]);
                if self.vertex || !f.use_comp_lod() || f.use_reg_gradients() {
                    ZERO4
                } else {
                    let (src, d) = self.source_derivatives(f);
                    [self.computed_lod(f, dim, src, d), ex(0.0), ex(0.0), ex(0.0)]
                }
            }
            FetchOp::GetTextureWeights => {
                let dim = f.dimension();
                self.note(["getWeights1D", "getWeights2D", "getWeights3D", "getWeightsCube"][dim as usize]);
                let coord = self.fetch_source(f);
                self.weights(f, dim, coord)
            }
            FetchOp::SetTextureLod | FetchOp::SetTextureGradientsHorz | FetchOp::SetTextureGradientsVert => {
                self.note(op.name());
                let sw = self.fetch_source(f);
                match op {
                    FetchOp::SetTextureLod => self.reg_lod = sw[0],
                    FetchOp::SetTextureGradientsHorz => self.grad_h = sw,
                    _ => self.grad_v = sw,
                }
                return;
            }
            // Rejected by the lowering (docs/opcodes/xenos.md): nothing to interpret.
            FetchOp::GetTextureBorderColorFrac => [UNKNOWN; 4],
        };
        let sw = f.dst_swizzle();
        let mut mask = 0;
        let mut out = [UNKNOWN; 4];
        for (k, &c) in sw.iter().enumerate() {
            match c {
                0..=3 => {
                    out[k] = value[c as usize];
                    mask |= 1 << k;
                }
                4 => {
                    out[k] = ex(0.0);
                    mask |= 1 << k;
                }
                5 | 6 => {
                    out[k] = ex(1.0);
                    mask |= 1 << k;
                }
                _ => {}
            }
        }
        self.write(false, f.dst_reg(), f.dst_rel(), mask, out, false);
    }

    /// A fetch's source and its derivatives, (ddx x, ddy x, ddx y, ddy y, ddx z, ddy z), as the
    /// harness worked them out from the quad (pixel shaders; unknown in the first run).
    fn source_derivatives(&mut self, f: &Fetch) -> ([V; 3], [V; 6]) {
        let src = self.fetch_source(f);
        let k = self.gradient_sources.len();
        self.gradient_sources.push(src);
        (src, self.s.gradients.get(k).copied().unwrap_or([UNKNOWN; 6]))
    }

    /// getCompTexLOD's LOD: log2 of ρ, the larger of the two screen directions' derivative
    /// lengths in base-level texels (unnormalised coordinates are texels already). Vulkan lets
    /// a host approximate a length with two or more non-zero components (between the largest
    /// component and their sum), so only a derivative vector with at most one non-zero
    /// component is determined; ρ = 0 (λ = −∞) is not determined either. A λ that is not an
    /// integer is allowed 1/16: hosts keep the LOD in fixed point (Vulkan's
    /// `mipmapPrecisionBits`; lavapipe truncates to 1/16, e.g. log2 24 = 4.585 → 4.5625), and so
    /// does the Xenos texture unit; an exact power of two gives an exact λ.
    ///
    /// getCompTexLODCube (face coordinates s, t in [1, 2] and the face; Xenia rebuilds the
    /// direction with sc = 2s − 3, tc = 2t − 3 and ±1 on the face's axis): determined only where
    /// the quad stays on one face, away from its edges ([`quad_on_one_face`]); there the
    /// major axis is ±1 in every pixel, ∂ma = 0, and Vulkan's face-coordinate derivative
    /// ½ (∂sc |ma| − sc ∂|ma|) / ma² is ½ ∂(2s − 3) = ∂s (∂t likewise): the 2D rule on the
    /// face size. Unnormalised cube coordinates are s and t in face texels, divided by the face
    /// size first (determined for a power-of-two size, where the division is exact).
    fn computed_lod(&self, f: &Fetch, dim: u32, src: [V; 3], d: [V; 6]) -> V {
        let Some(tex) = self.s.textures.get(&f.const_index()) else { return UNKNOWN };
        let (mut src, mut d) = (src, d);
        let cube_texels = dim == 3 && f.coord_denorm();
        if cube_texels {
            // unnormalised face coordinates: s and t (and their derivatives) divided by the face
            // size first, as the translation does; exact for a power-of-two size only
            if !tex.size.is_power_of_two() {
                return UNKNOWN;
            }
            let k = ex(1.0 / tex.size as f32);
            for v in src.iter_mut().take(2).chain(d.iter_mut().take(4)) {
                *v = mul(*v, k);
            }
        }
        let axes = match dim {
            0 => 1,
            1 => 2,
            2 => 3,
            _ if tex.shape != TextureShape::Cube || !quad_on_one_face(src, d) => return UNKNOWN,
            _ => 2,
        };
        let texels = if f.coord_denorm() && !cube_texels { 1.0 } else { f64::from(tex.size) };
        // (ddx, ddy) of each lane: the screen x direction's vector, then the y direction's
        let length = |first: usize| single_axis_length(&(0..axes).map(|a| d[first + 2 * a]).collect::<Vec<_>>(), texels);
        match (length(0), length(1)) {
            (Some(x), Some(y)) if x.max(y) > 0.0 => {
                let lambda = x.max(y).log2();
                V { value: lambda as f32, err: if lambda.fract() == 0.0 { 0.0 } else { 1.0 / 16.0 } }
            }
            _ => UNKNOWN,
        }
    }

    /// A texture fetch's source register read through its three-lane source swizzle.
    fn fetch_source(&mut self, f: &Fetch) -> [V; 3] {
        let src = match self.temp_index(f.src_reg(), f.src_rel()) {
            Some(i) => self.r[i],
            None => [UNKNOWN; 4],
        };
        f.tfetch_src_swizzle().map(|c| src[c as usize])
    }

    /// The mip level a tfetch at `coord` samples (notes: Xenia's translators; Vulkan's
    /// nearest-level rule `ceil(λ + 0.5) − 1` with λ clamped to the texture's levels): λ = the
    /// LOD bias (the instruction's, plus the register LOD with UseRegisterLOD) for an explicit
    /// LOD; with register gradients (UseComputedLOD and UseRegisterGradients) log2 of the larger
    /// of the two gradients' lengths in texels, scaled by 2^bias. None when it is not
    /// determined: a computed LOD from derivatives (pixel shaders), a gradient with two non-zero
    /// components (hosts approximate the length differently), λ within 1/16 of a level
    /// boundary, or an unknown register value. A texture without mips is always level 0.
    ///
    /// tfetchCube's register gradients are the derivatives of the cube-space direction (Xenia:
    /// "already in the cube space"), which Xenia rebuilds from (s, t, face) with ±1 on the
    /// face's axis and sc = 2s − 3, tc = 2t − 3 on the others. Determined where the direction's
    /// major axis is that axis alone (1 < s, t < 2) and the gradients have no component along
    /// it: then ∂ma = 0 and Vulkan's face-coordinate derivative ½ (∂sc |ma| − sc ∂|ma|) / ma² is
    /// ½ ∂sc, so a gradient's length is half its (single non-zero) minor component in face
    /// texels. Xenia does not normalise cube gradients for unnormalised coordinates (its TODO,
    /// the translation neither); such fetches are undetermined here.
    fn level(&self, f: &Fetch, dim: u32, coord: [V; 3]) -> Option<usize> {
        let tex = self.s.textures.get(&f.const_index())?;
        if tex.mips.is_empty() {
            return Some(0);
        }
        let exact = |v: V| v.exact_finite().map(f64::from);
        let bias = f64::from(f.lod_bias()) + if f.use_reg_lod() { exact(self.reg_lod)? } else { 0.0 };
        let computed = f.use_comp_lod() && (!self.vertex || f.use_reg_gradients());
        let lambda = if !computed {
            bias
        } else if f.use_reg_gradients() {
            // the gradient lanes that count, texels per unit along them, and (cube maps) the lane
            // that must be 0
            let (lanes, texels, zero): (Vec<usize>, f64, Option<usize>) = if dim == 3 {
                let major = cube_major_axis(tex, f, coord)?;
                (vec![(major + 1) % 3, (major + 2) % 3], f64::from(tex.size) / 2.0, Some(major))
            } else {
                let axes = if dim == 0 { 1 } else { dim as usize + 1 };
                ((0..axes).collect(), if f.coord_denorm() { 1.0 } else { f64::from(tex.size) }, None)
            };
            let length = |g: &[V; 3]| match zero {
                Some(k) if g[k].exact_finite() != Some(0.0) => None,
                _ => single_axis_length(&lanes.iter().map(|&k| g[k]).collect::<Vec<_>>(), texels),
            };
            let rho = length(&self.grad_h)?.max(length(&self.grad_v)?) * bias.exp2();
            if rho == 0.0 {
                return Some(0);
            }
            rho.log2()
        } else {
            return None;
        };
        let top = tex.mips.len() as f64;
        let clamped = lambda.clamp(0.0, top);
        if clamped > 0.0 && clamped < top && ((clamped - clamped.floor()) - 0.5).abs() < 1.0 / 16.0 {
            return None;
        }
        Some(((clamped + 0.5).ceil() - 1.0).max(0.0) as usize)
    }

    /// tfetchCube: nearest sample of a cube map at face coordinates s, t in [1, 2] (what `cube`,
    /// rcp and mad 1.5 make) on face `face` (notes: Xenia's fetch translators clamp the face to
    /// [0, 5] and truncate it; a NaN face is undetermined here), shared texel choice
    /// `verify::cube_texel`. Texel offsets (half texels, notes: Xenia's translators) move s and
    /// t by base-level texels of the face, `s + offset / size`, or `(s + offset) / size` for
    /// unnormalised coordinates (face coordinates in texels, [size, 2 size]); the z offset is
    /// added to the face before the clamp.
    fn sample_cube(&self, f: &Fetch, level: usize, s: V, t: V, face: V) -> R4 {
        let Some(tex) = self.s.textures.get(&f.const_index()).filter(|t| t.shape == TextureShape::Cube) else { return [UNKNOWN; 4] };
        let (texels, size) = level_texels(tex, level);
        if !known(&[s, t, face]) || !s.value.is_finite() || !t.value.is_finite() || face.value.is_nan() {
            return [UNKNOWN; 4];
        }
        let offsets = f.offsets();
        let face = if offsets[2] != 0.0 { add(face, ex(offsets[2])) } else { face };
        if !face.is_known() || face.value.is_nan() {
            return [UNKNOWN; 4];
        }
        // the face after clamping and truncation must not depend on the error
        let pick = |x: f64| x.clamp(0.0, 5.0).floor();
        let fi = pick(f64::from(face.value));
        if pick(lo(face)) != fi || pick(hi(face)) != fi {
            return [UNKNOWN; 4];
        }
        // the interval of a face coordinate, normalised and moved (exact arithmetic: the host's
        // f32 rounding is far inside `cube_texel`'s 1/64-texel margin)
        let base = f64::from(tex.size);
        let moved = |c: V, off: f32| {
            let off = f64::from(off);
            let at = |x: f64| if f.coord_denorm() { (x + off) / base } else { x + off / base };
            (at(lo(c)), at(hi(c)))
        };
        match crate::cube_texel(texels, size, fi as usize, moved(s, offsets[0]), moved(t, offsets[1])) {
            Some(x) => x.map(ex),
            None => [UNKNOWN; 4],
        }
    }

    /// getWeights (notes: XenosRecomp's getWeights2D, Xenia's translators): per filtered axis
    /// (1D: x; 2D and cube: x, y; 3D: x, y, z) the fraction of `coord × size + offset − 0.5`
    /// (without `× size` for unnormalised coordinates), 0 for a NaN coordinate; the other lanes
    /// 0; W (the mip lerp factor) is 0 for the instruction's MipFilter=point / BASEMAP and not
    /// modelled otherwise (the lowering rejects it). The size is the bound texture's.
    fn weights(&self, f: &Fetch, dim: u32, coord: [V; 3]) -> R4 {
        let Some(tex) = self.s.textures.get(&f.const_index()).filter(|t| t.shape == fetch_shape(dim)) else { return [UNKNOWN; 4] };
        let axes = match dim {
            0 => 1,
            2 => 3,
            _ => 2,
        };
        let offsets = f.offsets();
        let mip_lerp = if matches!(f.mip_filter(), 0 | 2) { ex(0.0) } else { UNKNOWN };
        let mut out = [ex(0.0), ex(0.0), ex(0.0), mip_lerp];
        for k in 0..axes {
            let c = coord[k];
            if !c.is_known() {
                out[k] = UNKNOWN;
                continue;
            }
            if c.value.is_nan() {
                continue;
            }
            let texels = if f.coord_denorm() { c } else { mul(c, ex(tex.size as f32)) };
            out[k] = frac_v(add(texels, ex(offsets[k] - 0.5)));
        }
        out
    }

    /// Nearest, clamp-to-edge sample of a 2D texture at (u, v) (1D: v = None, the texture's
    /// vertical centre), normalised or in texels (unnormalised coordinates), moved by the
    /// fetch's texel offsets (half texels; notes: Xenia's translators).
    fn sample(&self, f: &Fetch, level: usize, u: V, v: Option<V>) -> R4 {
        let Some(t) = self.s.textures.get(&f.const_index()).filter(|t| t.shape == TextureShape::Flat) else { return [UNKNOWN; 4] };
        let (texels, side) = level_texels(t, level);
        let offsets = f.offsets();
        let texel = |c: V, off: f32| nearest_texel(f, t.size, side, c, off);
        let row = match v {
            Some(v) => texel(v, offsets[1]),
            // the vertical centre, normalised whatever the fetch's coordinates (undetermined for
            // an even size: it is a texel boundary)
            None => Some(side / 2).filter(|_| side % 2 == 1),
        };
        match (texel(u, offsets[0]), row) {
            (Some(x), Some(y)) => texels[(y * side + x) as usize].map(ex),
            _ => [UNKNOWN; 4],
        }
    }

    /// tfetch3D: nearest, clamp-to-edge sample of level `level` of a volume at (u, v, w) (as
    /// [`Self::sample`] per axis: offsets in base-level texels, z normalised like x and y, a
    /// level's side `max(size >> level, 1)` on every axis).
    fn sample_volume(&self, f: &Fetch, level: usize, c: [V; 3]) -> R4 {
        let Some(t) = self.s.textures.get(&f.const_index()).filter(|t| t.shape == TextureShape::Volume) else { return [UNKNOWN; 4] };
        let (texels, side) = level_texels(t, level);
        let offsets = f.offsets();
        let mut at = [0u32; 3];
        for k in 0..3 {
            match nearest_texel(f, t.size, side, c[k], offsets[k]) {
                Some(x) => at[k] = x,
                None => return [UNKNOWN; 4],
            }
        }
        texels[((at[2] * side + at[1]) * side + at[0]) as usize].map(ex)
    }

    fn clause(&mut self, slots: &[shrec::formats::xenos::ucode::Slot]) {
        for s in slots {
            match &s.instr {
                Instr::Fetch(f) => self.fetch(f, s.address),
                Instr::Alu(a) => self.alu(a),
            }
            if self.undetermined {
                return;
            }
        }
    }

    fn bool_const(&mut self, b: u32) -> bool {
        if b < 16 {
            self.s.booleans & (1 << b) != 0
        } else {
            self.note("b16+");
            self.s.ext_booleans.get(b as usize / 32).is_some_and(|w| w & (1 << (b % 32)) != 0)
        }
    }

    /// Whether a conditional jump or call is taken: always, on the predicate (`None` while the
    /// predicate is undetermined), or on a boolean constant.
    fn flow_condition(&mut self, cf: &Cf) -> Option<bool> {
        if cf.is_unconditional() {
            Some(true)
        } else if cf.is_predicated() {
            self.p0.map(|p| p == cf.condition())
        } else {
            Some(self.bool_const(cf.bool_address()) == cf.condition())
        }
    }
}

/// Loop constant i<n>: (count, start, step) from the container's literal `defi`, else the
/// stage's run-time constant.
fn loop_constant(c: &Container, s: &State, id: u32) -> Option<(i32, i32, i32)> {
    let v = c
        .int_defs
        .iter()
        .find_map(|d| {
            let k = id.checked_sub(d.register)? as usize;
            d.values.get(k).copied()
        })
        .or_else(|| s.loop_constants.get(id as usize).copied())?;
    Some(((v & 0xFF) as i32, ((v >> 8) & 0xFF) as i32, ((v >> 16) & 0xFF) as u8 as i8 as i32))
}

/// Loop nesting and call depth the reference determines (the hardware's stacks are not
/// documented publicly; deeper runs are not compared).
const MAX_LOOP_DEPTH: usize = 4;
const MAX_CALL_DEPTH: usize = 4;

/// The texels and side of mip level `level` of a texture (0 = the base level).
/// The texel index along one axis a nearest, clamp-to-edge sample picks at coordinate `c`
/// (normalised, or in texels with unnormalised coordinates) moved by `off` base-level texels, on
/// a level `side` texels wide of a texture `base` texels wide; None when not determined (unknown
/// or non-finite coordinate, within 1/256 texel of a boundary — the sampler's fixed-point
/// coordinate rounding —, or too large to convert exactly: `verify::nearest_clamped`).
fn nearest_texel(f: &Fetch, base: u32, side: u32, c: V, off: f32) -> Option<u32> {
    if !c.is_known() || !c.value.is_finite() {
        return None;
    }
    let (base, n) = (f64::from(base), f64::from(side));
    let scale = if f.coord_denorm() { 1.0 } else { base };
    let (l, h) = ((lo(c) * scale + f64::from(off)) * n / base, (hi(c) * scale + f64::from(off)) * n / base);
    crate::nearest_clamped(l, h, side, 1.0 / 256.0)
}

/// The length of a derivative or gradient vector in texels (`texels` per coordinate unit) where
/// the reference knows it: every lane exact and finite and at most one of them non-zero (Vulkan
/// lets a host approximate the length of a vector with two or more non-zero components anywhere
/// between the largest component and their sum); 0 for the zero vector. getCompTexLOD's and the
/// register gradients' LOD (`computed_lod`, `level`).
fn single_axis_length(lanes: &[V], texels: f64) -> Option<f64> {
    let lanes: Vec<f64> = lanes.iter().map(|v| v.exact_finite().map(f64::from)).collect::<Option<_>>()?;
    match lanes.iter().filter(|x| **x != 0.0).collect::<Vec<_>>()[..] {
        [] => Some(0.0),
        [x] => Some(x.abs() * texels),
        _ => None,
    }
}

/// getCompTexLODCube's quad (see `computed_lod`): the face lane is the same in every pixel (its
/// derivatives are exactly 0; `quad_gradients` gives them only for exact, finite, planar
/// values) and s, t stay strictly inside (1, 2) in every pixel — within |ddx| + |ddy| of this
/// pixel's value, wherever it sits in the quad —, so every rebuilt direction has the face's axis
/// as its only major axis.
fn quad_on_one_face(src: [V; 3], d: [V; 6]) -> bool {
    if d[4].exact_finite() != Some(0.0) || d[5].exact_finite() != Some(0.0) {
        return false;
    }
    (0..2).all(|k| match (src[k].exact_finite(), d[2 * k].exact_finite(), d[2 * k + 1].exact_finite()) {
        (Some(v), Some(dx), Some(dy)) => {
            let (v, reach) = (f64::from(v), f64::from(dx).abs() + f64::from(dy).abs());
            v - reach > 1.0 && v + reach < 2.0
        }
        _ => false,
    })
}

/// The axis (0 = x, 1 = y, 2 = z) of the direction tfetchCube rebuilds from `coord` = (s, t,
/// face) (see `M::level`) where it is the direction's only major axis: the face (clamped to
/// [0, 5], truncated) determined, s and t strictly inside (1, 2); None otherwise and for
/// unnormalised coordinates.
fn cube_major_axis(tex: &Texture, f: &Fetch, [s, t, face]: [V; 3]) -> Option<usize> {
    if tex.shape != TextureShape::Cube || f.coord_denorm() || !face.is_known() || face.value.is_nan() {
        return None;
    }
    let pick = |x: f64| x.clamp(0.0, 5.0).floor();
    let picked = pick(f64::from(face.value));
    let inside = |c: V| c.is_known() && lo(c) > 1.0 && hi(c) < 2.0;
    (pick(lo(face)) == picked && pick(hi(face)) == picked && inside(s) && inside(t)).then_some(picked as usize / 2)
}

fn level_texels(t: &Texture, level: usize) -> (&[[f32; 4]], u32) {
    match level {
        0 => (&t.texels, t.size),
        k => (&t.mips[k - 1], (t.size >> k).max(1)),
    }
}

/// Runs a program for one invocation / pixel.
pub fn run(c: &Container, p: &Program, s: &State) -> Outcome {
    let vertex = c.is_vertex();
    let mut m = M {
        c,
        s,
        vertex,
        r: vec![ZERO4; 64],
        ps: ex(0.0),
        p0: Some(false),
        a0: Some(0),
        al: 0,
        exports: BTreeMap::new(),
        killed: Some(false),
        executed: BTreeSet::new(),
        undetermined: false,
        reg_lod: ex(0.0),
        grad_h: [ex(0.0); 3],
        grad_v: [ex(0.0); 3],
        gradient_sources: Vec::new(),
        em_written: 0,
        memory: Vec::new(),
        memory_undetermined: false,
    };
    if !vertex {
        for ip in &c.interpolators {
            if let Some(v) = s.interpolators.get(&ip.reg) {
                m.r[ip.reg as usize] = v.map(ex);
            }
        }
    }
    let mut pred_exec_outcomes = Vec::new();
    // Loop stack: (remaining count, saved aL, step).
    let mut loops: Vec<(i32, i32, i32)> = Vec::new();
    // Return addresses of cond_call.
    let mut calls: Vec<usize> = Vec::new();
    let mut pc = 0usize;
    let mut steps = 0u64;
    let mut runaway = false;
    while pc < p.cf.len() && !m.undetermined {
        steps += 1;
        if steps > STEP_LIMIT {
            runaway = true;
            break;
        }
        let cf: Cf = p.cf[pc];
        m.note(cf.op().name());
        let mut next = pc + 1;
        match cf.op() {
            _ if cf.is_exec() => {
                let run_it = match cf.op() {
                    // 13 / 14 (cond_exec_pred_clean) test a boolean constant, as 3 / 4 (Xenia's
                    // translators parse them as cond_exec).
                    CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => {
                        Some(m.bool_const(cf.bool_address()) == cf.condition())
                    }
                    CfOp::CondExecPred | CfOp::CondExecPredEnd => {
                        let r = m.p0.map(|p| p == cf.condition());
                        if let Some(r) = r {
                            pred_exec_outcomes.push(r);
                        }
                        r
                    }
                    _ => Some(true),
                };
                match run_it {
                    Some(true) => m.clause(&p.clauses[pc]),
                    Some(false) => {}
                    None => m.undetermined = true,
                }
                // A conditional exec-end ends the shader only when its condition holds (Xenia's
                // ucode.h, kCondExecEnd / kCondExecPredEnd: "only if the condition is actually met").
                if cf.ends_shader() && run_it != Some(false) {
                    if cf.op() != CfOp::ExecEnd {
                        m.note(if run_it == Some(true) { "exec-end (condition met)" } else { "exec-end" });
                    }
                    break;
                }
                if cf.ends_shader() {
                    m.note("exec-end (condition not met)");
                }
            }
            // Any alloc ends the previous memory export; `alloc export` starts a new one (eA = 0).
            CfOp::Alloc => {
                m.memexport_flush();
                if cf.alloc_type() == 3 {
                    m.exports.remove(&EA);
                }
            }
            CfOp::Nop | CfOp::MarkVsFetchDone => {}
            CfOp::CondJmp => {
                let take = m.flow_condition(&cf);
                if !cf.is_unconditional() {
                    match take {
                        Some(true) => m.note(JMP_TAKEN),
                        Some(false) => m.note(JMP_NOT_TAKEN),
                        None => {}
                    }
                }
                match take {
                    Some(true) => next = cf.target() as usize,
                    Some(false) => {}
                    None => m.undetermined = true,
                }
            }
            CfOp::LoopStart => {
                let Some((count, start, step)) = loop_constant(c, s, cf.loop_id()) else {
                    m.undetermined = true;
                    break;
                };
                if !c.int_defs.iter().any(|d| cf.loop_id().checked_sub(d.register).is_some_and(|k| (k as usize) < d.values.len())) {
                    m.note("run-time loop constant");
                }
                if loops.len() == MAX_LOOP_DEPTH {
                    m.undetermined = true;
                    break;
                }
                loops.push((count, m.al, step));
                if !cf.is_repeat() {
                    m.al = start;
                }
                if count <= 0 {
                    let (_, saved, _) = loops.pop().unwrap();
                    m.al = saved;
                    next = cf.target() as usize;
                }
            }
            CfOp::LoopEnd => {
                let Some(top) = loops.last_mut() else {
                    m.undetermined = true;
                    break;
                };
                top.0 -= 1;
                m.al += top.2;
                let mut again = top.0 > 0;
                let mut broke = false;
                if cf.is_predicated_break() {
                    match m.p0.map(|p| p == cf.condition()) {
                        Some(true) => broke = true,
                        Some(false) => {}
                        None => m.undetermined = true,
                    }
                }
                if broke && again {
                    m.note("endloop: predicated break");
                    again = false;
                } else if !again {
                    m.note("endloop: count ran out");
                } else {
                    m.note("endloop: repeat");
                }
                if again {
                    next = cf.target() as usize;
                } else {
                    let (_, saved, _) = loops.pop().unwrap();
                    m.al = saved;
                }
            }
            CfOp::CondCall => {
                let take = m.flow_condition(&cf);
                match take {
                    Some(true) if calls.len() == MAX_CALL_DEPTH => m.undetermined = true,
                    Some(true) => {
                        calls.push(next);
                        next = cf.target() as usize;
                    }
                    Some(false) => {}
                    None => m.undetermined = true,
                }
            }
            // Outside a subroutine a return does nothing (Xenia's ucode.h).
            CfOp::Return => {
                if let Some(r) = calls.pop() {
                    next = r;
                }
            }
            _ => m.undetermined = true,
        }
        pc = next;
    }
    if !m.undetermined && !runaway {
        m.memexport_flush();
    } else if m.em_written != 0 || !m.memory.is_empty() || m.exports.contains_key(&EA) {
        m.memory_undetermined = true;
    }
    // Vertex epilogue (XenosRecomp's ABI): oPos.xy += g_HalfPixelOffset * oPos.w (IEEE).
    if vertex {
        if let Some(pos) = m.exports.get_mut(&62) {
            let w = pos[3];
            for k in 0..2 {
                let hp = ex(s.half_pixel_offset[k]);
                let prod = if w.is_known() && is_exact(w) {
                    ex(hp.value * w.value)
                } else if hp.value == 0.0 && w.is_known() && w.value.is_finite() {
                    ex(0.0)
                } else {
                    UNKNOWN
                };
                pos[k] = add(pos[k], prod);
            }
        }
    }
    // Pixel epilogue (XenosRecomp's ABI, shader_recompiler.cpp: `if (g_SpecConstants() &
    // SPEC_CONSTANT_ALPHA_TEST) clip(oC0.w - g_AlphaThreshold);`): the pixel is discarded when
    // the f32 difference is below 0 (−0 and NaN keep it; a difference whose sign the bounds
    // do not settle, or a non-finite one, leaves the decision undetermined). A shader that
    // writes no oC0 tests 0 (its output register starts at 0).
    let mut killed = m.killed;
    if !vertex {
        if let Some(threshold) = s.alpha_test {
            let alpha = m.exports.get(&0).map_or(ex(0.0), |o| o[3]);
            let d = sub(alpha, ex(threshold));
            let clip = if !d.is_known() || !d.value.is_finite() {
                None
            } else if f64::from(d.value) - f64::from(d.err) >= 0.0 {
                Some(false)
            } else if f64::from(d.value) + f64::from(d.err) < 0.0 {
                Some(true)
            } else {
                None
            };
            killed = match (killed, clip) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
    }
    let undetermined = m.undetermined || runaway;
    let vertex_killed = if vertex && !undetermined { m.exports.get(&63).and_then(|o| kill_flag(o[2])) } else { None };
    if undetermined {
        for v in m.exports.values_mut() {
            *v = [UNKNOWN; 4];
        }
    }
    Outcome {
        exports: m.exports,
        written: if undetermined { None } else { killed.map(|k| !k) },
        vertex_killed,
        executed: m.executed,
        undetermined,
        runaway,
        pred_exec_outcomes,
        steps,
        gradient_sources: m.gradient_sources,
        memory: m.memory,
        memory_undetermined: m.memory_undetermined,
    }
}

/// The texture shape a fetch of dimension `dim` (0 1D, 1 2D, 2 3D, 3 cube) reads.
fn fetch_shape(dim: u32) -> TextureShape {
    match dim {
        2 => TextureShape::Volume,
        3 => TextureShape::Cube,
        _ => TextureShape::Flat,
    }
}
