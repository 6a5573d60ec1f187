//! Reference interpreter of AGAL bytecode: the independent oracle of the verification harness
//! (`crate`).
//!
//! Written from the AGAL semantics (docs/isa/agal.md §2-§8), NOT from `lower.rs`/the IR: it executes
//! the decoded tokens of a [`Program`] on vec4 register files. Every lane carries an error bound
//! ([`Expect`]): exact ops on exact inputs stay exact (bitwise), approximate ops add the bound of
//! the tolerance table [`tolerance`], and inexact inputs are propagated with interval arithmetic
//! over the exact-math function. When an inexact value reaches a discontinuity (a comparison, `frc`,
//! a branch, `kil`, a texel boundary, an indirect index) closer than its error, the result is
//! *undetermined* ([`Expect::UNKNOWN`]) and is not compared.
//!
//! Where Flash's behaviour is undocumented the interpreter makes the same choice as the lowering
//! (docs/isa/agal.md "open questions"), each marked `CHOICE:` below.
//!
//! Fragment programs run as a 2×2 quad in lockstep (lanes 0..3 = top-left, top-right,
//! bottom-left, bottom-right) so that `ddx`/`ddy` are the differences of neighbouring pixels
//! (fine derivatives). Vertex programs run as a single lane.

use crate::interval::{hi, is_exact, iv, lo, mul_range};
use crate::{Expect, Tolerance};
use shrec::formats::agal::decode::{Dest, Op, Operand2, Program, RegType, Sampler, Source, Token};
use shrec::formats::Stage;
use std::collections::BTreeSet;

type V = Expect;
type Reg = [V; 4];

const UNKNOWN: V = Expect::UNKNOWN;
const ZERO: Reg = [Expect { value: 0.0, err: 0.0 }; 4];

/// Arguments of `sin`/`cos` beyond this magnitude are ill-conditioned (argument reduction error
/// dominates): the result is undetermined.
pub const TRIG_MAX_ARG: f64 = 8192.0;
/// `pow(|a|, b)` is undetermined when `|b·log2|a||` exceeds this (the relative error of
/// `exp2(b·log2 a)` grows with it) or when `|a| < 2^-20`.
pub const POW_MAX_EXPONENT: f64 = 64.0;

/// Per-opcode tolerance of the GPU result against the exact result, for exact inputs (see
/// [`Tolerance::bound`] for the formula and `scale`). Every opcode not listed is EXACT (bitwise,
/// `-0 == +0`, NaN == NaN): mov add sub mul min max abs neg sat frc sge slt seq sne sgn kil ife
/// ine ifg ifl els eif tex/tld (nearest, texel centres) ddx ddy, indirect reads, masks, swizzles.
///
/// "measured" = the worst error seen on Mesa 22.3.6 lavapipe (llvmpipe, LLVM 15) over the
/// per-opcode tests' inputs (tests/verify_agal.rs prints it on every run), including full
/// 24-bit-mantissa inputs; the bounds leave a safety factor of about 2-4.
///
/// | op | bound | scale | measured |
/// |---|---|---|---|
/// | div, rcp, sqt | 1 ulp | – | 0 (correctly rounded) |
/// | rsq | 2 ulp | – | 1 ulp |
/// | nrm | 2 ulp of 1 | 1 | 1 ulp of the component |
/// | dp3, dp4, m33, m34, m44 | 4 ulp of Σ\|aᵢbᵢ\| | Σ\|aᵢbᵢ\| | 2 ulp of the scale |
/// | crs | 4 ulp of \|a_j b_k\|+\|a_k b_j\| | same | 1 ulp of the scale |
/// | sin, cos | 2^-20 + 2^-24·\|x\| absolute | \|x\| | 4.8e-7 (\|x\| < 16), 6e-8 at \|x\| ≤ 8192 |
/// | log | 2^-21 absolute + 2 ulp | – | 2.4e-7 absolute |
/// | exp | 2^-20 + 2^-22·\|x\| relative | \|x\| | 3 ulp |
/// | pow | 2^-19 + 2^-20·\|b·log2 a\| relative | \|b·log2 a\| | 12 ulp |
///
/// Inputs where these ops are ill-conditioned are *undetermined* rather than toleranced:
/// `sin`/`cos` beyond [`TRIG_MAX_ARG`], `pow` with `|a| < 2^-20` or `|b·log2 a|` beyond
/// [`POW_MAX_EXPONENT`], `rcp`/`div`/`rsq`/`log` whose input interval contains 0, `nrm` of a
/// vector shorter than twice its error, and any non-finite or subnormal result.
pub fn tolerance(op: Op) -> Tolerance {
    match op {
        Op::Div | Op::Rcp | Op::Sqt => Tolerance::ulps(1.0),
        Op::Rsq | Op::Nrm => Tolerance::ulps(2.0),
        Op::Dp3 | Op::Dp4 | Op::M33 | Op::M34 | Op::M44 | Op::Crs => Tolerance::ulps(4.0),
        Op::Sin | Op::Cos => Tolerance { abs: 1.0 / 1048576.0, abs_per_scale: 1.0 / 16777216.0, ..Tolerance::EXACT },
        Op::Log => Tolerance { ulps: 2.0, abs: 1.0 / 2097152.0, ..Tolerance::EXACT },
        Op::Exp => Tolerance { rel: 1.0 / 1048576.0, rel_per_scale: 1.0 / 4194304.0, ..Tolerance::EXACT },
        Op::Pow => Tolerance { rel: 1.0 / 524288.0, rel_per_scale: 1.0 / 1048576.0, ..Tolerance::EXACT },
        // Exact: moves, sign and clamp ops, IEEE add/sub/mul/min/max, comparisons, frc (two
        // exact IEEE ops), derivatives (one subtraction), nearest texture reads; control flow and
        // `kil` compute no value. `ted` is rejected by the decoder.
        Op::Mov
        | Op::Add
        | Op::Sub
        | Op::Mul
        | Op::Min
        | Op::Max
        | Op::Frc
        | Op::Abs
        | Op::Neg
        | Op::Sat
        | Op::Sge
        | Op::Slt
        | Op::Sgn
        | Op::Seq
        | Op::Sne
        | Op::Ddx
        | Op::Ddy
        | Op::Ife
        | Op::Ine
        | Op::Ifg
        | Op::Ifl
        | Op::Els
        | Op::Eif
        | Op::Ted
        | Op::Kil
        | Op::Tex
        | Op::Tld => Tolerance::EXACT,
    }
}

