//! Reference interpreter of Latte (R600/R700) programs, for verification by execution
//! (`src/verify/gx2.rs`). Written from docs/isa/gx2.md (§5 CF and the execution-mask stack, §6 ALU
//! groups, §7 fetches, §8 CALL_FS) and the decaf/Mesa r600 headers, NOT from `lower.rs`.
//!
//! One invocation = one lane. The CF stream is walked by position (a flat program counter, so a
//! pixel quad can be paused at a gradient fetch and resumed, see [`run_quad`]); the execution
//! mask is the lane's `active` flag plus a stack of saved flags. Choices where the notes list
//! unverified hardware details (docs/gx2.md documents them, the lowering implements the same):
//! - the mask-stack steps of PUSH / POP / ELSE / JUMP and the ALU push / pop / else forms are
//!   the rows of `formats::gx2::cf_stack` (sources there and in docs/gx2.md). A jump is taken
//!   only when no lane of the wave is active, and its POP_COUNT is applied only then. One lane
//!   cannot see the others, so every invocation whose lane reaches a jump while inactive is run
//!   as in a uniform wave (every such jump taken), as in a divergent one (none taken) and, for
//!   each such jump the divergent run reaches (up to [`SINGLE_JUMP_RUNS`]), as in a wave where
//!   only that one is taken — the other lanes may wake between two jumps, so a real wave can
//!   take any of them. Runs that differ are undetermined: the GPU's result would depend on the
//!   neighbours;
//! - a lane that executes LOOP_BREAK / ALU_BREAK leaves the loop at once (nothing inside the loop
//!   reactivates it), LOOP_CONTINUE / ALU_CONTINUE go straight to the next iteration; ALU_BREAK /
//!   ALU_CONTINUE test the lane's flag after the clause, whether it was cleared by the clause or
//!   was already clear;
//! - GX2LoopVar: COUNT b0-11, INIT b12-23 and INC b24-31, INIT and INC signed;
//! - CF KILL kills an active lane (COND / PRED_SEL are not looked at);
//! - `UPDATE_EXEC_MASK` takes effect at the end of the clause, `UPDATE_PRED` at the end of the
//!   group; PRED_SEL only gates the GPR write (PV/PS still receive the result);
//! - PRED_SET* / KILL* results are 1.0 / 0.0 (PRED_SET_CLR: FLT_MAX, predicate false;
//!   PRED_SET_RESTORE: predicate = (src0 == 0)); SIN / COS take revolutions; FLT_TO_INT /
//!   FLT_TO_UINT truncate and saturate (NaN → 0); CLAMP applies to every result;
//! - CUBE reads its direction from src0 of the z, w and x units (the compilers' R.zzxy / R.yxzz
//!   operands); a SAMPLE on a cube resource (GX2SamplerVar type 4) takes (s, t, face) with s, t
//!   in [1, 2], outside which it is undetermined (`sample_cube`);
//! - a 2D array (GX2SamplerType 10 / 12, and a 1D array, 9 / 11, one texel high) reads slice
//!   floor(src.z), clamped (`array_slice`); a cube array (13 / 14) the cube SET_CUBEMAP_INDEX set;
//!   SAMPLE_C / SAMPLE_C_LZ on a shadow sampler (6, 8, 12) compare src.w with the point-sampled
//!   texel (`reference <= texel`, the harness's function) into lane x (`sample_compare`);
//!   SAMPLE_C_L / _G_L at LOD src.w + LOD_BIAS, SAMPLE_C_G at the gradients' LOD + LOD_BIAS,
//!   SAMPLE_C_G_LB at the gradients' LOD + src.w + LOD_BIAS, SAMPLE_C_G_LZ at level 0,
//!   SAMPLE_C_LB on one-level textures; the reference in src.z for the forms with a LOD or bias
//!   lane (_L, _LB, _G_L, _G_LB), else src.w (`sample_compare_at`);
//!   FETCH4 returns the red texels of the bilinear footprint in the R700 order (`fetch4`);
//! - SAMPLE_G_L / SAMPLE_G_LZ sample at LOD src.w + LOD_BIAS / 0, SAMPLE_G_LB at the LOD of
//!   the SET_GRADIENTS_H/V gradients + src.w + LOD_BIAS (`gradient_lod`), each at the mip level
//!   nearest mip selection picks (`nearest_level`), undetermined near a level boundary;
//! - MEM_SCRATCH of an active lane stores lanes COMP_MASK of R\[RW_GPR\] into scratch element
//!   ARRAY_BASE; a TEX-clause MEM (MEM_OP 0) loads element ARRAY_BASE through DST_SEL; a
//!   lane no write of the invocation stored is undetermined (`formats::gx2::scratch` decides
//!   which fields are accepted, as for the lowering);
//! - LD reads src.xyz and the mip level src.w as signed integer bit patterns (no sampler);
//!   GET_TEXTURE_INFO gives (width, height, depth, levels) of mip level asint(src.x) as integer
//!   bit patterns. Out-of-range coordinates and levels, LD offsets and cubes are undetermined
//!   (`load`, `info`).
//!
//! Every lane carries an error bound ([`V::err`]): 0 = the GPU must produce these bits, finite =
//! an approximate float (transcendentals, carried through later arithmetic), infinite = not
//! determined (denormals, NaN into min/max/compares, comparisons closer than the error, PV lanes
//! the previous group did not write, ...). A control-flow decision, index or kill that is not
//! determined makes the whole invocation undetermined ([`Run::undetermined`]). What the GPU
//! leaves undefined is not determined either: NaN bit patterns of float results
//! ([`V::ANY_NAN`]), the sign of computed zeros and of |zero| where integer ops or 1/x read it
//! ([`V::zero_of_any_sign`]), IEEE 0 × inf/NaN (compilers fold a constant zero).

use super::cube_face;
use crate::{TextureShape, Tolerance};
use shrec::formats::gx2::cf_stack::{self, StackEffect, Step};
use shrec::formats::gx2::isa::{self, AluCfOp, AluGroup, AluInst, AluOp as Op, AluSrc, Cf, CfOp, Clause, ExpOp, Kcache, Program, TexInst, TexOp};
use shrec::formats::gx2::ring::{self, ESGS_ITEM_DWORDS, GS_INPUT_VERTICES, GS_OFFSET_REGS};
use shrec::formats::gx2::scratch;
use shrec::formats::gx2::shader_struct::{Gx2Shader, ShaderKind};
use shrec::formats::gx2::stream;
use std::collections::{BTreeMap, BTreeSet};

/// One 32-bit lane and its error bound (see the module comment).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct V {
    pub bits: u32,
    pub err: f32,
}

impl V {
    pub const UNKNOWN: V = V { bits: 0x7FC0_0000, err: f32::INFINITY };
    /// A NaN computed by float arithmetic: the GPU keeps no NaN payload or sign (SPIR-V leaves
    /// them undefined), so it equals any NaN as an output but its bits are not determined (an
    /// integer op reading them is undetermined). The tiny bound marks it as not exact.
    pub const ANY_NAN: V = V { bits: 0x7FC0_0000, err: f32::MIN_POSITIVE };
    pub fn exact(bits: u32) -> V {
        V { bits, err: 0.0 }
    }
    pub fn f(x: f32) -> V {
        V { bits: x.to_bits(), err: 0.0 }
    }
    pub fn val(self) -> f32 {
        f32::from_bits(self.bits)
    }
    pub fn known(self) -> bool {
        self.err.is_finite()
    }
    pub fn is_exact(self) -> bool {
        self.err == 0.0
    }
    /// A zero computed by float arithmetic (bound −0): lavapipe may drop or flip its sign
    /// (`x + 0`, `x × 0` folding), so it is 0 to float consumers, but its bit pattern (integer
    /// ops) and the sign of 1/x, 1/√x are not determined.
    pub fn zero_of_any_sign(self) -> bool {
        self.err == 0.0 && self.err.is_sign_negative() && self.val() == 0.0
    }
}

/// Per-op tolerances measured on lavapipe (data, not code): every op not named here is exact.
mod tolerance {
    use crate::Tolerance;
    /// RECIP_IEEE, RECIP_CLAMPED, RECIP_FF.
    pub const RECIP: Tolerance = Tolerance::ulps(1.0);
    pub const SQRT: Tolerance = Tolerance::ulps(1.0);
    /// RECIPSQRT_IEEE, RECIPSQRT_CLAMPED, RECIPSQRT_FF.
    pub const RECIPSQRT: Tolerance = Tolerance::ulps(2.0);
    /// LOG_IEEE, LOG_CLAMPED.
    pub const LOG: Tolerance = Tolerance { ulps: 2.0, abs: 1.0 / 2097152.0, ..Tolerance::EXACT };
    /// EXP_IEEE.
    pub const EXP: Tolerance = Tolerance { rel: 1.0 / 1048576.0, rel_per_scale: 1.0 / 4194304.0, ..Tolerance::EXACT };
    /// SIN, COS.
    pub const SIN_COS: Tolerance = Tolerance { abs: 1.0 / 1048576.0, abs_per_scale: 1.0 / 16777216.0, ..Tolerance::EXACT };
}

/// A 2D, 3D or cube RGBA32F texture bound to a RESOURCE_ID (nearest filtering, clamp to edge:
/// what the harness binds). SAMPLE* reads level 0 of a texture without mip levels and is
/// undetermined on one with them (mip selection is not modelled); LD and GET_TEXTURE_INFO read
/// every level.
#[derive(Clone, Debug)]
pub struct Texture {
    pub resource: u32,
    /// Width of level 0 (a cube's face size, a volume's width, height and depth).
    pub size: u32,
    /// Height of level 0: `size`, except for a flat texture, which may be rectangular.
    pub height: u32,
    /// Cube: six faces (+x −x +y −y +z −z) of `size * size` texels each; volume: `size` slices
    /// (z) of `size * size` texels.
    pub shape: TextureShape,
    /// Level 0, row-major, `size * height` texels (per face / slice).
    pub texels: Vec<[f32; 4]>,
    /// Mip levels 1, 2, …: level k is `max(size >> k, 1)` × `max(height >> k, 1)` (a volume's
    /// depth likewise), laid out as level 0; empty = one level.
    pub mips: Vec<Vec<[f32; 4]>>,
    /// Slices of a [`TextureShape::FlatArray`] or cubes of a [`TextureShape::CubeArray`] (each
    /// level holds its slices, or its cubes of six faces, one after the other); 1 otherwise.
    pub layers: u32,
}

impl Texture {
    /// A texture of one level.
    pub fn new(resource: u32, size: u32, height: u32, shape: TextureShape, texels: Vec<[f32; 4]>) -> Texture {
        Texture { resource, size, height, shape, texels, mips: vec![], layers: 1 }
    }

    /// A 2D array of `layers` slices of one level (`texels` slice after slice).
    pub fn array(resource: u32, size: u32, height: u32, layers: u32, texels: Vec<[f32; 4]>) -> Texture {
        Texture { resource, size, height, shape: TextureShape::FlatArray, texels, mips: vec![], layers }
    }

    /// Number of mip levels.
    pub fn levels(&self) -> u32 {
        1 + self.mips.len() as u32
    }

    /// (width, height, depth) of level `k` (depth 1 unless a volume).
    pub fn level_size(&self, k: u32) -> (u32, u32, u32) {
        let (w, h) = ((self.size >> k).max(1), (self.height >> k).max(1));
        (w, h, if self.shape == TextureShape::Volume { w } else { 1 })
    }

    fn level(&self, k: u32) -> &[[f32; 4]] {
        if k == 0 {
            &self.texels
        } else {
            &self.mips[k as usize - 1]
        }
    }
}

/// What one invocation sees.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    /// VS: attribute by location; PS: varying by semantic (TEXCOORD number).
    pub attribs: BTreeMap<u32, [f32; 4]>,
    pub vertex_id: u32,
    pub instance_id: u32,
    /// Uniform-register mode: c0..c255 (raw bits).
    pub regfile: Vec<[u32; 4]>,
    /// Uniform-block mode: block location → vec4 elements (raw bits).
    pub blocks: BTreeMap<u32, Vec<[u32; 4]>>,
    pub textures: Vec<Texture>,
    /// GS: the ESGS ring item of each input vertex (slot → value), as the ES wrote it.
    pub esgs: Vec<BTreeMap<u32, [V; 4]>>,
    /// GS: the primitive id (R0.z).
    pub primitive_id: u32,
}

/// What a geometry shader invocation sent down the pipeline, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum GsEvent {
    /// EMIT: the copy shader's exports for this vertex.
    Vertex(BTreeMap<Target, [V; 4]>),
    /// CUT: the strip ends.
    Cut,
}

/// Export targets: (type 0 PIXEL / 1 POS / 2 PARAM, index).
pub type Target = (u32, u32);

/// Result of one invocation.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub exports: BTreeMap<Target, [V; 4]>,
    pub killed: bool,
    /// A decision depended on an undetermined value: nothing of this run can be compared.
    pub undetermined: bool,
    /// Why the run is undetermined (the first reason; for reports).
    pub why: String,
    pub executed: BTreeSet<&'static str>,
    /// ES (a VS with MEM_RING): ESGS slot → value written.
    pub ring: BTreeMap<u32, [V; 4]>,
    /// GS: emitted vertices and cuts.
    pub gs: Vec<GsEvent>,
    /// VS stream-out: (buffer, dword of the vertex's record) → value written (MEM_STREAM0-3).
    pub streams: BTreeMap<(u32, u32), V>,
}

/// Iterations after which a run is declared undetermined (the GPU would still be looping).
const STEP_LIMIT: u32 = 20_000;

#[derive(Clone, Debug)]
struct Frame {
    /// CF position of the LOOP_START and of its LOOP_END.
    start: usize,
    end: usize,
    /// Depth of the mask stack inside the loop (the LOOP_START's own entry included).
    depth: usize,
    bounded: bool,
    count: u32,
    iter: u32,
    init: i32,
    inc: i32,
    uses_al: bool,
    saved_al: i32,
}

/// Where a CF instruction's stack steps sent the lane.
enum Jumped {
    No,
    To(usize),
    /// Past the last instruction of the main program: the lane is done.
    PastTheEnd,
    Nowhere,
}

enum Stop {
    Done,
    /// Paused before a GET_GRADIENTS fetch whose source is this vector.
    Gradient([V; 4]),
}

