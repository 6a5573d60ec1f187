//! Compiler-shaped Xenos programs: control flow composed the way fxc (the
//! Xbox 360 D3D9 shader compiler) emits it, recursively, instead of the random CF forms of
//! [`super::gen::program`].
//!
//! Shapes, with where each is seen:
//! - **Predicated clauses for if / else** — `setp_*` then `(p0) exec` / `(!p0) exec` whose
//!   instructions are predicated the same way, or predicated instructions of both conditions
//!   in one plain exec (the corpus: snes9x-gx `s2xsal.ps` and `hq4x.ps`, `shrec disasm`). Xenia's
//!   ucode.h (kCondExecPred) says why the compiler predicates the instructions too: the hardware
//!   runs a `(p0) exec` when *any* of its 64 invocations passes, so the inner predication is what
//!   makes each invocation exact; shrec and its reference decide per invocation, which is the same
//!   for such code.
//! - **The predicate counter stack** — nested if / else in predicated code as `setp_*_push`,
//!   `setp_inv`, `setp_pop` on a counter register (`s2xsal.ps`: `setp_ne_push r6.x, c254.x,
//!   r1.w` … `setp_inv r6.x, r6.x` … `setp_pop r6.x, r6.x`; pseudo-code of each op in Xenia's
//!   ucode.h), with `(!p0) jmp` over a region no invocation enters and `setp_rstr` to restore
//!   p0 from the counter after a nested jump, loop or call.
//! - **Static branches on boolean constants** — `cexec b` / `cexec !b` pairs and `jmp !b` over a
//!   then-part with `jmp` over the else-part.
//! - **Dynamic branches** — `(!p0) jmp ELSE` … `jmp END`.
//! - **Loops** — `loop iN` … `endloop iN` over a literal `defi` or a run-time loop constant, with
//!   aL-relative operands; the predicated break as the loop's own endloop (`(p0) endloop`); the
//!   predicated early endloop before the real one (fxc 2.0.7680; see
//!   `verify_xenos::early_endloop_program`), left by a `jmp` past the loop or an `exece` (a
//!   return inside the loop). At most four loops are open at once (the hardware's loop stack;
//!   Xenia's ucode.h kLoopStart), counting those of a caller.
//! - **Subroutines** — `call` (unconditional, on a boolean or on p0) of code after the main
//!   program ending in `ret` (Xenia's ucode.h kCondCall / kReturn), reused by later call sites
//!   when their loop and counter registers allow.
//! - **Conditional exec-end tails** — `cexece b; cexece !b; exece` (the 4D5307ED tail quoted in
//!   Xenia's ucode.h kCondExecEnd), `cexece b; exece`, `(p0) exece; exece` on a uniform p0
//!   (ucode.h kCondExecPredEnd: the hardware ends when the condition holds for *any* invocation,
//!   so only a p0 every invocation agrees on is generated there), `exece` after `alloc`s.
//!
//! Conditions read per-invocation data (vertex elements, interpolators with and without slopes,
//! so the pixels of a 2×2 quad agree and disagree), loop accumulators (conditions that change
//! from one iteration to the next) or constants only (every invocation agrees). Register use:
//! r0-r1 inputs (never written after the prologue), r2-r7 data written by random ALU
//! instructions, r9 the condition value, r13 a path signature (each leaf adds its own powers of
//! two, so a wrong path shows in an export), r14-r15 floor of the inputs, r16-r19 loop
//! accumulators by loop depth, r20-r27 predicate counters by counter-chain depth.

use super::asm::{self, Alu, Src};
use super::{container, random_cases, TestProgram};
use crate::Rng;
use shrec::formats::xenos::ucode::{ScalarOp, VectorOp, VECTOR_OPS};

/// Data registers the random ALU instructions write.
const DATA_FIRST: u32 = 2;
const DATA_COUNT: u32 = 6;
/// The condition value a `setp*` reads.
const COND: u32 = 9;
/// The path signature.
const SIG: u32 = 13;
/// floor(r0), floor(r1).
const FLOORED: u32 = 14;
/// Loop accumulators r16 + loop depth.
const ACC: u32 = 16;
/// Predicate counters r20 + chain depth.
const CHAIN: u32 = 20;
/// Literal `def`s: c252 = (0, 1, 0.5, 0.25), c253 = (-1, 2, -0.5, 3) (fxc keeps its literals in
/// the top constants, as `def c254` / `def c255` in the corpus listings).
const DEF0: u32 = 252;
const DEF1: u32 = 253;
/// Per-case thresholds c8-c15, accumulator steps c16-c19, signature powers of two c24-c27.
const THRESH: u32 = 8;
const STEPS: u32 = 16;
const SIGC: u32 = 24;

/// Deepest if / loop / call nesting generated.
pub const SHAPED_MAX_NEST: u32 = 7;
/// Loops open at once (the hardware's loop stack).
const MAX_LOOPS: u32 = 4;
/// Calls nested at once (the return stack holds four).
const MAX_CALLS: u32 = 2;
/// CF instructions after which only leaves are generated, by program size (most programs are
/// small: DXC's and lavapipe's compile time grow quickly with the pc-dispatch loop a jump or a
/// loop needs, see `lower_dispatch`).
const CF_BUDGETS: [usize; 3] = [4, 6, 10];
/// ALU instructions after which a linear program generates only leaves.
const LINEAR_BUDGET: usize = 48;
/// Instructions per exec (the clause's 3-bit count; fxc fills at most 6).
const CLAUSE_MAX: usize = 6;

// Vector and scalar opcode fields, from the decoder's tables (ucode.rs `VectorOp` / `ScalarOp`).
const ADD: u32 = VectorOp::Add.code();
const FLOOR: u32 = VectorOp::Floor.code();
const SEQ: u32 = VectorOp::Seq.code();
const SETP_EQ_PUSH: u32 = VectorOp::SetpEqPush.code();
const KILL_EQ: u32 = VectorOp::KillEq.code();
const SETP_EQ: u32 = ScalarOp::SetpEq.code();
const SETP_INV: u32 = ScalarOp::SetpInv.code();
const SETP_POP: u32 = ScalarOp::SetpPop.code();
const SETP_RSTR: u32 = ScalarOp::SetpRstr.code();
const NO_SCALAR: u32 = ScalarOp::RetainPrev.code();