/// How the interpreter (and the program generators) treat an opcode: one exhaustive table, so
/// an opcode added to the decoder's [`Op`] does not compile here until it is given a shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Lane-wise, one source.
    Unary,
    /// Lane-wise, two sources.
    Binary,
    /// Dot product broadcast (`dp3`, `dp4`).
    Dot,
    /// Matrix rows read from source 2 (`m33`, `m34`, `m44`).
    Matrix,
    /// `nrm`, `crs`: xyz only.
    Vector,
    /// Texture read (`tex`, `tld`).
    Sample,
    /// `ife` / `ine` / `ifg` / `ifl` open a block; `els`, `eif`.
    Branch,
    /// `kil`.
    Kill,
    /// `ddx`, `ddy` (fragment quads).
    Derivative,
    /// Refused by the decoder (`ted`).
    Rejected,
}

/// The [`Shape`] of every AGAL opcode.
pub const fn shape(op: Op) -> Shape {
    match op {
        Op::Mov | Op::Neg | Op::Abs | Op::Sat | Op::Rcp | Op::Frc | Op::Sqt | Op::Rsq | Op::Log | Op::Exp | Op::Sin | Op::Cos | Op::Sgn => {
            Shape::Unary
        }
        Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Min | Op::Max | Op::Sge | Op::Slt | Op::Seq | Op::Sne | Op::Pow => Shape::Binary,
        Op::Dp3 | Op::Dp4 => Shape::Dot,
        Op::M33 | Op::M34 | Op::M44 => Shape::Matrix,
        Op::Nrm | Op::Crs => Shape::Vector,
        Op::Tex | Op::Tld => Shape::Sample,
        Op::Ife | Op::Ine | Op::Ifg | Op::Ifl | Op::Els | Op::Eif => Shape::Branch,
        Op::Kil => Shape::Kill,
        Op::Ddx | Op::Ddy => Shape::Derivative,
        Op::Ted => Shape::Rejected,
    }
}

/// Interpretation options (mirror `lower::AgalOptions`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// `ifg` as strict `>` instead of `>=`.
    pub ifg_strict: bool,
}

/// A texture: RGBA texels, `size`×`size` per face, rows top to bottom; cube faces in the order
/// +X −X +Y −Y +Z −Z.
#[derive(Clone, Debug)]
pub struct Texture {
    pub cube: bool,
    pub size: u32,
    pub texels: Vec<[f32; 4]>,
}

/// What a vertex program computed.
#[derive(Clone, Debug)]
pub struct VertexResult {
    /// `op` (clip space, D3D convention).
    pub position: [Expect; 4],
    /// `v0..v9` (0 where never written).
    pub varyings: Vec<[Expect; 4]>,
    /// Opcodes executed by an active lane.
    pub executed: BTreeSet<&'static str>,
    /// What the control flow did (shape coverage).
    pub flow: FlowStats,
}

/// What one pixel of a fragment quad computed.
#[derive(Clone, Debug)]
pub struct PixelResult {
    /// Whether the pixel survives `kil` (`None` = undetermined).
    pub written: Option<bool>,
    /// `oc0..oc3`.
    pub colors: [[Expect; 4]; 4],
    /// `od.x` (clamped to [0, 1] by the depth test, as Stage3D's depth range).
    pub depth: Expect,
}

#[derive(Clone, Debug)]
pub struct FragmentResult {
    pub pixels: [PixelResult; 4],
    pub executed: BTreeSet<&'static str>,
    /// What the control flow did (shape coverage).
    pub flow: FlowStats,
}

/// Counts of what one run's control flow and operands did, for asserting that a generator's
/// shapes were exercised (`agal_shaped`). A fragment run counts per quad, a vertex run per vertex.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    /// Deepest `if` nesting a live lane executed an instruction in.
    pub max_depth: u32,
    /// `ife/ine/ifg/ifl` decisions per live lane: condition true / false.
    pub taken: u64,
    pub not_taken: u64,
    /// Fragment `if`s executed by a quad whose live pixels all decided alike / some each way.
    pub quads_uniform: u64,
    pub quads_divergent: u64,
    /// `kil` inside an `if` block that discarded at least one pixel.
    pub kil_in_branch: u64,
    /// `tex` inside an `if` block, with every pixel of the quad live / only some.
    pub tex_in_branch: u64,
    pub tex_divergent: u64,
    /// `ddx`/`ddy` inside an `if` block with all four pixels live (their value is compared).
    pub derivative_in_branch: u64,
    /// `ddx`/`ddy` executed with only some pixels of the quad live (undetermined).
    pub derivative_divergent: u64,
    /// Register-indexed constant reads (`vc[va0.x+N]`) by a live lane.
    pub relative_reads: u64,
}

impl FlowStats {
    pub fn merge(&mut self, o: &FlowStats) {
        self.max_depth = self.max_depth.max(o.max_depth);
        self.taken += o.taken;
        self.not_taken += o.not_taken;
        self.quads_uniform += o.quads_uniform;
        self.quads_divergent += o.quads_divergent;
        self.kil_in_branch += o.kil_in_branch;
        self.tex_in_branch += o.tex_in_branch;
        self.tex_divergent += o.tex_divergent;
        self.derivative_in_branch += o.derivative_in_branch;
        self.derivative_divergent += o.derivative_divergent;
        self.relative_reads += o.relative_reads;
    }
}

/// Output slots: `op`/`oc0..3` = 0..3, `od` = 4, `v0..v9` (vertex) = 5..14.
const OUT_DEPTH: usize = 4;
const OUT_VARYING: usize = 5;

#[derive(Clone)]
struct Lane {
    temps: [Reg; 26],
    inputs: [Reg; 16],
    outputs: [Reg; 15],
    /// Discarded by `kil` (the invocation ended).
    dead: bool,
    /// Took a branch / kil decision on an undetermined value: every result is undetermined.
    poisoned: bool,
}

struct Machine<'a> {
    prog: &'a Program,
    opts: Options,
    constants: &'a [[f32; 4]],
    const_len: usize,
    textures: &'a [Option<Texture>],
    lanes: Vec<Lane>,
    executed: BTreeSet<&'static str>,
    flow: FlowStats,
}