struct M<'a> {
    s: &'a Gx2Shader,
    p: &'a Program,
    inp: &'a Inputs,
    gpr: Vec<[V; 4]>,
    /// PV (x..w) and PS of the previous group, `None` when that group did not write the lane.
    pv: [Option<V>; 5],
    ar: [Option<i32>; 4],
    al: i32,
    active: bool,
    /// `None` = undetermined predicate.
    pred: Option<bool>,
    stack: Vec<bool>,
    loops: Vec<Frame>,
    calls: Vec<usize>,
    grad_h: [V; 4],
    grad_v: [V; 4],
    /// The cube index SET_CUBEMAP_INDEX last set per texture resource (src.x; unknown before).
    cube_index: [V; 18],
    pos: usize,
    /// Resume point inside a TEX clause and the pending gradient answer.
    tex_resume: usize,
    grad_answer: Option<[V; 4]>,
    /// The source's horizontal and vertical derivatives for a paused GET_COMP_TEX_LOD.
    lod_answer: Option<([V; 4], [V; 4])>,
    steps: u32,
    run: Run,
    /// `SHREC_GX2_TRACE` set: CF positions, masks and GPR writes go to stderr (triage aid).
    trace: bool,
    /// GS: the GSVS ring (ringItemSize / 4 float4s), unwritten elements undetermined.
    gsvs: Vec<[V; 4]>,
    /// GS: vertices emitted so far.
    emitted: u32,
    /// Copy-shader run: the GSVS ring it reads (R0.x = the vertex's base in dwords).
    copy_ring: Option<Vec<[V; 4]>>,
    /// Scratch memory by element (docs/gx2.md "GX2 scratch memory"); an element or lane this
    /// invocation did not write holds what another invocation left: undetermined.
    scratch: BTreeMap<u32, [V; 4]>,
    /// Which wave this lane is assumed to run in (see the module comment).
    wave: Wave,
    /// A jump was taken (uniform wave) — only then can the divergent run differ.
    took_jump: bool,
    /// Jumps this lane reached while inactive, taken or not (numbers them for [`Wave::OnlyJump`]).
    inactive_jumps: u32,
}

/// Recorded in [`Run::executed`] when a lane took a jump (its uniform-wave run), so tests can
/// show that both the taken and the fall-through paths were exercised.
pub const JUMP_TAKEN: &str = "(jump taken)";

/// The other lanes of the wave, as far as jumps are concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wave {
    /// Every lane decides as this one: a jump reached while this lane is inactive is taken.
    Uniform,
    /// Some other lane is always active: no jump is taken.
    Divergent,
    /// Every lane is inactive at the n-th jump (from 0) this lane reaches while inactive, and
    /// some other lane is active at all the others: only that one is taken.
    OnlyJump(u32),
}

/// Most single-jump runs per invocation (the `Wave::OnlyJump` runs): a jump inside a loop is reached
/// once per iteration, and each run costs a whole interpretation.
pub const SINGLE_JUMP_RUNS: u32 = 32;

/// Runs a vertex invocation (or a pixel without gradient fetches), in a uniform and, where a
/// jump was taken, a divergent wave (see the module comment).
pub fn run(s: &Gx2Shader, p: &Program, inp: &Inputs) -> Run {
    let one = |wave| {
        let mut m = M::new(s, p, inp);
        m.wave = wave;
        if let Stop::Gradient(_) = m.go() {
            m.run.undetermined = true;
        }
        let (took, reached) = (m.took_jump, m.inactive_jumps);
        (m.finish(), took, reached)
    };
    let (uniform, took_jump, _) = one(Wave::Uniform);
    if !took_jump {
        return uniform;
    }
    let (divergent, _, reached) = one(Wave::Divergent);
    let mut r = same_in_both_waves(uniform, divergent);
    for k in 0..reached.min(SINGLE_JUMP_RUNS) {
        r = same_in_both_waves(r, one(Wave::OnlyJump(k)).0);
    }
    r
}

/// The run of a lane whose result must not depend on the wave: `uniform` if `other` (another
/// wave's run) agrees, else undetermined.
fn same_in_both_waves(mut uniform: Run, divergent: Run) -> Run {
    uniform.executed.extend(divergent.executed.iter().copied());
    if uniform.undetermined {
        return uniform;
    }
    if divergent.undetermined {
        uniform.undetermined = true;
        uniform.why = divergent.why;
    } else if (&uniform.exports, uniform.killed, &uniform.ring, &uniform.gs, &uniform.streams)
        != (&divergent.exports, divergent.killed, &divergent.ring, &divergent.gs, &divergent.streams)
    {
        uniform.undetermined = true;
        uniform.why =
            "the result depends on whether the other lanes of the wave take a jump (runs taking all, none or one of its jumps differ)".into();
    }
    if uniform.undetermined {
        uniform.exports.clear();
        uniform.streams.clear();
    }
    uniform
}

/// Runs the four pixels of a 2×2 quad (pixel p at x = p & 1, y = p >> 1) in lockstep at
/// gradient fetches: GET_GRADIENTS_H/V return fine differences of the quad's source values
/// (right − left, bottom − top). If the pixels do not all reach the same gradient fetch, the
/// quad is undetermined.
pub fn run_quad(s: &Gx2Shader, p: &Program, inp: &[Inputs; 4]) -> [Run; 4] {
    let (uniform, took_jump, _) = run_quad_in(s, p, inp, Wave::Uniform);
    if !took_jump {
        return uniform;
    }
    let (divergent, _, reached) = run_quad_in(s, p, inp, Wave::Divergent);
    let mut d = divergent.into_iter();
    let mut r = uniform.map(|u| same_in_both_waves(u, d.next().unwrap()));
    for k in 0..reached.min(SINGLE_JUMP_RUNS) {
        let mut o = run_quad_in(s, p, inp, Wave::OnlyJump(k)).0.into_iter();
        r = r.map(|u| same_in_both_waves(u, o.next().unwrap()));
    }
    r
}

/// The quad's runs in `wave`, whether a jump was taken, and the most jumps a pixel reached while
/// inactive.
fn run_quad_in(s: &Gx2Shader, p: &Program, inp: &[Inputs; 4], wave: Wave) -> ([Run; 4], bool, u32) {
    let mut ms: Vec<M> = inp
        .iter()
        .map(|i| {
            let mut m = M::new(s, p, i);
            m.wave = wave;
            m
        })
        .collect();
    let mut stops: Vec<Stop> = ms.iter_mut().map(|m| m.go()).collect();
    loop {
        if stops.iter().all(|x| matches!(x, Stop::Done)) {
            break;
        }
        let srcs: Vec<Option<[V; 4]>> = stops.iter().map(|x| if let Stop::Gradient(v) = x { Some(*v) } else { None }).collect();
        let same_place = ms.iter().all(|m| (m.pos, m.tex_resume) == (ms[0].pos, ms[0].tex_resume));
        if srcs.iter().any(|x| x.is_none()) || !same_place {
            for m in &mut ms {
                m.run.undetermined = true;
            }
            break;
        }
        let v: Vec<[V; 4]> = srcs.into_iter().map(|x| x.unwrap()).collect();
        if ms[0].current_tex().is_some_and(|t| t.op == TexOp::GET_COMP_TEX_LOD) {
            // both directions, each pixel's own (the quad's varyings are affine, so every
            // pixel's equal the coarse ones a host may use)
            for (k, m) in ms.iter_mut().enumerate() {
                let d = |a: usize, b: usize| -> [V; 4] { std::array::from_fn(|c| fsub(v[b][c], v[a][c])) };
                m.lod_answer = Some((d(k & !1, k | 1), d(k & !2, k | 2)));
            }
            stops = ms.iter_mut().map(|m| m.go()).collect();
            continue;
        }
        let horizontal = ms[0].current_tex().is_none_or(|t| t.op == TexOp::GET_GRADIENTS_H);
        for (k, m) in ms.iter_mut().enumerate() {
            let (a, b) = if horizontal { (k & !1, k | 1) } else { (k & !2, k | 2) };
            m.grad_answer = Some(std::array::from_fn(|c| fsub(v[b][c], v[a][c])));
        }
        stops = ms.iter_mut().map(|m| m.go()).collect();
    }
    let took_jump = ms.iter().any(|m| m.took_jump);
    let reached = ms.iter().map(|m| m.inactive_jumps).max().unwrap_or(0);
    let runs: Vec<Run> = ms.into_iter().map(|m| m.finish()).collect();
    (runs.try_into().unwrap(), took_jump, reached)
}

fn is_denormal(x: f32) -> bool {
    x != 0.0 && x.is_subnormal()
}

fn ulp32(x: f32) -> f64 {
    crate::ulp(f64::from(x))
}

/// A float result with an error bound; denormal or non-finite approximate results are unknown.
fn approx(r: f32, err: f64) -> V {
    if r.is_nan() {
        return V::ANY_NAN;
    }
    if is_denormal(r) {
        return V::UNKNOWN;
    }
    if r == 0.0 && err == 0.0 {
        return V { bits: r.to_bits(), err: -0.0 };
    }
    if err == 0.0 {
        return V::f(r);
    }
    if !r.is_finite() || !err.is_finite() || err > 1e30 {
        return V::UNKNOWN;
    }
    V { bits: r.to_bits(), err: err as f32 }
}

/// Float inputs usable by arithmetic: known and not denormal.
fn fin(v: V) -> Option<(f32, f64)> {
    if !v.known() || is_denormal(v.val()) {
        None
    } else {
        Some((v.val(), f64::from(v.err)))
    }
}

fn fadd(a: V, b: V) -> V {
    let (Some((x, ex)), Some((y, ey))) = (fin(a), fin(b)) else { return V::UNKNOWN };
    let r = x + y;
    let e = ex + ey;
    approx(r, if e > 0.0 { e + ulp32(r) } else { 0.0 })
}

fn fsub(a: V, b: V) -> V {
    fadd(a, V { bits: b.bits ^ 0x8000_0000, err: b.err })
}

/// IEEE (`legacy` = false) or Latte non-IEEE multiply (0 × anything = +0).
fn fmul(a: V, b: V, legacy: bool) -> V {
    let (Some((x, ex)), Some((y, ey))) = (fin(a), fin(b)) else { return V::UNKNOWN };
    if legacy {
        let az = x == 0.0 && ex == 0.0;
        let bz = y == 0.0 && ey == 0.0;
        if az || bz {
            return V::f(0.0);
        }
        if f64::from(x.abs()) <= ex || f64::from(y.abs()) <= ey {
            return V::UNKNOWN; // might be zero on the GPU
        }
    }
    let zero_times_special = |z: f32, other: f32| z == 0.0 && !other.is_finite();
    if !legacy && (zero_times_special(x, y) || zero_times_special(y, x)) {
        // IEEE 0 × inf / NaN is NaN, but a GPU compiler may fold x × 0 to 0 when the zero is a
        // compile-time constant (a literal, inline 0.0, a never-written register). With
        // SignedZeroInfNanPreserve (crate::check::float_controls) it may not, yet lavapipe
        // still folds a product with the constant +0 (crate::check::plus_zero_products_fold):
        // only a −0 operand is compared then.
        let plus_zero = zero_times_special(x, y) && x.is_sign_positive() || zero_times_special(y, x) && y.is_sign_positive();
        if !crate::check::float_controls() || plus_zero && crate::check::plus_zero_products_fold() {
            return V::UNKNOWN;
        }
    }
    let r = x * y;
    let e = f64::from(x.abs()) * ey + f64::from(y.abs()) * ex + ex * ey;
    approx(r, if e > 0.0 { e + ulp32(r) } else { 0.0 })
}

/// `x·y + z` rounded twice; a fused implementation may differ by the difference to the singly
/// rounded value, which becomes part of the bound.
fn fmuladd(a: V, b: V, c: V, legacy: bool) -> V {
    let p = fmul(a, b, legacy);
    let r = fadd(p, c);
    if !r.known() || !p.is_exact() || !c.is_exact() {
        return r;
    }
    let (x, y, z) = (f64::from(a.val()), f64::from(b.val()), f64::from(c.val()));
    let product = if p.val() == 0.0 && legacy { 0.0 } else { x * y };
    let fused = (product + z) as f32;
    let d = (f64::from(fused) - f64::from(r.val())).abs();
    if d == 0.0 {
        r
    } else {
        approx(r.val(), d)
    }
}

/// Ordering of two floats: `None` when undetermined (NaN, or closer than their errors).
fn fcmp(a: V, b: V) -> Option<std::cmp::Ordering> {
    let (Some((x, ex)), Some((y, ey))) = (fin(a), fin(b)) else { return None };
    if x.is_nan() || y.is_nan() {
        return None;
    }
    if ex + ey > 0.0 && (f64::from(x) - f64::from(y)).abs() <= ex + ey {
        return None;
    }
    x.partial_cmp(&y)
}

fn int_in(v: V) -> Option<u32> {
    (v.is_exact() && !v.zero_of_any_sign()).then_some(v.bits)
}

fn bool_f(b: bool) -> V {
    V::f(if b { 1.0 } else { 0.0 })
}

fn bool_mask(b: bool) -> V {
    V::exact(if b { u32::MAX } else { 0 })
}

/// Unary float op with a tolerance; `scale` is the op's conditioning number.
fn transcendental(t: Tolerance, x: V, f: impl Fn(f64) -> f64, scale: impl Fn(f64) -> f64, deriv: impl Fn(f64) -> f64) -> V {
    let Some((xv, ex)) = fin(x) else { return V::UNKNOWN };
    let r = f(f64::from(xv));
    let r32 = r as f32;
    if r32.is_nan() {
        // a NaN from an exact or NaN input (NaN in, or outside the domain): some NaN
        return if ex == 0.0 || xv.is_nan() { V::ANY_NAN } else { V::UNKNOWN };
    }
    if !r32.is_finite() {
        // inf results are exact only from exact inputs
        return if ex == 0.0 { V::f(r32) } else { V::UNKNOWN };
    }
    let mut e = t.bound(r, scale(f64::from(xv)));
    if ex > 0.0 {
        e += ex * deriv(f64::from(xv)).abs() * 1.01 + ulp32(r32);
    }
    approx(r32, e)
}

fn floor_like(x: V, f: impl Fn(f32) -> f32) -> V {
    let Some((v, e)) = fin(x) else { return V::UNKNOWN };
    if e > 0.0 {
        let (lo, hi) = ((f64::from(v) - e) as f32, (f64::from(v) + e) as f32);
        if f(lo) != f(hi) || lo.fract() == 0.0 || hi.fract() == 0.0 {
            return V::UNKNOWN;
        }
    }
    approx(f(v), 0.0)
}

/// Round half to even.
fn rndne(v: f32) -> f32 {
    v.round_ties_even()
}

fn f2i(v: f32) -> u32 {
    if v.is_nan() {
        0
    } else {
        (v.trunc() as i64).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32 as u32
    }
}