/// Whether a random body instruction may use a vector op: not the predicate, kill and a0
/// writers (the generated control flow owns p0, kills and a0), nor `cube` and `dst`, whose
/// operand shapes the body generator does not build. Exhaustive, so that a new opcode in the
/// decoder's table must be placed here.
fn body_vector_op(op: VectorOp) -> bool {
    match op {
        VectorOp::Add
        | VectorOp::Mul
        | VectorOp::Max
        | VectorOp::Min
        | VectorOp::Seq
        | VectorOp::Sgt
        | VectorOp::Sge
        | VectorOp::Sne
        | VectorOp::Frc
        | VectorOp::Trunc
        | VectorOp::Floor
        | VectorOp::Mad
        | VectorOp::CndEq
        | VectorOp::CndGe
        | VectorOp::CndGt
        | VectorOp::Dp4
        | VectorOp::Dp3
        | VectorOp::Dp2Add
        | VectorOp::Max4 => true,
        VectorOp::Cube
        | VectorOp::SetpEqPush
        | VectorOp::SetpNePush
        | VectorOp::SetpGtPush
        | VectorOp::SetpGePush
        | VectorOp::KillEq
        | VectorOp::KillGt
        | VectorOp::KillGe
        | VectorOp::KillNe
        | VectorOp::Dst
        | VectorOp::MaxA => false,
    }
}

/// As [`body_vector_op`] for scalar ops: not the a0, predicate and kill writers, nor the hole 41.
fn body_scalar_op(op: ScalarOp) -> bool {
    match op {
        ScalarOp::MaxAs
        | ScalarOp::MaxAsf
        | ScalarOp::SetpEq
        | ScalarOp::SetpNe
        | ScalarOp::SetpGt
        | ScalarOp::SetpGe
        | ScalarOp::SetpInv
        | ScalarOp::SetpPop
        | ScalarOp::SetpClr
        | ScalarOp::SetpRstr
        | ScalarOp::KillsEq
        | ScalarOp::KillsGt
        | ScalarOp::KillsGe
        | ScalarOp::KillsNe
        | ScalarOp::KillsOne
        | ScalarOp::Undefined41 => false,
        ScalarOp::Adds
        | ScalarOp::AddsPrev
        | ScalarOp::Muls
        | ScalarOp::MulsPrev
        | ScalarOp::MulsPrev2
        | ScalarOp::Maxs
        | ScalarOp::Mins
        | ScalarOp::Seqs
        | ScalarOp::Sgts
        | ScalarOp::Sges
        | ScalarOp::Snes
        | ScalarOp::Frcs
        | ScalarOp::Truncs
        | ScalarOp::Floors
        | ScalarOp::Exp
        | ScalarOp::Logc
        | ScalarOp::Log
        | ScalarOp::Rcpc
        | ScalarOp::Rcpf
        | ScalarOp::Rcp
        | ScalarOp::Rsqc
        | ScalarOp::Rsqf
        | ScalarOp::Rsq
        | ScalarOp::Subs
        | ScalarOp::SubsPrev
        | ScalarOp::Sqrt
        | ScalarOp::Mulsc0
        | ScalarOp::Mulsc1
        | ScalarOp::Addsc0
        | ScalarOp::Addsc1
        | ScalarOp::Subsc0
        | ScalarOp::Subsc1
        | ScalarOp::Sin
        | ScalarOp::Cos
        | ScalarOp::RetainPrev => true,
    }
}

/// One microcode instruction waiting for its exec: words, fetch or ALU, and its predication
/// (`Some(c)`: runs when p0 == c).
#[derive(Clone, Copy)]
struct Ins {
    word: [u32; 3],
    fetch: bool,
    pred: Option<bool>,
    /// Writes p0 (setp*): the exec's PredicateClean bit is then clear, as in fxc's listings.
    setp: bool,
}

fn ins(a: &Alu) -> Ins {
    let setp = (20..=23).contains(&a.vop) || (27..=34).contains(&a.sop);
    Ins { word: a.encode(), fetch: false, pred: a.predicated.then_some(a.pred_condition), setp }
}

/// One CF instruction: word without its exec address / target, its clause (exec family) and the
/// label it aims at (jmp, call, loop_start: past the loop, loop_end: the body).
struct Entry {
    word: u64,
    clause: Option<Vec<Ins>>,
    target: Option<usize>,
}

/// A generated subroutine: its label, the loops open at its first call site (its accumulators
/// start there), the loops it opens itself, and the counter chains in use at that call site.
struct Sub {
    label: usize,
    loop_base: u32,
    loop_need: u32,
    chain_base: u32,
    /// Counter chains it opens itself.
    chain_need: u32,
    done: bool,
}

/// Where a statement is generated.
#[derive(Clone, Copy)]
struct Ctx {
    depth: u32,
    /// Loops open (a caller's included).
    loops: u32,
    /// Predicate counter registers in use (r20 ..).
    chains: u32,
    /// In predicated code: every ALU instruction is `(p0)` and p0 says whether this invocation
    /// is active (counter register `CHAIN + chains - 1` is 0).
    pred: bool,
    calls: u32,
}

/// What a compiler-shaped program reached.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShapedStats {
    /// Deepest if / loop / counter-stack / call nesting.
    pub depth: u32,
    /// Most loops open at once (statically, a caller's included).
    pub loops: u32,
    /// CF instructions.
    pub cf: usize,
    /// Predicated early endloops (before their loop's real one).
    pub early_endloops: usize,
    /// Subroutine call sites (new subroutines and reused ones).
    pub calls: usize,
    pub reused_calls: usize,
    /// Whether the program has no jump, loop or call.
    pub linear: bool,
}