/// Runs a vertex program on one vertex. `attributes[i]` is `va{i}`; `constants[i]` is `vc{i}`
/// (registers past the slice read 0).
/// `textures[i]` is the vertex texture `vs{i}` (AGAL4 `tld`).
pub fn run_vertex(prog: &Program, attributes: &[[f32; 4]], constants: &[[f32; 4]], textures: &[Option<Texture>], opts: Options) -> VertexResult {
    assert_eq!(prog.stage, Stage::Vertex);
    let mut lane = new_lane();
    for (i, a) in attributes.iter().enumerate().take(16) {
        lane.inputs[i] = a.map(Expect::exact);
    }
    let mut m = Machine::new(prog, opts, constants, textures, vec![lane]);
    m.run();
    let lane = &m.lanes[0];
    let out = |r: &Reg| if lane.poisoned { [UNKNOWN; 4] } else { *r };
    VertexResult {
        position: out(&lane.outputs[0]),
        varyings: (0..10).map(|i| out(&lane.outputs[OUT_VARYING + i])).collect(),
        executed: m.executed,
        flow: m.flow,
    }
}

/// Runs a fragment program on a 2×2 quad. `varyings[p][i]` is `v{i}` of pixel `p`;
/// `textures[i]` is the texture bound to `fs{i}`.
pub fn run_fragment(
    prog: &Program,
    varyings: &[[[f32; 4]; 10]; 4],
    constants: &[[f32; 4]],
    textures: &[Option<Texture>],
    opts: Options,
) -> FragmentResult {
    assert_eq!(prog.stage, Stage::Pixel);
    let lanes = varyings
        .iter()
        .map(|v| {
            let mut lane = new_lane();
            for (i, x) in v.iter().enumerate() {
                lane.inputs[i] = x.map(Expect::exact);
            }
            lane
        })
        .collect();
    let mut m = Machine::new(prog, opts, constants, textures, lanes);
    m.run();
    let pixels = std::array::from_fn(|p| {
        let lane = &m.lanes[p];
        if lane.poisoned {
            return PixelResult { written: None, colors: [[UNKNOWN; 4]; 4], depth: UNKNOWN };
        }
        let d = lane.outputs[OUT_DEPTH][0];
        let depth = if d.is_known() {
            // The depth test clamps to the viewport's depth range [0, 1].
            let v = d.value.clamp(0.0, 1.0);
            Expect { value: v, err: d.err }
        } else {
            UNKNOWN
        };
        PixelResult { written: Some(!lane.dead), colors: std::array::from_fn(|i| lane.outputs[i]), depth }
    });
    FragmentResult { pixels, executed: m.executed, flow: m.flow }
}

fn new_lane() -> Lane {
    Lane { temps: [ZERO; 26], inputs: [ZERO; 16], outputs: [ZERO; 15], dead: false, poisoned: false }
}

/// Interval of |x|.
fn abs_range(x: V) -> (f64, f64) {
    let (l, h) = iv(x);
    if l >= 0.0 {
        (l, h)
    } else if h <= 0.0 {
        (-h, -l)
    } else {
        (0.0, h.max(-l))
    }
}

/// Range of a monotone function over an interval.
fn mono(f: impl Fn(f64) -> f64, (l, h): (f64, f64)) -> Option<(f64, f64)> {
    let (a, b) = (f(l), f(h));
    Some((a.min(b), a.max(b)))
}

/// Decides a predicate over intervals: `Some(v)` when every point of the inputs gives `v`.
fn decide(exact_inputs: bool, at_value: bool, always: bool, never: bool) -> Option<bool> {
    if exact_inputs {
        Some(at_value)
    } else if always {
        Some(true)
    } else if never {
        Some(false)
    } else {
        None
    }
}

fn flag(b: Option<bool>) -> V {
    match b {
        Some(true) => Expect::exact(1.0),
        Some(false) => Expect::exact(0.0),
        None => UNKNOWN,
    }
}

fn unary(op: Op, x: V) -> V {
    if !x.is_known() {
        return UNKNOWN;
    }
    let t = tolerance(op);
    let ex = is_exact(x);
    let xv = x.value;
    let x64 = f64::from(xv);
    match op {
        Op::Mov => x,
        Op::Neg => Expect { value: -xv, err: x.err },
        Op::Abs => Expect { value: xv.abs(), err: x.err },
        // HLSL saturate: clamp to [0, 1]; 1-Lipschitz.
        Op::Sat => Expect { value: xv.clamp(0.0, 1.0), err: x.err },
        Op::Rcp => {
            let r = 1.0 / xv;
            let (l, h) = iv(x);
            Expect::bounded(r, ex, || if l <= 0.0 && h >= 0.0 { None } else { mono(|v| 1.0 / v, (l, h)) }, t.bound(f64::from(r), 0.0))
        }
        Op::Frc => {
            // x - floor(x), as IEEE f32 ops.
            let r = xv - xv.floor();
            if r >= 1.0 {
                // Rounded up to 1 (tiny negative x): implementations clamp below 1 differently.
                return UNKNOWN;
            }
            let (l, h) = iv(x);
            Expect::bounded(r, ex, || if l.floor() != h.floor() { None } else { Some((l - l.floor(), h - h.floor())) }, 0.0)
        }
        // D3D9 heritage (notes §5): sqt, rsq and log take |x|.
        Op::Sqt => {
            let r = (x64.abs().sqrt()) as f32;
            Expect::bounded(r, ex, || mono(f64::sqrt, abs_range(x)), t.bound(f64::from(r), 0.0))
        }
        Op::Rsq => {
            let r = (1.0 / x64.abs().sqrt()) as f32;
            let a = abs_range(x);
            Expect::bounded(r, ex, || if a.0 <= 0.0 { None } else { mono(|v| 1.0 / v.sqrt(), a) }, t.bound(f64::from(r), 0.0))
        }
        Op::Log => {
            let r = x64.abs().log2() as f32;
            let a = abs_range(x);
            Expect::bounded(r, ex, || if a.0 <= 0.0 { None } else { mono(f64::log2, a) }, t.bound(f64::from(r), 0.0))
        }
        Op::Exp => {
            let r = x64.exp2() as f32;
            Expect::bounded(r, ex, || mono(f64::exp2, iv(x)), t.bound(f64::from(r), x64))
        }
        Op::Sin | Op::Cos => {
            if hi(x).abs().max(lo(x).abs()) > TRIG_MAX_ARG {
                return UNKNOWN;
            }
            let r = if op == Op::Sin { x64.sin() } else { x64.cos() } as f32;
            // |sin'| <= 1: the output moves at most as far as the input.
            Expect::bounded(r, ex, || Some((f64::from(r) - f64::from(x.err), f64::from(r) + f64::from(x.err))), t.bound(f64::from(r), x64))
        }
        Op::Sgn => {
            let s = if xv > 0.0 {
                1.0
            } else if xv < 0.0 {
                -1.0
            } else {
                0.0
            };
            if ex || lo(x) > 0.0 || hi(x) < 0.0 {
                Expect::exact(s)
            } else {
                UNKNOWN
            }
        }
        // only the `Shape::Unary` ops reach here (sent by `compute`, whose match is exhaustive)
        _ => unreachable!("{} is not a unary lane op ({:?})", op.name(), shape(op)),
    }
}

