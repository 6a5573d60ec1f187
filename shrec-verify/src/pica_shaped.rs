//! Compiler-shaped PICA200 vertex programs: control flow composed the way
//! picasso assembles `.proc` / `.if` / `.else` / `.for` / `.end` blocks, not random instruction
//! soup (`pica::gen::program`).
//!
//! The program is built as a tree first (so stack budgets, nesting depth and run time can be
//! checked before anything is placed), then placed by `Em`, which follows picasso's
//! assembler (devkitPro/picasso `source/picasso_assembler.cpp`) directive by directive:
//! - `ifc` / `ifu` (`format2` / `format3` with `SE_IF`): without `.else`, DEST = the word after
//!   the block and NUM = 0; with `.else`, DEST = the else part's first word and NUM = its size
//!   (`DEF_DIRECTIVE(else)`: `inst |= curPos << 10`; `DEF_DIRECTIVE(end)` `SE_IF`:
//!   `inst |= curPos - elem.uExtra`);
//! - `for iN` (`formatfor`, opcode LOOP): DEST = the body's last word (`(curPos-1) << 10`);
//! - `.proc` / `.end`: a procedure is (first word, size); `call` / `callc` / `callu` get DEST =
//!   first word and NUM = size from the relocation table (`g_procRelocTable`); the DVLE entry
//!   point is `main`'s first word (`.entry`, default `main`), which need not be word 0;
//! - padding NOPs (`insertPaddingNop`, Manual.md "Caveats & Errata"): at `.else` / `.end` when
//!   the block just closed another block (`lastWasEnd`), when the last word is a jmpc / jmpu /
//!   call / callc / callu (or, closing a `.for`, a break / breakc), or when the block would be
//!   shorter than 2 words (1 for a `.proc`);
//! - conditions `cmp.x`, `!cmp.y`, `cmp.x && cmp.y`, `cmp.x || !cmp.y` (`parseCondExp`: refx /
//!   refy default 1, `!` clears them, op 0 OR / 1 AND / 2 x only / 3 y only); `jmpu !bN` sets
//!   NUM bit 0 (`format3`), `ifu` / `callu` cannot be inverted;
//! - no instruction reads two different input registers (`isBadInputRegCombination`), no two
//!   `mova` in a row (Manual.md errata), at most 512 words (`MAX_VSH_SIZE`), 128 operand
//!   descriptors (`MAX_OPDESC`).
//!
//! Stack limits are respected the way the sources give them (Azahar `shader_interpreter.cpp`:
//! `boost::circular_buffer` IF 8, CALL 4, LOOP 4; Panda3DS `shader_interpreter.cpp` panics past
//! the same 8 / 4 / 4): a program never pushes onto a full stack, counting the stale IF entries
//! that a `break` out of an IF (or a jump out of a then-part) leaves behind in Azahar's
//! interpreter (docs/semantics-audit.md, PICA control flow).
//!
//! Shapes, each counted in [`ShapedStats`]: if / if-else on `cmp` flags and on bool uniforms,
//! chains of them reusing one `cmp`; `for` loops over i0..i3 with count 0 (one iteration) and
//! more, aL-relative reads in the body and after it; `breakc` directly in a loop body and
//! `break` / `breakc` inside ifs in a loop; procedures called by `call` / `callc` / `callu`
//! (also from inside ifs, loops and other procedures, up to 4 deep), some ending the program
//! with `end`; forward `jmpc` / `jmpu` over blocks (also over whole if-else blocks, and out of a
//! then-part over its else part); `mova` + a0-relative reads. Nesting goes at least
//! [`MIN_DEEP`] levels deep in most programs (if in loop in if in call …).
//!
//! Inputs: every program has two uniform sets (c, i, b), each run on four vertices. Conditions
//! on `cmp` flags compare either two uniforms (the same on every vertex of a set) or a uniform
//! with a per-vertex input / data register (thresholds and inputs from one small value set, so
//! vertices often fall on both sides); bool uniforms and loop counts differ between the sets.
//! A path signature (r8 += a per-leaf constant, written to o1) makes every path and iteration
//! count visible in the outputs.

use crate::interp::pica::{self as interp, State};
use crate::pica::asm::{self, Asm};
use crate::pica::{dvlb_multi, Dvle, TestProgram};
use crate::Rng;
use shrec::formats::pica::decode::Rel;

/// The DVLE outputs: o0 position, o1 color (the path signature), o2 / o3 texcoord 0 / 1.
pub const OUTPUTS: [(u16, u16, u8); 4] = [(0, 0, 0xF), (2, 1, 0xF), (3, 2, 0x3), (5, 3, 0x3)];

/// Nesting depth (if / else / loop / call levels on one path, through called procedures) that
/// the generator aims for in most programs.
pub const MIN_DEEP: u32 = 6;

/// Hardware stack capacities (Azahar `RunInterpreter`: `if_stack(8)`, `call_stack(4)`,
/// `loop_stack(4)`).
pub const IF_STACK: usize = 8;
pub const CALL_STACK: usize = 4;
pub const LOOP_STACK: usize = 4;

/// picasso `MAX_VSH_SIZE`.
const MAX_WORDS: u32 = 512;
/// Upper bound of instructions one vertex runs (keeps lavapipe and the interpreter fast).
const MAX_COST: u64 = 6000;

/// Uniform sets per program and vertices per set.
pub const SETS: usize = 2;
pub const VERTICES: usize = 4;

/// Values of thresholds and per-vertex inputs used by conditions (so `cmp` goes both ways).
const SMALL: [f32; 6] = [-1.0, -0.5, 0.0, 0.5, 1.0, 2.0];