fn f2u(v: f32) -> u32 {
    if v.is_nan() {
        0
    } else {
        (v.trunc() as i64).clamp(0, i64::from(u32::MAX)) as u32
    }
}

impl<'a> M<'a> {
    fn new(s: &'a Gx2Shader, p: &'a Program, inp: &'a Inputs) -> M<'a> {
        // GPRs start undefined (the GPU's temps are zero, Latte's are not specified)
        let mut m = M {
            s,
            p,
            inp,
            gpr: vec![[V::UNKNOWN; 4]; 128],
            pv: [None; 5],
            ar: [None; 4],
            al: 0,
            active: true,
            pred: Some(false),
            stack: Vec::new(),
            loops: Vec::new(),
            calls: Vec::new(),
            grad_h: [V::UNKNOWN; 4],
            grad_v: [V::UNKNOWN; 4],
            cube_index: [V::UNKNOWN; 18],
            pos: 0,
            tex_resume: 0,
            grad_answer: None,
            lod_answer: None,
            steps: 0,
            run: Run::default(),
            trace: std::env::var_os("SHREC_GX2_TRACE").is_some(),
            gsvs: Vec::new(),
            emitted: 0,
            copy_ring: None,
            scratch: BTreeMap::new(),
            wave: Wave::Divergent,
            took_jump: false,
            inactive_jumps: 0,
        };
        if s.kind == ShaderKind::Pixel {
            m.pixel_inputs();
        }
        if s.kind == ShaderKind::Geometry {
            // ring model (docs/gx2.md "GX2 geometry shaders"): R0/R1 hold the ESGS item offsets
            for (r, lanes) in GS_OFFSET_REGS.iter().enumerate() {
                m.gpr[r] = lanes.map(|l| V::exact(l.map_or(0, |k| k * ESGS_ITEM_DWORDS)));
            }
            m.gpr[0][2] = V::exact(inp.primitive_id);
            m.gsvs = vec![[V::UNKNOWN; 4]; ((s.reg(0x88) & 0x7FFF) / 4) as usize];
        }
        m
    }

    fn finish(mut self) -> Run {
        if self.run.undetermined || self.run.killed {
            self.run.exports.clear();
            self.run.streams.clear();
        }
        self.run
    }

    /// SPI_PS_INPUT_CNTL[i].SEMANTIC s → R i (notes §2.3); POSITION_ENA is left undetermined.
    fn pixel_inputs(&mut self) {
        let n = self.s.reg(0x10).min(32);
        for i in 0..n as usize {
            let sem = self.s.reg(0x14 + 4 * i) & 0xFF;
            let v = self.inp.attribs.get(&sem).copied().unwrap_or([0.0; 4]);
            self.gpr[i] = v.map(V::f);
        }
        let ctl0 = self.s.reg(0x08);
        if ctl0 >> 8 & 1 != 0 {
            self.gpr[(ctl0 >> 10 & 0x1F) as usize] = [V::UNKNOWN; 4];
        }
    }

    /// The fetch shader (notes §8): R0 = (vertex id, 0, 0, instance id) as integers, and
    /// SQ_VTX_SEMANTIC[i] = location L → R(i+1) = attribute L (if an attrib var covers L).
    fn call_fs(&mut self) {
        self.gpr[0] = [V::exact(self.inp.vertex_id), V::exact(0), V::exact(0), V::exact(self.inp.instance_id)];
        let n = self.s.reg(0x40).min(32) as usize;
        for i in 0..n {
            let loc = self.s.reg(0x44 + 4 * i) & 0xFF;
            if loc == 0xFF {
                continue;
            }
            let covered = self.s.attrib_vars.iter().any(|a| {
                let regs = match a.ty {
                    21..=23 => 2,
                    24..=26 => 3,
                    27..=29 => 4,
                    _ => 1,
                };
                (a.location..a.location + regs).contains(&loc)
            });
            if covered {
                let v = self.inp.attribs.get(&loc).copied().unwrap_or([0.0; 4]);
                self.gpr[i + 1] = v.map(V::f);
            }
        }
    }

    /// Ends the run as undetermined (nothing it produced is compared), keeping the first reason.
    fn undetermined_because(&mut self, why: &str) -> Stop {
        self.mark_undetermined(why);
        Stop::Done
    }

    /// Marks the run undetermined and goes on (the first reason is kept for reports).
    fn mark_undetermined(&mut self, why: &str) {
        self.run.undetermined = true;
        if self.run.why.is_empty() {
            self.run.why = why.to_string();
        }
    }

    fn position_of(&self, pc: u32) -> Option<usize> {
        self.p.cfs.iter().position(|c| c.0.pc == pc)
    }

    fn current_tex(&self) -> Option<&TexInst> {
        match &self.p.cfs.get(self.pos)?.1 {
            Clause::Tex(ts) => ts.get(self.tex_resume),
            _ => None,
        }
    }

    fn pop(&mut self, n: u32) {
        for _ in 0..n {
            if let Some(a) = self.stack.pop() {
                self.active = a;
            }
        }
    }

    fn push(&mut self) {
        self.stack.push(self.active);
    }

    fn else_(&mut self) {
        let top = self.stack.last().copied().unwrap_or(true);
        self.active = top && !self.active;
    }

    /// Runs a [`cf_stack`] row's steps for this lane in its wave.
    fn stack_steps(&mut self, e: &StackEffect, pop_count: u32, addr: u32) -> Jumped {
        for step in e.steps {
            match *step {
                Step::Pop(c) => self.pop(c.resolve(pop_count)),
                Step::Push => self.push(),
                Step::Else => self.else_(),
                Step::JumpIfNoneActive { pop } => {
                    if self.active {
                        continue;
                    }
                    let n = self.inactive_jumps;
                    self.inactive_jumps += 1;
                    let taken = match self.wave {
                        Wave::Uniform => true,
                        Wave::Divergent => false,
                        Wave::OnlyJump(k) => n == k,
                    };
                    if !taken {
                        continue;
                    }
                    self.took_jump = true;
                    self.run.executed.insert(JUMP_TAKEN);
                    self.pop(pop.resolve(pop_count));
                    return match self.position_of(addr) {
                        Some(t) => Jumped::To(t),
                        None if self.calls.is_empty() && addr as usize >= self.p.main_len => Jumped::PastTheEnd,
                        None => Jumped::Nowhere,
                    };
                }
            }
        }
        Jumped::No
    }

    /// Matching LOOP_END of the loop starting at position `i`.
    fn loop_end(&self, i: usize) -> Option<usize> {
        let mut nest = 0;
        for j in i + 1..self.p.cfs.len() {
            if let Cf::Normal { op, .. } = self.p.cfs[j].0.cf {
                if matches!(op, CfOp::LOOP_START | CfOp::LOOP_START_DX10 | CfOp::LOOP_START_NO_AL) {
                    nest += 1;
                } else if op == CfOp::LOOP_END {
                    if nest == 0 {
                        return Some(j);
                    }
                    nest -= 1;
                }
            }
        }
        None
    }

    /// Leaves the innermost loop (break, or its end): restores the stack, AL and the flag.
    fn exit_loop(&mut self) {
        let f = self.loops.pop().unwrap();
        self.stack.truncate(f.depth);
        self.active = self.stack.pop().unwrap_or(true);
        if f.uses_al {
            self.al = f.saved_al;
        }
        self.pos = f.end + 1;
    }

    /// Next iteration or exit (LOOP_END, continue).
    fn next_iteration(&mut self) {
        let f = self.loops.last_mut().unwrap();
        f.iter += 1;
        if !self.active || (f.bounded && f.iter >= f.count) {
            self.exit_loop();
            return;
        }
        if f.uses_al {
            self.al = f.init.wrapping_add((f.iter as i32).wrapping_mul(f.inc));
        }
        self.stack.truncate(f.depth);
        self.pos = f.start + 1;
    }

    fn go(&mut self) -> Stop {
        let main_len = self.p.main_len;
        loop {
            self.steps += 1;
            if self.steps > STEP_LIMIT {
                return self.undetermined_because("step limit reached (the program may not terminate)");
            }
            if self.pos >= self.p.cfs.len() || (self.calls.is_empty() && self.loops.is_empty() && self.pos >= main_len) {
                return Stop::Done;
            }
            let (cf, clause) = (&self.p.cfs[self.pos].0, &self.p.cfs[self.pos].1);
            if self.trace {
                eprintln!("trace: cf {:02} active {} stack {:?} pred {:?}", cf.pc, self.active, self.stack, self.pred);
            }
            let eop = cf.end_of_program && self.calls.is_empty();
            match &cf.cf {
                Cf::Alu { op, kcache, .. } => {
                    let op = *op;
                    self.run.executed.insert(op.name());
                    let effect = cf_stack::effect(op.name());
                    if let Some(e) = effect.filter(|e| e.timing == cf_stack::Timing::BeforeClause) {
                        self.stack_steps(e, 0, 0);
                    }
                    let mut exec: Option<Option<bool>> = None;
                    if self.active {
                        let Clause::Alu(groups) = clause else { unreachable!() };
                        self.pv = [None; 5];
                        for g in groups {
                            if let Some(x) = self.group(g, kcache) {
                                exec = Some(x);
                            }
                            if self.run.undetermined || self.run.killed {
                                return Stop::Done;
                            }
                        }
                        if let Some(e) = exec {
                            match e {
                                Some(b) => self.active = b,
                                None => return self.undetermined_because("a branch condition is undetermined"),
                            }
                        }
                    }
                    if let Some(e) = effect.filter(|e| e.timing == cf_stack::Timing::AfterClause) {
                        self.stack_steps(e, 0, 0);
                    }
                    match op {
                        AluCfOp::ALU_CONTINUE if !self.active && !self.loops.is_empty() => {
                            self.active = true;
                            self.next_iteration();
                            continue;
                        }
                        AluCfOp::ALU_BREAK if !self.active && !self.loops.is_empty() => {
                            self.exit_loop();
                            continue;
                        }
                        // the mask-stack forms ran their cf_stack rows around the clause; an
                        // active lane goes on after ALU_CONTINUE / ALU_BREAK; ALU_EXT is
                        // rejected by the lowering
                        AluCfOp::ALU
                        | AluCfOp::ALU_PUSH_BEFORE
                        | AluCfOp::ALU_POP_AFTER
                        | AluCfOp::ALU_POP2_AFTER
                        | AluCfOp::ALU_EXT
                        | AluCfOp::ALU_CONTINUE
                        | AluCfOp::ALU_BREAK
                        | AluCfOp::ALU_ELSE_AFTER => {}
                    }
                }
                Cf::Export { op, ty, array_base, rw_gpr, sel, burst_count, .. } => {
                    self.run.executed.insert(op.name());
                    match op {
                        ExpOp::MEM_RING if self.active => {
                            let c = cf.cf.clone();
                            self.mem_ring(&c);
                            if self.run.undetermined {
                                return Stop::Done;
                            }
                        }
                        ExpOp::MEM_STREAM0 | ExpOp::MEM_STREAM1 | ExpOp::MEM_STREAM2 | ExpOp::MEM_STREAM3 if self.active => {
                            let c = cf.cf.clone();
                            self.mem_stream(*op, &c);
                            if self.run.undetermined {
                                return Stop::Done;
                            }
                        }
                        ExpOp::MEM_SCRATCH if self.active => {
                            let c = cf.cf.clone();
                            self.scratch_write(&c);
                            if self.run.undetermined {
                                return Stop::Done;
                            }
                        }
                        ExpOp::EXP | ExpOp::EXP_DONE if self.active => {
                            for b in 0..=*burst_count {
                                let r = self.gpr.get((rw_gpr + b) as usize).copied().unwrap_or([V::UNKNOWN; 4]);
                                let out = self.run.exports.entry((*ty, array_base + b)).or_insert([V::UNKNOWN; 4]);
                                for k in 0..4 {
                                    match sel[k] {
                                        0..=3 => out[k] = r[sel[k] as usize],
                                        4 => out[k] = V::f(0.0),
                                        5 => out[k] = V::f(1.0),
                                        _ => {}
                                    }
                                }
                            }
                        }
                        // an inactive lane writes nothing
                        ExpOp::MEM_RING
                        | ExpOp::EXP
                        | ExpOp::EXP_DONE
                        | ExpOp::MEM_STREAM0
                        | ExpOp::MEM_STREAM1
                        | ExpOp::MEM_STREAM2
                        | ExpOp::MEM_STREAM3
                        | ExpOp::MEM_SCRATCH => {}
                        // the table marks these Rejected: the lowering refuses them, nothing is compared
                        ExpOp::MEM_REDUCTION | ExpOp::MEM_EXPORT => {}
                    }
                }
                Cf::Normal { op, pop_count, addr, cf_const, .. } => {
                    let op = *op;
                    self.run.executed.insert(op.name());
                    if *pop_count != 0 && !cf_stack::pop_count_allowed(op.name()) {
                        return self.undetermined_because("a POP_COUNT where no source states its meaning");
                    }
                    match op {
                        CfOp::JUMP
                        | CfOp::PUSH
                        | CfOp::PUSH_ELSE
                        | CfOp::ELSE
                        | CfOp::POP
                        | CfOp::POP_JUMP
                        | CfOp::POP_PUSH
                        | CfOp::POP_PUSH_ELSE => {
                            let Some(e) = cf_stack::effect(op.name()) else {
                                return self.undetermined_because("a mask-stack instruction without a cf_stack row");
                            };
                            match self.stack_steps(e, *pop_count, *addr) {
                                Jumped::No => {}
                                Jumped::To(target) => {
                                    self.pos = target;
                                    continue;
                                }
                                Jumped::PastTheEnd => return Stop::Done,
                                Jumped::Nowhere => return self.undetermined_because("a jump to an address outside the program"),
                            }
                        }
                        CfOp::TEX => {
                            if self.active {
                                if let Some(stop) = self.tex_clause() {
                                    return stop;
                                }
                            }
                            self.tex_resume = 0;
                        }
                        CfOp::CALL_FS => self.call_fs(),
                        CfOp::VTX if self.active => {
                            let Clause::Vtx(vs) = clause else { unreachable!() };
                            let vs = vs.clone();
                            self.vtx_clause(&vs);
                            if self.run.undetermined {
                                return Stop::Done;
                            }
                        }
                        CfOp::EMIT_VERTEX | CfOp::EMIT_CUT_VERTEX | CfOp::CUT_VERTEX
                            if self.active && self.s.kind == ShaderKind::Geometry && self.copy_ring.is_none() =>
                        {
                            if op != CfOp::CUT_VERTEX {
                                self.emit();
                                if self.run.undetermined {
                                    return Stop::Done;
                                }
                            }
                            if op != CfOp::EMIT_VERTEX {
                                self.run.gs.push(GsEvent::Cut);
                            }
                        }
                        CfOp::LOOP_START | CfOp::LOOP_START_DX10 | CfOp::LOOP_START_NO_AL => {
                            let Some(end) = self.loop_end(self.pos) else {
                                return self.undetermined_because("LOOP_START without a matching LOOP_END");
                            };
                            if !self.active {
                                self.pos = end + 1;
                                continue;
                            }
                            // LOOP_START_DX10 is unbounded (left by a break); the others count
                            // with the GX2LoopVar integer constant
                            let bounded = op != CfOp::LOOP_START_DX10;
                            let (mut count, mut init, mut inc) = (0, 0, 0);
                            if bounded {
                                let Some(lv) = self.s.loop_vars.iter().find(|v| v.offset == *cf_const) else {
                                    return self.undetermined_because("the loop constant is not set");
                                };
                                count = lv.value & 0xFFF;
                                init = ((lv.value >> 12 & 0xFFF) << 20) as i32 >> 20;
                                inc = (lv.value >> 24) as u8 as i8 as i32;
                            }
                            self.push();
                            let f = Frame {
                                start: self.pos,
                                end,
                                depth: self.stack.len(),
                                bounded,
                                count,
                                iter: 0,
                                init,
                                inc,
                                uses_al: op == CfOp::LOOP_START,
                                saved_al: self.al,
                            };
                            if f.bounded && count == 0 {
                                self.loops.push(f);
                                self.exit_loop();
                                continue;
                            }
                            if f.uses_al {
                                self.al = init;
                            }
                            self.loops.push(f);
                        }
                        CfOp::LOOP_END => {
                            if self.loops.is_empty() {
                                return self.undetermined_because("a loop instruction outside any loop");
                            }
                            self.next_iteration();
                            continue;
                        }
                        CfOp::LOOP_CONTINUE if self.active && !self.loops.is_empty() => {
                            self.next_iteration();
                            continue;
                        }
                        CfOp::LOOP_BREAK if self.active && !self.loops.is_empty() => {
                            self.exit_loop();
                            continue;
                        }
                        CfOp::CALL if self.active => {
                            let Some(t) = self.position_of(*addr) else { return self.undetermined_because("CALL to an address outside the program") };
                            if self.calls.len() > 32 {
                                return self.undetermined_because("call depth over 32");
                            }
                            self.calls.push(self.pos + 1);
                            self.pos = t;
                            continue;
                        }
                        CfOp::RETURN => {
                            if let Some(r) = self.calls.pop() {
                                self.pos = r;
                                continue;
                            }
                        }
                        CfOp::KILL if self.active => {
                            self.run.killed = true;
                            return Stop::Done;
                        }
                        // no effect on this lane: an inactive lane's VTX / CALL / KILL / break /
                        // continue, the emits outside a geometry shader's own run, the waits
                        CfOp::NOP
                        | CfOp::END_PROGRAM
                        | CfOp::WAIT_ACK
                        | CfOp::TEX_ACK
                        | CfOp::VTX
                        | CfOp::EMIT_VERTEX
                        | CfOp::EMIT_CUT_VERTEX
                        | CfOp::CUT_VERTEX
                        | CfOp::LOOP_CONTINUE
                        | CfOp::LOOP_BREAK
                        | CfOp::CALL
                        | CfOp::KILL => {}
                        // the table marks these Rejected: the lowering refuses them, nothing is compared
                        CfOp::VTX_TC | CfOp::VTX_ACK | CfOp::VTX_TC_ACK => {}
                    }
                }
            }
            if eop {
                return Stop::Done;
            }
            self.pos += 1;
        }
    }

    /// MEM_RING: an ES writes its ESGS slot, a GS its GSVS ring (docs/gx2.md "GX2 geometry shaders").
    fn mem_ring(&mut self, cf: &Cf) {
        let Cf::Export { ty, array_base, rw_gpr, rw_rel, index_gpr, elem_size, array_size, comp_mask, burst_count, .. } = *cf else { return };
        let gs = self.s.kind == ShaderKind::Geometry;
        if let Some(why) = ring::mem_ring_problem(ty, array_base, elem_size, array_size, rw_rel, burst_count, gs, (!gs).then_some(ring::ES_SLOTS)) {
            self.mark_undetermined(&why);
            return;
        }
        let extra = if gs && ty & 1 == 1 {
            let v = self.gpr[index_gpr as usize][0];
            if !v.is_exact() {
                self.mark_undetermined("MEM_RING index is undetermined");
                return;
            }
            v.bits as i32 as i64
        } else {
            0
        };
        for b in 0..=burst_count {
            let r = self.gpr.get((rw_gpr + b) as usize).copied().unwrap_or([V::UNKNOWN; 4]);
            let elem = i64::from(array_base / 4 + b) + extra;
            let slot = if gs {
                if elem < 0 || elem >= self.gsvs.len() as i64 {
                    continue;
                }
                &mut self.gsvs[elem as usize]
            } else {
                self.run.ring.entry(elem as u32).or_insert([V::UNKNOWN; 4])
            };
            for k in 0..4 {
                if comp_mask >> k & 1 != 0 {
                    slot[k] = r[k];
                }
            }
        }
    }

    /// MEM_SCRATCH of an active lane: lanes COMP_MASK of R\[RW_GPR\] into element ARRAY_BASE
    /// (docs/gx2.md "GX2 scratch memory").
    fn scratch_write(&mut self, cf: &Cf) {
        if let Some(why) = scratch::write_problem(cf) {
            self.mark_undetermined(&why);
            return;
        }
        let Cf::Export { array_base, rw_gpr, comp_mask, .. } = *cf else { return };
        let r = self.gpr.get(rw_gpr as usize).copied().unwrap_or([V::UNKNOWN; 4]);
        let element = self.scratch.entry(array_base).or_insert([V::UNKNOWN; 4]);
        for lane in 0..4 {
            if comp_mask >> lane & 1 != 0 {
                element[lane] = r[lane];
            }
        }
    }

    /// MEM_STREAMn of an active lane (docs/gx2.md "GX2 stream-out"): with ELEM_SIZE 0 a
    /// stream buffer is addressed in dwords (R700 ISA, memory writes: first dword =
    /// ARRAY_BASE · (ELEM_SIZE + 1)), and lane i of RW_GPR, for each COMP_MASK bit i, is dword
    /// ARRAY_BASE + i of this vertex's record in buffer n (Mesa r600 `emit_streamout` encodes
    /// exactly that; Cemu and decaf read it so). A later write of the same dword replaces the
    /// earlier one. The forms outside the model (`formats::gx2::stream`, shared with the
    /// lowering) are undetermined.
    fn mem_stream(&mut self, op: ExpOp, cf: &Cf) {
        let Cf::Export { ty, array_base, rw_gpr, rw_rel, elem_size, array_size, comp_mask, burst_count, .. } = *cf else { return };
        let Some(buffer) = stream::buffer(op) else { return };
        if self.s.kind != ShaderKind::Vertex {
            self.mark_undetermined("MEM_STREAM outside a vertex shader");
            return;
        }
        let stride = match stream::stride(self.s, buffer) {
            Ok(s) => s,
            Err(why) => {
                self.mark_undetermined(&why);
                return;
            }
        };
        let w = stream::StreamWrite { ty, array_base, elem_size, array_size, comp_mask, rw_rel, burst_count };
        if let Some(why) = w.problem(op.name(), stride) {
            self.mark_undetermined(&why);
            return;
        }
        let r = self.gpr.get(rw_gpr as usize).copied().unwrap_or([V::UNKNOWN; 4]);
        for (i, v) in r.into_iter().enumerate() {
            if comp_mask >> i & 1 != 0 {
                self.run.streams.insert((buffer, array_base + i as u32), v);
            }
        }
    }

    /// A VTX clause: ring reads of a GS (ESGS) or of a copy shader (GSVS).
    fn vtx_clause(&mut self, vs: &[isa::VtxInst]) {
        // the ESGS slots that exist: 0..=max OFFSET / 16 of the program's ring fetches
        let slots = self
            .p
            .cfs
            .iter()
            .filter_map(|(_, c)| if let Clause::Vtx(v) = c { Some(v) } else { None })
            .flatten()
            .map(|v| v.offset / 16 + 1)
            .max()
            .unwrap_or(0);
        for v in vs {
            if let Some(why) = ring::ring_fetch_problem(v) {
                self.mark_undetermined(&why);
                return;
            }
            if self.s.kind != ShaderKind::Geometry {
                self.mark_undetermined("a VTX clause outside a geometry / copy shader");
                return;
            }
            let a = self.gpr[v.src_gpr as usize][v.src_sel_x as usize];
            if !a.is_exact() {
                self.mark_undetermined("ring address is undetermined");
                return;
            }
            let addr = a.bits.wrapping_add(v.offset / 4);
            let value = if let Some(r) = &self.copy_ring {
                // GSVS: dword address → float4 element
                if addr.is_multiple_of(4) && ((addr / 4) as usize) < r.len() {
                    r[(addr / 4) as usize]
                } else {
                    [V::exact(0); 4]
                }
            } else {
                let (k, s) = (addr / ESGS_ITEM_DWORDS, addr % ESGS_ITEM_DWORDS / 4);
                if addr.is_multiple_of(4) && k < GS_INPUT_VERTICES && s < slots {
                    self.inp.esgs.get(k as usize).and_then(|m| m.get(&s)).copied().unwrap_or([V::UNKNOWN; 4])
                } else {
                    [V::exact(0); 4]
                }
            };
            let d = &mut self.gpr[v.dst_gpr as usize];
            for k in 0..4 {
                match v.dst_sel[k] {
                    0..=3 => d[k] = value[v.dst_sel[k] as usize],
                    4 => d[k] = V::f(0.0),
                    5 => d[k] = V::f(1.0),
                    _ => {}
                }
            }
        }
    }

    /// EMIT: runs the copy program on the GSVS ring at this vertex's base.
    fn emit(&mut self) {
        let copy = match isa::decode(&self.s.copy_program) {
            Ok(p) => p,
            Err(e) => {
                self.mark_undetermined(&format!("copy program: {e}"));
                return;
            }
        };
        let vert = self.s.reg(0x14) & 0x7FFF;
        let mut c = M::new(self.s, &copy, self.inp);
        c.gpr = vec![[V::UNKNOWN; 4]; 128];
        c.gpr[0][0] = V::exact(self.emitted.wrapping_mul(vert));
        c.copy_ring = Some(self.gsvs.clone());
        c.go();
        if c.run.undetermined {
            let why = format!("copy program: {}", c.run.why);
            self.mark_undetermined(&why);
            return;
        }
        self.run.executed.extend(c.run.executed.iter().copied());
        self.run.gs.push(GsEvent::Vertex(c.run.exports));
        self.emitted += 1;
    }

    fn kval(&mut self, k: &Kcache, sel: u32, a: &AluInst, s: &AluSrc) -> Option<[u32; 4]> {
        let mut idx = (k.addr * 16 + sel % 32) as i64;
        if k.mode == 3 {
            idx += i64::from(self.al);
        }
        if s.rel {
            idx += i64::from(self.index(a.index_mode)?);
        }
        let b = self.inp.blocks.get(&k.bank)?;
        usize::try_from(idx).ok().and_then(|i| b.get(i)).copied()
    }

    /// GPRs relative addressing may reach: R0..R(NUM_GPRS - 1) (128 when NUM_GPRS is 0);
    /// beyond that the result is not defined.
    fn rel_gprs(&self) -> u32 {
        match self.s.num_gprs() {
            0 => 128,
            n => n.min(128),
        }
    }

    fn index(&self, mode: u32) -> Option<i32> {
        if mode == 4 {
            Some(self.al)
        } else {
            self.ar[(mode & 3) as usize]
        }
    }

    fn src(&mut self, s: &AluSrc, a: &AluInst, kc: &[Kcache; 2]) -> V {
        let c = s.chan as usize;
        let v = match s.sel {
            0..=127 => {
                // a relative read through an unset AR lane or out of range: value not defined
                let r = if s.rel {
                    match self.index(a.index_mode) {
                        Some(i) => i64::from(i) + i64::from(s.sel),
                        None => return V::UNKNOWN,
                    }
                } else {
                    i64::from(s.sel)
                };
                if !(0..i64::from(self.rel_gprs())).contains(&r) {
                    return V::UNKNOWN;
                }
                self.gpr[r as usize][c]
            }
            128..=191 => {
                let k = kc[((s.sel - 128) / 32) as usize];
                match self.kval(&k, s.sel - 128, a, s) {
                    Some(w) => V::exact(w[c]),
                    None => {
                        self.mark_undetermined("kcache constant outside the bound block");
                        return V::UNKNOWN;
                    }
                }
            }
            248 => V::f(0.0),
            249 => V::f(1.0),
            250 => V::exact(1),
            251 => V::exact(u32::MAX),
            252 => V::f(0.5),
            isa::SEL_LITERAL => V::exact(s.literal),
            isa::SEL_PV => self.pv[c].unwrap_or(V::UNKNOWN),
            isa::SEL_PS => self.pv[4].unwrap_or(V::UNKNOWN),
            256..=511 => {
                let mut i = i64::from(s.sel - 256);
                if s.rel {
                    match self.index(a.index_mode) {
                        Some(x) => i += i64::from(x),
                        None => {
                            self.mark_undetermined("the relative index is undetermined");
                            return V::UNKNOWN;
                        }
                    }
                }
                match usize::try_from(i).ok().and_then(|i| self.inp.regfile.get(i)) {
                    Some(w) => V::exact(w[c]),
                    None => {
                        self.mark_undetermined("constant register outside the register file");
                        return V::UNKNOWN;
                    }
                }
            }
            _ => V::UNKNOWN,
        };
        // ABS then NEG are sign-bit operations. |zero| is +0 on the hardware, but a driver may
        // drop the `abs` of a value it proves not negative, counting −0 as not negative (Mesa's
        // nir_opt_algebraic `fabs(a(is_not_negative)) → a`; GX2 shaped seed 1 #7428 on lavapipe
        // kept the −0 of CNDE(…, 0, −0) through |·|): its sign is not determined.
        let v = match s.abs {
            true if v.is_exact() && v.val() == 0.0 => V { bits: 0, err: -0.0 },
            true => V { bits: v.bits & 0x7FFF_FFFF, ..v },
            false => v,
        };
        if s.neg {
            V { bits: v.bits ^ 0x8000_0000, ..v }
        } else {
            v
        }
    }

    /// Executes one group; returns the pending exec-mask value if the group set one.
    fn group(&mut self, g: &AluGroup, kc: &[Kcache; 2]) -> Option<Option<bool>> {
        let mut results: Vec<(usize, V)> = Vec::new();
        let mut gpr_writes: Vec<(i64, usize, V, bool)> = Vec::new();
        let mut ar_writes: Vec<(usize, Option<i32>)> = Vec::new();
        let mut fx = GroupEffects::default();
        // reductions read all four vector slots: (slot, src0, src1) of each
        let reduction: Vec<(usize, V, V)> = g
            .insts
            .iter()
            .filter(|a| a.flags & isa::flags::REDUC != 0)
            .map(|a| {
                let x = self.src(&a.srcs[0], a, kc);
                let y = if a.srcs.len() > 1 { self.src(&a.srcs[1], a, kc) } else { V::UNKNOWN };
                (a.slot, x, y)
            })
            .collect();
        for a in &g.insts {
            self.run.executed.insert(a.name);
            let mut mova_kind = None;
            let value = if a.flags & isa::flags::REDUC != 0 {
                self.op(a, &[], &reduction, &mut fx, &mut mova_kind).unwrap_or(V::UNKNOWN)
            } else {
                let srcs: Vec<V> = a.srcs.iter().map(|s| self.src(s, a, kc)).collect();
                match self.op(a, &srcs, &[], &mut fx, &mut mova_kind) {
                    Some(v) => v,
                    None => continue,
                }
            };
            let value = omod_clamp(value, a.omod, a.clamp);
            results.push((a.slot, value));
            if let Some(kind) = mova_kind {
                ar_writes.push((a.dst_chan as usize, mova(kind, value)));
            }
            if a.write_mask {
                let mut r = i64::from(a.dst_gpr);
                if a.dst_rel {
                    match self.index(a.index_mode) {
                        Some(i) => r += i64::from(i),
                        None => {
                            self.mark_undetermined("the relative index is undetermined");
                            return None;
                        }
                    }
                }
                let gate = match a.pred_sel {
                    2 => self.pred.map(|p| !p),
                    3 => self.pred,
                    _ => Some(true),
                };
                match gate {
                    Some(true) => gpr_writes.push((r, a.dst_chan as usize, value, a.dst_rel)),
                    Some(false) => {}
                    None => gpr_writes.push((r, a.dst_chan as usize, V::UNKNOWN, a.dst_rel)),
                }
            }
        }
        // commit: PV/PS, GPRs, AR, predicate, kill
        self.pv = [None; 5];
        for (slot, v) in results {
            self.pv[slot] = Some(v);
        }
        if self.trace {
            let w: Vec<String> = gpr_writes
                .iter()
                .map(|(r, c, v, _)| {
                    format!("R{r}.{} = {:?} 0x{:08X}{}", b"xyzw"[*c] as char, v.val(), v.bits, if v.known() { "" } else { " (unknown)" })
                })
                .collect();
            eprintln!("trace:   group {}: {} kill {:?} exec {:?} pred {:?}", g.id, w.join(", "), fx.kill, fx.exec, fx.pred);
        }
        for (r, c, v, rel) in gpr_writes {
            if !(0..128).contains(&r) || rel && !(0..i64::from(self.rel_gprs())).contains(&r) {
                self.mark_undetermined("GPR write outside the register file");
                return None;
            }
            self.gpr[r as usize][c] = v;
        }
        for (c, v) in ar_writes {
            self.ar[c] = v;
        }
        if let Some(p) = fx.pred {
            self.pred = p;
        }
        match fx.kill {
            Some(Some(true)) => {
                self.run.killed = true;
                // a killed pixel writes nothing; stop here
                self.run.exports.clear();
                self.run.undetermined = false;
                self.active = false;
                self.pos = usize::MAX / 2;
            }
            Some(None) => self.run.undetermined = true,
            _ => {}
        }
        fx.exec
    }

    /// One slot's value (`None`: no result, NOP). `reduction` holds (slot, src0, src1) of every
    /// reduction instruction of the group (the DOT4 / MAX4 / CUBE operands); `mova` receives
    /// the rounding of an AR write.
    fn op(&mut self, a: &AluInst, s: &[V], reduction: &[(usize, V, V)], fx: &mut GroupEffects, mova: &mut Option<Mova>) -> Option<V> {
        use std::cmp::Ordering::*;
        let x = s.first().copied().unwrap_or(V::UNKNOWN);
        let y = s.get(1).copied().unwrap_or(V::UNKNOWN);
        let z = s.get(2).copied().unwrap_or(V::UNKNOWN);
        let int2 = |f: &dyn Fn(u32, u32) -> u32| match (int_in(x), int_in(y)) {
            (Some(a), Some(b)) => V::exact(f(a, b)),
            _ => V::UNKNOWN,
        };
        let set_f = |c: Cmp| cond(c, x, y).map_or(V::UNKNOWN, bool_f);
        let set_mask = |c: Cmp| cond(c, x, y).map_or(V::UNKNOWN, bool_mask);
        let v = match a.op {
            Op::NOP => return None,
            Op::ADD => fadd(x, y),
            Op::MUL => fmul(x, y, true),
            Op::MUL_IEEE => fmul(x, y, false),
            Op::MAX | Op::MAX_DX10 => fmax(x, y).unwrap_or(V::UNKNOWN),
            Op::MIN | Op::MIN_DX10 => fmin(x, y).unwrap_or(V::UNKNOWN),
            Op::SETE => set_f(Cmp::E),
            Op::SETGT => set_f(Cmp::Gt),
            Op::SETGE => set_f(Cmp::Ge),
            Op::SETNE => set_f(Cmp::Ne),
            Op::SETE_DX10 => set_mask(Cmp::E),
            Op::SETGT_DX10 => set_mask(Cmp::Gt),
            Op::SETGE_DX10 => set_mask(Cmp::Ge),
            Op::SETNE_DX10 => set_mask(Cmp::Ne),
            Op::FRACT => {
                let fl = floor_like(x, f32::floor);
                if fl.known() {
                    let r = x.val() - fl.val();
                    approx(r, if x.err > 0.0 { f64::from(x.err) + ulp32(r) } else { 0.0 })
                } else {
                    V::UNKNOWN
                }
            }
            Op::TRUNC => floor_like(x, f32::trunc),
            Op::CEIL => floor_like(x, f32::ceil),
            Op::FLOOR => floor_like(x, f32::floor),
            Op::RNDNE => {
                let h = floor_like(V { bits: (x.val() + 0.5).to_bits(), err: x.err }, f32::floor);
                if h.known() && x.known() && !is_denormal(x.val()) {
                    approx(rndne(x.val()), 0.0)
                } else {
                    V::UNKNOWN
                }
            }
            Op::MOV => x,
            Op::MOVA => {
                *mova = Some(Mova::Round);
                x
            }
            Op::MOVA_FLOOR => {
                *mova = Some(Mova::Floor);
                x
            }
            Op::MOVA_INT => {
                *mova = Some(Mova::Int);
                x
            }
            Op::AND_INT => int2(&|a, b| a & b),
            Op::OR_INT => int2(&|a, b| a | b),
            Op::XOR_INT => int2(&|a, b| a ^ b),
            Op::NOT_INT => int_in(x).map_or(V::UNKNOWN, |a| V::exact(!a)),
            Op::ADD_INT => int2(&|a, b| a.wrapping_add(b)),
            Op::SUB_INT => int2(&|a, b| a.wrapping_sub(b)),
            Op::MAX_INT => int2(&|a, b| (a as i32).max(b as i32) as u32),
            Op::MIN_INT => int2(&|a, b| (a as i32).min(b as i32) as u32),
            Op::MAX_UINT => int2(&|a, b| a.max(b)),
            Op::MIN_UINT => int2(&|a, b| a.min(b)),
            Op::SETE_INT => set_mask(Cmp::EInt),
            Op::SETNE_INT => set_mask(Cmp::NeInt),
            Op::SETGT_INT => set_mask(Cmp::GtInt),
            Op::SETGE_INT => set_mask(Cmp::GeInt),
            Op::SETGT_UINT => set_mask(Cmp::GtUint),
            Op::SETGE_UINT => set_mask(Cmp::GeUint),
            Op::ASHR_INT => int2(&|a, b| ((a as i32) >> (b & 31)) as u32),
            Op::LSHR_INT => int2(&|a, b| a >> (b & 31)),
            Op::LSHL_INT => int2(&|a, b| a << (b & 31)),
            Op::MULLO_INT | Op::MULLO_UINT => int2(&|a, b| a.wrapping_mul(b)),
            Op::MULHI_INT => int2(&|a, b| ((i64::from(a as i32) * i64::from(b as i32)) >> 32) as u32),
            Op::MULHI_UINT => int2(&|a, b| ((u64::from(a) * u64::from(b)) >> 32) as u32),
            Op::FLT_TO_INT => flt_to_int(x, f2i),
            Op::FLT_TO_UINT => flt_to_int(x, f2u),
            Op::INT_TO_FLT => int_in(x).map_or(V::UNKNOWN, |a| V::f(a as i32 as f32)),
            Op::UINT_TO_FLT => int_in(x).map_or(V::UNKNOWN, |a| V::f(a as f32)),
            Op::EXP_IEEE => transcendental(tolerance::EXP, x, f64::exp2, |v| v, |v| v.exp2() * std::f64::consts::LN_2),
            Op::LOG_IEEE => log2(x, false),
            Op::LOG_CLAMPED => log2(x, true),
            Op::RECIP_IEEE => recip(x, Infinity::Kept),
            Op::RECIP_CLAMPED => recip(x, Infinity::ToMax),
            Op::RECIP_FF => recip(x, Infinity::ToZero),
            Op::RECIPSQRT_IEEE => recipsqrt(x, Infinity::Kept),
            Op::RECIPSQRT_CLAMPED => recipsqrt(x, Infinity::ToMax),
            Op::RECIPSQRT_FF => recipsqrt(x, Infinity::ToZero),
            Op::SQRT_IEEE => {
                if !x.known() || (x.err > 0.0 && f64::from(x.val()) <= f64::from(x.err) * 2.0) {
                    V::UNKNOWN
                } else {
                    transcendental(tolerance::SQRT, x, f64::sqrt, |_| 0.0, |v| 0.5 / v.sqrt())
                }
            }
            Op::SIN => sin_cos(x, f64::sin, f64::cos),
            Op::COS => sin_cos(x, f64::cos, f64::sin),
            // MULADD* multiply as MUL does (0 × anything = 0), the _IEEE forms and FMA as MUL_IEEE
            Op::MULADD => fmuladd(x, y, z, true),
            Op::MULADD_M2 => scale(fmuladd(x, y, z, true), 2.0),
            Op::MULADD_M4 => scale(fmuladd(x, y, z, true), 4.0),
            Op::MULADD_D2 => scale(fmuladd(x, y, z, true), 0.5),
            Op::MULADD_IEEE | Op::FMA => fmuladd(x, y, z, false),
            Op::MULADD_IEEE_M2 => scale(fmuladd(x, y, z, false), 2.0),
            Op::MULADD_IEEE_M4 => scale(fmuladd(x, y, z, false), 4.0),
            Op::MULADD_IEEE_D2 => scale(fmuladd(x, y, z, false), 0.5),
            Op::CNDE => cnd_float(x, y, z, |o| o == Equal),
            Op::CNDGT => cnd_float(x, y, z, |o| o == Greater),
            Op::CNDGE => cnd_float(x, y, z, |o| o != Less),
            Op::CNDE_INT => cnd_int(x, y, z, |c| c == 0),
            Op::CNDGT_INT => cnd_int(x, y, z, |c| (c as i32) > 0),
            Op::CNDGE_INT => cnd_int(x, y, z, |c| (c as i32) >= 0),
            Op::BFE_UINT => int3(x, y, z, |v, o, w| bfe(v, o & 31, w & 31, false)),
            Op::BFE_INT => int3(x, y, z, |v, o, w| bfe(v, o & 31, w & 31, true)),
            Op::BFI_INT => int3(x, y, z, |v, o, w| (v & o) | (!v & w)),
            Op::KILLE => kill_if(&mut fx.kill, cond(Cmp::E, x, y)),
            Op::KILLGT => kill_if(&mut fx.kill, cond(Cmp::Gt, x, y)),
            Op::KILLGE => kill_if(&mut fx.kill, cond(Cmp::Ge, x, y)),
            Op::KILLNE => kill_if(&mut fx.kill, cond(Cmp::Ne, x, y)),
            Op::KILLE_INT => kill_if(&mut fx.kill, cond(Cmp::EInt, x, y)),
            Op::KILLGT_INT => kill_if(&mut fx.kill, cond(Cmp::GtInt, x, y)),
            Op::KILLGE_INT => kill_if(&mut fx.kill, cond(Cmp::GeInt, x, y)),
            Op::KILLNE_INT => kill_if(&mut fx.kill, cond(Cmp::NeInt, x, y)),
            Op::KILLGT_UINT => kill_if(&mut fx.kill, cond(Cmp::GtUint, x, y)),
            Op::KILLGE_UINT => kill_if(&mut fx.kill, cond(Cmp::GeUint, x, y)),
            Op::PRED_SETE => fx.pred_set(a, cond(Cmp::E, x, y)),
            Op::PRED_SETGT => fx.pred_set(a, cond(Cmp::Gt, x, y)),
            Op::PRED_SETGE => fx.pred_set(a, cond(Cmp::Ge, x, y)),
            Op::PRED_SETNE => fx.pred_set(a, cond(Cmp::Ne, x, y)),
            Op::PRED_SETE_INT => fx.pred_set(a, cond(Cmp::EInt, x, y)),
            Op::PRED_SETGT_INT => fx.pred_set(a, cond(Cmp::GtInt, x, y)),
            Op::PRED_SETGE_INT => fx.pred_set(a, cond(Cmp::GeInt, x, y)),
            Op::PRED_SETNE_INT => fx.pred_set(a, cond(Cmp::NeInt, x, y)),
            Op::PRED_SETGT_UINT => fx.pred_set(a, cond(Cmp::GtUint, x, y)),
            Op::PRED_SETGE_UINT => fx.pred_set(a, cond(Cmp::GeUint, x, y)),
            Op::PRED_SET_CLR => {
                fx.pred_set(a, Some(false));
                V::f(f32::MAX)
            }
            Op::PRED_SET_RESTORE => fx.pred_set(a, cond(Cmp::E, x, V::f(0.0))),
            // reductions: every vector slot of the group takes part
            Op::DOT4 | Op::DOT4_IEEE if !reduction.is_empty() => {
                let terms: Vec<(V, V)> = reduction.iter().map(|r| (r.1, r.2)).collect();
                dot4(&terms, a.op == Op::DOT4)
            }
            Op::MAX4 if !reduction.is_empty() => reduction.iter().skip(1).try_fold(reduction[0].1, |m, t| fmax(m, t.1)).unwrap_or(V::UNKNOWN),
            Op::CUBE if a.slot < 4 => {
                // the direction: src0 of the z, w and x units (docs/gx2.md, CUBE)
                let src0 = |unit: usize| reduction.iter().find(|r| r.0 == unit).map_or(V::UNKNOWN, |r| r.1);
                cube(src0(2), src0(3), src0(0))[a.slot]
            }
            // a reduction without operands or out of the vector slots: the lowering refuses it
            Op::DOT4 | Op::DOT4_IEEE | Op::MAX4 | Op::CUBE => V::UNKNOWN,
            // the table marks these Rejected: the lowering refuses them, nothing is compared
            Op::FREXP_64
            | Op::ADD_64
            | Op::MUL_64
            | Op::FLT64_TO_FLT32
            | Op::FLT32_TO_FLT64
            | Op::LDEXP_64
            | Op::FRACT_64
            | Op::PRED_SETGT_64
            | Op::PRED_SETE_64
            | Op::PRED_SETGE_64
            | Op::MULADD_64
            | Op::MULADD_64_M2
            | Op::MULADD_64_M4
            | Op::MULADD_64_D2
            | Op::PRED_SET_INV
            | Op::PRED_SET_POP
            | Op::PRED_SETE_PUSH
            | Op::PRED_SETGT_PUSH
            | Op::PRED_SETGE_PUSH
            | Op::PRED_SETNE_PUSH
            | Op::PRED_SETE_PUSH_INT
            | Op::PRED_SETGT_PUSH_INT
            | Op::PRED_SETGE_PUSH_INT
            | Op::PRED_SETNE_PUSH_INT
            | Op::PRED_SETLT_PUSH_INT
            | Op::PRED_SETLE_PUSH_INT
            | Op::GROUP_BARRIER
            | Op::GROUP_SEQ_BEGIN
            | Op::GROUP_SEQ_END
            | Op::SET_MODE
            | Op::SET_CF_IDX0
            | Op::SET_CF_IDX1
            | Op::SET_LDS_SIZE
            | Op::MUL_INT24
            | Op::MULHI_INT24
            | Op::MOVA_GPR_INT
            | Op::RECIP_INT
            | Op::RECIP_UINT
            | Op::MUL_LIT
            | Op::MUL_LIT_M2
            | Op::MUL_LIT_M4
            | Op::MUL_LIT_D2 => V::UNKNOWN,
        };
        Some(v)
    }

    /// Executes the TEX clause at `self.pos` from `self.tex_resume`; `Some` = paused.
    fn tex_clause(&mut self) -> Option<Stop> {
        let Clause::Tex(ts) = &self.p.cfs[self.pos].1 else { return None };
        while self.tex_resume < ts.len() {
            let x = &ts[self.tex_resume];
            self.run.executed.insert(x.name);
            let src = self.gpr[x.src_gpr as usize];
            let sel = |s: u8| match s {
                0..=3 => src[s as usize],
                5 => V::f(1.0),
                _ => V::f(0.0),
            };
            let coord: [V; 4] = std::array::from_fn(|k| sel(x.src_sel[k]));
            let value: [V; 4] = match x.op {
                // one level, nearest: the LOD, bias and gradients choose nothing
                TexOp::SAMPLE | TexOp::SAMPLE_L | TexOp::SAMPLE_LB | TexOp::SAMPLE_LZ | TexOp::SAMPLE_G => {
                    self.sample(x.resource_id, &coord, x.offset)
                }
                // the gradient forms at an explicit LOD (docs/isa/gx2.md §7 "Gradient forms"):
                // src.w + LOD_BIAS, 0, or the gradients' LOD biased by src.w + LOD_BIAS
                TexOp::SAMPLE_G_L | TexOp::SAMPLE_G_LZ | TexOp::SAMPLE_G_LB => {
                    let bias = f64::from(((x.lod_bias << 25) as i32 >> 25) as f32 / 8.0);
                    let w = fin(coord[3]).map(|(v, e)| (f64::from(v) + bias, e));
                    let lod = match x.op {
                        TexOp::SAMPLE_G_L => w,
                        TexOp::SAMPLE_G_LZ => Some((0.0, 0.0)),
                        _ => self.gradient_lod(x.resource_id).zip(w).map(|((l, el), (b, eb))| (l + b, el + eb)),
                    };
                    self.sample_at_lod(x.resource_id, &coord, x.offset, lod)
                }
                TexOp::SAMPLE_C | TexOp::SAMPLE_C_LZ => self.sample_compare(x.resource_id, &coord, x.offset),
                // depth compare at a chosen level (docs/gx2.md "Depth compare"): the forms with a
                // LOD or bias lane read it from src.w and the reference from src.z, the others
                // the reference from src.w
                TexOp::SAMPLE_C_L | TexOp::SAMPLE_C_LB | TexOp::SAMPLE_C_G | TexOp::SAMPLE_C_G_L | TexOp::SAMPLE_C_G_LB | TexOp::SAMPLE_C_G_LZ => {
                    let bias = f64::from(((x.lod_bias << 25) as i32 >> 25) as f32 / 8.0);
                    let w = fin(coord[3]).map(|(v, e)| (f64::from(v) + bias, e));
                    let plus = |a: Option<(f64, f64)>, b: Option<(f64, f64)>| a.zip(b).map(|((l, el), (b, eb))| (l + b, el + eb));
                    let (lod, reference) = match x.op {
                        TexOp::SAMPLE_C_L | TexOp::SAMPLE_C_G_L => (w, coord[2]),
                        // implicit LOD + bias: determined on one-level textures only
                        TexOp::SAMPLE_C_LB => (None, coord[2]),
                        TexOp::SAMPLE_C_G => (plus(self.gradient_lod(x.resource_id), Some((bias, 0.0))), coord[3]),
                        TexOp::SAMPLE_C_G_LB => (plus(self.gradient_lod(x.resource_id), w), coord[2]),
                        _ => (Some((0.0, 0.0)), coord[3]),
                    };
                    self.sample_compare_at(x.resource_id, &coord, x.offset, lod, reference)
                }
                TexOp::FETCH4 => self.fetch4(x.resource_id, &coord, x.offset),
                TexOp::LD => self.load(x.resource_id, &coord, x.offset),
                TexOp::GET_TEXTURE_INFO => self.info(x.resource_id, coord[0]),
                TexOp::GET_COMP_TEX_LOD => match self.lod_answer.take() {
                    Some((dx, dy)) => self.comp_tex_lod(x.resource_id, &dx, &dy),
                    None => return Some(Stop::Gradient(coord)),
                },
                TexOp::SET_CUBEMAP_INDEX => {
                    if let Some(slot) = self.cube_index.get_mut(x.resource_id as usize) {
                        *slot = coord[0];
                    }
                    self.tex_resume += 1;
                    continue;
                }
                TexOp::SET_GRADIENTS_H => {
                    self.grad_h = coord;
                    self.tex_resume += 1;
                    continue;
                }
                TexOp::SET_GRADIENTS_V => {
                    self.grad_v = coord;
                    self.tex_resume += 1;
                    continue;
                }
                TexOp::GET_GRADIENTS_H | TexOp::GET_GRADIENTS_V => match self.grad_answer.take() {
                    Some(v) => v,
                    None => return Some(Stop::Gradient(coord)),
                },
                TexOp::VTX_FETCH => {
                    let loc = x.resource_id.wrapping_sub(0x80);
                    let Some(i) = int_in(src[((x.raw[0] >> 24) & 3) as usize]) else {
                        self.mark_undetermined("the VTX_FETCH index is undetermined");
                        return Some(Stop::Done);
                    };
                    let e = i64::from(i as i32) + i64::from((x.raw[2] & 0xFFFF) / 16);
                    match self.inp.blocks.get(&loc).and_then(|b| usize::try_from(e).ok().and_then(|e| b.get(e))) {
                        Some(w) => w.map(V::exact),
                        None => {
                            self.mark_undetermined("VTX_FETCH past the end of the uniform block");
                            return Some(Stop::Done);
                        }
                    }
                }
                TexOp::MEM => match scratch::read(x) {
                    Ok(r) => self.scratch.get(&r.element).copied().unwrap_or([V::UNKNOWN; 4]),
                    Err(why) => {
                        self.mark_undetermined(&why);
                        return Some(Stop::Done);
                    }
                },
                // the table marks these Rejected: the lowering refuses them, nothing is compared
                TexOp::VTX_SEMANTIC
                | TexOp::GET_SAMPLE_INFO
                | TexOp::GET_LERP
                | TexOp::KEEP_GRADIENTS
                | TexOp::PASS
                | TexOp::SET_TEXTURE_OFFSETS
                | TexOp::GATHER4
                | TexOp::GATHER4_O
                | TexOp::GATHER4_C
                | TexOp::GATHER4_C_O
                | TexOp::GET_BUFFER_RESINFO => [V::UNKNOWN; 4],
            };
            let dst = &mut self.gpr[x.dst_gpr as usize];
            for k in 0..4 {
                match x.dst_sel[k] {
                    0..=3 => dst[k] = value[x.dst_sel[k] as usize],
                    4 => dst[k] = V::f(0.0),
                    5 => dst[k] = V::f(1.0),
                    _ => {}
                }
            }
            self.tex_resume += 1;
        }
        None
    }

    /// Nearest sampling of a 2D texture (clamp to edge); near a texel boundary = unknown. A
    /// resource whose GX2SamplerVar is a cube (type 4) is sampled by `sample_cube`, a 3D one
    /// (type 3) at (x, y, z) likewise. `offset`: the TEX word's OFFSET_X/Y/Z, signed half texels
    /// (R600 ISA s1.3.1 field; Cemu's LatteDecompiler halves it), added to the texel coordinate
    /// before clamping; not modelled on cubes (undetermined there).
    fn sample(&self, res: u32, coord: &[V; 4], offset: [i32; 3]) -> [V; 4] {
        match self.bound(res) {
            Some((t, false)) => self.point_texel(t, coord, offset).map_or([V::UNKNOWN; 4], |x| x.map(V::f)),
            _ => [V::UNKNOWN; 4],
        }
    }

    /// A sample at an explicit LOD (`lod`: value and error bound; None = undetermined): nearest
    /// sampling (as `sample`) of the level [`nearest_level`] picks, every shape `sample` reads.
    fn sample_at_lod(&self, res: u32, coord: &[V; 4], offset: [i32; 3], lod: Option<(f64, f64)>) -> [V; 4] {
        let Some((t, false)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        let cube = self.cube_slot(t);
        nearest_level(t.levels(), lod).zip(cube).and_then(|(k, c)| point_texel_at(t, coord, offset, k, c)).map_or([V::UNKNOWN; 4], |x| x.map(V::f))
    }

    /// The LOD the SET_GRADIENTS_H / _V gradients give on resource `res` (a flat, 2D-array or 3D
    /// texture): log2 of ρ = max(|∂/∂x|, |∂/∂y|) in level-0 texels, with the error bound of the
    /// gradients. Determined only where each gradient has at most one non-zero texel lane, so that
    /// every form the Vulkan spec allows for ρ (the Euclidean length or the largest component)
    /// agrees; a zero gradient gives −∞ (level 0).
    fn gradient_lod(&self, res: u32) -> Option<(f64, f64)> {
        let (t, _) = self.bound(res)?;
        derivative_lod(t, &self.grad_h, &self.grad_v)
    }

    /// GET_COMP_TEX_LOD (docs/gx2.md "LOD query"): lane x the LOD an implicit-derivative sample
    /// at the source computes from its screen derivatives `dx`, `dy` (as `derivative_lod`), not
    /// clamped; lane y the level a sample would access: that LOD clamped to [0, levels − 1]
    /// (the harness's minLod / maxLod). Determined for a LOD that is an integer only: lane y's
    /// rounding under nearest mip selection and hosts' fixed-point LOD (1/16) leave others open;
    /// a zero derivative (λ = −∞) is not compared. Lanes z and w are not defined.
    fn comp_tex_lod(&self, res: u32, dx: &[V; 4], dy: &[V; 4]) -> [V; 4] {
        let Some((t, _)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        match derivative_lod(t, dx, dy) {
            Some((l, 0.0)) if l.is_finite() && l.fract() == 0.0 => {
                let clamped = l.clamp(0.0, f64::from(t.levels() - 1));
                [V::f(l as f32), V::f(clamped as f32), V::UNKNOWN, V::UNKNOWN]
            }
            _ => [V::UNKNOWN; 4],
        }
    }

    /// The texel nearest point sampling of level 0 reads (see `sample`), or None when not
    /// determined (mip levels, a coordinate near a texel boundary, an undetermined slice).
    fn point_texel(&self, t: &Texture, coord: &[V; 4], offset: [i32; 3]) -> Option<[f32; 4]> {
        if !t.mips.is_empty() {
            return None;
        }
        point_texel_at(t, coord, offset, 0, self.cube_slot(t)?)
    }

    /// The cube of a cube array (GX2SamplerType 13 / 14) a sample reads: the index the
    /// resource's last SET_CUBEMAP_INDEX set (src.x), rounded to the nearest cube and clamped to
    /// the cubes (Mesa r600 hands the GL layer to SET_CUBEMAP_INDEX unrounded, Cemu to a
    /// `samplerCubeArray`; docs/gx2.md "Cube arrays"). Undetermined (None) for an index not
    /// set, not finite or within its error of a tie k + 1/2 (GL rounds ties up, Vulkan and D3D
    /// to even; what the unit does is not documented). Other shapes: 0.
    fn cube_slot(&self, t: &Texture) -> Option<usize> {
        if t.shape != TextureShape::CubeArray {
            return Some(0);
        }
        let (v, e) = fin(*self.cube_index.get(t.resource as usize)?)?;
        let (lo, hi) = (f64::from(v) - e + 0.5, f64::from(v) + e + 0.5);
        crate::nearest_clamped(lo, hi, t.layers, 1.0 / 1024.0).map(|k| k as usize)
    }

    /// SAMPLE_C / SAMPLE_C_LZ on a shadow sampler (GX2SamplerType 5, 6, 8, 12): the texel
    /// point sampling picks (coordinates as SAMPLE), its first component compared with the
    /// reference in src.w (Mesa r600 "shadow in w" for these forms; decaf reads Dref from lane
    /// 3): 1.0 where `reference <= texel` (the harness's comparison function,
    /// `vk::COMPARE_OP`), else 0.0, in lane x; lanes y-w are not defined (the sources differ).
    /// Undetermined: a reference or texel that is not finite, a reference outside [0, 1]
    /// (whether the unit clamps it is not documented) or within its error of the texel.
    fn sample_compare(&self, res: u32, coord: &[V; 4], offset: [i32; 3]) -> [V; 4] {
        let Some((t, true)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        let texel = match self.point_texel(t, coord, offset) {
            Some(x) if x[0].is_finite() => x[0],
            _ => return [V::UNKNOWN; 4],
        };
        let Some((r, e)) = fin(coord[3]) else { return [V::UNKNOWN; 4] };
        if !(0.0..=1.0).contains(&r) || (f64::from(texel) - f64::from(r)).abs() <= e {
            return [V::UNKNOWN; 4];
        }
        [V::f(if r <= texel { 1.0 } else { 0.0 }), V::UNKNOWN, V::UNKNOWN, V::UNKNOWN]
    }

    /// A depth compare at the mip level nearest mip selection picks for `lod` (as
    /// `sample_at_lod`; None = undetermined unless the texture has one level), against
    /// `reference`, with the result and the undetermined cases of `sample_compare`.
    fn sample_compare_at(&self, res: u32, coord: &[V; 4], offset: [i32; 3], lod: Option<(f64, f64)>, reference: V) -> [V; 4] {
        let Some((t, true)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        let cube = self.cube_slot(t);
        let texel = match nearest_level(t.levels(), lod).zip(cube).and_then(|(k, c)| point_texel_at(t, coord, offset, k, c)) {
            Some(x) if x[0].is_finite() => x[0],
            _ => return [V::UNKNOWN; 4],
        };
        let Some((r, e)) = fin(reference) else { return [V::UNKNOWN; 4] };
        if !(0.0..=1.0).contains(&r) || (f64::from(texel) - f64::from(r)).abs() <= e {
            return [V::UNKNOWN; 4];
        }
        [V::f(if r <= texel { 1.0 } else { 0.0 }), V::UNKNOWN, V::UNKNOWN, V::UNKNOWN]
    }

    /// FETCH4 on a 2D or 2D-array texture: the red component of the 2×2 texels bilinear
    /// filtering of level 0 reads at (u·w − ½ + offset, v·h − ½ + offset) — i0 = floor of it,
    /// i1 = i0 + 1, likewise j — each clamped to the edge, in the R700 order x = (i1, j0),
    /// y = (i0, j1), z = (i1, j1), w = (i0, j0) (Cemu `_emitTEXSampleTextureCode`'s
    /// fetch4-to-textureGather table; Mesa r600 `lower_tg4`'s destination swizzle). Undetermined
    /// near a footprint boundary (within 1/64 texel), on textures with mip levels, on other
    /// shapes.
    fn fetch4(&self, res: u32, coord: &[V; 4], offset: [i32; 3]) -> [V; 4] {
        let Some((t, false)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        if !t.mips.is_empty() || !matches!(t.shape, TextureShape::Flat | TextureShape::FlatArray) {
            return [V::UNKNOWN; 4];
        }
        let (w, h, _) = t.level_size(0);
        let corner = |c: V, half_texels: i32, n: u32| -> Option<(usize, usize)> {
            let (v, e) = fin(c)?;
            let size = f64::from(n);
            let (x, e) = (f64::from(v) * size - 0.5 + f64::from(half_texels) / 2.0, e * size);
            let margin = 1.0 / 64.0;
            let (lo, hi) = (x - e - margin, x + e + margin);
            if !(lo.abs() <= crate::TEXEL_COORD_LIMIT && hi.abs() <= crate::TEXEL_COORD_LIMIT) || lo.floor() != hi.floor() {
                return None;
            }
            let last = f64::from(n - 1);
            let f = lo.floor();
            Some((f.clamp(0.0, last) as usize, (f + 1.0).clamp(0.0, last) as usize))
        };
        let k = if t.shape == TextureShape::FlatArray { array_slice(coord[2], t.layers) } else { Some(0) };
        let (Some((i0, i1)), Some((j0, j1)), Some(k)) = (corner(coord[0], offset[0], w), corner(coord[1], offset[1], h), k) else {
            return [V::UNKNOWN; 4];
        };
        let red = |i: usize, j: usize| V::f(t.texels[(k * h as usize + j) * w as usize + i][0]);
        [red(i1, j0), red(i0, j1), red(i1, j1), red(i0, j0)]
    }

    /// The texture bound to RESOURCE_ID `res` when its shape is the one the resource's
    /// GX2SamplerVar declares, and whether the declaration is a shadow sampler. GX2SamplerType
    /// (the SDK header's enum): 0/1 1D/2D, 3 3D, 4 cube, 5/6 1D/2D shadow, 8 cube shadow,
    /// 9 / 10 1D / 2D array, 11 / 12 their shadow kinds, 13 / 14 cube array (and shadow); no
    /// declaration = 2D; other types are not modelled.
    /// Contents of another shape are undetermined (the harness binds the declared kind).
    fn bound(&self, res: u32) -> Option<(&Texture, bool)> {
        let t = self.inp.textures.iter().find(|t| t.resource == res)?;
        let (wanted, shadow) = match self.s.sampler_vars.iter().find(|v| v.location == res).map(|v| v.ty) {
            None | Some(0 | 1) => (TextureShape::Flat, false),
            Some(3) => (TextureShape::Volume, false),
            Some(4) => (TextureShape::Cube, false),
            Some(5 | 6) => (TextureShape::Flat, true),
            Some(8) => (TextureShape::Cube, true),
            Some(13) => (TextureShape::CubeArray, false),
            Some(14) => (TextureShape::CubeArray, true),
            Some(9 | 10) => (TextureShape::FlatArray, false),
            Some(11 | 12) => (TextureShape::FlatArray, true),
            Some(_) => return None,
        };
        (wanted == t.shape).then_some((t, shadow))
    }

    /// LD: the texel of mip level src.w at (src.x, src.y), and src.z on a 3D texture, every
    /// lane read as a signed integer bit pattern — no filtering, no addressing mode (decaf
    /// `translateTex_LD`, Cemu `_emitTEXSampleTextureCode`, Mesa r600 `lower_txf`; docs/gx2.md
    /// "LD and GET_TEXTURE_INFO"). Undetermined: a coordinate outside the level or a level
    /// outside the texture (Vulkan leaves the fetch undefined; what the hardware returns is
    /// not documented), nonzero OFFSET fields (Mesa r600: they do not work with LD), cubes.
    fn load(&self, res: u32, coord: &[V; 4], offset: [i32; 3]) -> [V; 4] {
        let Some((t, _)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        if matches!(t.shape, TextureShape::Cube | TextureShape::CubeArray) || offset != [0, 0, 0] {
            return [V::UNKNOWN; 4];
        }
        let int = |v: V, n: u32| int_in(v).map(|b| b as i32).filter(|&i| i >= 0 && (i as u32) < n).map(|i| i as usize);
        let Some(lod) = int(coord[3], t.levels()) else { return [V::UNKNOWN; 4] };
        let (w, h, d) = t.level_size(lod as u32);
        // a 2D array's slice is src.z as an integer, like the other lanes
        let z = match t.shape {
            TextureShape::Volume => int(coord[2], d),
            TextureShape::FlatArray => int(coord[2], t.layers),
            _ => Some(0),
        };
        match (int(coord[0], w), int(coord[1], h), z) {
            (Some(i), Some(j), Some(k)) => t.level(lod as u32)[(k * h as usize + j) * w as usize + i].map(V::f),
            _ => [V::UNKNOWN; 4],
        }
    }

    /// GET_TEXTURE_INFO: (width, height, depth, levels) of mip level `lod` (src.x, a signed
    /// integer bit pattern) as integer bit patterns, depth 1 on a 2D texture (decaf
    /// `translateTex_GET_TEXTURE_INFO`, Mesa r600 `TexInstr::emit_tex_txs`). For a level
    /// outside the texture the sizes are undetermined (Vulkan: undefined), the level count is
    /// not. Cubes: undetermined (the z lane is not documented; the translation refuses them).
    fn info(&self, res: u32, lod: V) -> [V; 4] {
        let Some((t, _)) = self.bound(res) else { return [V::UNKNOWN; 4] };
        if matches!(t.shape, TextureShape::Cube | TextureShape::CubeArray) {
            return [V::UNKNOWN; 4];
        }
        let levels = V::exact(t.levels());
        match int_in(lod).map(|b| b as i32).filter(|&l| l >= 0 && (l as u32) < t.levels()) {
            Some(l) => {
                let (w, h, d) = t.level_size(l as u32);
                // a 2D array's z is its slice count (decaf: OpImageQuerySizeLod of the array)
                let d = if t.shape == TextureShape::FlatArray { t.layers } else { d };
                [V::exact(w), V::exact(h), V::exact(d), levels]
            }
            None => [V::UNKNOWN, V::UNKNOWN, V::UNKNOWN, levels],
        }
    }
}

/// What one ALU group does besides writing registers: the predicate, the execution mask
/// (`UPDATE_EXEC_MASK`) and the kill flag it sets (`Some(None)`: set to an undetermined value).
#[derive(Default)]
struct GroupEffects {
    pred: Option<Option<bool>>,
    exec: Option<Option<bool>>,
    kill: Option<Option<bool>>,
}

impl GroupEffects {
    /// A PRED_SET* result `c`: the predicate and / or execution mask as the instruction's
    /// UPDATE_PRED / UPDATE_EXEC_MASK bits say; the lane gets 1.0 / 0.0.
    fn pred_set(&mut self, a: &AluInst, c: Option<bool>) -> V {
        if a.update_pred {
            self.pred = Some(c);
        }
        if a.update_exec_mask {
            self.exec = Some(c);
        }
        c.map_or(V::UNKNOWN, bool_f)
    }
}

/// A KILL* result `c`: the pixel is killed when any KILL of the group is true.
fn kill_if(kill: &mut Option<Option<bool>>, c: Option<bool>) -> V {
    let prev = kill.unwrap_or(Some(false));
    *kill = Some(match (prev, c) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    });
    c.map_or(V::UNKNOWN, bool_f)
}

/// How a MOVA form turns its value into the AR index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mova {
    /// MOVA: round to nearest, floor(x + 0.5).
    Round,
    /// MOVA_FLOOR.
    Floor,
    /// MOVA_INT: the integer bit pattern.
    Int,
}

/// The comparison of a SET*, PRED_SET*, KILL* form (float ones are IEEE, `_INT` signed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    E,
    Gt,
    Ge,
    Ne,
    EInt,
    GtInt,
    GeInt,
    NeInt,
    GtUint,
    GeUint,
}

/// What the non-IEEE reciprocals do with an infinite result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Infinity {
    /// _IEEE: kept.
    Kept,
    /// _CLAMPED: ±FLT_MAX.
    ToMax,
    /// _FF: ±0.
    ToZero,
}

/// FLT_TO_INT / FLT_TO_UINT: truncation, then the saturating conversion `to`.
fn flt_to_int(x: V, to: fn(f32) -> u32) -> V {
    let t = floor_like(x, f32::trunc);
    if t.known() {
        V::exact(to(t.val()))
    } else {
        V::UNKNOWN
    }
}

/// LOG_IEEE / LOG_CLAMPED (`clamped`: log2(0) = −FLT_MAX).
fn log2(x: V, clamped: bool) -> V {
    // LOG_CLAMPED of NaN: the hardware's result is not documented, and the
    // lowering's max(log2(x), -FLT_MAX) is undefined for NaN in SPIR-V
    if !x.known() || (x.val() < 0.0 || x.val().is_nan()) && clamped {
        V::UNKNOWN
    } else if x.is_exact() && x.val() == 0.0 {
        V::f(if clamped { -f32::MAX } else { f32::NEG_INFINITY })
    } else if f64::from(x.val()) <= f64::from(x.err) {
        V::UNKNOWN
    } else {
        transcendental(tolerance::LOG, x, |v| if v < 0.0 { f64::NAN } else { v.log2() }, |_| 0.0, |v| 1.0 / (v * std::f64::consts::LN_2))
    }
}

/// RECIP_IEEE / _CLAMPED / _FF.
fn recip(x: V, inf: Infinity) -> V {
    if !x.known() || x.zero_of_any_sign() || (x.err > 0.0 && f64::from(x.val().abs()) <= f64::from(x.err) * 2.0) {
        V::UNKNOWN
    } else {
        let r = transcendental(tolerance::RECIP, x, |v| 1.0 / v, |_| 0.0, |v| 1.0 / (v * v));
        clamp_inf(inf, r)
    }
}

/// RECIPSQRT_IEEE / _CLAMPED / _FF (the non-IEEE forms of a negative value are not modelled).
fn recipsqrt(x: V, inf: Infinity) -> V {
    if !x.known() || x.zero_of_any_sign() || (x.err > 0.0 && f64::from(x.val()) <= f64::from(x.err) * 2.0) || (inf != Infinity::Kept && x.val() < 0.0)
    {
        V::UNKNOWN
    } else {
        let r = transcendental(tolerance::RECIPSQRT, x, |v| 1.0 / v.sqrt(), |_| 0.0, |v| 0.5 / (v * v.sqrt()));
        let r = if x.is_exact() && x.val() == 0.0 { V::f(if x.bits >> 31 != 0 { f32::NEG_INFINITY } else { f32::INFINITY }) } else { r };
        clamp_inf(inf, r)
    }
}

/// SIN / COS of `x` revolutions: the angle is x·2π rounded to f32 first; `deriv` is the
/// derivative of `f`.
fn sin_cos(x: V, f: fn(f64) -> f64, deriv: fn(f64) -> f64) -> V {
    let ang = fmul(x, V::f(std::f32::consts::TAU), false);
    if !ang.known() || ang.val().abs() > 8192.0 {
        V::UNKNOWN
    } else {
        transcendental(tolerance::SIN_COS, ang, f, |v| v, deriv)
    }
}

/// CNDE / CNDGT / CNDGE: `y` where `test(x <=> 0)`, else `z`; NaN conditions compare false
/// (select `z`).
fn cnd_float(x: V, y: V, z: V, test: fn(std::cmp::Ordering) -> bool) -> V {
    let c = if x.known() && x.val().is_nan() { Some(false) } else { fcmp(x, V::f(0.0)).map(test) };
    match c {
        Some(true) => y,
        Some(false) => z,
        None => V::UNKNOWN,
    }
}

/// CNDE_INT / CNDGT_INT / CNDGE_INT: `y` where `test(x)`, else `z`.
fn cnd_int(x: V, y: V, z: V, test: fn(u32) -> bool) -> V {
    match int_in(x) {
        Some(c) if test(c) => y,
        Some(_) => z,
        None => V::UNKNOWN,
    }
}

/// A three-operand integer op.
fn int3(x: V, y: V, z: V, f: fn(u32, u32, u32) -> u32) -> V {
    match (int_in(x), int_in(y), int_in(z)) {
        (Some(v), Some(o), Some(w)) => V::exact(f(v, o, w)),
        _ => V::UNKNOWN,
    }
}

/// The LOD the gradients `grad_h`, `grad_v` (per coordinate unit) give on a flat, 2D-array or
/// 3D texture `t`: log2 of ρ = max(|∂/∂x|, |∂/∂y|) in level-0 texels, with the error bound of the
/// gradients. Determined only where each gradient has at most one non-zero texel lane, so that
/// every form the Vulkan spec allows for ρ (the Euclidean length or the largest component)
/// agrees; a zero gradient gives −∞ (level 0).
fn derivative_lod(t: &Texture, grad_h: &[V; 4], grad_v: &[V; 4]) -> Option<(f64, f64)> {
    let (w, h, d) = t.level_size(0);
    let sizes = match t.shape {
        TextureShape::Flat | TextureShape::FlatArray => vec![w, h],
        TextureShape::Volume => vec![w, h, d],
        TextureShape::Cube | TextureShape::CubeArray => return None,
    };
    let length = |g: &[V; 4]| -> Option<(f64, f64)> {
        let mut nonzero = None;
        for (k, &n) in sizes.iter().enumerate() {
            let (v, e) = fin(g[k])?;
            if e != 0.0 {
                return None;
            }
            if v != 0.0 {
                if nonzero.is_some() {
                    return None;
                }
                nonzero = Some(f64::from(v).abs() * f64::from(n));
            }
        }
        Some((nonzero.unwrap_or(0.0), 0.0))
    };
    let (rho_h, _) = length(grad_h)?;
    let (rho_v, _) = length(grad_v)?;
    let rho = rho_h.max(rho_v);
    Some((if rho == 0.0 { f64::NEG_INFINITY } else { rho.log2() }, 0.0))
}

/// The slice a sample of a 2D array reads: src.z is unnormalized and not rounded by the unit
/// (Mesa r600 `get_src_coords` marks the array lane unnormalized and rounds it in the shader
/// before the fetch), so the slice is floor(z) clamped to the slices; undetermined when the
/// error interval of z straddles an integer inside the range or z is not finite.
fn array_slice(z: V, layers: u32) -> Option<usize> {
    let (v, e) = fin(z)?;
    crate::nearest_clamped(f64::from(v) - e, f64::from(v) + e, layers, 0.0).map(|k| k as usize)
}

/// Nearest sampling of a cube map from face coordinates: coord.x = s and coord.y = t in [1, 2]
/// (s − 1, t − 1 being the face's texture coordinates; the CUBE → RECIP → MULADD 1.5 sequence
/// makes them), coord.z = face id 0-5. Coordinates outside [1, 2] or within the error bound of a
/// texel boundary (face edges included), and face values other than 0.0-5.0, are undetermined.
fn sample_cube(t: &Texture, coord: &[V; 4], level: u32, cube: usize) -> Option<[f32; 4]> {
    let face = coord[2];
    let f = face.val();
    if !face.is_exact() || !(0.0..=5.0).contains(&f) || f.fract() != 0.0 {
        return None;
    }
    let interval = |c: V| fin(c).map(|(v, e)| (f64::from(v) - e, f64::from(v) + e));
    let side = t.level_size(level).0 as usize;
    let faces = t.level(level).get(cube * 6 * side * side..)?;
    crate::cube_texel(faces, side as u32, f as usize, interval(coord[0])?, interval(coord[1])?)
}

/// The texel nearest sampling of mip level `level` reads: clamp to edge, the OFFSET_X/Y/Z half
/// texels added to the texel coordinate (see `sample`); cubes by `sample_cube` (no offsets), a
/// cube array's cube `cube` likewise; a 2D array's slice floor(src.z) clamped. None near a
/// texel boundary or for an undetermined slice or face.
fn point_texel_at(t: &Texture, coord: &[V; 4], offset: [i32; 3], level: u32, cube: usize) -> Option<[f32; 4]> {
    if matches!(t.shape, TextureShape::Cube | TextureShape::CubeArray) {
        return if offset == [0, 0, 0] { sample_cube(t, coord, level, cube) } else { None };
    }
    let pick = |c: V, half_texels: i32, n: u32| -> Option<usize> {
        let (v, e) = fin(c)?;
        let size = f64::from(n);
        let (x, e) = (f64::from(v) * size + f64::from(half_texels) / 2.0, e * size);
        crate::nearest_clamped(x - e, x + e, n, 1.0 / 64.0).map(|i| i as usize)
    };
    let (w, h, d) = t.level_size(level);
    let (i, j) = (pick(coord[0], offset[0], w)?, pick(coord[1], offset[1], h)?);
    let k = match t.shape {
        TextureShape::Volume => pick(coord[2], offset[2], d)?,
        TextureShape::FlatArray => array_slice(coord[2], t.layers)?,
        _ => 0,
    };
    t.level(level).get((k * h as usize + j) * w as usize + i).copied()
}

/// The mip level `VK_SAMPLER_MIPMAP_MODE_NEAREST` (what the harness binds) picks for LOD `lod`
/// (value, error bound) on a texture of `levels` levels: λ clamped to [0, levels − 1] (the
/// harness's minLod / maxLod), level 0 for λ ≤ ½, else ⌈λ + ½⌉ − 1 (Vulkan "Texel Selection").
/// One level: level 0 whatever the LOD. Undetermined (None) for an unknown or NaN LOD with more
/// than one level, or within 1/16 (plus the error) of a boundary k + ½, where the host's LOD
/// arithmetic may round either way.
fn nearest_level(levels: u32, lod: Option<(f64, f64)>) -> Option<u32> {
    if levels <= 1 {
        return Some(0);
    }
    let (l, e) = lod?;
    if l.is_nan() {
        return None;
    }
    let last = f64::from(levels - 1);
    let margin = 1.0 / 16.0 + e;
    let pick = |x: f64| {
        let x = x.clamp(0.0, last);
        if x <= 0.5 {
            0.0
        } else {
            (x + 0.5).ceil() - 1.0
        }
    };
    let (a, b) = (pick(l - margin), pick(l + margin));
    (a == b).then_some(a as u32)
}

/// A comparison of two lanes. Float comparisons are IEEE: E / GT / GE are false and NE is
/// true when an operand is NaN.
fn cond(kind: Cmp, x: V, y: V) -> Option<bool> {
    use std::cmp::Ordering::*;
    let float = |test: fn(std::cmp::Ordering) -> bool| -> Option<bool> {
        if let (Some((a, ea)), Some((b, eb))) = (fin(x), fin(y)) {
            if (a.is_nan() && ea == 0.0) || (b.is_nan() && eb == 0.0) {
                return Some(kind == Cmp::Ne);
            }
        }
        fcmp(x, y).map(test)
    };
    let int = |test: fn(u32, u32) -> bool| Some(test(int_in(x)?, int_in(y)?));
    match kind {
        Cmp::E => float(|o| o == Equal),
        Cmp::Gt => float(|o| o == Greater),
        Cmp::Ge => float(|o| o != Less),
        Cmp::Ne => float(|o| o != Equal),
        Cmp::EInt => int(|a, b| a == b),
        Cmp::GtInt => int(|a, b| (a as i32) > (b as i32)),
        Cmp::GeInt => int(|a, b| (a as i32) >= (b as i32)),
        Cmp::NeInt => int(|a, b| a != b),
        Cmp::GtUint => int(|a, b| a > b),
        Cmp::GeUint => int(|a, b| a >= b),
    }
}

fn fmax(a: V, b: V) -> Option<V> {
    let o = fcmp(a, b);
    let (Some((x, ex)), Some((y, ey))) = (fin(a), fin(b)) else { return None };
    if x.is_nan() || y.is_nan() {
        return None;
    }
    if x == 0.0 && y == 0.0 && a.bits != b.bits {
        // max(-0, +0): either zero may come back, and integer ops see the sign bit
        return Some(V::UNKNOWN);
    }
    Some(match o {
        Some(std::cmp::Ordering::Less) => b,
        Some(_) => a,
        None => approx(x.max(y), ex.max(ey)),
    })
}

fn fmin(a: V, b: V) -> Option<V> {
    let na = V { bits: a.bits ^ 0x8000_0000, ..a };
    let nb = V { bits: b.bits ^ 0x8000_0000, ..b };
    fmax(na, nb).map(|v| V { bits: v.bits ^ 0x8000_0000, ..v })
}

fn scale(v: V, k: f32) -> V {
    if !v.known() {
        return v;
    }
    if is_denormal(v.val()) {
        return V::UNKNOWN; // the GPU may flush the operand to 0
    }
    let r = v.val() * k;
    approx(r, f64::from(v.err) * f64::from(k))
}

fn omod_clamp(v: V, omod: u32, clamp: bool) -> V {
    let v = match omod {
        1 => scale(v, 2.0),
        2 => scale(v, 4.0),
        3 => scale(v, 0.5),
        _ => v,
    };
    if !clamp || !v.known() {
        return v;
    }
    let x = v.val();
    if x.is_nan() || is_denormal(x) {
        // a denormal (e.g. a small integer result's bits) may be flushed to 0 by the clamp
        // (lavapipe does; seed 1 program 1725: CNDE_INT … CLAMP giving 0x00000001)
        return V::UNKNOWN;
    }
    let c = x.clamp(0.0, 1.0);
    if c == 0.0 && x.to_bits() == 0x8000_0000 {
        return V::UNKNOWN; // clamp(-0) may keep or drop the sign
    }
    if v.err > 0.0 && (f64::from(x).abs() <= f64::from(v.err) || (f64::from(x) - 1.0).abs() <= f64::from(v.err)) {
        // near a clamp edge the bound still holds (clamp is 1-Lipschitz)
        return approx(c, f64::from(v.err));
    }
    V { bits: c.to_bits(), err: if c == x { v.err } else { 0.0 } }
}

fn clamp_inf(inf: Infinity, r: V) -> V {
    if !r.known() || !r.val().is_infinite() {
        return r;
    }
    let neg = r.val() < 0.0;
    match inf {
        Infinity::ToMax => V::f(if neg { -f32::MAX } else { f32::MAX }),
        Infinity::ToZero => V::f(if neg { -0.0 } else { 0.0 }),
        Infinity::Kept => r,
    }
}

/// The AR index a MOVA form writes from `v`.
fn mova(kind: Mova, v: V) -> Option<i32> {
    let i = match kind {
        Mova::Int => int_in(v)? as i32,
        Mova::Round => {
            let r = floor_like(V { bits: (v.val() + 0.5).to_bits(), err: v.err }, f32::floor);
            if !r.known() || !v.known() {
                return None;
            }
            (f64::from(v.val()) + 0.5).floor() as i32
        }
        Mova::Floor => {
            let r = floor_like(v, f32::floor);
            if !r.known() {
                return None;
            }
            r.val() as i32
        }
    };
    // AR is a 9-bit signed register on the hardware: outside that, undetermined
    (-256..256).contains(&i).then_some(i)
}

fn bfe(v: u32, off: u32, w: u32, signed: bool) -> u32 {
    if w == 0 {
        return 0;
    }
    if off + w < 32 {
        let up = v << (32 - off - w);
        if signed {
            ((up as i32) >> (32 - w)) as u32
        } else {
            up >> (32 - w)
        }
    } else if signed {
        ((v as i32) >> off) as u32
    } else {
        v >> off
    }
}

/// CUBE of the direction (x, y, z), from the R600 ISA and Mesa's `cube_r600` constant folding:
/// the major axis is the component of largest magnitude, z winning ties over y and y over x;
/// its sign is `>= 0` (so −0 counts as positive); the result is (tc, sc, 2 × major axis, face)
/// with face 0-5 = +x −x +y −y +z −z and (sc, tc) = +x (−z, −y), −x (z, −y), +y (x, z),
/// −y (x, −z), +z (x, −y), −z (−x, −y), the signs being flips of the operands' bits. A NaN or
/// denormal component, or magnitudes too close to order within their error bounds, leave every
/// lane undetermined.
fn cube(x: V, y: V, z: V) -> [V; 4] {
    use std::cmp::Ordering::Less;
    const NO: [V; 4] = [V::UNKNOWN; 4];
    if [x, y, z].iter().any(|v| fin(*v).is_none_or(|(f, _)| f.is_nan())) {
        return NO;
    }
    let mag = |v: V| V { bits: v.bits & 0x7FFF_FFFF, ..v };
    let flip = |v: V| V { bits: v.bits ^ 0x8000_0000, ..v };
    let xyz = [x, y, z];
    let Some(axis) = cube_face::major_axis(|a, b| fcmp(mag(xyz[a]), mag(xyz[b])).map(|o| o != Less)) else { return NO };
    let major = xyz[axis];
    let Some(positive) = fcmp(major, V::f(0.0)).map(|o| o != Less) else { return NO };
    let face = cube_face::face(axis, !positive);
    let pick = |c: cube_face::FaceCoord| if c.negate { flip(xyz[c.component]) } else { xyz[c.component] };
    let (tc, sc) = (pick(cube_face::FACE_COORDS[face].0), pick(cube_face::FACE_COORDS[face].1));
    [tc, sc, fmul(major, V::f(2.0), false), V::f(face as f32)]
}

/// DOT4: products summed left to right in f32; non-IEEE products (0 × anything = 0) for DOT4.
fn dot4(terms: &[(V, V)], legacy: bool) -> V {
    let mut acc: Option<V> = None;
    let mut exact = true;
    let mut sum_abs = 0.0f64;
    let mut sum = 0.0f64;
    for &(x, y) in terms {
        let p = fmul(x, y, legacy);
        if !p.known() {
            return V::UNKNOWN;
        }
        exact &= p.is_exact();
        sum_abs += f64::from(p.val().abs());
        if !(p.val() == 0.0 && legacy) {
            sum += f64::from(x.val()) * f64::from(y.val());
        }
        acc = Some(match acc {
            None => p,
            Some(a) => fadd(a, p),
        });
    }
    let r = acc.unwrap();
    if !r.known() || !exact {
        return r;
    }
    // the order of the additions is the GPU's: bound by the rounding of any order
    if f64::from(r.val()) == sum {
        r
    } else {
        approx(r.val(), 3.0 * crate::ulp(sum_abs).max(ulp32(r.val())))
    }
}