struct Shaped<'a> {
    rng: &'a mut Rng,
    pixel: bool,
    /// Segment 0 is the main program, then one per subroutine.
    segs: Vec<Vec<Entry>>,
    seg: usize,
    pending: Vec<Ins>,
    /// Label → (segment, index).
    labels: Vec<Option<(usize, usize)>>,
    int_defs: Vec<(u32, u32)>,
    runtime_loops: Vec<u32>,
    next_loop: u32,
    subs: Vec<Sub>,
    /// Most loops opened while the current subroutine is generated (its `loop_need`).
    loop_peak: u32,
    /// Most counter chains in use while the current subroutine is generated.
    chain_peak: u32,
    leaf_count: u32,
    cf_budget: usize,
    /// Loops still to open, each as the first statement of the previous one's body (the
    /// programs that nest four loops whatever their budget).
    force_loops: u32,
    /// No jump, loop or call (predication, cexec and the counter stack only, as every corpus
    /// shader): translated without the pc-dispatch loop, cheap to compile.
    linear: bool,
    /// Data registers each export variant reads.
    export_regs: [u32; 2],
    stats: ShapedStats,
}

fn src_x(s: Src) -> Src {
    s.swz([0, 0, 0, 0])
}

fn lane(s: Src, l: u8) -> Src {
    s.swz([l; 4])
}