/// A `cmp`-flag condition: (refx, refy, op) as picasso's `parseCondExp` encodes it.
#[derive(Clone, Copy, Debug)]
struct Cond(bool, bool, u32);

#[derive(Clone, Debug)]
enum IfCond {
    /// `ifc` on the current flags, after an optional `cmp` (None: reuse the flags).
    Flags(Option<Cmp>, Cond),
    /// `ifu bN`.
    Bool(u32),
}

/// A `cmp` and how its operands depend on the vertex.
#[derive(Clone, Debug)]
struct Cmp {
    /// Words placed before the `cmp` (the `mov r14, cN` of a uniform comparison).
    setup: Option<(String, String)>,
    kinds: String,
    wide: String,
    narrow: String,
}

#[derive(Clone, Copy, Debug)]
enum CallKind {
    Call,
    Callc(Cond),
    Callu(u32),
}

#[derive(Clone, Debug)]
enum JmpKind {
    Jmpc(Cond),
    /// `jmpu [!]bN`.
    Jmpu(u32, bool),
}

#[derive(Clone, Debug)]
enum Node {
    /// One data instruction (format 1 / 1i / 1u / mad text form).
    Op {
        name: &'static str,
        dst: String,
        srcs: Vec<String>,
        rel: Rel,
    },
    /// `r8 += c<88 + k>` (path signature).
    Sig(u32),
    /// `mova a0.?, c80..c87` and an a0-relative read.
    Mova {
        mask: &'static str,
        from: u32,
        read: Box<Node>,
    },
    Cmp(Cmp),
    If {
        cond: IfCond,
        then: Vec<Node>,
        els: Option<Vec<Node>>,
    },
    Loop {
        int_id: u32,
        body: Vec<Node>,
    },
    /// `breakc` (after an optional `cmp`) or `break` (None).
    Break(Option<(Option<Cmp>, Cond)>),
    Call {
        kind: CallKind,
        proc_id: usize,
    },
    /// A forward jump over `skipped`, landing on `target` (in the same block).
    Jmp {
        kind: JmpKind,
        skipped: Vec<Node>,
        target: Box<Node>,
    },
    /// `ifc { …; jmp past the else; … } else { … }; <target>`: the jump leaves the then-part.
    JmpOutOfThen {
        cond: IfCond,
        then_a: Vec<Node>,
        kind: JmpKind,
        then_b: Vec<Node>,
        els: Vec<Node>,
        target: Box<Node>,
    },
    /// The output copies and `end`.
    End,
}

struct Proc {
    body: Vec<Node>,
    /// Deepest nesting inside, IF / CALL / LOOP stack entries it needs, instructions it runs at
    /// most.
    depth: u32,
    ifs: usize,
    calls: usize,
    loops: usize,
    cost: u64,
    ends: bool,
}

/// Static counts of one program (from the generator) and dynamic ones (from the reference
/// interpreter over all its vertices).
#[derive(Clone, Debug, Default)]
pub struct ShapedStats {
    /// Deepest nesting of if / else / loop / call levels on one path.
    pub depth: u32,
    /// Programs nested at least [`MIN_DEEP`] deep.
    pub deep: u64,
    pub words: u32,
    pub procs: usize,
    /// Static shapes placed.
    pub breaks_in_ifs: usize,
    pub calls_in_ifs: usize,
    pub ends_in_procs: usize,
    pub jumps_over_else: usize,
    pub jumps_out_of_then: usize,
    /// Dynamic, summed over the vertices: ifc/ifu taken / not taken; loop exits by break;
    /// calls made; loops entered with count 0 / more; vertices whose run ended inside a call;
    /// deepest IF / CALL / LOOP stacks; pushes onto a full stack.
    pub ifs_taken: u64,
    pub ifs_not_taken: u64,
    pub loop_breaks: u64,
    pub calls: u64,
    pub loops_count0: u64,
    pub loops_more: u64,
    pub ends_in_calls: u64,
    pub max_stack: [usize; 3],
    pub overwrites: u64,
    /// Conditional flow instructions (address) whose first outcome differed between two
    /// vertices of one uniform set / agreed on all of them.
    pub divergent_sites: u64,
    pub uniform_sites: u64,
    /// Vertices whose run was undetermined (inexact value at a branch) or hit the step limit.
    pub undetermined: u64,
}

impl ShapedStats {
    pub fn merge(&mut self, o: &ShapedStats) {
        self.depth = self.depth.max(o.depth);
        self.deep += o.deep;
        self.words = self.words.max(o.words);
        self.procs += o.procs;
        self.breaks_in_ifs += o.breaks_in_ifs;
        self.calls_in_ifs += o.calls_in_ifs;
        self.ends_in_procs += o.ends_in_procs;
        self.jumps_over_else += o.jumps_over_else;
        self.jumps_out_of_then += o.jumps_out_of_then;
        self.ifs_taken += o.ifs_taken;
        self.ifs_not_taken += o.ifs_not_taken;
        self.loop_breaks += o.loop_breaks;
        self.calls += o.calls;
        self.loops_count0 += o.loops_count0;
        self.loops_more += o.loops_more;
        self.ends_in_calls += o.ends_in_calls;
        for k in 0..3 {
            self.max_stack[k] = self.max_stack[k].max(o.max_stack[k]);
        }
        self.overwrites += o.overwrites;
        self.divergent_sites += o.divergent_sites;
        self.uniform_sites += o.uniform_sites;
        self.undetermined += o.undetermined;
    }
}

