//! Reference interpreter of PICA200 vertex and geometry programs: the independent oracle of the
//! verification harness (`crate::pica`). Geometry: `setemit` selects the slot and the
//! `prim`/`inv` flags, `emit` copies o0..o15 to the slot, appends a triangle when `prim` is set
//! and flips the output-register bank (Azahar's "EMIT switches the output bank" test).
//!
//! Written from docs/isa/pica.md §2-§6 and Azahar's `shader_interpreter.cpp` (program counter,
//! IF 8 / CALL 4 / LOOP 4 ring stacks popped after every instruction in the order CALL (up to
//! four, the fourth without a pc update), IF, LOOP), NOT from `lower.rs`.
//!
//! Numerics: like Azahar and like shrec, values are f32 and never rounded to f24 between
//! instructions (f24 only enters through the DVLE constant table, converted exactly). Every lane
//! carries an error bound ([`Expect`]): add, mul (PICA multiply: a NaN product of two non-NaN
//! operands, i.e. 0·inf, is +0), mov, max/min (`a > b ? a : b`), sge/slt, flr, cmp, mova,
//! relative addressing, swizzles, mad and dp3/dp4/dph are exact (bitwise, −0 = +0, NaN = NaN);
//! rcp/rsq/ex2/lg2 have the bounds of [`tolerance`]. Inexact values are carried with interval
//! arithmetic; a comparison, `flr`, `mova` or branch too close to its threshold makes the lane
//! (or, for a branch, the whole invocation) undetermined, never a match.

use crate::interval::{exact_or_bounded, hi, is_exact, iv, lo, mul_range};
use crate::{Expect, Tolerance};
use shrec::formats::pica::decode::{self, CmpKind, DstReg, FlowCond, Instr, Op, Operand, Reg, Rel};
use shrec::formats::pica::dvlb::Program;
use std::collections::BTreeSet;

type V = Expect;
type R4 = [V; 4];
const UNKNOWN: V = Expect::UNKNOWN;
const ZERO: R4 = [Expect { value: 0.0, err: 0.0 }; 4];

/// Per-mnemonic tolerances (everything else is exact). `mad` and the dot products are exact:
/// shrec writes them as separate, left-to-right PICA multiplies and adds and every float
/// operation carries NoContraction (docs/semantics-audit.md, "host evaluation"), so the driver
/// may neither fuse nor reassociate them (their former 1 and 4 ulp bounds dated from before;
/// the 10 000-program long run of 2026-11-26 saw 0 ulp on every such lane).
///
/// | op | bound |
/// |---|---|
/// | rcp | 1 ulp |
/// | rsq | 2 ulp |
/// | ex2 | 2^-20 + 2^-22·\|x\| relative |
/// | lg2 | 2^-21 absolute + 2 ulp |
pub fn tolerance(op: Op) -> Tolerance {
    match op {
        Op::Rcp => Tolerance::ulps(1.0),
        Op::Rsq => Tolerance::ulps(2.0),
        Op::Ex2 => Tolerance { rel: 1.0 / 1048576.0, rel_per_scale: 1.0 / 4194304.0, ..Tolerance::EXACT },
        Op::Lg2 => Tolerance { ulps: 2.0, abs: 1.0 / 2097152.0, ..Tolerance::EXACT },
        Op::Add
        | Op::Dp3
        | Op::Dp4
        | Op::Dph
        | Op::Dst
        | Op::Litp
        | Op::Mul
        | Op::Sge
        | Op::Slt
        | Op::Flr
        | Op::Max
        | Op::Min
        | Op::Mova
        | Op::Mov
        | Op::Dphi
        | Op::Dsti
        | Op::Sgei
        | Op::Slti
        | Op::Break
        | Op::Nop
        | Op::End
        | Op::Breakc
        | Op::Call
        | Op::Callc
        | Op::Callu
        | Op::Ifu
        | Op::Ifc
        | Op::Loop
        | Op::Emit
        | Op::Setemit
        | Op::Jmpc
        | Op::Jmpu
        | Op::Cmp
        | Op::Madi
        | Op::Mad => Tolerance::EXACT,
    }
}