impl Shaped<'_> {
    fn cf_len(&self) -> usize {
        self.segs.iter().map(Vec::len).sum()
    }

    fn label(&mut self) -> usize {
        self.labels.push(None);
        self.labels.len() - 1
    }

    /// Places `l` at the next CF instruction of the current segment.
    fn place(&mut self, l: usize) {
        self.flush();
        self.labels[l] = Some((self.seg, self.segs[self.seg].len()));
    }

    /// Turns the pending instructions into execs of at most [`CLAUSE_MAX`]; a run whose
    /// instructions are all predicated on one condition becomes `(p0) exec` / `(!p0) exec` most
    /// of the time, as fxc emits it.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        for chunk in pending.chunks(CLAUSE_MAX) {
            let pred = chunk[0].pred.filter(|&c| chunk.iter().all(|i| i.pred == Some(c)));
            let word = match pred {
                Some(c) if self.rng.chance(70) => asm::exec(asm::COND_EXEC_PRED, 0, &[], 0, c),
                _ => asm::exec(asm::EXEC, 0, &[], 0, false),
            };
            self.segs[self.seg].push(Entry { word, clause: Some(chunk.to_vec()), target: None });
        }
    }

    fn push_cf(&mut self, word: u64, target: Option<usize>) {
        self.flush();
        self.segs[self.seg].push(Entry { word, clause: None, target });
    }

    /// An exec-family CF of `op` over `instrs` (split into clauses of at most six).
    fn exec_op(&mut self, op: u64, bool_address: u32, condition: bool, instrs: Vec<Ins>) {
        self.flush();
        if instrs.is_empty() {
            self.segs[self.seg].push(Entry { word: asm::exec(op, 0, &[], bool_address, condition), clause: Some(vec![]), target: None });
        }
        for chunk in instrs.chunks(CLAUSE_MAX) {
            let word = asm::exec(op, 0, &[], bool_address, condition);
            self.segs[self.seg].push(Entry { word, clause: Some(chunk.to_vec()), target: None });
        }
    }

    fn emit(&mut self, a: Alu) {
        self.pending.push(ins(&a));
    }

    fn bool_address(&mut self) -> u32 {
        if self.rng.chance(20) {
            16 + self.rng.below(240) as u32
        } else {
            self.rng.below(16) as u32
        }
    }

    fn data_reg(&mut self) -> u32 {
        DATA_FIRST + self.rng.below(u64::from(DATA_COUNT)) as u32
    }

    /// A random source of a body instruction: data or input temps (sometimes r[n + aL] in a
    /// loop), constants c0-c7 (sometimes c[n + aL]).
    fn body_src(&mut self, ctx: &Ctx) -> Src {
        let mut s = if self.rng.chance(70) {
            if ctx.loops > 0 && self.rng.chance(8) {
                // r[n + aL]: aL stays in 0..=9 (loop constants below), so r0-r12
                let mut s = Src::r(self.rng.below(4) as u32);
                s.rel = true;
                s
            } else {
                Src::r(self.rng.below(u64::from(DATA_FIRST + DATA_COUNT)) as u32)
            }
        } else {
            let mut s = Src::c(self.rng.below(8) as u32);
            if ctx.loops > 0 && self.rng.chance(15) {
                s.rel = true;
            }
            s
        };
        s.negate = self.rng.chance(20);
        s.abs = s.temp && self.rng.chance(10);
        s.swizzle = if self.rng.chance(40) { [0, 1, 2, 3] } else { std::array::from_fn(|_| self.rng.below(4) as u8) };
        s
    }

    /// A random ALU instruction writing data registers only: no predicate, a0 or kill writers
    /// (p0 is the control flow's), predicated when `ctx.pred`.
    fn body_alu(&mut self, ctx: &Ctx) -> Alu {
        let vops: Vec<u32> = VectorOp::ALL.iter().filter(|o| body_vector_op(**o)).map(|o| o.code()).collect();
        let sops: Vec<u32> = ScalarOp::ALL.iter().filter(|o| body_scalar_op(**o)).map(|o| o.code()).collect();
        let mut a = Alu { vop: *self.rng.pick(&vops), sop: *self.rng.pick(&sops), ..Default::default() };
        if self.rng.chance(25) {
            a.sop = NO_SCALAR;
        }
        a.vdst = self.data_reg();
        a.sdst = self.data_reg();
        a.vmask = 1 + self.rng.below(15) as u32;
        a.smask = if a.sop == NO_SCALAR { 0 } else { self.rng.below(16) as u32 };
        a.vclamp = self.rng.chance(10);
        a.sclamp = self.rng.chance(10);
        // relative constants: aL (the loops'); a0 is never set here
        a.rel_a0 = false;
        a.src = [self.body_src(ctx), self.body_src(ctx), self.body_src(ctx)];
        if (42..=47).contains(&a.sop) {
            // mulsc / addsc / subsc: src3 is a constant, the temp comes from its select bits
            a.src[2] = Src::c(self.rng.below(8) as u32).swz([self.rng.below(4) as u8, self.rng.below(4) as u8, 0, 0]);
        }
        if ctx.pred {
            a.predicated = true;
            a.pred_condition = true;
        }
        a
    }

    /// A leaf: one to three data instructions and (mostly) a signature step.
    fn leaf(&mut self, ctx: &Ctx, pred: Option<bool>) -> Vec<Alu> {
        let n = 1 + self.rng.below(2) as usize;
        let mut v: Vec<Alu> = (0..n).map(|_| self.body_alu(ctx)).collect();
        if self.pixel && self.rng.chance(4) {
            // a pixel kill on an input against a threshold (HLSL clip in a branch)
            let mut k = Alu { vop: KILL_EQ + self.rng.below(4) as u32, sop: NO_SCALAR, vdst: self.data_reg(), vmask: 1, ..Default::default() };
            let l = self.rng.below(4) as u8;
            k.src = [lane(Src::r(self.rng.below(2) as u32), l), lane(Src::c(THRESH + self.rng.below(8) as u32), l), Src::r(0)];
            v.push(k);
        }
        if self.rng.chance(80) {
            let k = self.leaf_count;
            self.leaf_count += 1;
            let mut s = Alu { vop: ADD, sop: NO_SCALAR, vdst: SIG, vmask: 0xF, ..Default::default() };
            s.src = [Src::r(SIG), Src::c(SIGC + k % 4), Src::r(0)];
            // the signature's lanes: one power of two per (leaf mod 4, lane)
            if k % 8 >= 4 {
                s.src[1] = s.src[1].swz([3, 2, 1, 0]);
            }
            v.push(s);
        }
        let p = pred.or(ctx.pred.then_some(true));
        for a in &mut v {
            a.predicated = p.is_some();
            a.pred_condition = p.unwrap_or(false);
        }
        v
    }

    fn leaf_ins(&mut self, ctx: &Ctx, pred: Option<bool>) -> Vec<Ins> {
        self.leaf(ctx, pred).iter().map(ins).collect()
    }

    /// Computes a condition value into r9.x (one instruction) and returns the `setp_*` scalar
    /// opcode (27-30) that turns it into p0. Uniform: constants only; else per-invocation
    /// inputs, their floors, or the accumulator of an open loop of this segment.
    fn condition(&mut self, ctx: &Ctx, uniform: bool, accs: u32) -> u32 {
        let l = self.rng.below(4) as u8;
        let src = if uniform {
            lane(Src::c(THRESH + self.rng.below(8) as u32), l)
        } else {
            match self.rng.below(10) {
                0..=2 => lane(Src::r(self.rng.below(2) as u32), l),
                3..=5 => lane(Src::r(FLOORED + self.rng.below(2) as u32), l),
                _ if accs > 0 => src_x(Src::r(ACC + ctx.loops - 1 - self.rng.below(u64::from(accs)) as u32)),
                _ => lane(Src::r(FLOORED + self.rng.below(2) as u32), l),
            }
        };
        let thr = lane(Src::c(THRESH + self.rng.below(8) as u32), self.rng.below(4) as u8);
        let mut a = Alu { sop: NO_SCALAR, vdst: COND, vmask: 1, ..Default::default() };
        if self.rng.chance(60) {
            // r9.x = x - t, then setp_gt / ge / eq / ne against 0
            a.vop = ADD;
            a.src = [src, thr.neg(), Src::r(0)];
            self.emit(a);
            SETP_EQ + self.rng.below(4) as u32
        } else {
            // r9.x = (x op t) ? 1 : 0 (seq / sgt / sge / sne), then setp_ne (or setp_eq: negated)
            a.vop = SEQ + self.rng.below(4) as u32;
            a.src = [src, thr, Src::r(0)];
            self.emit(a);
            if self.rng.chance(70) {
                SETP_EQ + 1
            } else {
                SETP_EQ
            }
        }
    }

    /// `setp_* r9.x`, sometimes co-issued with a data instruction's vector half (as fxc's `+`
    /// lines).
    fn setp(&mut self, ctx: &Ctx, op: u32) {
        let mut a = Alu { vop: ADD, sop: op, vmask: 0, smask: 0, ..Default::default() };
        if self.rng.chance(40) {
            let b = self.body_alu(&Ctx { pred: false, ..*ctx });
            if VECTOR_OPS[b.vop as usize].1 < 3 {
                a = Alu { sop: op, smask: 0, sdst: 0, sclamp: false, predicated: false, ..b };
            }
        }
        a.src[2] = src_x(Src::r(COND));
        self.emit(a);
    }

    /// A scalar predicate-counter op (`setp_inv` / `setp_pop` / `setp_rstr`) on counter `reg`.
    fn counter_op(&mut self, op: u32, reg: u32) {
        let mut a = Alu { vop: ADD, sop: op, vmask: 0, sdst: reg, smask: 1, ..Default::default() };
        a.src[2] = src_x(Src::r(reg));
        self.emit(a);
    }

    fn block(&mut self, ctx: &Ctx, lo: u64, hi: u64) {
        let n = lo + self.rng.below(hi - lo + 1);
        for _ in 0..n {
            self.stmt(ctx);
        }
    }

    fn deeper(&mut self, ctx: &Ctx) -> Ctx {
        let c = Ctx { depth: ctx.depth + 1, ..*ctx };
        self.stats.depth = self.stats.depth.max(c.depth);
        c
    }

    /// ALU and fetch instructions so far.
    fn instr_len(&self) -> usize {
        self.segs.iter().flatten().filter_map(|e| e.clause.as_ref()).map(Vec::len).sum::<usize>() + self.pending.len()
    }

    fn stmt(&mut self, ctx: &Ctx) {
        let room = if self.linear { self.instr_len() < LINEAR_BUDGET } else { self.cf_len() < self.cf_budget } && ctx.depth < SHAPED_MAX_NEST;
        let roll = if room { self.rng.below(100) } else { 99 };
        let can_loop = ctx.loops < MAX_LOOPS && self.next_loop < 32 && !self.linear;
        let can_call = ctx.calls < MAX_CALLS && !self.linear;
        if self.force_loops > 0 && can_loop && !ctx.pred {
            self.force_loops -= 1;
            return self.loop_stmt(ctx);
        }
        if ctx.pred {
            match roll {
                0..=14 => self.bool_if(ctx),
                15..=44 => self.push_region(ctx),
                45..=69 if self.linear => self.push_region(ctx),
                45..=69 => {
                    // a nested jump / loop / call in predicated code: invocations whose counter
                    // is not 0 jump over it, the others run it, then p0 comes back from the
                    // counter (setp_rstr)
                    let reg = CHAIN + ctx.chains - 1;
                    let end = self.label();
                    self.push_cf(asm::jmp(0, false, true, false, 0), Some(end));
                    let inner = Ctx { pred: false, ..*ctx };
                    match self.rng.below(3) {
                        0 if can_loop => self.loop_stmt(&inner),
                        1 if can_call => self.call_stmt(&inner),
                        _ => self.pred_if(&inner),
                    }
                    self.place(end);
                    self.counter_op(SETP_RSTR, reg);
                }
                _ => {
                    for a in self.leaf(ctx, None) {
                        self.emit(a);
                    }
                }
            }
            return;
        }
        match roll {
            0..=13 => self.bool_if(ctx),
            14..=33 => self.pred_if(ctx),
            34..=49 => self.push_region(ctx),
            50..=71 if can_loop => self.loop_stmt(ctx),
            50..=71 if self.linear => self.push_region(ctx),
            72..=83 if can_call => self.call_stmt(ctx),
            _ => {
                for a in self.leaf(ctx, None) {
                    self.emit(a);
                }
            }
        }
    }

    /// `if (b) A [else B]` on a boolean constant: `cexec b` / `cexec !b` leaves, or `jmp` over
    /// the then-part (and the else-part).
    fn bool_if(&mut self, ctx: &Ctx) {
        let b = self.bool_address();
        let c = self.rng.chance(50);
        let inner = self.deeper(ctx);
        if self.linear || self.rng.chance(45) {
            let then = self.leaf_ins(ctx, None);
            self.exec_op(asm::COND_EXEC, b, c, then);
            if self.rng.chance(60) {
                let other = self.leaf_ins(ctx, None);
                self.exec_op(asm::COND_EXEC, b, !c, other);
            }
            return;
        }
        let else_l = self.label();
        self.push_cf(asm::jmp(0, false, false, !c, b), Some(else_l));
        self.block(&inner, 1, 2);
        if self.rng.chance(50) {
            let end = self.label();
            self.push_cf(asm::jmp(0, true, false, false, 0), Some(end));
            self.place(else_l);
            self.block(&inner, 1, 2);
            self.place(end);
        } else {
            self.place(else_l);
        }
    }

    /// `if (x) A [else B]` on p0 from per-invocation data or constants: `(p0) exec` /
    /// `(!p0) exec` leaves, predicated instructions of both conditions in one clause, or
    /// `(!p0) jmp ELSE` … `jmp END`.
    fn pred_if(&mut self, ctx: &Ctx) {
        let uniform = self.rng.chance(25);
        let op = self.condition(ctx, uniform, self.accs(ctx));
        self.setp(ctx, op);
        let c = self.rng.chance(60);
        let inner = self.deeper(ctx);
        match self.rng.below(if self.linear { 6 } else { 10 }) {
            0..=3 => {
                let then = self.leaf_ins(ctx, Some(c));
                self.exec_op(asm::COND_EXEC_PRED, 0, c, then);
                if self.rng.chance(60) {
                    let other = self.leaf_ins(ctx, Some(!c));
                    self.exec_op(asm::COND_EXEC_PRED, 0, !c, other);
                }
            }
            4..=5 => {
                for a in self.leaf(ctx, Some(c)) {
                    self.emit(a);
                }
                for a in self.leaf(ctx, Some(!c)) {
                    self.emit(a);
                }
            }
            _ => {
                let else_l = self.label();
                self.push_cf(asm::jmp(0, false, true, !c, 0), Some(else_l));
                self.block(&inner, 1, 2);
                if self.rng.chance(50) {
                    let end = self.label();
                    self.push_cf(asm::jmp(0, true, false, false, 0), Some(end));
                    self.place(else_l);
                    self.block(&inner, 1, 2);
                    self.place(end);
                } else {
                    self.place(else_l);
                }
            }
        }
    }

    /// Loop accumulators of open loops that this segment can read (all open loops: a
    /// subroutine's caller set its accumulators before the call).
    fn accs(&self, ctx: &Ctx) -> u32 {
        ctx.loops
    }

    /// `setp_*_push` if / else on the predicate counter: a new chain (counter from the literal
    /// 0) in plain code, the enclosing chain's counter in predicated code; `setp_inv` before the
    /// else-part, `setp_pop` after; `(!p0) jmp` over a part sometimes.
    fn push_region(&mut self, ctx: &Ctx) {
        let (reg, from, chains) = if ctx.pred {
            let reg = CHAIN + ctx.chains - 1;
            (reg, src_x(Src::r(reg)), ctx.chains)
        } else {
            (CHAIN + ctx.chains, src_x(Src::c(DEF0)), ctx.chains + 1)
        };
        self.chain_peak = self.chain_peak.max(chains);
        let uniform = self.rng.chance(20);
        let op = self.condition(ctx, uniform, self.accs(ctx));
        let mut push = Alu { vop: SETP_EQ_PUSH + (op - SETP_EQ), sop: NO_SCALAR, vdst: reg, vmask: 1, ..Default::default() };
        push.src = [from, src_x(Src::r(COND)), Src::r(0)];
        self.emit(push);
        let inner = Ctx { pred: true, chains, ..self.deeper(ctx) };
        let then_end = self.label();
        if !self.linear && self.rng.chance(35) {
            self.push_cf(asm::jmp(0, false, true, false, 0), Some(then_end));
        }
        self.block(&inner, 1, 2);
        self.place(then_end);
        if self.rng.chance(55) {
            self.counter_op(SETP_INV, reg);
            let else_end = self.label();
            if !self.linear && self.rng.chance(35) {
                self.push_cf(asm::jmp(0, false, true, false, 0), Some(else_end));
            }
            self.block(&inner, 1, 2);
            self.place(else_end);
        }
        self.counter_op(SETP_POP, reg);
    }

    /// A loop over a literal `defi` or a run-time loop constant: plain endloop, predicated break
    /// as its endloop, or a predicated early endloop before the real one.
    fn loop_stmt(&mut self, ctx: &Ctx) {
        let id = self.next_loop;
        self.next_loop += 1;
        if self.rng.chance(60) {
            let count = if self.rng.chance(8) { 0 } else { 1 + self.rng.below(3) as u32 };
            let (start, step) = match self.rng.below(6) {
                0 => (3, 0xFF),
                1 => (self.rng.below(2) as u32, 0),
                2 => (self.rng.below(2) as u32, 2),
                _ => (self.rng.below(2) as u32, 1),
            };
            self.int_defs.push((id, count | start << 8 | step << 16));
        } else {
            self.runtime_loops.push(id);
        }
        // the accumulator: per invocation or uniform start, a per-case step each iteration
        let acc = ACC + ctx.loops;
        let init_src = match self.rng.below(4) {
            0 => lane(Src::c(THRESH + self.rng.below(8) as u32), self.rng.below(4) as u8),
            1 => lane(Src::r(self.rng.below(2) as u32), self.rng.below(4) as u8),
            _ => lane(Src::r(FLOORED + self.rng.below(2) as u32), self.rng.below(4) as u8),
        };
        let mut init = Alu { vop: ADD, sop: NO_SCALAR, vdst: acc, vmask: 1, ..Default::default() };
        init.src = [init_src, src_x(Src::c(DEF0)), Src::r(0)];
        self.emit(init);
        let inner = Ctx { loops: ctx.loops + 1, ..self.deeper(ctx) };
        self.stats.loops = self.stats.loops.max(inner.loops);
        self.loop_peak = self.loop_peak.max(inner.loops);
        let skip = self.label();
        let body = self.label();
        // `rep` (D3D9's loop without aL) is a loop_start with the repeat bit: aL keeps its value
        // (Xenia's ucode.h ControlFlowLoopStartInstruction::is_repeat)
        let repeat = if self.rng.chance(20) { 1 << 13 } else { 0 };
        self.push_cf(asm::loop_start(0, id) | repeat, Some(skip));
        self.place(body);
        let mut step = Alu { vop: ADD, sop: NO_SCALAR, vdst: acc, vmask: 1, ..Default::default() };
        step.src = [src_x(Src::r(acc)), lane(Src::c(STEPS + self.rng.below(4) as u32), self.rng.below(4) as u8), Src::r(0)];
        self.emit(step);
        self.block(&inner, 1, 2);
        let form = self.rng.below(10);
        if form >= 6 {
            // early endloop: (p0) endloop, left by jmp past the loop or exece; the other path
            // runs the rest of the body up to the real endloop
            let op = self.condition(&inner, false, inner.loops);
            self.setp(&inner, op);
            let rest = self.label();
            if self.rng.chance(50) {
                let b = self.bool_address();
                let c = self.rng.chance(50);
                self.push_cf(asm::jmp(0, false, false, c, b), Some(rest));
            } else {
                self.push_cf(asm::jmp(0, false, true, false, 0), Some(rest));
            }
            let brk = self.rng.chance(60);
            self.push_cf(asm::loop_end(0, id, true, brk), Some(body));
            self.stats.early_endloops += 1;
            if self.rng.chance(25) {
                let e = self.exports(1);
                self.exec_op(asm::EXEC_END, 0, false, e);
            } else {
                self.push_cf(asm::jmp(0, true, false, false, 0), Some(skip));
            }
            self.place(rest);
            self.block(&inner, 1, 1);
        }
        if form >= 3 && self.rng.chance(if form >= 6 { 40 } else { 100 }) {
            let uniform = self.rng.chance(15);
            let op = self.condition(&inner, uniform, inner.loops);
            self.setp(&inner, op);
            let c = self.rng.chance(60);
            self.push_cf(asm::loop_end(0, id, true, c), Some(body));
        } else {
            self.push_cf(asm::loop_end(0, id, false, false), Some(body));
        }
        self.place(skip);
    }

    /// `call` of a subroutine (a new one, or one whose registers and loop depth fit here).
    fn call_stmt(&mut self, ctx: &Ctx) {
        let reuse = self
            .subs
            .iter()
            // its accumulators and counters must not be the caller's live ones, and the loops
            // open must fit the stack
            .filter(|s| {
                s.done
                    && (s.loop_need == 0 || s.loop_base >= ctx.loops)
                    && ctx.loops + s.loop_need <= MAX_LOOPS
                    && (s.chain_need == 0 || s.chain_base >= ctx.chains)
            })
            .map(|s| s.label)
            .collect::<Vec<_>>();
        let (uncond, predicated, cond, b) = match self.rng.below(4) {
            0 | 1 => (true, false, false, 0),
            2 => (false, false, self.rng.chance(50), self.bool_address()),
            _ => {
                let uniform = self.rng.chance(30);
                let op = self.condition(ctx, uniform, self.accs(ctx));
                self.setp(ctx, op);
                (false, true, self.rng.chance(50), 0)
            }
        };
        self.stats.calls += 1;
        if !reuse.is_empty() && self.rng.chance(60) {
            self.stats.reused_calls += 1;
            let l = *self.rng.pick(&reuse);
            self.push_cf(asm::call(0, uncond, predicated, cond, b), Some(l));
            return;
        }
        let l = self.label();
        self.push_cf(asm::call(0, uncond, predicated, cond, b), Some(l));
        let inner = Ctx { calls: ctx.calls + 1, ..self.deeper(ctx) };
        let at = self.subs.len();
        self.subs.push(Sub { label: l, loop_base: ctx.loops, loop_need: 0, chain_base: ctx.chains, chain_need: 0, done: false });
        let (seg, peak, chain_peak) = (self.seg, self.loop_peak, self.chain_peak);
        self.segs.push(Vec::new());
        self.seg = self.segs.len() - 1;
        self.loop_peak = ctx.loops;
        self.chain_peak = ctx.chains;
        self.place(l);
        self.block(&inner, 1, 2);
        self.push_cf(asm::ret(), None);
        self.subs[at].loop_need = self.loop_peak - ctx.loops;
        self.subs[at].chain_need = self.chain_peak - ctx.chains;
        self.subs[at].done = true;
        self.seg = seg;
        self.loop_peak = self.loop_peak.max(peak);
        self.chain_peak = self.chain_peak.max(chain_peak);
    }

    /// The export instructions of tail `variant` (0 or 1: different data registers and
    /// signature lanes, so a wrong tail shows).
    fn exports(&mut self, variant: usize) -> Vec<Ins> {
        let zero = src_x(Src::c(DEF0));
        let exp = |reg: u32, from: Src| {
            let mut a = Alu { vop: ADD, sop: NO_SCALAR, vdst: reg, vmask: 0xF, export: true, ..Default::default() };
            a.src = [from, zero, Src::r(0)];
            ins(&a)
        };
        let data = Src::r(self.export_regs[variant]);
        let sig = if variant == 0 { Src::r(SIG) } else { Src::r(SIG).swz([3, 2, 1, 0]) };
        if self.pixel {
            vec![exp(0, data), exp(1, sig)]
        } else {
            vec![exp(62, data), exp(0, sig), exp(1, Src::r(self.export_regs[1 - variant]))]
        }
    }

    /// `alloc`s, then one of the end forms.
    fn tail(&mut self) {
        if self.pixel {
            self.push_cf(asm::alloc(1, 2), None);
        } else {
            self.push_cf(asm::alloc(1, 1), None);
            self.push_cf(asm::alloc(2, 2), None);
        }
        let (e0, e1) = (self.exports(0), self.exports(1));
        match self.rng.below(6) {
            0 => self.exec_op(asm::EXEC_END, 0, false, e0),
            1 => {
                self.exec_op(asm::EXEC, 0, false, e0);
                let a = self.body_alu(&Ctx { depth: 0, loops: 0, chains: 0, pred: false, calls: 0 });
                self.exec_op(asm::EXEC_END, 0, false, vec![ins(&a)]);
            }
            2 | 3 => {
                // cexece b; cexece !b; exece (empty)
                let b = self.bool_address();
                let c = self.rng.chance(50);
                self.exec_op(asm::COND_EXEC_END, b, c, e0);
                self.exec_op(asm::COND_EXEC_END, b, !c, e1);
                self.exec_op(asm::EXEC_END, 0, false, vec![]);
            }
            4 => {
                let b = self.bool_address();
                let c = self.rng.chance(50);
                self.exec_op(asm::COND_EXEC_END, b, c, e0);
                self.exec_op(asm::EXEC_END, 0, false, e1);
            }
            _ => {
                // (p0) exece on a p0 every invocation agrees on
                let ctx = Ctx { depth: 0, loops: 0, chains: 0, pred: false, calls: 0 };
                let op = self.condition(&ctx, true, 0);
                self.setp(&ctx, op);
                let c = self.rng.chance(50);
                self.exec_op(asm::COND_EXEC_PRED_END, 0, c, e0);
                self.exec_op(asm::EXEC_END, 0, false, e1);
            }
        }
    }

    /// Resolves labels, lays out clauses, writes the container.
    fn assemble(&mut self) -> Vec<u8> {
        let mut offsets = Vec::new();
        let mut n = 0;
        for s in &self.segs {
            offsets.push(n);
            n += s.len();
        }
        self.stats.cf = n;
        let base = asm::cf_triples(n);
        let mut words = Vec::new();
        let mut slots: Vec<[u32; 3]> = Vec::new();
        for e in self.segs.iter().flatten() {
            let mut w = e.word;
            if let Some(cl) = &e.clause {
                // the fetch flags of the clause (sequence bits)
                let fetch: Vec<bool> = cl.iter().map(|i| i.fetch).collect();
                let op = w >> 44;
                let cond_bits = w & (0xFF << 34 | 1 << 42);
                w = asm::exec(op, base + slots.len() as u32, &fetch, 0, false) | cond_bits;
                // PredicateClean (bit 41 of exec / cond_exec_pred; Xenia's ucode.h
                // ControlFlowExecInstruction): set unless the clause writes p0, as fxc sets it
                let clean_form = matches!(op, asm::EXEC | asm::EXEC_END | asm::COND_EXEC_PRED | asm::COND_EXEC_PRED_END);
                if clean_form && !cl.iter().any(|i| i.setp) {
                    w |= 1 << 41;
                }
                slots.extend(cl.iter().map(|i| i.word));
            }
            if let Some(l) = e.target {
                let (seg, at) = self.labels[l].expect("every label is placed");
                w |= (offsets[seg] + at) as u64;
            }
            words.push(w);
        }
        let code = asm::microcode(&words, &slots);
        let (interpolators, elements): (Vec<(u32, u32, u32)>, Vec<(u32, u32, u32)>) = if self.pixel {
            ((0..2).map(|i| (i, 5, i)).collect(), vec![])
        } else {
            ((0..2).map(|i| (i, 5, i)).collect(), (0..2).map(|i| (base + i, 5, i)).collect())
        };
        container::write(&container::Spec {
            vertex: !self.pixel,
            microcode: &code,
            vertex_elements: &elements,
            interpolators: &interpolators,
            ps_outputs: 3,
            float_defs: &[(DEF0, [0.0, 1.0, 0.5, 0.25]), (DEF1, [-1.0, 2.0, -0.5, 3.0])],
            int_defs: &self.int_defs,
        })
    }
}