/// Generation context of one block.
#[derive(Clone, Copy)]
struct Ctx {
    /// Nesting depth so far.
    depth: u32,
    /// Stack entries in use on the way here (IF entries include stale ones already left
    /// behind, see [`G::stale`]).
    ifs: usize,
    calls: usize,
    loops: usize,
    /// Upper bound of how often this block runs per vertex.
    mult: u64,
    /// Inside a procedure (not main).
    in_proc: bool,
    /// IFs opened since the innermost loop (0: directly in the loop body), when in a loop.
    ifs_in_loop: Option<usize>,
    /// Main, outside every loop: a block that runs at most once.
    once: bool,
    /// Main, in a loop that is not nested in another loop: its breaks run at most once.
    top_loop: bool,
}

struct G<'r> {
    rng: &'r mut Rng,
    procs: Vec<Proc>,
    /// Upper bound of the stale IF entries left so far in main (breaks out of ifs, jumps out of
    /// then-parts), in program order.
    stale: usize,
    cost: u64,
    /// Most iterations of a loop over i0..i3 in any uniform set.
    iters: [u64; 4],
    nodes: usize,
    max_nodes: usize,
    stats: ShapedStats,
    mova_ok: bool,
}

const DATA: [&str; 6] = ["r0", "r1", "r2", "r3", "r4", "r5"];
const SWZ: [&str; 6] = ["", ".yxwz", ".xxyy", ".wzyx", ".zwxy", ".yyyy"];
const MASKS: [&str; 5] = ["", ".xy", ".zw", ".x", ".yzw"];