/// Instructions executed before the interpreter gives up (a program that does not terminate).
pub const STEP_LIMIT: u64 = 200_000;

/// Uniform state and inputs of one invocation.
#[derive(Clone, Debug)]
pub struct State {
    pub v: [[f32; 4]; 16],
    pub c: [[f32; 4]; 96],
    /// i0..i3: (count, aL start, aL step, unused).
    pub i: [[u8; 4]; 4],
    /// b0..b15 as bits.
    pub b: u16,
}

impl Default for State {
    fn default() -> Self {
        State { v: [[0.0; 4]; 16], c: [[0.0; 4]; 96], i: [[0; 4]; 4], b: 0 }
    }
}

#[derive(Clone, Debug)]
pub struct Result {
    /// o0..o15 (0 where never written); all unknown when the run was undetermined.
    pub o: [R4; 16],
    /// Mnemonics executed (plus `"relative"` when a relative read happened).
    pub executed: BTreeSet<&'static str>,
    /// Control flow depended on an undetermined value (outputs are all unknown).
    pub undetermined: bool,
    /// Hit [`STEP_LIMIT`].
    pub runaway: bool,
    pub steps: u64,
    /// Geometry shaders: the triangles `emit` produced, in order, each three snapshots of
    /// o0..o15 (already in output order: `setemit … inv` swaps the first two).
    pub triangles: Vec<[[R4; 16]; 3]>,
    /// Control-flow trace (for the statistics of the compiler-shaped generator, not compared).
    pub flow: FlowStats,
}

/// What the control flow of one run did: the conditional flow instructions executed (address,
/// mnemonic, taken; the first [`FLOW_TRACE`] of them), loop exits by `break`/`breakc`, calls
/// made, `LOOP`s entered with a count of 0 and of more, an `end` run inside a called range, the
/// deepest IF / CALL / LOOP stacks and pushes onto a full stack (the ring overwrote its oldest
/// entry).
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub branches: Vec<(u32, &'static str, bool)>,
    pub breaks: u32,
    pub calls: u32,
    pub loops: [u32; 2],
    pub end_in_call: bool,
    pub max_stack: [usize; 3],
    pub overwrites: u32,
}

/// Conditional flow instructions kept in [`FlowStats::branches`].
pub const FLOW_TRACE: usize = 4096;

impl FlowStats {
    fn branch(&mut self, pc: u32, op: Op, taken: Option<bool>) {
        if let Some(t) = taken {
            if self.branches.len() < FLOW_TRACE {
                self.branches.push((pc, op.name(), t));
            }
        }
    }
}

/// 0·NaN: NaN on the PICA and in shrec's HLSL, but a driver may fold `x·0` to 0 when the zero is
/// a compile-time constant (Vulkan does not pin down NaN arithmetic without float controls;
/// lavapipe does it for a never-written register): undetermined. With
/// `SignedZeroInfNanPreserve` ([`crate::check::float_controls`]) only a +0 operand stays
/// undetermined: lavapipe folds a product with the constant +0 even then
/// ([`crate::check::plus_zero_products_fold`]; fuzz seed 1 #28, a `dp4` of a never-written
/// register and a NaN), never one with −0.
fn zero_times_nan(a: V, b: V) -> bool {
    let by_zero = |z: V, other: V| {
        other.value.is_nan()
            && z.value == 0.0
            && (!crate::check::float_controls() || z.value.is_sign_positive() && crate::check::plus_zero_products_fold())
    };
    by_zero(b, a) || by_zero(a, b)
}