fn binary(op: Op, a: V, b: V) -> V {
    if !a.is_known() || !b.is_known() {
        return UNKNOWN;
    }
    let t = tolerance(op);
    let ex = is_exact(a) && is_exact(b);
    let (av, bv) = (a.value, b.value);
    let (ai, bi) = (iv(a), iv(b));
    match op {
        Op::Add => Expect::bounded(av + bv, ex, || Some((ai.0 + bi.0, ai.1 + bi.1)), 0.0),
        Op::Sub => Expect::bounded(av - bv, ex, || Some((ai.0 - bi.1, ai.1 - bi.0)), 0.0),
        Op::Mul => Expect::bounded(av * bv, ex, || Some(mul_range(ai, bi)), 0.0),
        Op::Div => {
            let r = av / bv;
            Expect::bounded(
                r,
                ex,
                || if bi.0 <= 0.0 && bi.1 >= 0.0 { None } else { Some(mul_range(ai, (1.0 / bi.1, 1.0 / bi.0))) },
                t.bound(f64::from(r), 0.0),
            )
        }
        Op::Min => Expect::bounded(av.min(bv), ex, || Some((ai.0.min(bi.0), ai.1.min(bi.1))), 0.0),
        Op::Max => Expect::bounded(av.max(bv), ex, || Some((ai.0.max(bi.0), ai.1.max(bi.1))), 0.0),
        Op::Sge => flag(decide(ex, av >= bv, ai.0 >= bi.1, ai.1 < bi.0)),
        Op::Slt => flag(decide(ex, av < bv, ai.1 < bi.0, ai.0 >= bi.1)),
        Op::Seq => flag(decide(ex, av == bv, false, ai.1 < bi.0 || bi.1 < ai.0)),
        Op::Sne => flag(decide(ex, av != bv, ai.1 < bi.0 || bi.1 < ai.0, false)),
        Op::Pow => {
            // D3D9 heritage: pow(|a|, b).
            let aa = f64::from(av).abs();
            let ar = abs_range(a);
            if ar.0 < 1.0 / 1048576.0 {
                return UNKNOWN;
            }
            let e = f64::from(bv) * aa.log2();
            let e_hi = bi.0.abs().max(bi.1.abs()) * ar.0.log2().abs().max(ar.1.log2().abs());
            if e.abs() > POW_MAX_EXPONENT || e_hi > POW_MAX_EXPONENT {
                return UNKNOWN;
            }
            let r = aa.powf(f64::from(bv)) as f32;
            let corners = || {
                let c = [ar.0.powf(bi.0), ar.0.powf(bi.1), ar.1.powf(bi.0), ar.1.powf(bi.1)];
                Some((c.iter().copied().fold(f64::INFINITY, f64::min), c.iter().copied().fold(f64::NEG_INFINITY, f64::max)))
            };
            Expect::bounded(r, ex, corners, t.bound(f64::from(r), e))
        }
        // only the `Shape::Binary` ops reach here (sent by `compute`, whose match is exhaustive)
        _ => unreachable!("{} is not a binary lane op ({:?})", op.name(), shape(op)),
    }
}

/// `Σ a[i]·b[i]` over the first `n` lanes, with the op's tolerance.
fn dot(op: Op, n: usize, a: &Reg, b: &Reg) -> V {
    if a[..n].iter().chain(&b[..n]).any(|x| !x.is_known()) {
        return UNKNOWN;
    }
    let ex = a[..n].iter().chain(&b[..n]).all(|x| is_exact(*x));
    // Products of f32 are exact in f64; the sum of four is within 2^-50 relative.
    let sum: f64 = (0..n).map(|i| f64::from(a[i].value) * f64::from(b[i].value)).sum();
    let scale: f64 = (0..n).map(|i| (f64::from(a[i].value) * f64::from(b[i].value)).abs()).sum();
    let r = sum as f32;
    let range = || {
        let (mut l, mut h) = (0.0, 0.0);
        for i in 0..n {
            let p = mul_range(iv(a[i]), iv(b[i]));
            l += p.0;
            h += p.1;
        }
        Some((l, h))
    };
    Expect::bounded(r, ex, range, tolerance(op).bound(f64::from(r), scale))
}

impl<'a> Machine<'a> {
    fn new(prog: &'a Program, opts: Options, constants: &'a [[f32; 4]], textures: &'a [Option<Texture>], lanes: Vec<Lane>) -> Self {
        let limits = shrec::formats::agal::decode::limits(prog.version);
        let const_len = if prog.stage == Stage::Vertex { limits.vertex_constants } else { limits.fragment_constants } as usize;
        Machine { prog, opts, constants, const_len, textures, lanes, executed: BTreeSet::new(), flow: FlowStats::default() }
    }

    fn constant(&self, i: i64) -> Reg {
        if i < 0 || i as usize >= self.const_len {
            // Out of the declared array: undefined on the GPU.
            return [UNKNOWN; 4];
        }
        self.constants.get(i as usize).map_or(ZERO, |c| c.map(Expect::exact))
    }

    /// A register as stored (before swizzle). `row` = extra register offset (matrix ops).
    fn register(&self, lane: usize, s: &Source, row: u32) -> Reg {
        let l = &self.lanes[lane];
        if let Some(ind) = s.indirect {
            // Indirect: vc[index.lane + offset]; only constants may be indexed.
            let idx_reg = match ind.reg {
                RegType::Attribute => l.inputs[ind.num as usize],
                RegType::Constant => self.constant(i64::from(ind.num)),
                RegType::Temporary => l.temps[ind.num as usize],
                _ => return [UNKNOWN; 4],
            };
            let x = idx_reg[ind.lane as usize];
            if !x.is_known() {
                return [UNKNOWN; 4];
            }
            // CHOICE (notes §7, rounding unspecified): D3D9 `mova` rounding, floor(x + 0.5) in f32.
            let i = (x.value + 0.5).floor();
            if !is_exact(x) && (lo(x) + 0.5).floor() != (hi(x) + 0.5).floor() {
                return [UNKNOWN; 4];
            }
            if i.is_nan() || i.abs() >= 1e6 {
                return [UNKNOWN; 4];
            }
            return self.constant(i as i64 + i64::from(ind.offset) + i64::from(row));
        }
        let n = s.num as usize + row as usize;
        match s.reg {
            RegType::Attribute => l.inputs.get(n).copied().unwrap_or([UNKNOWN; 4]),
            RegType::Constant => self.constant(n as i64),
            RegType::Temporary => l.temps.get(n).copied().unwrap_or([UNKNOWN; 4]),
            RegType::Varying if self.prog.stage == Stage::Vertex => l.outputs[OUT_VARYING + n],
            RegType::Varying => l.inputs[n],
            // iid: this harness draws instance 0.
            RegType::InstanceId => ZERO,
            RegType::Output | RegType::Sampler | RegType::Depth => [UNKNOWN; 4],
        }
    }