impl G<'_> {
    fn cond(&mut self) -> Cond {
        // picasso parseCondExp: refs start at 1, `!` clears; one flag → op 2 / 3.
        let (nx, ny) = (self.rng.chance(35), self.rng.chance(35));
        match self.rng.below(4) {
            0 => Cond(!nx, true, 2),
            1 => Cond(true, !ny, 3),
            2 => Cond(!nx, !ny, 1),
            _ => Cond(!nx, !ny, 0),
        }
    }

    fn kinds(&mut self) -> String {
        let k = |r: &mut Rng| *r.pick(&["eq", "ne", "lt", "le", "gt", "ge"]);
        format!("{} {}", k(self.rng), k(self.rng))
    }

    /// A `cmp`: uniform (two uniforms), per vertex (uniform vs input) or on data.
    fn cmp(&mut self) -> Cmp {
        let kinds = self.kinds();
        let t = format!("c{}{}", self.rng.below(12), self.swz());
        match self.rng.below(10) {
            0..=3 => Cmp { setup: Some(("r14".into(), format!("c{}{}", self.rng.below(12), self.swz()))), kinds, wide: t, narrow: "r14".into() },
            4..=7 => Cmp { setup: None, kinds, wide: t, narrow: format!("v{}{}", self.rng.below(4), self.swz()) },
            _ => Cmp { setup: None, kinds, wide: t, narrow: format!("{}{}", self.rng.pick(&DATA[..4]), self.swz()) },
        }
    }

    fn swz(&mut self) -> String {
        self.rng.pick(&SWZ).to_string()
    }

    /// A narrow source: a data register or input `v` (one input register per instruction).
    fn narrow(&mut self, v: u32) -> String {
        let neg = if self.rng.chance(20) { "-" } else { "" };
        let r = if self.rng.chance(35) { format!("v{v}") } else { self.rng.pick(&DATA).to_string() };
        format!("{neg}{r}{}", self.swz())
    }

    fn wide(&mut self, v: u32) -> String {
        if self.rng.chance(50) {
            let neg = if self.rng.chance(20) { "-" } else { "" };
            format!("{neg}c{}{}", 12 + self.rng.below(68), self.swz())
        } else {
            self.narrow(v)
        }
    }

    /// An exact data instruction (add, mul, mov, max, min, sge, slt, flr): its result is
    /// bit-exact, so data-dependent conditions stay decidable.
    fn data_op(&mut self, in_loop: bool) -> Node {
        let v = self.rng.below(8) as u32;
        let dst = format!("{}{}", self.rng.pick(&DATA), self.rng.pick(&MASKS));
        let roll = self.rng.below(100);
        if in_loop && roll < 15 {
            // aL-relative read (c[n + aL]).
            let n = self.rng.below(60);
            let b = self.narrow(v);
            return Node::Op { name: "add", dst, srcs: vec![format!("c{n}{}", self.swz()), b], rel: Rel::AL };
        }
        if roll < 22 && !in_loop {
            // aL after a loop (Azahar restores it only for nested loops).
            let n = self.rng.below(60);
            return Node::Op { name: "mov", dst, srcs: vec![format!("c{n}")], rel: Rel::AL };
        }
        if roll < 70 {
            let name = *self.rng.pick(&["add", "mul", "max", "min", "sge", "slt", "add"]);
            let (w, n) = (self.wide(v), self.narrow(v));
            Node::Op { name, dst, srcs: vec![w, n], rel: Rel::None }
        } else {
            let name = *self.rng.pick(&["mov", "flr", "mov"]);
            let w = self.wide(v);
            Node::Op { name, dst, srcs: vec![w], rel: Rel::None }
        }
    }

    /// A leaf: one or two data instructions and (mostly) a signature step.
    fn leaf(&mut self, cx: &Ctx, out: &mut Vec<Node>) {
        let in_loop = cx.ifs_in_loop.is_some();
        for _ in 0..self.rng.range(1, 2) {
            let n = if self.mova_ok && self.rng.chance(10) { self.mova() } else { self.data_op(in_loop) };
            out.push(n);
        }
        if self.rng.chance(85) {
            out.push(Node::Sig(self.rng.below(8) as u32));
        }
        self.charge(cx, 3);
    }

    fn mova(&mut self) -> Node {
        let mask = *self.rng.pick(&["r0.x", "r0.y", "r0.xy"]);
        let rel = match mask {
            "r0.x" => Rel::A0x,
            "r0.y" => Rel::A0y,
            _ => *self.rng.pick(&[Rel::A0x, Rel::A0y]),
        };
        let n = self.rng.below(70);
        let v = self.rng.below(8) as u32;
        let b = self.narrow(v);
        let dst = self.rng.pick(&DATA).to_string();
        Node::Mova { mask, from: 80 + self.rng.below(8) as u32, read: Box::new(Node::Op { name: "add", dst, srcs: vec![format!("c{n}"), b], rel }) }
    }

    fn charge(&mut self, cx: &Ctx, words: u64) {
        self.cost += cx.mult * words;
        self.nodes += 1;
    }

    /// Room for a construct that needs `ifs` / `calls` / `loops` more stack entries.
    fn fits(&self, cx: &Ctx, ifs: usize, calls: usize, loops: usize) -> bool {
        let stale = if cx.in_proc { 0 } else { self.stale };
        cx.ifs + stale + ifs <= IF_STACK && cx.calls + calls <= CALL_STACK && cx.loops + loops <= LOOP_STACK
    }

    fn budget_left(&self) -> bool {
        self.nodes < self.max_nodes && self.cost < MAX_COST
    }

    fn if_cond(&mut self) -> IfCond {
        if self.rng.chance(30) {
            IfCond::Bool(self.rng.below(16) as u32)
        } else {
            let c = if self.rng.chance(80) { Some(self.cmp()) } else { None };
            IfCond::Flags(c, self.cond())
        }
    }

    fn jmp_kind(&mut self) -> JmpKind {
        if self.rng.chance(50) {
            JmpKind::Jmpc(self.cond())
        } else {
            JmpKind::Jmpu(self.rng.below(16) as u32, self.rng.chance(50))
        }
    }

    /// A block of `n` statements; returns its nodes and the deepest nesting inside (relative).
    fn block(&mut self, cx: Ctx, n: usize) -> (Vec<Node>, u32) {
        let mut out = Vec::new();
        let mut deepest = 0;
        for _ in 0..n {
            deepest = deepest.max(self.stmt(cx, &mut out));
        }
        if out.is_empty() {
            self.leaf(&cx, &mut out);
        }
        (out, deepest)
    }

    /// One statement into `out`; returns the nesting it adds.
    fn stmt(&mut self, cx: Ctx, out: &mut Vec<Node>) -> u32 {
        if !self.budget_left() {
            self.leaf(&cx, out);
            return 0;
        }
        // Control flow is likely until the path is MIN_DEEP deep.
        let p_flow = if cx.depth < MIN_DEEP { 70 } else { 25 };
        if !self.rng.chance(p_flow) {
            if self.rng.chance(12) {
                let c = self.cmp();
                out.push(Node::Cmp(c));
                self.charge(&cx, 2);
            } else {
                self.leaf(&cx, out);
            }
            return 0;
        }
        // Procedures calling procedures: call chains up to the CALL stack's 4 entries.
        if cx.in_proc && cx.calls < CALL_STACK && self.rng.chance(20) {
            return self.gen_call(cx, out);
        }
        let roll = self.rng.below(100);
        let inner = |cx: &Ctx| Ctx { depth: cx.depth + 1, ..*cx };
        match roll {
            0..=29 if self.fits(&cx, 1, 0, 0) => self.gen_if(cx, out),
            30..=49 if self.fits(&cx, 0, 0, 1) => {
                // for iN … .end
                let int_id = self.rng.below(4) as u32;
                let it = self.iters[int_id as usize];
                if self.cost + cx.mult * it * 8 > MAX_COST {
                    self.leaf(&cx, out);
                    return 0;
                }
                let lcx =
                    Ctx { depth: cx.depth + 1, loops: cx.loops + 1, mult: cx.mult * it, ifs_in_loop: Some(0), top_loop: cx.once, once: false, ..cx };
                self.charge(&cx, 1);
                let mut body = Vec::new();
                let mut deepest = 0;
                if self.rng.chance(25) {
                    // while-shaped: the exit test first
                    body.push(self.breakc());
                }
                let n = self.rng.range(1, 3) as usize;
                for _ in 0..n {
                    deepest = deepest.max(self.stmt(lcx, &mut body));
                }
                if self.rng.chance(35) {
                    body.push(self.breakc());
                    if self.rng.chance(50) {
                        self.leaf(&lcx, &mut body);
                    }
                }
                out.push(Node::Loop { int_id, body });
                1 + deepest
            }
            50..=64 if cx.calls < CALL_STACK => self.gen_call(cx, out),
            65..=74 if cx.ifs_in_loop.is_some_and(|d| d > 0) && (cx.in_proc || cx.top_loop) && self.stale_ok(&cx) => {
                // break / breakc inside an if inside a loop (stale IF entries: see the module doc)
                let d = cx.ifs_in_loop.unwrap_or(0);
                self.stale += d;
                self.stats.breaks_in_ifs += 1;
                let b = if self.rng.chance(40) { Node::Break(None) } else { self.breakc() };
                self.charge(&cx, 2);
                out.push(b);
                0
            }
            75..=84 => {
                // forward jump over a block (sometimes a whole if-else)
                let kind = self.jmp_kind();
                let mut skipped = Vec::new();
                let mut deepest = 0;
                if self.fits(&cx, 1, 0, 0) && self.rng.chance(50) {
                    deepest = self.gen_if_else(inner(&cx), &mut skipped);
                    self.stats.jumps_over_else += 1;
                } else {
                    self.leaf(&cx, &mut skipped);
                }
                let mut t = Vec::new();
                self.leaf(&cx, &mut t);
                let target = Box::new(t.remove(0));
                out.push(Node::Jmp { kind, skipped, target });
                out.extend(t);
                deepest
            }
            85..=92 if cx.once && self.fits(&cx, 2, 0, 0) => {
                // ifc { …; jmp past the else; … } else { … }: leaves one stale IF entry
                self.stale += 1;
                self.stats.jumps_out_of_then += 1;
                let cond = self.if_cond();
                let icx = Ctx { depth: cx.depth + 1, ifs: cx.ifs + 1, once: false, ..cx };
                let (then_a, d1) = self.block(icx, 1);
                let kind = self.jmp_kind();
                let (then_b, d2) = self.block(icx, 1);
                let (els, d3) = self.block(icx, 1);
                let mut t = Vec::new();
                self.leaf(&cx, &mut t);
                let target = Box::new(t.remove(0));
                out.push(Node::JmpOutOfThen { cond, then_a, kind, then_b, els, target });
                out.extend(t);
                1 + d1.max(d2).max(d3)
            }
            93..=99 if cx.in_proc && self.fits(&cx, 1, 0, 0) => {
                // ifu / ifc { <outputs>; end }: a procedure ending the program
                let cond = self.if_cond();
                self.stats.ends_in_procs += 1;
                self.charge(&cx, 6);
                out.push(Node::If { cond, then: vec![Node::End], els: None });
                1
            }
            _ => {
                self.leaf(&cx, out);
                0
            }
        }
    }

    /// Whether a break out of `d` IFs still leaves room on the IF stack.
    fn stale_ok(&self, cx: &Ctx) -> bool {
        // In a procedure the loop may run once per call: no stale entries there (a break in
        // an if in a procedure is left out).
        !cx.in_proc && self.stale + cx.ifs + cx.ifs_in_loop.unwrap_or(0) < IF_STACK
    }

    fn breakc(&mut self) -> Node {
        let c = if self.rng.chance(75) { Some(self.cmp()) } else { None };
        Node::Break(Some((c, self.cond())))
    }

    fn if_ctx(cx: &Ctx) -> Ctx {
        Ctx { depth: cx.depth + 1, ifs: cx.ifs + 1, ifs_in_loop: cx.ifs_in_loop.map(|d| d + 1), ..*cx }
    }

    fn gen_if(&mut self, cx: Ctx, out: &mut Vec<Node>) -> u32 {
        if self.rng.chance(45) {
            return self.gen_if_else(cx, out);
        }
        let cond = self.if_cond();
        self.charge(&cx, 2);
        let n = self.rng.range(1, 3) as usize;
        let (then, d) = self.block(Self::if_ctx(&cx), n);
        out.push(Node::If { cond, then, els: None });
        1 + d
    }

    /// if-else, sometimes an else-if chain reusing one `cmp` (`ifc cmp.x … .else ifc cmp.y`).
    fn gen_if_else(&mut self, cx: Ctx, out: &mut Vec<Node>) -> u32 {
        let cond = self.if_cond();
        self.charge(&cx, 2);
        let icx = Self::if_ctx(&cx);
        let n = self.rng.range(1, 2) as usize;
        let (then, d1) = self.block(icx, n);
        let (els, d2) = if self.rng.chance(30) && self.fits(&icx, 1, 0, 0) {
            let c2 = match &cond {
                IfCond::Flags(_, _) => IfCond::Flags(None, self.cond()),
                IfCond::Bool(_) => self.if_cond(),
            };
            let (t2, d) = self.block(Self::if_ctx(&icx), 1);
            let (e2, e) = self.block(Self::if_ctx(&icx), 1);
            (vec![Node::If { cond: c2, then: t2, els: Some(e2) }], 1 + d.max(e))
        } else {
            let n = self.rng.range(1, 2) as usize;
            self.block(icx, n)
        };
        out.push(Node::If { cond, then, els: Some(els) });
        1 + d1.max(d2)
    }

    fn gen_call(&mut self, cx: Ctx, out: &mut Vec<Node>) -> u32 {
        // Reuse a procedure that fits here, or make a new one.
        let fits = |p: &Proc, g: &G| g.fits(&cx, p.ifs, p.calls + 1, p.loops) && g.cost + cx.mult * p.cost <= MAX_COST;
        let reuse = (0..self.procs.len()).filter(|&i| fits(&self.procs[i], self)).collect::<Vec<_>>();
        let proc_id = if !reuse.is_empty() && self.rng.chance(40) {
            *self.rng.pick(&reuse)
        } else {
            if self.procs.len() >= 4 {
                self.leaf(&cx, out);
                return 0;
            }
            let saved = (self.cost, self.stale);
            // the procedure's own context: stack use measured from zero, stale entries none
            let pcx = Ctx { depth: 0, ifs: 0, calls: 0, loops: 0, mult: 1, in_proc: true, ifs_in_loop: None, once: false, top_loop: false };
            let outer = (cx.ifs + if cx.in_proc { 0 } else { self.stale }, cx.calls + 1, cx.loops);
            // generate with the caller's stack use as the starting point
            let gcx = Ctx { ifs: outer.0, calls: outer.1, loops: outer.2, ..pcx };
            self.cost = 0;
            let n = self.rng.range(1, 3) as usize;
            let (body, d) = self.block(gcx, n);
            let ends = self.rng.chance(10);
            let p = Proc {
                depth: d,
                ifs: max_ifs(&body, &self.procs),
                calls: max_calls(&body, &self.procs),
                loops: max_loops(&body, &self.procs),
                cost: self.cost + 8,
                ends,
                body,
            };
            self.cost = saved.0;
            self.stale = saved.1;
            if ends {
                self.stats.ends_in_procs += 1;
            }
            self.procs.push(p);
            self.procs.len() - 1
        };
        let p = &self.procs[proc_id];
        let (depth, cost) = (p.depth, p.cost);
        let kind = match self.rng.below(3) {
            0 => CallKind::Call,
            1 => CallKind::Callc(self.cond()),
            _ => CallKind::Callu(self.rng.below(16) as u32),
        };
        if matches!(kind, CallKind::Callc(_)) && self.rng.chance(70) {
            let c = self.cmp();
            out.push(Node::Cmp(c));
        }
        if cx.ifs_in_loop.is_some_and(|d| d > 0) || cx.ifs > 0 {
            self.stats.calls_in_ifs += 1;
        }
        if self.cost + cx.mult * cost > MAX_COST {
            // too slow here: the procedure stays, uncalled from this site
            self.leaf(&cx, out);
            return 0;
        }
        self.cost += cx.mult * cost;
        self.nodes += 1;
        out.push(Node::Call { kind, proc_id });
        1 + depth
    }
}