/// PICA multiply: 0·±inf = +0, 0·NaN = NaN (docs/pica.md).
pub fn pica_mul(a: f32, b: f32) -> f32 {
    let p = a * b;
    if p.is_nan() && !a.is_nan() && !b.is_nan() {
        0.0
    } else {
        p
    }
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

fn mul(a: V, b: V) -> V {
    if !known(&[a, b]) {
        return UNKNOWN;
    }
    if zero_times_nan(a, b) {
        return UNKNOWN;
    }
    exact_or_bounded(pica_mul(a.value, b.value), is_exact(a) && is_exact(b), || Some(mul_range(iv(a), iv(b))), 0.0)
}

/// PICA multiply, then add: two f32 roundings, as Azahar computes it and as the HLSL writes it
/// (two operations, each `NoContraction`, so the driver may not fuse them).
fn mad(a: V, b: V, c: V) -> V {
    if !known(&[a, b, c]) || zero_times_nan(a, b) {
        return UNKNOWN;
    }
    let r = pica_mul(a.value, b.value) + c.value;
    let range = || {
        let m = mul_range(iv(a), iv(b));
        Some((m.0 + lo(c), m.1 + hi(c)))
    };
    exact_or_bounded(r, is_exact(a) && is_exact(b) && is_exact(c), range, 0.0)
}

/// The f32 left-to-right sum of PICA products (what Azahar computes, and what the prelude's
/// `shrec_pica_dot*` write, every operation `NoContraction`).
fn dot(n: usize, a: &R4, b: &R4) -> V {
    if !known(&a[..n]) || !known(&b[..n]) || (0..n).any(|i| zero_times_nan(a[i], b[i])) {
        return UNKNOWN;
    }
    let s = (1..n).fold(pica_mul(a[0].value, b[0].value), |s, i| s + pica_mul(a[i].value, b[i].value));
    let range = || {
        let (mut l, mut h) = (0.0, 0.0);
        for i in 0..n {
            let p = mul_range(iv(a[i]), iv(b[i]));
            l += p.0;
            h += p.1;
        }
        Some((l, h))
    };
    exact_or_bounded(s, a[..n].iter().chain(&b[..n]).all(|x| is_exact(*x)), range, 0.0)
}

fn mono(f: impl Fn(f64) -> f64, (l, h): (f64, f64)) -> Option<(f64, f64)> {
    let (a, b) = (f(l), f(h));
    Some((a.min(b), a.max(b)))
}

/// The one-lane transcendental ops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Rcp,
    Rsq,
    Ex2,
    Lg2,
}

/// rcp/rsq/ex2/lg2 of one value. Special inputs (0, ±inf, NaN, negative for rsq/lg2) give their
/// IEEE results exactly.
fn scalar(op: Scalar, t: Tolerance, x: V) -> V {
    if !x.is_known() {
        return UNKNOWN;
    }
    let xv = x.value;
    let x64 = f64::from(xv);
    let ex = is_exact(x);
    let special = |r: f32| if ex { Expect::exact(r) } else { UNKNOWN };
    match op {
        // The sign of a zero is not pinned down by Vulkan (exact compares treat −0 = +0), so
        // rcp/rsq of a zero (±inf) are undetermined.
        Scalar::Rcp | Scalar::Rsq if xv == 0.0 => UNKNOWN,
        Scalar::Rcp => {
            if xv.is_infinite() || xv.is_nan() {
                return special(1.0 / xv);
            }
            let r = (1.0 / x64) as f32;
            let (l, h) = iv(x);
            exact_or_bounded(r, ex, || if l <= 0.0 && h >= 0.0 { None } else { mono(|v| 1.0 / v, (l, h)) }, t.bound(f64::from(r), 0.0))
        }
        Scalar::Rsq => {
            if xv < 0.0 || xv.is_infinite() || xv.is_nan() {
                return special(1.0 / xv.sqrt());
            }
            let r = (1.0 / x64.sqrt()) as f32;
            let (l, h) = iv(x);
            exact_or_bounded(r, ex, || if l <= 0.0 { None } else { mono(|v| 1.0 / v.sqrt(), (l, h)) }, t.bound(f64::from(r), 0.0))
        }
        Scalar::Ex2 => {
            if xv.is_infinite() || xv.is_nan() || x64 >= 128.0 {
                return special(xv.exp2());
            }
            if x64 < -126.0 {
                return UNKNOWN; // subnormal / flushed
            }
            let r = x64.exp2() as f32;
            exact_or_bounded(r, ex, || mono(f64::exp2, iv(x)), t.bound(f64::from(r), x64))
        }
        Scalar::Lg2 => {
            if xv <= 0.0 || xv.is_infinite() || xv.is_nan() {
                return special(xv.log2());
            }
            if xv == 1.0 {
                return exact_or_bounded(0.0, ex, || mono(f64::log2, iv(x)).filter(|_| lo(x) > 0.0), t.bound(0.0, 0.0));
            }
            let r = x64.log2() as f32;
            let (l, h) = iv(x);
            exact_or_bounded(r, ex, || if l <= 0.0 { None } else { mono(f64::log2, (l, h)) }, t.bound(f64::from(r), 0.0))
        }
    }
}