    /// Source read: positional swizzle, lane i = register lane swz[i].
    fn read(&self, lane: usize, s: &Source, row: u32) -> Reg {
        let r = self.register(lane, s, row);
        std::array::from_fn(|i| r[s.swizzle[i] as usize])
    }

    fn write(&mut self, lane: usize, d: &Dest, mask: u8, v: Reg) {
        let vertex = self.prog.stage == Stage::Vertex;
        let l = &mut self.lanes[lane];
        let reg = match d.reg {
            RegType::Temporary => &mut l.temps[d.num as usize],
            RegType::Output => &mut l.outputs[d.num as usize],
            RegType::Depth => &mut l.outputs[OUT_DEPTH],
            RegType::Varying if vertex => &mut l.outputs[OUT_VARYING + d.num as usize],
            _ => unreachable!("decoder rejects writes to {:?}", d.reg),
        };
        for (i, x) in v.iter().enumerate() {
            if mask >> i & 1 == 1 {
                reg[i] = *x;
            }
        }
    }

    fn src1(&self, lane: usize, t: &Token) -> Reg {
        self.read(lane, t.src1.as_ref().expect("decoded"), 0)
    }
    fn src2(&self, lane: usize, t: &Token) -> Reg {
        match &t.src2 {
            Operand2::Source(s) => self.read(lane, s, 0),
            _ => unreachable!("decoded"),
        }
    }

    #[allow(clippy::needless_range_loop)] // lanes are indexed in several parallel vectors
    fn run(&mut self) {
        let n = self.lanes.len();
        // Execution mask and the stack of (mask at the if, per-lane condition).
        let mut active: Vec<bool> = vec![true; n];
        let mut stack: Vec<(Vec<bool>, Vec<bool>)> = Vec::new();
        let prog = self.prog;
        for t in &prog.tokens {
            let name = t.op.name();
            let closes_block = matches!(t.op, Op::Els | Op::Eif);
            let live: Vec<bool> = (0..n).map(|l| active[l] && !self.lanes[l].dead).collect();
            let any_live = live.iter().any(|&a| a);
            let all_live = live.iter().all(|&a| a);
            if any_live || closes_block {
                self.executed.insert(name);
            }
            let depth = stack.len() as u32;
            if any_live && !closes_block {
                self.flow.max_depth = self.flow.max_depth.max(depth);
                let indirect = [t.src1, if let Operand2::Source(s) = t.src2 { Some(s) } else { None }]
                    .iter()
                    .filter(|s| s.is_some_and(|s| s.indirect.is_some()))
                    .count() as u64;
                self.flow.relative_reads += indirect * live.iter().filter(|&&a| a).count() as u64;
            }
            if t.op == Op::Tex && depth > 0 && any_live && n == 4 {
                if all_live {
                    self.flow.tex_in_branch += 1;
                } else {
                    self.flow.tex_divergent += 1;
                }
            }
            match t.op {
                Op::Ife | Op::Ine | Op::Ifg | Op::Ifl => {
                    let mut cond = vec![false; n];
                    for l in 0..n {
                        if !live[l] {
                            continue;
                        }
                        // CHOICE: the comparison is scalar, on lane x of the swizzled sources.
                        let (a, b) = (self.src1(l, t)[0], self.src2(l, t)[0]);
                        let c = if !a.is_known() || !b.is_known() {
                            None
                        } else {
                            let ex = is_exact(a) && is_exact(b);
                            let (ai, bi) = (iv(a), iv(b));
                            let disjoint = ai.1 < bi.0 || bi.1 < ai.0;
                            match t.op {
                                Op::Ife => decide(ex, a.value == b.value, false, disjoint),
                                Op::Ine => decide(ex, a.value != b.value, disjoint, false),
                                // CHOICE (notes §5 OPEN): ifg is `>=` (the docs' text), `>` with ifg_strict.
                                Op::Ifg if self.opts.ifg_strict => decide(ex, a.value > b.value, ai.0 > bi.1, ai.1 <= bi.0),
                                Op::Ifg => decide(ex, a.value >= b.value, ai.0 >= bi.1, ai.1 < bi.0),
                                // ifl (the arm's other ops never reach here)
                                _ => decide(ex, a.value < b.value, ai.1 < bi.0, ai.0 >= bi.1),
                            }
                        };
                        cond[l] = match c {
                            Some(c) => c,
                            None => {
                                self.lanes[l].poisoned = true;
                                a.value >= b.value
                            }
                        };
                    }
                    if any_live {
                        let decided: Vec<bool> = (0..n).filter(|&l| live[l]).map(|l| cond[l]).collect();
                        let taken = decided.iter().filter(|&&c| c).count() as u64;
                        self.flow.taken += taken;
                        self.flow.not_taken += decided.len() as u64 - taken;
                        if n == 4 {
                            if taken == 0 || taken == decided.len() as u64 {
                                self.flow.quads_uniform += 1;
                            } else {
                                self.flow.quads_divergent += 1;
                            }
                        }
                    }
                    // Per lane (pixel / vertex): each takes its own side, as a structured `if`
                    // in HLSL / GLSL does (AwayJS lowers `ife a, b` to `if (float(a)==float(b)) {`,
                    // lib/aglsl/Mapping.ts), with `els` flipping the lanes that were active at the `if`.
                    let before = active.clone();
                    for l in 0..n {
                        active[l] = before[l] && cond[l];
                    }
                    stack.push((before, cond));
                }
                Op::Els => {
                    let (before, cond) = stack.last().expect("decoder checks nesting");
                    for l in 0..n {
                        active[l] = before[l] && !cond[l];
                    }
                }
                Op::Eif => {
                    let (before, _) = stack.pop().expect("decoder checks nesting");
                    active = before;
                }
                Op::Kil => {
                    let dead_before = self.lanes.iter().filter(|l| l.dead).count();
                    for l in 0..n {
                        if !live[l] {
                            continue;
                        }
                        // CHOICE (notes §5): discard when ANY lane of the swizzled source is < 0
                        // (`clip`); exact for the usual broadcast swizzle.
                        let s = self.src1(l, t);
                        let sure = s.iter().any(|x| x.is_known() && hi(*x) < 0.0);
                        let maybe = s.iter().any(|x| !x.is_known() || lo(*x) < 0.0);
                        if sure {
                            self.lanes[l].dead = true;
                        } else if maybe {
                            self.lanes[l].poisoned = true;
                        }
                    }
                    // Inside an `if`, only the pixels on that side are discarded (`live` above).
                    if depth > 0 && self.lanes.iter().filter(|l| l.dead).count() > dead_before {
                        self.flow.kil_in_branch += 1;
                    }
                }
                Op::Ddx | Op::Ddy => {
                    let d = t.dest.expect("decoded");
                    let vals: Vec<Reg> = (0..n).map(|l| self.src1(l, t)).collect();
                    // Derivatives are defined only in control flow that is uniform over the quad:
                    // "applications currently have to ensure that control flow is uniform ... to
                    // avoid undefined results" (Vulkan proposal VK_KHR_shader_quad_control,
                    // "Problem Statement"); D3D9 likewise leaves gradients in divergent flow
                    // undefined. So with any pixel of the quad inactive (other side of an `if`),
                    // discarded by `kil`, or on an undetermined path, every pixel's result is
                    // undetermined (docs/semantics-audit.md, AGAL rows).
                    let quad_uniform = n == 4 && all_live && self.lanes.iter().all(|l| !l.poisoned);
                    if depth > 0 && quad_uniform {
                        self.flow.derivative_in_branch += 1;
                    }
                    if any_live && !quad_uniform {
                        self.flow.derivative_divergent += 1;
                    }
                    for l in 0..n {
                        if !live[l] {
                            continue;
                        }
                        // Fine derivatives within the 2×2 quad.
                        let (a, b) = if t.op == Op::Ddx { (l & 2, (l & 2) | 1) } else { (l & 1, (l & 1) | 2) };
                        let v: Reg = if quad_uniform { std::array::from_fn(|c| binary(Op::Sub, vals[b][c], vals[a][c])) } else { [UNKNOWN; 4] };
                        self.write(l, &d, d.mask, v);
                    }
                }
                Op::Mov
                | Op::Add
                | Op::Sub
                | Op::Mul
                | Op::Div
                | Op::Rcp
                | Op::Min
                | Op::Max
                | Op::Frc
                | Op::Sqt
                | Op::Rsq
                | Op::Pow
                | Op::Log
                | Op::Exp
                | Op::Nrm
                | Op::Sin
                | Op::Cos
                | Op::Crs
                | Op::Dp3
                | Op::Dp4
                | Op::Abs
                | Op::Neg
                | Op::Sat
                | Op::M33
                | Op::M44
                | Op::M34
                | Op::Ted
                | Op::Tex
                | Op::Sge
                | Op::Slt
                | Op::Sgn
                | Op::Seq
                | Op::Sne
                | Op::Tld => {
                    let d = t.dest.expect("ops with a value have a destination");
                    for l in 0..n {
                        if live[l] {
                            let (mask, v) = self.compute(l, t);
                            self.write(l, &d, mask, v);
                        }
                    }
                }
            }
        }
    }