/// IF entries a block pushes at most (nested ifs, through calls).
fn max_ifs(b: &[Node], procs: &[Proc]) -> usize {
    b.iter()
        .map(|n| match n {
            Node::If { then, els, .. } => 1 + max_ifs(then, procs).max(els.as_deref().map_or(0, |e| max_ifs(e, procs))),
            Node::JmpOutOfThen { then_a, then_b, els, .. } => 1 + max_ifs(then_a, procs).max(max_ifs(then_b, procs)).max(max_ifs(els, procs)),
            Node::Loop { body, .. } => max_ifs(body, procs),
            Node::Jmp { skipped, .. } => max_ifs(skipped, procs),
            Node::Call { proc_id, .. } => procs[*proc_id].ifs,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

fn max_calls(b: &[Node], procs: &[Proc]) -> usize {
    b.iter()
        .map(|n| match n {
            Node::If { then, els, .. } => max_calls(then, procs).max(els.as_deref().map_or(0, |e| max_calls(e, procs))),
            Node::JmpOutOfThen { then_a, then_b, els, .. } => max_calls(then_a, procs).max(max_calls(then_b, procs)).max(max_calls(els, procs)),
            Node::Loop { body, .. } => max_calls(body, procs),
            Node::Jmp { skipped, .. } => max_calls(skipped, procs),
            Node::Call { proc_id, .. } => 1 + procs[*proc_id].calls,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

fn max_loops(b: &[Node], procs: &[Proc]) -> usize {
    b.iter()
        .map(|n| match n {
            Node::If { then, els, .. } => max_loops(then, procs).max(els.as_deref().map_or(0, |e| max_loops(e, procs))),
            Node::JmpOutOfThen { then_a, then_b, els, .. } => max_loops(then_a, procs).max(max_loops(then_b, procs)).max(max_loops(els, procs)),
            Node::Loop { body, .. } => 1 + max_loops(body, procs),
            Node::Jmp { skipped, .. } => max_loops(skipped, procs),
            Node::Call { proc_id, .. } => procs[*proc_id].loops,
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

#[derive(Clone, Copy, PartialEq)]
enum Block {
    If,
    For,
    Proc,
}

/// picasso's placement: the code buffer, `lastWasEnd`, and the relocations of calls.
struct Em {
    a: Asm,
    last_was_end: bool,
    /// (call word, procedure) to patch with the procedure's (first word, size).
    relocs: Vec<(u32, usize)>,
    /// Previous word was a mova (errata: never two in a row).
    last_mova: bool,
}

impl Em {
    /// An instruction (`ProcessCommand` clears `lastWasEnd`).
    fn ins(&mut self, f: impl FnOnce(&mut Asm) -> u32) -> u32 {
        self.last_was_end = false;
        self.last_mova = false;
        f(&mut self.a)
    }

    fn last_op(&self) -> Option<u32> {
        self.a.code.last().map(|w| w >> 26)
    }

    fn last_is(&self, names: &[&str]) -> bool {
        self.last_op().is_some_and(|o| names.iter().any(|n| asm::opcode(n) == o))
    }

    fn pad(&mut self) {
        self.a.simple("nop");
    }

    /// `.else` of the if at `at`: the padding rule, then DEST = here.
    fn else_(&mut self, at: u32) -> u32 {
        if self.last_was_end {
            self.pad();
            self.last_was_end = false;
        } else if self.last_is(&["jmpc", "jmpu", "call", "callc", "callu"]) || self.a.here() - at < 2 {
            self.pad();
        }
        let here = self.a.here();
        self.a.patch(at, here, 0);
        here
    }

    /// `.end` of a block opened at `at` (for an if with an else, `else_at` is its else word).
    fn end(&mut self, kind: Block, at: u32, else_at: Option<u32>) {
        if self.last_was_end {
            self.pad();
            self.last_was_end = false;
        } else if self.last_is(&["jmpc", "jmpu", "call", "callc", "callu"])
            || (kind == Block::For && self.last_is(&["break", "breakc"]))
            || self.a.here() - at < if kind != Block::Proc { 2 } else { 1 }
        {
            self.pad();
        }
        let here = self.a.here();
        match kind {
            Block::For => {
                self.a.patch(at, here - 1, 0);
                self.last_was_end = true;
            }
            Block::If => {
                match else_at {
                    None => self.a.patch(at, here, 0),
                    Some(e) => self.a.patch(at, e, here - e),
                }
                self.last_was_end = true;
            }
            Block::Proc => {}
        }
    }

    fn cond_word(&mut self, name: &str, c: Cond) -> u32 {
        self.ins(|a| a.flowc(name, c.0, c.1, c.2, 0, 0))
    }

    fn cmp(&mut self, c: &Cmp) {
        if let Some((d, s)) = &c.setup {
            self.ins(|a| a.op("mov", d, &[s], Rel::None));
        }
        self.ins(|a| a.op("cmp", &c.kinds, &[&c.wide, &c.narrow], Rel::None));
    }

    fn if_word(&mut self, c: &IfCond) -> u32 {
        match c {
            IfCond::Flags(cmp, cond) => {
                if let Some(cmp) = cmp {
                    self.cmp(cmp);
                }
                self.cond_word("ifc", *cond)
            }
            IfCond::Bool(b) => self.ins(|a| a.flowu("ifu", *b, 0, 0)),
        }
    }

    fn jmp_word(&mut self, k: &JmpKind) -> u32 {
        match k {
            JmpKind::Jmpc(c) => self.cond_word("jmpc", *c),
            JmpKind::Jmpu(b, inv) => self.ins(|a| a.flowu("jmpu", *b, 0, u32::from(*inv))),
        }
    }

    fn patch_jump(&mut self, at: u32, to: u32) {
        let w = self.a.code[at as usize];
        self.a.patch(at, to, w & 1);
    }

    fn op(&mut self, name: &str, dst: &str, srcs: &[String], rel: Rel) {
        let s: Vec<&str> = srcs.iter().map(|x| x.as_str()).collect();
        self.ins(|a| a.op(name, dst, &s, rel));
    }

    fn block(&mut self, b: &[Node]) {
        for n in b {
            self.node(n);
        }
    }

    fn node(&mut self, n: &Node) {
        match n {
            Node::Op { name, dst, srcs, rel } => self.op(name, dst, srcs, *rel),
            Node::Sig(k) => {
                let lane = ["", ".x", ".y", ".xy"][(*k % 4) as usize];
                self.op("add", &format!("r8{lane}"), &[format!("c{}", 88 + k), "r8".into()], Rel::None)
            }
            Node::Mova { mask, from, read } => {
                if self.last_mova {
                    self.pad();
                }
                self.ins(|a| a.op("mova", mask, &[&format!("c{from}")], Rel::None));
                self.last_mova = true;
                self.node(read);
            }
            Node::Cmp(c) => self.cmp(c),
            Node::If { cond, then, els } => {
                let at = self.if_word(cond);
                self.block(then);
                let else_at = els.as_ref().map(|e| {
                    let w = self.else_(at);
                    self.block(e);
                    w
                });
                self.end(Block::If, at, else_at);
            }
            Node::Loop { int_id, body } => {
                let at = self.ins(|a| a.flowu("loop", *int_id, 0, 0));
                self.block(body);
                self.end(Block::For, at, None);
            }
            Node::Break(None) => {
                self.ins(|a| a.simple("break"));
            }
            Node::Break(Some((cmp, cond))) => {
                if let Some(c) = cmp {
                    self.cmp(c);
                }
                self.cond_word("breakc", *cond);
            }
            Node::Call { kind, proc_id } => {
                let at = match kind {
                    CallKind::Call => self.ins(|a| a.flowc("call", false, false, 0, 0, 0)),
                    CallKind::Callc(c) => self.cond_word("callc", *c),
                    CallKind::Callu(b) => self.ins(|a| a.flowu("callu", *b, 0, 0)),
                };
                self.relocs.push((at, *proc_id));
            }
            Node::Jmp { kind, skipped, target } => {
                let at = self.jmp_word(kind);
                self.block(skipped);
                let to = self.a.here();
                self.node(target);
                self.patch_jump(at, to);
            }
            Node::JmpOutOfThen { cond, then_a, kind, then_b, els, target } => {
                let at = self.if_word(cond);
                self.block(then_a);
                let j = self.jmp_word(kind);
                self.block(then_b);
                let e = self.else_(at);
                self.block(els);
                self.end(Block::If, at, Some(e));
                let to = self.a.here();
                self.node(target);
                self.patch_jump(j, to);
            }
            Node::End => {
                self.outputs();
                self.ins(|a| a.simple("end"));
            }
        }
    }

    /// The output copies (o0 = r0, o1 = the signature, o2.xy = r1, o3.xy = r2).
    fn outputs(&mut self) {
        for (o, r) in [("o0", "r0"), ("o1", "r8"), ("o2.xy", "r1"), ("o3.xy", "r2")] {
            self.op("mov", o, &[r.into()], Rel::None);
        }
    }
}

/// Per-program uniform sets: c0..c11 thresholds from [`SMALL`], c12..c79 dyadic data, c80..c87
/// small integers (some fractional / negative) for `mova`, c88..c95 signature steps; i0..i3
/// loop counts 0..3 (0 often: one iteration), aL start 0..40, step 0..3; b random.
fn uniform_set(rng: &mut Rng) -> State {
    let mut s = State::default();
    for k in 0..96 {
        s.c[k] = match k {
            0..=11 => std::array::from_fn(|_| *rng.pick(&SMALL)),
            80..=87 => std::array::from_fn(|_| rng.range(-6, 30) as f32 + *rng.pick(&[0.0, 0.0, 0.5, -0.25])),
            88..=95 => {
                let j = (k - 88) as f32;
                [2f32.powi(k as i32 - 88), j + 1.0, 1.0, j * j + 1.0]
            }
            _ => std::array::from_fn(|_| if rng.chance(30) { *rng.pick(&SMALL) } else { rng.dyadic(2, 4) }),
        };
    }
    for k in 0..4 {
        let count = if rng.chance(40) { 0 } else { rng.range(1, 3) as u8 };
        s.i[k] = [count, rng.range(0, 40) as u8, rng.range(0, 3) as u8, 0];
    }
    s.b = rng.below(65536) as u16;
    s
}

fn vertex(rng: &mut Rng, u: &State) -> State {
    let mut s = u.clone();
    for k in 0..8 {
        s.v[k] = std::array::from_fn(|_| if k < 4 || rng.chance(40) { *rng.pick(&SMALL) } else { rng.dyadic(2, 4) });
    }
    s
}

pub fn reproduce_command(seed: u64, index: u64) -> String {
    format!("SHREC_FUZZ_SEED={seed} SHREC_FUZZ_ONLY={index} SHREC_FUZZ_SHAPED=1 cargo test --release --test verify_pica -- --ignored fuzz_one --nocapture")
}

/// Compiler-shaped program `index` of run `seed`, its cases (two uniform sets × four vertices)
/// and its statistics.
pub fn shaped_program_and_stats(seed: u64, index: u64) -> (TestProgram, ShapedStats) {
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0x100_0000_01B3) ^ 0x5049_4341);
    let sets: Vec<State> = (0..SETS).map(|_| uniform_set(&mut rng)).collect();
    let iters = std::array::from_fn(|k| sets.iter().map(|s| u64::from(s.i[k][0]) + 1).max().unwrap_or(1));
    let max_nodes = rng.range(8, 24) as usize;
    let mut g = G { rng: &mut rng, procs: vec![], stale: 0, cost: 0, iters, nodes: 0, max_nodes, stats: ShapedStats::default(), mova_ok: true };
    let cx = Ctx { depth: 0, ifs: 0, calls: 0, loops: 0, mult: 1, in_proc: false, ifs_in_loop: None, once: true, top_loop: false };
    let n = g.rng.range(3, 6) as usize;
    let (main, depth) = g.block(cx, n);
    let mut stats = std::mem::take(&mut g.stats);
    stats.depth = depth;
    stats.deep = u64::from(depth >= MIN_DEEP);
    stats.procs = g.procs.len();
    let procs = std::mem::take(&mut g.procs);
    // Placement: main and the procedures in a random order (main need not be at word 0).
    let mut order: Vec<Option<usize>> = (0..procs.len()).map(Some).chain([None]).collect();
    for i in (1..order.len()).rev() {
        let j = g.rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut em = Em { a: Asm::default(), last_was_end: false, relocs: vec![], last_mova: false };
    let mut ranges = vec![(0u32, 0u32); procs.len()];
    let mut main_at = 0;
    for o in order {
        let at = em.a.here();
        match o {
            None => {
                main_at = at;
                em.block(&main);
                em.outputs();
                em.ins(|a| a.simple("end"));
            }
            Some(p) => {
                em.block(&procs[p].body);
                if procs[p].ends {
                    em.outputs();
                    em.ins(|a| a.simple("end"));
                }
                em.end(Block::Proc, at, None);
                ranges[p] = (at, em.a.here() - at);
            }
        }
    }
    for &(at, p) in &em.relocs {
        em.a.patch(at, ranges[p].0, ranges[p].1);
    }
    stats.words = em.a.here();
    assert!(stats.words <= MAX_WORDS, "shaped program of {} words", stats.words);
    let bytes = dvlb_multi(&em.a, &[Dvle { main: main_at, outputs: OUTPUTS.to_vec(), ..Dvle::default() }]);
    let cases: Vec<State> = sets.iter().flat_map(|u| (0..VERTICES).map(|_| vertex(g.rng, u)).collect::<Vec<_>>()).collect();
    dynamic_stats(&bytes, &cases, &mut stats);
    let t = TestProgram {
        name: format!("compiler-shaped seed {seed} program {index}"),
        bytes,
        dvle: 0,
        cases,
        reproduce: reproduce_command(seed, index),
    };
    (t, stats)
}

/// Compiler-shaped program `index` of run `seed`.
pub fn shaped_program(seed: u64, index: u64) -> TestProgram {
    shaped_program_and_stats(seed, index).0
}

/// Runs the reference interpreter over the cases for the dynamic counts of [`ShapedStats`].
fn dynamic_stats(bytes: &[u8], cases: &[State], st: &mut ShapedStats) {
    let Ok(p) = shrec::formats::pica::dvlb::parse_program(bytes) else { return };
    let runs: Vec<interp::Result> = cases.iter().map(|c| interp::run(&p, 0, c)).collect();
    for r in &runs {
        if r.undetermined {
            st.undetermined += 1;
        }
        let f = &r.flow;
        for &(_, op, taken) in &f.branches {
            if op == "ifc" || op == "ifu" {
                if taken {
                    st.ifs_taken += 1
                } else {
                    st.ifs_not_taken += 1
                }
            }
        }
        st.loop_breaks += u64::from(f.breaks);
        st.calls += u64::from(f.calls);
        st.loops_count0 += u64::from(f.loops[0]);
        st.loops_more += u64::from(f.loops[1]);
        st.ends_in_calls += u64::from(f.end_in_call);
        for k in 0..3 {
            st.max_stack[k] = st.max_stack[k].max(f.max_stack[k]);
        }
        st.overwrites += u64::from(f.overwrites);
    }
    // Per uniform set: the first outcome of each conditional flow instruction per vertex.
    for set in runs.chunks(VERTICES) {
        let mut sites: std::collections::BTreeMap<u32, (bool, bool)> = Default::default();
        for r in set.iter().filter(|r| !r.undetermined) {
            let mut seen = std::collections::BTreeSet::new();
            for &(pc, _, taken) in &r.flow.branches {
                if seen.insert(pc) {
                    let e = sites.entry(pc).or_default();
                    if taken {
                        e.0 = true
                    } else {
                        e.1 = true
                    }
                }
            }
        }
        for (t, nt) in sites.values() {
            if *t && *nt {
                st.divergent_sites += 1
            } else {
                st.uniform_sites += 1
            }
        }
    }
}