/// Decides `a OP b` over intervals: `Some(v)` when every point of the inputs gives `v`.
fn compare(kind: CmpKind, a: V, b: V) -> Option<bool> {
    if !known(&[a, b]) {
        return None;
    }
    let f = |x: f32, y: f32| match kind {
        CmpKind::Eq => x == y,
        CmpKind::Ne => x != y,
        CmpKind::Lt => x < y,
        CmpKind::Le => x <= y,
        CmpKind::Gt => x > y,
        CmpKind::Ge => x >= y,
        CmpKind::Unknown(_) => unreachable!(),
    };
    if is_exact(a) && is_exact(b) {
        return Some(f(a.value, b.value));
    }
    if a.value.is_nan() || b.value.is_nan() {
        return None;
    }
    // Disjoint intervals decide every ordering; otherwise undetermined.
    let (al, ah, bl, bh) = (lo(a), hi(a), lo(b), hi(b));
    if ah < bl || bh < al {
        Some(f(a.value, b.value))
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

/// `a > b ? a : b` (max) / `a < b ? a : b` (min).
fn select(kind: CmpKind, a: V, b: V) -> V {
    match compare(kind, a, b) {
        Some(true) => a,
        Some(false) => b,
        None => {
            if !known(&[a, b]) || a.value.is_nan() || b.value.is_nan() {
                return UNKNOWN;
            }
            // Close values: the result lies in the hull of both intervals.
            let (l, h) = if kind == CmpKind::Gt { (lo(a).max(lo(b)), hi(a).max(hi(b))) } else { (lo(a).min(lo(b)), hi(a).min(hi(b))) };
            let r = if kind == CmpKind::Gt { a.value.max(b.value) } else { a.value.min(b.value) };
            exact_or_bounded(r, false, || Some((l, h)), 0.0)
        }
    }
}

fn flr(x: V) -> V {
    if !x.is_known() {
        return UNKNOWN;
    }
    if is_exact(x) {
        return Expect::exact(x.value.floor());
    }
    if lo(x).floor() == hi(x).floor() {
        Expect::exact(x.value.floor())
    } else {
        UNKNOWN
    }
}

/// x86 `cvttss2si`: truncation, NaN / out of range → INT_MIN.
fn f2i(x: f32) -> i32 {
    if x.is_nan() || x.abs() >= 2147483648.0 {
        i32::MIN
    } else {
        x as i32
    }
}

struct IfE {
    else_addr: u32,
    end_addr: u32,
}
struct CallE {
    end_addr: u32,
    ret: u32,
}
struct LoopE {
    entry: u32,
    end_addr: u32,
    down: u8,
    inc: u8,
    prev_al: u8,
}

/// A ring of `cap` entries that overwrites its oldest (boost::circular_buffer push_back).
fn push<T>(v: &mut Vec<T>, cap: usize, x: T) {
    if v.len() == cap {
        v.remove(0);
    }
    v.push(x);
}

struct M<'a> {
    p: &'a Program,
    s: &'a State,
    r: [R4; 16],
    o: [R4; 16],
    /// a0.x, a0.y (None = undetermined), aL.
    a0: [Option<i32>; 2],
    al: i32,
    cc: [Option<bool>; 2],
    executed: BTreeSet<&'static str>,
    undetermined: bool,
    /// Geometry emitter: the other output-register bank, the 3-slot vertex buffer, and the
    /// `setemit` state (slot, prim, inv).
    other: [R4; 16],
    slots: [[R4; 16]; 3],
    emit: (usize, bool, bool),
    triangles: Vec<[[R4; 16]; 3]>,
}

impl M<'_> {
    fn read(&mut self, o: &Operand) -> R4 {
        let base: R4 = match o.reg {
            Reg::V(i) => self.s.v[i as usize].map(Expect::exact),
            Reg::R(i) => self.r[i as usize],
            Reg::C(i) => {
                let off = match o.rel {
                    Rel::None => Some(0),
                    Rel::A0x => self.a0[0],
                    Rel::A0y => self.a0[1],
                    Rel::AL => Some(self.al),
                };
                if o.rel != Rel::None {
                    self.executed.insert("relative");
                }
                match off {
                    None => [UNKNOWN; 4],
                    Some(off) => {
                        let off = if (-128..=127).contains(&off) { off } else { 0 };
                        let idx = (i as i32 + off) & 0x7F;
                        if idx >= 96 {
                            [Expect::exact(1.0); 4]
                        } else {
                            self.s.c[idx as usize].map(Expect::exact)
                        }
                    }
                }
            }
        };
        std::array::from_fn(|k| {
            let x = base[o.swizzle[k] as usize];
            if o.negate && x.is_known() {
                Expect { value: -x.value, err: x.err }
            } else {
                x
            }
        })
    }

    fn write(&mut self, d: DstReg, mask: u8, v: R4) {
        let reg = match d {
            DstReg::O(i) => &mut self.o[i as usize],
            DstReg::R(i) => &mut self.r[i as usize],
        };
        for k in 0..4 {
            if mask >> k & 1 != 0 {
                reg[k] = v[k];
            }
        }
    }

    fn cond(&mut self, c: &FlowCond) -> Option<bool> {
        let x = self.cc[0].map(|v| v == c.refx);
        let y = self.cc[1].map(|v| v == c.refy);
        let r = match c.op {
            0 => match (x, y) {
                (Some(true), _) | (_, Some(true)) => Some(true),
                (Some(false), Some(false)) => Some(false),
                _ => None,
            },
            1 => match (x, y) {
                (Some(false), _) | (_, Some(false)) => Some(false),
                (Some(true), Some(true)) => Some(true),
                _ => None,
            },
            2 => x,
            _ => y,
        };
        if r.is_none() {
            self.undetermined = true;
        }
        r
    }

    fn arith(&mut self, op: Op, dst: DstReg, mask: u8, srcs: &[Operand]) {
        let a = self.read(&srcs[0]);
        let b = if srcs.len() > 1 { self.read(&srcs[1]) } else { ZERO };
        let lanes = |f: &dyn Fn(V, V) -> V| -> R4 { std::array::from_fn(|k| f(a[k], b[k])) };
        let v: R4 = match op {
            Op::Add => lanes(&add),
            Op::Mul => lanes(&mul),
            Op::Mov => a,
            Op::Max => lanes(&|x, y| select(CmpKind::Gt, x, y)),
            Op::Min => lanes(&|x, y| select(CmpKind::Lt, x, y)),
            Op::Sge | Op::Sgei => lanes(&|x, y| flag(compare(CmpKind::Ge, x, y))),
            Op::Slt | Op::Slti => lanes(&|x, y| flag(compare(CmpKind::Lt, x, y))),
            Op::Flr => a.map(flr),
            Op::Dp3 => [dot(3, &a, &b); 4],
            Op::Dp4 => [dot(4, &a, &b); 4],
            Op::Dph | Op::Dphi => {
                let mut a1 = a;
                a1[3] = Expect::exact(1.0);
                [dot(4, &a1, &b); 4]
            }
            // (1, s1.y·s2.y, s1.z, s2.w), PICA multiply.
            Op::Dst | Op::Dsti => [Expect::exact(1.0), mul(a[1], b[1]), a[2], b[3]],
            Op::Rcp => [scalar(Scalar::Rcp, tolerance(op), a[0]); 4],
            Op::Rsq => [scalar(Scalar::Rsq, tolerance(op), a[0]); 4],
            Op::Ex2 => [scalar(Scalar::Ex2, tolerance(op), a[0]); 4],
            Op::Lg2 => [scalar(Scalar::Lg2, tolerance(op), a[0]); 4],
            Op::Litp => {
                // Panda3DS: cc.x = s.x >= 0, cc.y = s.w >= 0;
                // (max(s.x, 0), clamp(s.y, ±127.99609375), 0, max(s.w, 0)).
                let z = Expect::exact(0.0);
                self.cc = [compare(CmpKind::Ge, a[0], z), compare(CmpKind::Ge, a[3], z)];
                let lim = 127.0f32 + 255.0 / 256.0; // the largest value below 128 in the 8.8 format
                let y = select(CmpKind::Lt, select(CmpKind::Gt, a[1], Expect::exact(-lim)), Expect::exact(lim));
                [select(CmpKind::Gt, a[0], z), y, z, select(CmpKind::Gt, a[3], z)]
            }
            Op::Mova => {
                for k in 0..2 {
                    if mask >> k & 1 != 0 {
                        let x = a[k];
                        self.a0[k] = if !x.is_known() {
                            None
                        } else if is_exact(x) {
                            Some(f2i(x.value))
                        } else {
                            let (l, h) = (f2i(lo(x) as f32), f2i(hi(x) as f32));
                            (l == h && lo(x).abs() < 2e9 && hi(x).abs() < 2e9).then_some(l)
                        };
                    }
                }
                return;
            }
            // decoded as Instr::Mad, Cmp, Simple, Flow or Setemit, never as Arith
            Op::Break
            | Op::Nop
            | Op::End
            | Op::Breakc
            | Op::Call
            | Op::Callc
            | Op::Callu
            | Op::Ifu
            | Op::Ifc
            | Op::Loop
            | Op::Emit
            | Op::Setemit
            | Op::Jmpc
            | Op::Jmpu
            | Op::Cmp
            | Op::Madi
            | Op::Mad => unreachable!("{op:?} is not an Arith instruction"),
        };
        self.write(dst, mask, v);
    }
}