    /// The value of an arithmetic/texture token for one lane, and the mask it writes.
    fn compute(&self, l: usize, t: &Token) -> (u8, Reg) {
        let op = t.op;
        let mask = t.dest.expect("decoded").mask;
        let lanewise1 = |a: Reg| -> Reg { std::array::from_fn(|i| unary(op, a[i])) };
        let lanewise2 = |a: Reg, b: Reg| -> Reg { std::array::from_fn(|i| binary(op, a[i], b[i])) };
        match op {
            Op::Mov | Op::Neg | Op::Abs | Op::Sat | Op::Rcp | Op::Frc | Op::Sqt | Op::Rsq | Op::Log | Op::Exp | Op::Sin | Op::Cos | Op::Sgn => {
                (mask, lanewise1(self.src1(l, t)))
            }
            Op::Add | Op::Sub | Op::Mul | Op::Div | Op::Min | Op::Max | Op::Sge | Op::Slt | Op::Seq | Op::Sne | Op::Pow => {
                (mask, lanewise2(self.src1(l, t), self.src2(l, t)))
            }
            Op::Dp3 => (mask, [dot(op, 3, &self.src1(l, t), &self.src2(l, t)); 4]),
            Op::Dp4 => (mask, [dot(op, 4, &self.src1(l, t), &self.src2(l, t)); 4]),
            // Matrix ops: lane i = dot(src1, the register i rows after src2's); CHOICE (notes
            // §5): m33/m34 write xyz only, m44 all four.
            Op::M33 | Op::M34 | Op::M44 => {
                let Operand2::Source(m) = &t.src2 else { unreachable!() };
                let v = self.src1(l, t);
                let (n, rows, mask) = match op {
                    Op::M33 => (3, 3, mask & 7),
                    Op::M34 => (4, 3, mask & 7),
                    _ => (4, 4, mask),
                };
                let out = std::array::from_fn(|i| if i < rows { dot(op, n, &v, &self.read(l, m, i as u32)) } else { Expect::exact(0.0) });
                (mask, out)
            }
            // nrm and crs define xyz only (CHOICE: w is never written).
            Op::Nrm => (mask & 7, normalize(&self.src1(l, t))),
            Op::Crs => (mask & 7, cross(&self.src1(l, t), &self.src2(l, t))),
            // tld (AGAL4 vertex texture fetch): CHOICE (lowering): explicit LOD from coord.w,
            // which cannot matter for the single-level textures the harness binds.
            Op::Tex | Op::Tld => {
                let Operand2::Sampler(s) = &t.src2 else { unreachable!() };
                (mask, self.sample(&self.src1(l, t), s))
            }
            // `ted` is rejected by the decoder; control flow, `kil` and derivatives are `run`'s.
            Op::Ted | Op::Ife | Op::Ine | Op::Ifg | Op::Ifl | Op::Els | Op::Eif | Op::Kil | Op::Ddx | Op::Ddy => {
                unreachable!("{} has no value computed per lane here", op.name())
            }
        }
    }