/// The reproduce command of compiler-shaped program `index` of run `seed`.
pub fn reproduce_command(seed: u64, index: u64) -> String {
    format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} SHREC_FUZZ_SHAPED=1 cargo test --release --test verify_xenos -- --ignored fuzz_one --nocapture")
}

/// Program `index` of the compiler-shaped run `seed` and what it reached.
pub fn shaped_program_and_stats(seed: u64, index: u64) -> (TestProgram, ShapedStats) {
    let mut rng = Rng::new(seed.wrapping_mul(0xD1B5_4A32_D192_ED03) ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x0F8C);
    let pixel = rng.chance(50);
    let mut cases_rng = Rng::new(rng.next_u64());
    let mut g = Shaped {
        rng: &mut rng,
        pixel,
        segs: vec![Vec::new()],
        seg: 0,
        pending: Vec::new(),
        labels: Vec::new(),
        int_defs: Vec::new(),
        runtime_loops: Vec::new(),
        next_loop: 0,
        subs: Vec::new(),
        loop_peak: 0,
        chain_peak: 0,
        leaf_count: 0,
        cf_budget: 0,
        force_loops: 0,
        linear: false,
        export_regs: [0, 0],
        stats: ShapedStats::default(),
    };
    g.cf_budget = CF_BUDGETS[match g.rng.below(10) {
        0 => 2,
        1..=3 => 1,
        _ => 0,
    }];
    if g.rng.chance(4) {
        g.force_loops = MAX_LOOPS;
    } else if g.rng.chance(62) {
        g.linear = true;
    }
    g.export_regs[0] = g.data_reg();
    g.export_regs[1] = DATA_FIRST + (g.export_regs[0] - DATA_FIRST + 1 + g.rng.below(u64::from(DATA_COUNT) - 1) as u32) % DATA_COUNT;
    // Prologue: inputs (vertex fetches in slots 0 and 1), their floors, data and signature.
    if !pixel {
        for i in 0..2 {
            g.pending.push(Ins { word: asm::vfetch(i, [0, 1, 2, 3], false, false), fetch: true, pred: None, setp: false });
        }
    }
    for i in 0..2 {
        let mut f = Alu { vop: FLOOR, sop: NO_SCALAR, vdst: FLOORED + i, vmask: 0xF, ..Default::default() };
        f.src = [Src::r(i), Src::r(i), Src::r(0)];
        g.emit(f);
    }
    for d in DATA_FIRST..DATA_FIRST + DATA_COUNT {
        let mut a = Alu { vop: ADD, sop: NO_SCALAR, vdst: d, vmask: 0xF, ..Default::default() };
        a.src = [Src::r(d % 2).swz(std::array::from_fn(|_| g.rng.below(4) as u8)), Src::c(d), Src::r(0)];
        g.emit(a);
    }
    let mut s = Alu { vop: ADD, sop: NO_SCALAR, vdst: SIG, vmask: 0xF, ..Default::default() };
    s.src = [src_x(Src::c(DEF0)), src_x(Src::c(DEF0)), Src::r(0)];
    g.emit(s);
    let top = Ctx { depth: 0, loops: 0, chains: 0, pred: false, calls: 0 };
    let n = 2 + g.rng.below(3);
    for _ in 0..n {
        g.stmt(&top);
    }
    g.tail();
    let bytes = g.assemble();
    let stats = ShapedStats { linear: g.linear, ..g.stats };
    let runtime_loops = g.runtime_loops.clone();
    drop(g);
    let ncases = if pixel { 8 } else { 16 };
    let mut cases = random_cases(&mut cases_rng, &bytes, ncases, false);
    let r = &mut cases_rng;
    for case in &mut cases {
        case.c.resize(32, [0.0; 4]);
        for k in 0..8 {
            // thresholds: small integers (equal to floors some of the time) or quarters
            case.c[(THRESH + k) as usize] = std::array::from_fn(|_| if r.chance(50) { r.range(-3, 3) as f32 } else { r.dyadic(2, 2) });
        }
        for k in 0..4 {
            case.c[(STEPS + k) as usize] = std::array::from_fn(|_| *r.pick(&[1.0, 0.5, 0.25, -1.0, 2.0, 1.5]));
            // signature powers of two, one per (constant, lane)
            case.c[(SIGC + k) as usize] = std::array::from_fn(|l| (1u32 << (4 * k as usize + l).min(15)) as f32);
        }
        // pixel quads: slopes of 0 (the four pixels agree on that lane) or up to 1 (they
        // straddle integer and quarter thresholds)
        for m in [&mut case.slope_x, &mut case.slope_y] {
            for v in m.values_mut() {
                *v = std::array::from_fn(|_| *r.pick(&[0.0, 0.0, 0.25, 0.5, 1.0, -1.0, -0.5]));
            }
        }
        for v in case.inputs.values_mut() {
            for x in v.iter_mut() {
                if !r.chance(10) {
                    *x = r.dyadic(2, 3);
                }
            }
        }
        case.ext_booleans = std::array::from_fn(|_| r.next_u64() as u32);
        for &id in &runtime_loops {
            // count 0-3; aL from 0-1 stepping 0-2, or from 3 down (aL stays in 0..=9)
            let count = if r.chance(10) { 0 } else { 1 + r.below(3) as u32 };
            let (start, step) = if r.chance(20) { (3, 0xFFu32) } else { (r.below(2) as u32, r.below(3) as u32) };
            case.loop_constants[id as usize] = count | start << 8 | step << 16;
        }
    }
    let t = TestProgram {
        name: format!("compiler-shaped seed {seed} #{index}"),
        bytes,
        cases,
        textures: Default::default(),
        reproduce: reproduce_command(seed, index),
    };
    (t, stats)
}

/// Program `index` of the compiler-shaped run `seed`.
pub fn shaped_program(seed: u64, index: u64) -> TestProgram {
    shaped_program_and_stats(seed, index).0
}