/// Runs DVLE `index` of `p` on one vertex (vertex shader) or one primitive (geometry shader:
/// its inputs are already in `s.v` / `s.c` as the GS mode places them).
pub fn run(p: &Program, index: usize, s: &State) -> Result {
    let d = &p.dvles[index];
    let gs = d.stage == shrec::formats::Stage::Geometry;
    let mut m = M {
        p,
        s,
        r: [ZERO; 16],
        o: [ZERO; 16],
        a0: [Some(0); 2],
        al: 0,
        cc: [Some(false); 2],
        executed: BTreeSet::new(),
        undetermined: false,
        other: [ZERO; 16],
        slots: [[ZERO; 16]; 3],
        emit: (0, false, false),
        triangles: Vec::new(),
    };
    let mut ifs: Vec<IfE> = Vec::new();
    let mut calls: Vec<CallE> = Vec::new();
    let mut loops: Vec<LoopE> = Vec::new();
    let mut pc = d.main;
    let mut steps = 0u64;
    let mut runaway = false;
    let mut flow = FlowStats::default();
    let _ = m.p;
    loop {
        if steps >= STEP_LIMIT {
            runaway = true;
            break;
        }
        steps += 1;
        if pc as usize >= p.code.len() || pc >= 4095 {
            break; // outside the code blob: end (README)
        }
        let old = pc;
        let ins = match decode::decode(&p.code, &p.opdescs, pc as usize) {
            Ok(i) => i,
            Err(_) => {
                m.undetermined = true;
                break;
            }
        };
        m.executed.insert(ins.op().name());
        let mut is_break = false;
        let mut stop = false;
        match &ins {
            Instr::Arith { op, dst, mask, srcs, .. } => m.arith(*op, *dst, *mask, srcs),
            Instr::Mad { dst, mask, src1, src2, src3, .. } => {
                let (a, b, c) = (m.read(src1), m.read(src2), m.read(src3));
                let v = std::array::from_fn(|k| mad(a[k], b[k], c[k]));
                m.write(*dst, *mask, v);
            }
            Instr::Cmp { x, y, src1, src2, .. } => {
                let (a, b) = (m.read(src1), m.read(src2));
                for (k, kind) in [*x, *y].into_iter().enumerate() {
                    if !matches!(kind, CmpKind::Unknown(_)) {
                        m.cc[k] = compare(kind, a[k], b[k]);
                    }
                }
            }
            Instr::Simple(Op::End) => {
                flow.end_in_call |= !calls.is_empty();
                stop = true
            }
            Instr::Simple(Op::Nop) => {}
            Instr::Simple(Op::Break) => is_break = true,
            Instr::Setemit { vertex, prim, winding } if gs && *vertex <= 2 => m.emit = (*vertex as usize, *prim, *winding),
            Instr::Simple(Op::Emit) if gs => {
                // The current outputs fill the selected slot; with `prim` the three slots form a
                // triangle (`inv`: first two swapped); then the output bank flips (azahar#2338).
                let (slot, prim, inv) = m.emit;
                m.slots[slot] = m.o;
                if prim {
                    let [a, b, c] = m.slots;
                    m.triangles.push(if inv { [b, a, c] } else { [a, b, c] });
                }
                std::mem::swap(&mut m.o, &mut m.other);
            }
            Instr::Simple(Op::Emit) | Instr::Setemit { .. } => {
                // emit/setemit in a vertex shader (rejected by the translator), or a setemit slot
                // above 2: not modelled.
                m.undetermined = true;
                stop = true;
            }
            // format 0 holds only end, nop, break and emit
            Instr::Simple(
                Op::Add
                | Op::Dp3
                | Op::Dp4
                | Op::Dph
                | Op::Dst
                | Op::Ex2
                | Op::Lg2
                | Op::Litp
                | Op::Mul
                | Op::Sge
                | Op::Slt
                | Op::Flr
                | Op::Max
                | Op::Min
                | Op::Rcp
                | Op::Rsq
                | Op::Mova
                | Op::Mov
                | Op::Dphi
                | Op::Dsti
                | Op::Sgei
                | Op::Slti
                | Op::Breakc
                | Op::Call
                | Op::Callc
                | Op::Callu
                | Op::Ifu
                | Op::Ifc
                | Op::Loop
                | Op::Setemit
                | Op::Jmpc
                | Op::Jmpu
                | Op::Cmp
                | Op::Madi
                | Op::Mad,
            ) => unreachable!("{:?} is not a format-0 instruction", ins.op()),
            Instr::Flow { op, cond, bool_id, int_id, dest, num } => {
                let b = |id: u8| s.b >> id & 1 != 0;
                let taken = |m: &mut M| match cond {
                    Some(c) => m.cond(c),
                    None => Some(true),
                };
                match op {
                    Op::Jmpc | Op::Jmpu => {
                        let t = if *op == Op::Jmpc { taken(&mut m) } else { Some(b(*bool_id) == (num & 1 == 0)) };
                        flow.branch(pc, *op, t);
                        match t {
                            Some(true) => pc = dest.wrapping_sub(1),
                            Some(false) => {}
                            None => stop = true,
                        }
                    }
                    Op::Call | Op::Callc | Op::Callu => {
                        let t = if *op == Op::Callu { Some(b(*bool_id)) } else { taken(&mut m) };
                        if *op != Op::Call {
                            flow.branch(pc, *op, t);
                        }
                        match t {
                            Some(true) => {
                                flow.calls += 1;
                                flow.overwrites += u32::from(calls.len() == 4);
                                push(&mut calls, 4, CallE { end_addr: dest + num, ret: pc + 1 });
                                pc = dest.wrapping_sub(1);
                            }
                            Some(false) => {}
                            None => stop = true,
                        }
                    }
                    Op::Ifc | Op::Ifu => {
                        let t = if *op == Op::Ifu { Some(b(*bool_id)) } else { taken(&mut m) };
                        flow.branch(pc, *op, t);
                        match t {
                            Some(true) => {
                                flow.overwrites += u32::from(ifs.len() == 8);
                                push(&mut ifs, 8, IfE { else_addr: *dest, end_addr: dest + num })
                            }
                            Some(false) => pc = dest.wrapping_sub(1),
                            None => stop = true,
                        }
                    }
                    Op::Loop => {
                        let i = s.i[*int_id as usize];
                        let prev = m.al as u8;
                        flow.loops[usize::from(i[0] != 0)] += 1;
                        flow.overwrites += u32::from(loops.len() == 4);
                        push(&mut loops, 4, LoopE { entry: pc + 1, end_addr: dest + 1, down: i[0], inc: i[2], prev_al: prev });
                        m.al = i32::from(i[1]);
                    }
                    Op::Breakc => {
                        let t = taken(&mut m);
                        flow.branch(pc, *op, t);
                        match t {
                            Some(t) => is_break = t,
                            None => stop = true,
                        }
                    }
                    // decoded as other instruction forms, never as Flow
                    Op::Add
                    | Op::Dp3
                    | Op::Dp4
                    | Op::Dph
                    | Op::Dst
                    | Op::Ex2
                    | Op::Lg2
                    | Op::Litp
                    | Op::Mul
                    | Op::Sge
                    | Op::Slt
                    | Op::Flr
                    | Op::Max
                    | Op::Min
                    | Op::Rcp
                    | Op::Rsq
                    | Op::Mova
                    | Op::Mov
                    | Op::Dphi
                    | Op::Dsti
                    | Op::Sgei
                    | Op::Slti
                    | Op::Break
                    | Op::Nop
                    | Op::End
                    | Op::Emit
                    | Op::Setemit
                    | Op::Cmp
                    | Op::Madi
                    | Op::Mad => unreachable!("{op:?} is not a Flow instruction"),
                }
            }
        }
        for (k, n) in [ifs.len(), calls.len(), loops.len()].into_iter().enumerate() {
            flow.max_stack[k] = flow.max_stack[k].max(n);
        }
        if stop {
            break;
        }
        pc = pc.wrapping_add(1);
        let mut next = old + 1;
        for k in 0..4 {
            match calls.last() {
                Some(c) if c.end_addr == next => {}
                _ => break,
            }
            if k < 3 {
                pc = calls.last().unwrap().ret;
                next = pc;
            }
            calls.pop();
        }
        if let Some(e) = ifs.last() {
            if e.else_addr == old + 1 {
                pc = e.end_addr;
                ifs.pop();
            }
        }
        if let Some(l) = loops.last_mut() {
            if l.end_addr == old + 1 || is_break {
                m.al = m.al.wrapping_add(i32::from(l.inc));
                let again = !is_break && l.down != 0;
                l.down = l.down.wrapping_sub(1);
                flow.breaks += u32::from(is_break);
                if again {
                    pc = l.entry;
                } else {
                    pc = l.end_addr;
                    let prev = l.prev_al;
                    if loops.len() > 1 {
                        m.al = i32::from(prev);
                    }
                    loops.pop();
                }
            }
        }
    }
    let undetermined = m.undetermined || runaway;
    Result {
        o: if undetermined { [[UNKNOWN; 4]; 16] } else { m.o },
        executed: m.executed,
        undetermined,
        runaway,
        steps,
        triangles: if undetermined { Vec::new() } else { m.triangles },
        flow,
    }
}