    /// Nearest sampling (the harness binds nearest/clamp samplers: sampler state is run-time
    /// state in Stage3D). The LOD bias of the word cannot change a single-level texture.
    /// Nor can the implicit LOD of a `tex` in control flow that splits the quad: its derivatives
    /// are undefined there (VK_KHR_shader_quad_control proposal, "Problem Statement"), but with
    /// one mip level and the same nearest filter for minification and magnification
    /// (`vk.rs`, `SamplerCreateInfo`) every LOD selects the same texel, so such samples are
    /// compared like any other (counted in [`FlowStats::tex_divergent`]).
    fn sample(&self, coord: &Reg, s: &Sampler) -> Reg {
        let Some(Some(tex)) = self.textures.get(s.num as usize) else { return [UNKNOWN; 4] };
        let size = tex.size as f64;
        // Texel index along one axis from a normalised coordinate interval; None near a boundary.
        let pick = |c: f64, err: f64| -> Option<usize> {
            let x = c * size;
            let e = err * size + 1.0 / 64.0;
            let (a, b) = ((x - e).floor(), (x + e).floor());
            let clamp = |v: f64| v.clamp(0.0, size - 1.0);
            (clamp(a) == clamp(b)).then(|| clamp(a) as usize)
        };
        if coord.iter().take(if tex.cube { 3 } else { 2 }).any(|c| !c.is_known()) {
            return [UNKNOWN; 4];
        }
        let texel = if !tex.cube {
            let (u, v) = (coord[0], coord[1]);
            match (pick(f64::from(u.value), f64::from(u.err)), pick(f64::from(v.value), f64::from(v.err))) {
                (Some(i), Some(j)) => tex.texels[j * tex.size as usize + i],
                _ => return [UNKNOWN; 4],
            }
        } else {
            let d: [f64; 3] = std::array::from_fn(|i| f64::from(coord[i].value));
            let e = coord[..3].iter().map(|c| f64::from(c.err)).fold(0.0, f64::max);
            let a = d.map(f64::abs);
            let major = if a[0] >= a[1] && a[0] >= a[2] {
                0
            } else if a[1] >= a[2] {
                1
            } else {
                2
            };
            let second = (0..3).filter(|&k| k != major).map(|k| a[k]).fold(0.0, f64::max);
            let m = a[major];
            if m - second <= 1e-4 * m + 2.0 * e || m == 0.0 {
                return [UNKNOWN; 4];
            }
            let (x, y, z) = (d[0], d[1], d[2]);
            // Vulkan / D3D cube face selection: (face, sc, tc).
            let (face, sc, tc) = match (major, d[major] >= 0.0) {
                (0, true) => (0, -z, -y),
                (0, false) => (1, z, -y),
                (1, true) => (2, x, z),
                (1, false) => (3, x, -z),
                (2, true) => (4, x, -y),
                _ => (5, -x, -y),
            };
            let (sv, tv) = (0.5 * (sc / m) + 0.5, 0.5 * (tc / m) + 0.5);
            let ce = 2.0 * e / m + 1e-6;
            match (pick(sv, ce), pick(tv, ce)) {
                (Some(i), Some(j)) => tex.texels[(face * tex.size as usize + j) * tex.size as usize + i],
                _ => return [UNKNOWN; 4],
            }
        };
        texel.map(Expect::exact)
    }
}

fn normalize(x: &Reg) -> Reg {
    let mut out = [Expect::exact(0.0); 4];
    if x[..3].iter().any(|v| !v.is_known()) {
        return [UNKNOWN; 4];
    }
    let v: [f64; 3] = std::array::from_fn(|i| f64::from(x[i].value));
    let len = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
    let e: f64 = x[..3].iter().map(|c| f64::from(c.err)).sum();
    if len == 0.0 || len <= 2.0 * e || !(1e-18..=1e18).contains(&len) {
        return [UNKNOWN; 4];
    }
    let ex = e == 0.0;
    let tol = tolerance(Op::Nrm);
    for i in 0..3 {
        let r = (v[i] / len) as f32;
        // |Δ(x/|x|)| <= 2|Δx| / (|x| - |Δx|).
        let prop = 2.0 * e / (len - e);
        out[i] = Expect::bounded(r, ex, || Some((f64::from(r) - prop, f64::from(r) + prop)), tol.bound(f64::from(r), 1.0));
    }
    out
}

fn cross(a: &Reg, b: &Reg) -> Reg {
    let mut out = [Expect::exact(0.0); 4];
    if a[..3].iter().chain(&b[..3]).any(|v| !v.is_known()) {
        return [UNKNOWN; 4];
    }
    let ex = a[..3].iter().chain(&b[..3]).all(|v| is_exact(*v));
    let tol = tolerance(Op::Crs);
    for (i, (j, k)) in [(1, 2), (2, 0), (0, 1)].into_iter().enumerate() {
        let p = f64::from(a[j].value) * f64::from(b[k].value);
        let q = f64::from(a[k].value) * f64::from(b[j].value);
        let r = (p - q) as f32;
        let range = || {
            let pr = mul_range(iv(a[j]), iv(b[k]));
            let qr = mul_range(iv(a[k]), iv(b[j]));
            Some((pr.0 - qr.1, pr.1 - qr.0))
        };
        out[i] = Expect::bounded(r, ex, range, tol.bound(f64::from(r), p.abs() + q.abs()));
    }
    out
}

#[cfg(test)]
mod tests {
    //! The oracle's own semantics, checked by hand against docs/isa/agal.md (no GPU needed).
    use super::*;
    use crate::agal::asm::assemble;
    use shrec::formats::agal::decode::{decode, DecodeOptions};

    fn vertex(text: &str, attributes: &[[f32; 4]], constants: &[[f32; 4]]) -> VertexResult {
        let prog = decode(&assemble(2, Stage::Vertex, text).unwrap(), DecodeOptions::default()).unwrap();
        run_vertex(&prog, attributes, constants, &[], Options::default())
    }
    fn values(r: &[Expect; 4]) -> [f32; 4] {
        r.map(|e| {
            assert!(e.is_known(), "{e}");
            e.value
        })
    }

    #[test]
    fn swizzles_are_positional_and_short_swizzles_pad() {
        // notes §6: `mov vt0.zw, vc0.xy` writes z = vc0.y, w = vc0.y.
        let c = [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]];
        let r = vertex("mov vt0, vc1\nmov vt0.zw, vc0.xy\nmov op, vt0\nmov v0, vc1\nadd v0.w, va0, vc1.x", &[c[0]], &c);
        assert_eq!(values(&r.position), [5.0, 6.0, 2.0, 2.0]);
        assert_eq!(values(&r.varyings[0]), [5.0, 6.0, 7.0, 4.0 + 5.0]);
    }

    #[test]
    fn matrices_are_rows_and_m33_writes_xyz() {
        let c = [[1.0, 0.0, 0.0, 10.0], [0.0, 2.0, 0.0, 20.0], [0.0, 0.0, 3.0, 30.0], [1.0, 1.0, 1.0, 1.0], [9.0; 4]];
        let r = vertex("m44 op, va0, vc0\nmov v0, vc4\nm33 v0, va0, vc0", &[[1.0, 1.0, 1.0, 1.0]], &c);
        assert_eq!(values(&r.position), [11.0, 22.0, 33.0, 4.0]);
        assert_eq!(values(&r.varyings[0]), [1.0, 2.0, 3.0, 9.0]);
    }

    #[test]
    fn indirect_index_rounds_half_up() {
        let c: Vec<[f32; 4]> = (0..8).map(|i| [i as f32; 4]).collect();
        let r = vertex("mov op, vc[va0.x+1]\nmov v0, vc[va0.y+1]\nmov v1, vc[va0.z+0]", &[[2.5, 2.49, -0.25, 0.0]], &c);
        assert_eq!(values(&r.position)[0], 4.0); // floor(2.5 + 0.5) + 1
        assert_eq!(values(&r.varyings[0])[0], 3.0); // floor(2.99) + 1
        assert_eq!(values(&r.varyings[1])[0], 0.0); // floor(0.25)
    }

    #[test]
    fn abs_semantics_and_undetermined_comparisons() {
        let r = vertex(
            "sqt op, va0\nlog v0, va0\nsin vt0, va1\nsge v1, vt0, va2\nmov v2, vt0",
            &[[-4.0, -4.0, -4.0, -4.0], [0.5; 4], [0.5f32.sin(); 4]],
            &[],
        );
        assert_eq!(values(&r.position), [2.0; 4]);
        assert_eq!(values(&r.varyings[0]), [2.0; 4]);
        // sin is approximate: comparing it with its own exact value is undetermined ...
        assert!(r.varyings[1].iter().all(|e| !e.is_known()));
        // ... while the value itself is known within its bound.
        assert!(r.varyings[2].iter().all(|e| e.is_known() && e.err > 0.0));
    }

    #[test]
    fn kil_any_lane_and_fine_derivatives() {
        let prog =
            decode(&assemble(2, Stage::Pixel, "ddx ft0, v0\nddy ft1, v0\nkil v1.xyzw\nadd oc, ft0, ft1").unwrap(), DecodeOptions::default()).unwrap();
        let mut v = [[[0.0f32; 4]; 10]; 4];
        for (p, px) in v.iter_mut().enumerate() {
            // v0.x = x·y: not linear, so fine derivatives differ per row / column.
            let (x, y) = ((p & 1) as f32, (p >> 1) as f32);
            px[0] = [x * y, x, y, 1.0];
            px[1] = if p == 3 { [1.0, 1.0, 1.0, -1.0] } else { [1.0; 4] };
        }
        let r = run_fragment(&prog, &v, &[], &[], Options::default());
        assert_eq!(r.pixels[3].written, Some(false));
        assert_eq!(r.pixels[0].written, Some(true));
        // Fine ddx of x·y: row 0 → 0, row 1 → 1; ddy: column 0 → 0, column 1 → 1.
        assert_eq!(values(&r.pixels[0].colors[0]), [0.0, 1.0, 1.0, 0.0]);
        assert_eq!(values(&r.pixels[1].colors[0]), [1.0, 1.0, 1.0, 0.0]);
        assert_eq!(values(&r.pixels[2].colors[0]), [1.0, 1.0, 1.0, 0.0]);
    }
    fn fragment(text: &str, varyings: impl Fn(usize) -> [[f32; 4]; 10], constants: &[[f32; 4]]) -> FragmentResult {
        let prog = decode(&assemble(2, Stage::Pixel, text).unwrap(), DecodeOptions::default()).unwrap();
        let v: [[[f32; 4]; 10]; 4] = std::array::from_fn(varyings);
        run_fragment(&prog, &v, constants, &[], Options::default())
    }

    #[test]
    fn branches_are_per_pixel_and_derivatives_need_a_uniform_quad() {
        // v0.x = pixel index 0..3; fc0.x = 1.5 splits the quad (pixels 2, 3 take the if side).
        // v1 = (x, y, 0, 0) of the pixel: ddx = 1 in x, ddy = 1 in y when the quad is uniform.
        let text = "mov ft0, fc1\nmov ft1, fc1\nifg v0.x, fc0.x\nddx ft0, v1\nkil v2.x\nels\nadd ft1, ft1, fc0.zzzz\neif\n\
                    ifl v0.y, fc0.x\nddy ft1, v1\neif\nmov oc, ft0\nmov oc1, ft1";
        let px = |p: usize| -> [[f32; 4]; 10] {
            let mut v = [[0.0; 4]; 10];
            v[0] = [p as f32, 0.0, 0.0, 0.0];
            v[1] = [(p & 1) as f32, (p >> 1) as f32, 0.0, 0.0];
            v[2] = [if p == 3 { -1.0 } else { 1.0 }; 4];
            v
        };
        let r = fragment(text, px, &[[1.5, 0.0, 4.0, 0.0], [7.0; 4]]);
        // kil inside the if discards pixel 3 only (it is on that side); pixel 1 has v2 = 1.
        assert_eq!(r.pixels.each_ref().map(|p| p.written), [Some(true), Some(true), Some(true), Some(false)]);
        // ddx in the divergent if: undetermined on the pixels that ran it; pixels 0, 1 ran els.
        assert!(r.pixels[2].colors[0].iter().all(|e| !e.is_known()));
        assert_eq!(values(&r.pixels[0].colors[0]), [7.0; 4]);
        // ifl v0.y (= 0 everywhere) is uniform, but pixel 3 was discarded before it: undetermined.
        assert!(r.pixels[0].colors[1].iter().all(|e| !e.is_known()));
        assert_eq!(r.flow.quads_divergent, 1);
        assert_eq!(r.flow.quads_uniform, 1);
        assert_eq!(r.flow.kil_in_branch, 1);
        assert_eq!(r.flow.derivative_divergent, 2);
        assert_eq!(r.flow.derivative_in_branch, 0);
        assert_eq!((r.flow.taken, r.flow.not_taken), (2 + 3, 2));

        // The same uniform if without the discard: the derivative is determined and counted.
        let r = fragment("mov ft1, fc1\nifl v0.y, fc0.x\nddy ft1, v1\neif\nmov oc, ft1", px, &[[1.5, 0.0, 4.0, 0.0], [7.0; 4]]);
        assert_eq!(values(&r.pixels[2].colors[0]), [0.0, 1.0, 0.0, 0.0]);
        assert_eq!(r.flow.derivative_in_branch, 1);
        assert_eq!(r.flow.max_depth, 1);
    }
}
