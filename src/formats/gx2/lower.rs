//! Latte → IR.
//!
//! Conventions (also in shader_common.h, GX2 section, and docs/gx2.md):
//! - Registers hold raw 32-bit patterns: every GPR is an IR temp (`float4`) used as a container
//!   of bits; integer ops go through `asuint`/`asfloat` (`Expr::Int*`), never through float math.
//! - Temps: R0-R127 = temps 0-127; PV/PS double-buffered in 128-131; AR 132 (as float integer
//!   values); state 133 (.x active, .y predicate, .z AL, .w pending exec mask); the
//!   execution-mask stack 134..165; TEX scratch 165; gradients 166/167; bounded-loop counters
//!   and saved AL 168.. (one per LOOP_START/_NO_AL nesting level).
//! - One invocation = one lane, so the execution mask is a per-invocation flag: every clause and
//!   export runs under `if (active)`; PUSH/POP/ELSE save/restore/invert it through a stack whose
//!   depth is static at every CF instruction; loops are IR loops (LOOP_BREAK / ALU_BREAK break,
//!   LOOP_CONTINUE / ALU_CONTINUE continue). The stack steps of PUSH / POP / ELSE / JUMP and
//!   the ALU push / pop / else forms come from the table in [`super::cf_stack`]. A lane follows
//!   the fall-through path of every jump (a jump is taken only when no lane of the wave is
//!   active); each jump's [`JumpCheck`] proves that path ends where the taken jump would, and a
//!   program whose jumps do not meet it is rejected.
//! - ALU groups: all slots read the pre-group state; results go to the new PV/PS first, then to
//!   their destination GPRs (so reads-before-writes inside a group hold).

use super::cf_stack::{self, JumpCheck, StackEffect, Step};
use super::error::{Gx2Error, Opcode};
use super::isa::{self, AluCfOp, AluGroup, AluInst, AluOp, AluSrc, Cf, CfOp, Clause, ExpOp, Kcache, Program, TexInst, TexOp};
use super::shader_struct::{sampler_type, Gx2Shader, SamplerDecl, ShaderKind, MODE_UNIFORM_BLOCK};
use crate::formats::{cube, Family, ShaderError};
use crate::ir::build::*;
use crate::ir::*;

mod gs;

const PV: [u32; 2] = [128, 130];
const PS: [u32; 2] = [129, 131];
const AR: u32 = 132;
const ST: u32 = 133;
const STACK: u32 = 134;
const STACK_MAX: u32 = 32;
const TEX_TMP: u32 = 165;
const GRAD_H: u32 = 166;
const GRAD_V: u32 = 167;
/// Bounded-loop state, one temp per nesting level: .x completed iterations, .y AL outside.
const LOOP_TMP: u32 = 168;
const LOOP_MAX: u32 = 8;
const TEMP_COUNT: u32 = LOOP_TMP + LOOP_MAX;

/// Register-file / binding layout (see shader_common.h, GX2 section).
pub struct Layout;
impl Layout {
    /// Vulkan binding of resource `r` of stage `stage` (0 VS, 1 PS, 2 GS): `stage * 64 + r`
    /// with r = 0 register file, 1 + L uniform block at location L (L < 15), 16 + unit textures,
    /// 40 + id samplers.
    pub const VK_STAGE_STRIDE: u32 = 64;
    pub const VK_BLOCK_BASE: u32 = 1;
    pub const VK_TEXTURE_BASE: u32 = 16;
    pub const VK_SAMPLER_BASE: u32 = 40;
}

fn stage_no(k: ShaderKind) -> u32 {
    match k {
        ShaderKind::Vertex => 0,
        ShaderKind::Pixel => 1,
        ShaderKind::Geometry => 2,
    }
}

fn t(i: u32) -> RegRef {
    RegRef::fixed(RegFile::Temp, i)
}
fn rd(i: u32, lane: u8) -> Expr {
    read(RegFile::Temp, i, [lane; 4])
}
fn rd4(i: u32) -> Expr {
    read(RegFile::Temp, i, XYZW)
}
fn assign(reg: RegRef, mask: u8, value: Expr) -> Stmt {
    Stmt::Assign { dst: Dst { reg, mask }, value, saturate: false }
}
fn lit(v: f32) -> Expr {
    Expr::Literal([v; 4])
}
fn is_set(i: u32, lane: u8) -> Cond {
    Cond::Compare(CmpOp::Ne, rd(i, lane), lit(0.0))
}
fn active() -> Cond {
    is_set(ST, 0)
}
fn bits(v: u32) -> Expr {
    Expr::Bits([v; 4])
}

struct L<'a> {
    s: &'a Gx2Shader,
    prog: &'a Program,
    m: Module,
    pv: usize,
    depth: u32,
    /// block location → const buffer index
    blocks: Vec<(u32, u32)>,
    regfile: Option<u32>,
    /// (resource, sampler) → texture index
    tex: Vec<((u32, u32), u32)>,
    /// Param export index → output index
    outputs: Vec<(String, u32)>,
    calls: u32,
    /// Nesting level of bounded (LOOP_START / _NO_AL) loops.
    loops: u32,
    /// Geometry shader state (ring model, copy program).
    gs: Option<gs::GsCtx>,
    /// Jumps whose target the fall-through path has not reached yet (see [`JumpCheck`]).
    jumps: Vec<JumpCheck>,
    /// Loops of any kind open at the current CF.
    loop_nest: u32,
}

/// A jump whose fall-through path does not end where the taken jump would: its effect would
/// depend on the other lanes of the wave, which a per-lane translation cannot know.
fn jump_mismatch(j: &JumpCheck, pc: u32, why: &str) -> ShaderError {
    structure(
        Some(pc),
        format!(
            "the jump at CF {:02} to CF {:02} (taken when no lane is active) is not exact per lane: the code it skips {why} (CF {pc:02})",
            j.from, j.target
        ),
    )
}

/// A translated opcode in a form or place the translation does not cover; `what` starts with
/// the mnemonic.
pub(crate) fn unsupported(op: impl Into<Opcode>, what: impl std::fmt::Display, pc: u32) -> ShaderError {
    Gx2Error::Unsupported { pc, op: op.into(), what: what.to_string() }.into()
}

/// An opcode the table marks rejected (the reason comes from the table).
fn rejected(op: impl Into<Opcode>, pc: u32) -> ShaderError {
    let op = op.into();
    Gx2Error::Rejected { pc, op, reason: op.status().reason().unwrap_or("not translated") }.into()
}

/// A program structure the lowering cannot give one meaning.
pub(crate) fn structure(pc: Option<u32>, what: impl std::fmt::Display) -> ShaderError {
    Gx2Error::Structure { pc, what: what.to_string() }.into()
}

pub fn lower(s: &Gx2Shader) -> Result<Module, ShaderError> {
    let prog = isa::decode(&s.program)?;
    let stage = s.kind.stage();
    let m = Module {
        family: Family::Gx2,
        stage,
        inputs: Vec::new(),
        outputs: Vec::new(),
        const_buffers: Vec::new(),
        textures: Vec::new(),
        temps: TempFile { count: TEMP_COUNT, prefix: "R".into(), indexable: false },
        body: Vec::new(),
        header_comments: vec![format!(
            "GX2 {} shader, {} uniform mode, {} GPRs",
            s.kind.name(),
            if s.mode() == MODE_UNIFORM_BLOCK { "block" } else { "register" },
            s.num_gprs()
        )],
        ext: Default::default(),
    };
    let mut l = L {
        s,
        prog: &prog,
        m,
        pv: 0,
        depth: 0,
        blocks: Vec::new(),
        regfile: None,
        tex: Vec::new(),
        outputs: Vec::new(),
        calls: 0,
        loops: 0,
        gs: None,
        jumps: Vec::new(),
        loop_nest: 0,
    };
    let mut body = Vec::new();
    body.push(assign(t(ST), 0xF, Expr::Literal([1.0, 0.0, 0.0, 1.0])));
    if s.kind == ShaderKind::Pixel {
        l.pixel_inputs(&mut body);
    }
    if s.kind == ShaderKind::Geometry {
        l.gs_setup(&mut body)?;
    } else if s.kind == ShaderKind::Vertex && super::ring::writes_ring(&prog) {
        if prog.cfs.iter().any(|(c, _)| matches!(c.cf, Cf::Export { op: ExpOp::EXP | ExpOp::EXP_DONE, .. })) {
            return Err(structure(None, "vertex shader writes both MEM_RING (as ES) and EXP exports: not translated"));
        }
        l.m.header_comments.push("ES: MEM_RING slot s → output ring<s> (location s), read by the geometry shader".into());
    }
    let n = prog.main_len;
    l.cf_range(0, n, &mut body)?;
    l.arrive_at_end(n as u32)?;
    l.m.body = body;
    Ok(l.m)
}

/// Metadata words: per sampler var, (location, type).
pub fn meta(s: &Gx2Shader) -> Vec<u32> {
    s.sampler_vars.iter().flat_map(|v| [v.location, v.ty]).collect()
}

impl L<'_> {
    fn binding(&self, r: u32, dx_register: u32) -> Binding {
        let st = stage_no(self.s.kind);
        Binding { dx_register, dx_space: st, vk_set: 0, vk_binding: st * Layout::VK_STAGE_STRIDE + r }
    }

    fn pixel_inputs(&mut self, body: &mut Vec<Stmt>) {
        let s = self.s;
        let n = s.reg(0x10).min(32);
        for i in 0..n {
            let cntl = s.reg(0x14 + 4 * i as usize);
            let sem = cntl & 0xFF;
            let idx = self.m.inputs.len() as u32;
            self.m.inputs.push(IoVar { name: format!("v{i}"), semantic: Semantic::Texcoord(sem), components: 4 });
            body.push(assign(t(i), 0xF, read(RegFile::Input, idx, XYZW)));
        }
        let ctl0 = s.reg(0x08);
        if ctl0 >> 8 & 1 != 0 {
            let gpr = ctl0 >> 10 & 0x1F;
            let idx = self.m.inputs.len() as u32;
            self.m.inputs.push(IoVar { name: "vpos".into(), semantic: Semantic::Position, components: 4 });
            body.push(assign(t(gpr), 0xF, read(RegFile::Input, idx, XYZW)));
        }
    }

    fn call_fs(&mut self, body: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let s = self.s;
        let nsem = s.reg(0x40).min(32);
        let idx = self.m.inputs.len() as u32;
        self.m.inputs.push(IoVar { name: "vid".into(), semantic: Semantic::VertexId, components: 4 });
        let iid = idx + 1;
        self.m.inputs.push(IoVar { name: "iid".into(), semantic: Semantic::InstanceId, components: 4 });
        body.push(assign(t(0), 0xF, Expr::Bits([0; 4])));
        body.push(assign(t(0), 0x1, read(RegFile::Input, idx, XYZW)));
        body.push(assign(t(0), 0x8, Expr::IntUnary(IntUnOp::FloatToUint, Box::new(read(RegFile::Input, iid, [0; 4])))));
        for a in &s.attrib_vars {
            let slot = (0..nsem).find(|&i| s.reg(0x44 + 4 * i as usize) & 0xFF == a.location);
            let Some(i) = slot else { continue };
            // matrices take consecutive locations / registers
            let regs = match a.ty {
                21..=23 => 2,
                24..=26 => 3,
                27..=29 => 4,
                _ => 1,
            };
            for k in 0..regs {
                let loc = a.location + k;
                let Some(j) = (0..nsem).find(|&j| s.reg(0x44 + 4 * j as usize) & 0xFF == loc) else { continue };
                let _ = i;
                let idx = self.m.inputs.len() as u32;
                self.m.inputs.push(IoVar { name: format!("a{loc}"), semantic: Semantic::Texcoord(loc), components: 4 });
                body.push(assign(t(j + 1), 0xF, read(RegFile::Input, idx, XYZW)));
            }
        }
        Ok(())
    }

    fn cf_range(&mut self, start: usize, end: usize, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let mut i = start;
        while i < end {
            let (cf, clause) = &self.prog.cfs[i];
            let pc = cf.pc;
            self.arrive(pc)?;
            match &cf.cf {
                Cf::Alu { op, kcache, .. } => {
                    let Clause::Alu(groups) = clause else { unreachable!() };
                    let op = *op;
                    if op.status().is_rejected() {
                        return Err(rejected(op, pc));
                    }
                    let alu_name = op.name();
                    let effect = cf_stack::effect(alu_name);
                    if let Some(e) = effect.filter(|e| e.timing == cf_stack::Timing::BeforeClause) {
                        self.stack_steps(e, 0, 0, pc, out)?;
                    }
                    let mut body = Vec::new();
                    let kc = *kcache;
                    let groups = groups.clone();
                    let mut exec_update = false;
                    for g in &groups {
                        exec_update |= self.group(g, &kc, pc, &mut body)?;
                    }
                    if exec_update {
                        body.push(assign(t(ST), 1, rd(ST, 3)));
                    }
                    out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
                    if let Some(e) = effect.filter(|e| e.timing == cf_stack::Timing::AfterClause) {
                        self.stack_steps(e, 0, 0, pc, out)?;
                    }
                    if matches!(op, AluCfOp::ALU_CONTINUE | AluCfOp::ALU_BREAK) {
                        // they wake (continue) or retire (break) lanes that are inactive, which
                        // a skipped region must not do
                        self.inactive_lanes_change(alu_name, pc)?;
                    }
                    match op {
                        AluCfOp::ALU | AluCfOp::ALU_PUSH_BEFORE | AluCfOp::ALU_POP_AFTER | AluCfOp::ALU_POP2_AFTER | AluCfOp::ALU_ELSE_AFTER => {}
                        AluCfOp::ALU_EXT => return Err(rejected(op, pc)),
                        AluCfOp::ALU_CONTINUE => out.push(Stmt::If {
                            cond: Cond::Not(Box::new(active())),
                            then_body: vec![assign(t(ST), 1, lit(1.0)), Stmt::Continue],
                            else_body: vec![],
                        }),
                        AluCfOp::ALU_BREAK => {
                            out.push(Stmt::If { cond: Cond::Not(Box::new(active())), then_body: vec![Stmt::Break], else_body: vec![] })
                        }
                    }
                }
                Cf::Export { op: ExpOp::MEM_RING, .. } if self.s.kind != ShaderKind::Pixel => {
                    let c = cf.cf.clone();
                    self.mem_ring(&c, pc, out)?;
                }
                Cf::Export { op, ty, array_base, rw_gpr, rw_rel, sel, burst_count, .. } => {
                    match op {
                        ExpOp::EXP | ExpOp::EXP_DONE => {}
                        ExpOp::MEM_RING => return Err(unsupported(*op, "MEM_RING in a pixel shader", pc)),
                        ExpOp::MEM_STREAM0
                        | ExpOp::MEM_STREAM1
                        | ExpOp::MEM_STREAM2
                        | ExpOp::MEM_STREAM3
                        | ExpOp::MEM_SCRATCH
                        | ExpOp::MEM_REDUCTION
                        | ExpOp::MEM_EXPORT => return Err(rejected(*op, pc)),
                    }
                    if *rw_rel {
                        return Err(unsupported(*op, "EXP with relative GPR", pc));
                    }
                    let mut body = Vec::new();
                    for b in 0..=*burst_count {
                        self.export(*ty, array_base + b, rw_gpr + b, sel, pc, &mut body)?;
                    }
                    out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
                }
                Cf::Normal { op, pop_count, cond, addr, cf_const, .. } => {
                    let op = *op;
                    let name = op.name();
                    if op.status().is_rejected() {
                        return Err(rejected(op, pc));
                    }
                    if *cond >= 2 && !matches!(op, CfOp::NOP | CfOp::END_PROGRAM | CfOp::WAIT_ACK) {
                        return Err(unsupported(
                            op,
                            format!(
                                "{name} with CND({}): boolean constants are run-time state",
                                ["ACTIVE", "FALSE", "BOOL", "NOT_BOOL"][*cond as usize]
                            ),
                            pc,
                        ));
                    }
                    if *pop_count != 0 && !cf_stack::pop_count_allowed(name) {
                        return Err(unsupported(
                            op,
                            format!("{name} with POP_CNT({pop_count}): no two sources state what a pop count does there"),
                            pc,
                        ));
                    }
                    use CfOp::*;
                    match op {
                        JUMP | PUSH | PUSH_ELSE | ELSE | POP | POP_JUMP | POP_PUSH | POP_PUSH_ELSE => {
                            // the stack ops: docs/gx2-control-flow.md, one cf_stack row each
                            let e = cf_stack::effect(name).ok_or_else(|| structure(Some(pc), format!("{name} has no cf_stack row")))?;
                            self.stack_steps(e, *pop_count, *addr, pc, out)?;
                        }
                        NOP | END_PROGRAM | WAIT_ACK => {}
                        TEX | TEX_ACK => {
                            let Clause::Tex(ts) = clause else { unreachable!() };
                            let mut body = Vec::new();
                            for x in ts.clone() {
                                self.tex(&x, pc, &mut body)?;
                            }
                            out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
                        }
                        VTX if self.gs.is_some() => {
                            let Clause::Vtx(vs) = clause else { unreachable!() };
                            let vs = vs.clone();
                            self.gs_vtx_clause(&vs, pc, out)?;
                        }
                        VTX => return Err(unsupported(op, format!("{name} (vertex fetch clause outside the fetch shader and the GS ring)"), pc)),
                        VTX_TC | VTX_ACK | VTX_TC_ACK => return Err(rejected(op, pc)),
                        EMIT_VERTEX | EMIT_CUT_VERTEX | CUT_VERTEX => {
                            if self.gs.is_none() {
                                return Err(unsupported(op, format!("{name} outside a geometry shader"), pc));
                            }
                            self.gs_emit(op != CUT_VERTEX, op != EMIT_VERTEX, out)
                        }
                        CALL_FS => {
                            if self.s.kind != ShaderKind::Vertex {
                                return Err(unsupported(op, "CALL_FS outside a vertex shader", pc));
                            }
                            self.call_fs(out)?;
                        }
                        LOOP_START | LOOP_START_DX10 | LOOP_START_NO_AL => {
                            // find the matching LOOP_END
                            let mut nest = 0;
                            let mut j = i + 1;
                            let endi = loop {
                                if j >= end {
                                    return Err(structure(Some(pc), format!("{name} at CF {pc:02} has no LOOP_END")));
                                }
                                if let Cf::Normal { op: o, .. } = self.prog.cfs[j].0.cf {
                                    if matches!(o, LOOP_START | LOOP_START_DX10 | LOOP_START_NO_AL) {
                                        nest += 1;
                                    } else if o == LOOP_END {
                                        if nest == 0 {
                                            break j;
                                        }
                                        nest -= 1;
                                    }
                                }
                                j += 1;
                            };
                            let _ = addr;
                            self.push(out)?;
                            let saved = self.depth;
                            let mut body = vec![Stmt::If { cond: Cond::Not(Box::new(active())), then_body: vec![Stmt::Break], else_body: vec![] }];
                            self.loop_nest += 1;
                            if op == LOOP_START_DX10 {
                                let r = self.cf_range(i + 1, endi, &mut body);
                                self.loop_nest -= 1;
                                r?;
                                out.push(Stmt::Loop { body });
                            } else {
                                // integer loop constant i{cf_const}: count b0-11, init b12-23, inc b24-31
                                let lv = self.s.loop_vars.iter().find(|v| v.offset == *cf_const).ok_or_else(|| {
                                    unsupported(op, format!("{name} with loop constant i{cf_const}, which is not in the shader's loop vars"), pc)
                                })?;
                                // INIT (12 bits) and INC (8 bits) are signed (docs/gx2.md: loop constants)
                                let (count, init, inc) =
                                    (lv.value & 0xFFF, ((lv.value >> 12 & 0xFFF) << 20) as i32 >> 20, (lv.value >> 24) as u8 as i8 as i32);
                                if self.loops >= LOOP_MAX {
                                    return Err(structure(Some(pc), format!("{name} at CF {pc:02}: bounded loops nested deeper than {LOOP_MAX}")));
                                }
                                // own counter per nesting level (.x iterations done, .y AL outside)
                                let counter = LOOP_TMP + self.loops;
                                self.loops += 1;
                                out.push(assign(t(counter), 1, lit(0.0)));
                                out.push(assign(t(counter), 2, rd(ST, 2)));
                                let mut head = vec![Stmt::If {
                                    cond: Cond::Compare(CmpOp::Ge, rd(counter, 0), lit(count as f32)),
                                    then_body: vec![Stmt::Break],
                                    else_body: vec![],
                                }];
                                if op == LOOP_START {
                                    // AL = INIT on the first iteration, + INC at every LOOP_END
                                    head.push(assign(t(ST), 4, bin(BinOp::Add, lit(init as f32), bin(BinOp::Mul, rd(counter, 0), lit(inc as f32)))));
                                }
                                head.push(assign(t(counter), 1, bin(BinOp::Add, rd(counter, 0), lit(1.0))));
                                body.splice(0..0, head);
                                let r = self.cf_range(i + 1, endi, &mut body);
                                self.loops -= 1;
                                self.loop_nest -= 1;
                                r?;
                                out.push(Stmt::Loop { body });
                                // the loop stack restores the enclosing loop's AL
                                out.push(assign(t(ST), 4, rd(counter, 1)));
                            }
                            self.depth = saved;
                            let end_pc = self.prog.cfs[endi].0.pc;
                            self.arrive(end_pc)?;
                            self.pop(1, end_pc, out)?;
                            i = endi + 1;
                            continue;
                        }
                        LOOP_END => return Err(structure(Some(pc), format!("LOOP_END at CF {pc:02} without LOOP_START"))),
                        LOOP_CONTINUE => out.push(Stmt::If { cond: active(), then_body: vec![Stmt::Continue], else_body: vec![] }),
                        LOOP_BREAK => out.push(Stmt::If { cond: active(), then_body: vec![Stmt::Break], else_body: vec![] }),
                        CALL => {
                            // CALL: inline the subroutine at ADDR (up to its RETURN)
                            self.calls += 1;
                            if self.calls > 64 {
                                return Err(structure(Some(pc), format!("CALL at CF {pc:02}: too many nested/inlined calls")));
                            }
                            let target = *addr as usize;
                            let ret = (target..self.prog.cfs.len())
                                .find(|&k| matches!(self.prog.cfs[k].0.cf, Cf::Normal { op: RETURN, .. }))
                                .ok_or_else(|| {
                                    structure(
                                        Some(pc),
                                        format!("CALL at CF {pc:02}: subroutine at {target} has no RETURN inside the decoded CF stream"),
                                    )
                                })?;
                            let mut sub = Vec::new();
                            // the subroutine's jumps stay inside it
                            let outer = std::mem::take(&mut self.jumps);
                            let r = self.cf_range(target, ret, &mut sub).and_then(|()| self.arrive_at_end(self.prog.cfs[ret].0.pc));
                            self.jumps = outer;
                            r?;
                            out.push(Stmt::If { cond: active(), then_body: sub, else_body: vec![] });
                        }
                        RETURN => return Err(unsupported(op, "RETURN outside an inlined subroutine", pc)),
                        KILL => {
                            if self.s.kind != ShaderKind::Pixel {
                                return Err(unsupported(op, "KILL outside a pixel shader", pc));
                            }
                            out.push(Stmt::Discard(active()));
                        }
                    }
                }
            }
            i += 1;
        }
        Ok(())
    }

    fn push(&mut self, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if self.depth + 1 >= STACK_MAX {
            return Err(structure(None, "execution-mask stack deeper than 31 entries"));
        }
        out.push(assign(t(STACK + self.depth), 1, rd(ST, 0)));
        self.depth += 1;
        Ok(())
    }

    fn pop(&mut self, n: u32, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if n == 0 {
            return Ok(());
        }
        if n > self.depth {
            return Err(structure(Some(pc), format!("CF {pc:02} pops {n} stack entries but only {} are pushed", self.depth)));
        }
        self.depth -= n;
        for j in self.jumps.iter_mut().filter(|j| j.skips(pc)) {
            if self.depth < j.jump_depth {
                // restores an entry saved before the jump: only the taken jump's own pop may
                if self.depth != j.target_depth || j.landed {
                    return Err(jump_mismatch(j, pc, &format!("pops to depth {} where the taken jump leaves {}", self.depth, j.target_depth)));
                }
                j.landed = true;
            }
        }
        out.push(assign(t(ST), 1, rd(STACK + self.depth, 0)));
        Ok(())
    }

    /// Applies a [`cf_stack`] row's steps on the fall-through path (the per-lane view).
    fn stack_steps(&mut self, e: &StackEffect, pop_count: u32, addr: u32, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        for step in e.steps {
            match *step {
                Step::Pop(c) => self.pop(c.resolve(pop_count), pc, out)?,
                Step::Push => self.push(out)?,
                Step::Else => {
                    self.inactive_lanes_change(e.name, pc)?;
                    self.else_(out)?;
                }
                Step::JumpIfNoneActive { pop } => {
                    let check = JumpCheck::new(pc, addr, self.depth, pop.resolve(pop_count), self.loop_nest)
                        .map_err(|why| structure(Some(pc), format!("{} at CF {pc:02} {why}", e.name)))?;
                    self.jumps.push(check);
                }
            }
        }
        Ok(())
    }

    /// An else step (or ALU_BREAK / ALU_CONTINUE) at CF `pc` can change a lane that is
    /// inactive; inside the code a jump skips, that is allowed only on entries pushed after the
    /// jump (their lanes are all inactive, so nothing changes).
    fn inactive_lanes_change(&self, name: &str, pc: u32) -> Result<(), ShaderError> {
        let loop_op = name.starts_with("ALU_BREAK") || name.starts_with("ALU_CONTINUE");
        let loop_nest = self.loop_nest;
        match self.jumps.iter().find(|j| j.skips(pc) && (if loop_op { loop_nest <= j.loops } else { j.landed || self.depth <= j.jump_depth })) {
            Some(j) => Err(jump_mismatch(j, pc, &format!("runs {name} there, which would change a lane the taken jump leaves alone"))),
            None => Ok(()),
        }
    }

    /// The fall-through path reaches CF `pc`: jumps targeting it must find the depth they
    /// leave; a jump whose region `pc` lies in must not have landed yet.
    fn arrive(&mut self, pc: u32) -> Result<(), ShaderError> {
        let depth = self.depth;
        if let Some(j) = self.jumps.iter().find(|j| (j.target == pc && depth != j.target_depth) || (j.skips(pc) && j.landed) || j.target < pc) {
            let why = if j.target < pc {
                "never reaches its target on the fall-through path".to_string()
            } else if j.target == pc {
                format!("reaches the target at depth {depth} where the taken jump leaves {}", j.target_depth)
            } else {
                format!("still runs CF {pc:02} after the pop the jump stands for")
            };
            return Err(jump_mismatch(j, pc, &why));
        }
        self.jumps.retain(|j| j.target != pc);
        Ok(())
    }

    /// End of a CF range (the program or a subroutine): every jump must have reached its target.
    fn arrive_at_end(&mut self, end_pc: u32) -> Result<(), ShaderError> {
        self.arrive(end_pc)?;
        match self.jumps.first() {
            Some(j) => Err(jump_mismatch(j, end_pc, "targets a CF past the end of its program or subroutine")),
            None => Ok(()),
        }
    }

    fn else_(&mut self, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        // active = saved_at_push && !active
        let saved = if self.depth == 0 { lit(1.0) } else { rd(STACK + self.depth - 1, 0) };
        let v = Expr::Select {
            cmp: CmpOp::Ne,
            a: Box::new(saved),
            b: Box::new(lit(0.0)),
            if_true: Box::new(bin(BinOp::Sub, lit(1.0), rd(ST, 0))),
            if_false: Box::new(lit(0.0)),
        };
        out.push(assign(t(ST), 1, v));
        Ok(())
    }

    fn export(&mut self, ty: u32, base: u32, gpr: u32, sel: &[u8; 4], pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let (name, semantic) = match (self.s.kind, ty) {
            (ShaderKind::Vertex, 1) if base == 60 => ("pos".to_string(), Semantic::Position),
            (ShaderKind::Vertex, 1) if (61..=63).contains(&base) => (format!("pos{}", base - 60), Semantic::Texcoord(40 + base - 61)),
            (ShaderKind::Vertex, 2) => {
                let word = self.s.reg(0x10 + 4 * (base / 4) as usize);
                let sem = word >> (8 * (base % 4)) & 0xFF;
                if sem == 0xFF {
                    // SPI_VS_OUT_ID semantic 0xFF: the parameter goes to no pixel-shader input and is
                    // dropped (decaf `GLDriver::compileVertexShader`, opengl_shader.cpp: a PARAM export
                    // with semantic 0xff writes no `vs_out_*`; docs/gx2.md). Declaring it would give a
                    // TEXCOORD255 output, location 255, past every Vulkan output-location limit.
                    return Ok(());
                }
                (format!("o{base}"), Semantic::Texcoord(sem))
            }
            (ShaderKind::Pixel, 0) if base < 8 => (format!("oc{base}"), Semantic::Target(base)),
            (ShaderKind::Pixel, 0) if base == 61 => ("odepth".into(), Semantic::Depth),
            _ => return Err(unsupported(ExpOp::EXP, format!("EXP to target type {ty} index {base}"), pc)),
        };
        let oi = match self.outputs.iter().find(|o| o.0 == name) {
            Some(o) => o.1,
            None => {
                let i = self.m.outputs.len() as u32;
                let comps = if semantic == Semantic::Depth { 1 } else { 4 };
                self.m.outputs.push(IoVar { name: name.clone(), semantic, components: comps });
                self.outputs.push((name, i));
                i
            }
        };
        let mut comps = [lit(0.0), lit(0.0), lit(0.0), lit(0.0)];
        let mut mask = 0u8;
        for k in 0..4 {
            comps[k] = match sel[k] {
                0..=3 => rd(gpr, sel[k]),
                4 => lit(0.0),
                5 => lit(1.0),
                _ => continue,
            };
            mask |= 1 << k;
        }
        if mask != 0 {
            out.push(assign(RegRef::fixed(RegFile::Output, oi), mask, Expr::Compose(Box::new(comps))));
        }
        Ok(())
    }

    fn const_buffer_for_block(&mut self, loc: u32) -> u32 {
        if let Some(b) = self.blocks.iter().find(|b| b.0 == loc) {
            return b.1;
        }
        let idx = self.m.const_buffers.len() as u32;
        let size = self.s.uniform_blocks.iter().find(|b| b.offset == loc).map(|b| b.size.div_ceil(16)).unwrap_or(4096).clamp(1, 4096);
        let binding = self.binding(Layout::VK_BLOCK_BASE + loc, 1 + loc);
        self.m.const_buffers.push(ConstBuffer { block: format!("GX2UniformBlock{loc}"), var: format!("CB{loc}"), len: size, binding });
        self.blocks.push((loc, idx));
        idx
    }

    fn register_file(&mut self) -> u32 {
        if let Some(r) = self.regfile {
            return r;
        }
        let idx = self.m.const_buffers.len() as u32;
        let binding = self.binding(0, 0);
        self.m.const_buffers.push(ConstBuffer { block: "GX2UniformRegisters".into(), var: "C".into(), len: 256, binding });
        self.regfile = Some(idx);
        idx
    }

    /// GPRs relative addressing can reach: R0..R(NUM_GPRS - 1) (all 128 when NUM_GPRS is 0).
    fn rel_gprs(&self) -> u32 {
        match self.s.num_gprs() {
            0 => 128,
            n => n.min(128),
        }
    }

    /// The relative index (AR lane or AL) as an integer-valued float.
    fn rel_value(&self, index_mode: u32) -> Expr {
        if index_mode == 4 {
            rd(ST, 2)
        } else {
            rd(AR, (index_mode & 3) as u8)
        }
    }

    fn rel_index(&self, index_mode: u32, base: u32) -> Index {
        let v = if index_mode == 4 { rd(ST, 2) } else { rd(AR, (index_mode & 3) as u8) };
        Index::Dynamic { base: base as i32, value: Box::new(v), conv: IndexConv::Trunc }
    }

    /// Source operand as a broadcast float4 (bit-exact read of the lane).
    fn src(&mut self, s: &AluSrc, a: &AluInst, kc: &[Kcache; 2], pc: u32) -> Result<Expr, ShaderError> {
        let lane = s.chan;
        let e = match s.sel {
            0..=127 => {
                if s.rel {
                    // R[sel + index] as a select over the reachable GPRs (out of range: 0);
                    // an indexable temp array makes drivers lower every access to a compare
                    // ladder over all 176 temps, which lavapipe takes seconds to compile
                    let idx = self.rel_value(a.index_mode);
                    let mut acc = bits(0);
                    for j in (0..self.rel_gprs()).rev() {
                        let k = j as i32 - s.sel as i32;
                        acc = Expr::Select {
                            cmp: CmpOp::Eq,
                            a: Box::new(idx.clone()),
                            b: Box::new(lit(k as f32)),
                            if_true: Box::new(rd(j, lane)),
                            if_false: Box::new(acc),
                        };
                    }
                    acc
                } else {
                    rd(s.sel, lane)
                }
            }
            128..=191 => {
                let k = &kc[((s.sel - 128) / 32) as usize];
                if k.mode == 0 {
                    return Err(unsupported(a.op, format!("{} reading an unlocked kcache bank", a.op), pc));
                }
                let cb = self.const_buffer_for_block(k.bank);
                let base = k.addr * 16 + (s.sel - 128) % 32;
                let index = if k.mode == 3 || s.rel {
                    let mode = if k.mode == 3 { 4 } else { a.index_mode };
                    self.rel_index(mode, base)
                } else {
                    Index::Fixed(base)
                };
                Expr::Read(Src { reg: RegRef { file: RegFile::Const(cb), index }, swizzle: [lane; 4], abs: false, negate: false })
            }
            248 => lit(0.0),
            249 => lit(1.0),
            250 => bits(1),
            251 => bits(0xFFFF_FFFF),
            252 => lit(0.5),
            isa::SEL_LITERAL => bits(s.literal),
            isa::SEL_PV => rd(PV[self.pv ^ 1], lane),
            isa::SEL_PS => rd(PS[self.pv ^ 1], 0),
            256..=511 => {
                if self.s.mode() == MODE_UNIFORM_BLOCK {
                    return Err(unsupported(a.op, format!("{} reading the constant file in uniform-block mode", a.op), pc));
                }
                let cb = self.register_file();
                let index = if s.rel { self.rel_index(a.index_mode, s.sel - 256) } else { Index::Fixed(s.sel - 256) };
                Expr::Read(Src { reg: RegRef { file: RegFile::Const(cb), index }, swizzle: [lane; 4], abs: false, negate: false })
            }
            other => return Err(unsupported(a.op, format!("{} with special source select {other}", a.name), pc)),
        };
        let e = if s.abs { un(UnOp::Abs, e) } else { e };
        Ok(if s.neg { un(UnOp::Neg, e) } else { e })
    }

    /// Lowers one group; returns whether it updates the exec mask.
    fn group(&mut self, g: &AluGroup, kc: &[Kcache; 2], pc: u32, out: &mut Vec<Stmt>) -> Result<bool, ShaderError> {
        let cur = self.pv; // this group's new PV/PS; reads of PV use cur ^ 1
        let mut writes = Vec::new();
        // AR changes after the group's GPR writes: a relative destination in the same group
        // still uses the previous AR
        let mut ar_writes = Vec::new();
        let mut exec = false;
        let mut post = Vec::new();
        // reductions: the four vector slots' (src0, src1), the value computed per slot by `op`
        let reduc: Vec<&AluInst> = g.insts.iter().filter(|a| a.flags & isa::flags::REDUC != 0).collect();
        let mut terms = Vec::new();
        if let Some(first) = reduc.first() {
            let op = first.op;
            if op.status().is_rejected() {
                return Err(rejected(op, pc));
            }
            if reduc.len() != 4 || reduc.iter().any(|a| a.op != op) {
                return Err(unsupported(op, format!("{op} not spanning the four vector slots"), pc));
            }
            if op == AluOp::CUBE && reduc.iter().enumerate().any(|(k, a)| a.slot != k) {
                return Err(unsupported(op, "CUBE not in the x, y, z and w slots", pc));
            }
            for a in &reduc {
                let x = self.src(&a.srcs[0], a, kc, pc)?;
                let y = if a.srcs.len() > 1 { Some(self.src(&a.srcs[1], a, kc, pc)?) } else { None };
                terms.push((x, y));
            }
        }
        for a in &g.insts {
            let slot = a.slot;
            let (reg, lane) = if slot == 4 { (PS[cur], 0u8) } else { (PV[cur], slot as u8) };
            let reduction = a.flags & isa::flags::REDUC != 0;
            let mut srcs = Vec::new();
            if !reduction {
                for s in &a.srcs {
                    srcs.push(self.src(s, a, kc, pc)?);
                }
            }
            let value = match self.op(a, srcs, if reduction { &terms } else { &[] }, pc, &mut post, &mut exec)? {
                Some(v) => v,
                None => continue,
            };
            let value = match a.omod {
                1 => bin(BinOp::Mul, value, lit(2.0)),
                2 => bin(BinOp::Mul, value, lit(4.0)),
                3 => bin(BinOp::Mul, value, lit(0.5)),
                _ => value,
            };
            out.push(Stmt::Assign { dst: Dst { reg: t(reg), mask: 1 << lane }, value: broadcast_all(value), saturate: a.clamp });
            if matches!(a.op, AluOp::MOVA | AluOp::MOVA_FLOOR | AluOp::MOVA_INT) {
                let v = rd(reg, lane);
                let arv = match a.op {
                    AluOp::MOVA => un(UnOp::Floor, bin(BinOp::Add, v, lit(0.5))),
                    AluOp::MOVA_FLOOR => un(UnOp::Floor, v),
                    _ => Expr::IntUnary(IntUnOp::IntToFloat, Box::new(v)),
                };
                ar_writes.push(assign(t(AR), 1 << a.dst_chan, broadcast_all(arv)));
            }
            if a.write_mask {
                let w = if a.dst_rel {
                    // R[dst + index] = v as one guarded write per reachable GPR
                    let idx = self.rel_value(a.index_mode);
                    let chain: Vec<Stmt> = (0..self.rel_gprs())
                        .map(|j| Stmt::If {
                            cond: Cond::Compare(CmpOp::Eq, idx.clone(), lit((j as i32 - a.dst_gpr as i32) as f32)),
                            then_body: vec![assign(t(j), 1 << a.dst_chan, rd(reg, lane))],
                            else_body: vec![],
                        })
                        .collect();
                    Stmt::If { cond: Cond::Compare(CmpOp::Eq, lit(0.0), lit(0.0)), then_body: chain, else_body: vec![] }
                } else {
                    assign(t(a.dst_gpr), 1 << a.dst_chan, rd(reg, lane))
                };
                let w = match a.pred_sel {
                    2 => Stmt::If { cond: Cond::Not(Box::new(is_set(ST, 1))), then_body: vec![w], else_body: vec![] },
                    3 => Stmt::If { cond: is_set(ST, 1), then_body: vec![w], else_body: vec![] },
                    _ => w,
                };
                writes.push(w);
            }
        }
        out.extend(writes);
        out.extend(ar_writes);
        out.extend(post);
        self.pv ^= 1;
        Ok(exec)
    }

    /// One slot's value (None = no result, e.g. NOP).
    fn op(
        &mut self,
        a: &AluInst,
        s: Vec<Expr>,
        terms: &[(Expr, Option<Expr>)],
        pc: u32,
        post: &mut Vec<Stmt>,
        exec: &mut bool,
    ) -> Result<Option<Expr>, ShaderError> {
        let mut it = s.into_iter();
        let mut next = || it.next().unwrap_or(lit(0.0));
        let ib = |op: IntBinOp, x: Expr, y: Expr| Expr::IntBinary(op, Box::new(x), Box::new(y));
        let iu = |op: IntUnOp, x: Expr| Expr::IntUnary(op, Box::new(x));
        let one_if = |m: Expr| ib(IntBinOp::And, m, bits(0x3F80_0000)); // all-ones mask → 1.0
        use AluOp::*;
        let v = match a.op {
            NOP => return Ok(None),
            ADD => bin(BinOp::Add, next(), next()),
            MUL => bin(legacy_mul(), next(), next()),
            MUL_IEEE => bin(BinOp::Mul, next(), next()),
            MAX | MAX_DX10 => bin(BinOp::Max, next(), next()),
            MIN | MIN_DX10 => bin(BinOp::Min, next(), next()),
            SETE => bin(BinOp::Seq, next(), next()),
            // NE is unordered (true on NaN): written as not-equal so no backend picks the
            // ordered form (DXC's SPIR-V `!=` is ordered)
            SETNE => bin(BinOp::Sub, lit(1.0), bin(BinOp::Seq, next(), next())),
            SETGE => bin(BinOp::Sge, next(), next()),
            SETGT => {
                let (x, y) = (next(), next());
                bin(BinOp::Slt, y, x)
            }
            SETE_DX10 => ib(IntBinOp::EqF, next(), next()),
            SETNE_DX10 => iu(IntUnOp::Not, ib(IntBinOp::EqF, next(), next())),
            SETGT_DX10 => ib(IntBinOp::GtF, next(), next()),
            SETGE_DX10 => ib(IntBinOp::GeF, next(), next()),
            FRACT => un(UnOp::Fract, next()),
            TRUNC => un(UnOp::Trunc, next()),
            CEIL => un(UnOp::Ceil, next()),
            RNDNE => un(UnOp::RoundEven, next()),
            FLOOR => un(UnOp::Floor, next()),
            MOV | MOVA | MOVA_FLOOR | MOVA_INT => next(),
            AND_INT => ib(IntBinOp::And, next(), next()),
            OR_INT => ib(IntBinOp::Or, next(), next()),
            XOR_INT => ib(IntBinOp::Xor, next(), next()),
            NOT_INT => iu(IntUnOp::Not, next()),
            ADD_INT => ib(IntBinOp::Add, next(), next()),
            SUB_INT => ib(IntBinOp::Sub, next(), next()),
            MAX_INT => ib(IntBinOp::MaxI, next(), next()),
            MIN_INT => ib(IntBinOp::MinI, next(), next()),
            MAX_UINT => ib(IntBinOp::MaxU, next(), next()),
            MIN_UINT => ib(IntBinOp::MinU, next(), next()),
            SETE_INT => ib(IntBinOp::EqI, next(), next()),
            SETNE_INT => ib(IntBinOp::NeI, next(), next()),
            SETGT_INT => ib(IntBinOp::GtI, next(), next()),
            SETGE_INT => ib(IntBinOp::GeI, next(), next()),
            SETGT_UINT => ib(IntBinOp::GtU, next(), next()),
            SETGE_UINT => ib(IntBinOp::GeU, next(), next()),
            ASHR_INT => ib(IntBinOp::ShrI, next(), next()),
            LSHR_INT => ib(IntBinOp::ShrU, next(), next()),
            LSHL_INT => ib(IntBinOp::Shl, next(), next()),
            MULLO_INT | MULLO_UINT => ib(IntBinOp::MulLo, next(), next()),
            MULHI_INT => ib(IntBinOp::MulHiI, next(), next()),
            MULHI_UINT => ib(IntBinOp::MulHiU, next(), next()),
            FLT_TO_INT => iu(IntUnOp::FloatToInt, next()),
            FLT_TO_UINT => iu(IntUnOp::FloatToUint, next()),
            INT_TO_FLT => iu(IntUnOp::IntToFloat, next()),
            UINT_TO_FLT => iu(IntUnOp::UintToFloat, next()),
            EXP_IEEE => un(UnOp::Exp2, next()),
            LOG_IEEE => un(UnOp::Log2, next()),
            LOG_CLAMPED => un(UnOp::Log2Clamped, next()),
            RECIP_IEEE => un(UnOp::Rcp, next()),
            // _CLAMPED / _FF replace the ±infinity of a ±0 input by ±FLT_MAX / ±0 (docs/gx2.md,
            // "RECIP/RECIPSQRT _CLAMPED and _FF"). The test is on the input: lavapipe's rsqrt(-0)
            // result escaped an isinf() test on the output (a finite normal input cannot overflow).
            RECIP_CLAMPED | RECIP_FF | RECIPSQRT_CLAMPED | RECIPSQRT_FF => {
                let x = next();
                let sign = ib(IntBinOp::And, x.clone(), bits(0x8000_0000));
                let on_zero = if a.name.ends_with("_FF") { sign } else { ib(IntBinOp::Or, sign, bits(f32::MAX.to_bits())) };
                let r = if matches!(a.op, RECIPSQRT_CLAMPED | RECIPSQRT_FF) { un(UnOp::Rsq, x.clone()) } else { un(UnOp::Rcp, x.clone()) };
                Expr::Select { cmp: CmpOp::Eq, a: Box::new(x), b: Box::new(lit(0.0)), if_true: Box::new(on_zero), if_false: Box::new(r) }
            }
            RECIPSQRT_IEEE => un(UnOp::Rsq, next()),
            SQRT_IEEE => un(UnOp::Sqrt, next()),
            // Latte SIN/COS take the angle in revolutions (the compiler pre-scales by 1/2π)
            SIN => un(UnOp::Sin, bin(BinOp::Mul, next(), lit(std::f32::consts::TAU))),
            COS => un(UnOp::Cos, bin(BinOp::Mul, next(), lit(std::f32::consts::TAU))),
            MULADD | MULADD_M2 | MULADD_M4 | MULADD_D2 | MULADD_IEEE | MULADD_IEEE_M2 | MULADD_IEEE_M4 | MULADD_IEEE_D2 | FMA => {
                let (x, y, z) = (next(), next(), next());
                let v = if matches!(a.op, MULADD_IEEE | MULADD_IEEE_M2 | MULADD_IEEE_M4 | MULADD_IEEE_D2 | FMA) {
                    Expr::Mad(Box::new(x), Box::new(y), Box::new(z))
                } else {
                    bin(BinOp::Add, bin(legacy_mul(), x, y), z)
                };
                match a.op {
                    MULADD_M2 | MULADD_IEEE_M2 => bin(BinOp::Mul, v, lit(2.0)),
                    MULADD_M4 | MULADD_IEEE_M4 => bin(BinOp::Mul, v, lit(4.0)),
                    MULADD_D2 | MULADD_IEEE_D2 => bin(BinOp::Mul, v, lit(0.5)),
                    _ => v,
                }
            }
            CNDE | CNDGT | CNDGE => {
                let op = match a.op {
                    CNDE => CmpOp::Eq,
                    CNDGT => CmpOp::Gt,
                    _ => CmpOp::Ge,
                };
                let (c, x, y) = (next(), next(), next());
                Expr::Select { cmp: op, a: Box::new(c), b: Box::new(lit(0.0)), if_true: Box::new(x), if_false: Box::new(y) }
            }
            CNDE_INT | CNDGT_INT | CNDGE_INT | BFE_UINT | BFE_INT | BFI_INT => {
                let op = match a.op {
                    CNDE_INT => IntTerOp::CndEI,
                    CNDGT_INT => IntTerOp::CndGtI,
                    CNDGE_INT => IntTerOp::CndGeI,
                    BFE_UINT => IntTerOp::BfeU,
                    BFE_INT => IntTerOp::BfeI,
                    _ => IntTerOp::Bfi,
                };
                let (c, x, y) = (next(), next(), next());
                Expr::IntTernary(op, Box::new(c), Box::new(x), Box::new(y))
            }
            KILLE | KILLGT | KILLGE | KILLNE | KILLE_INT | KILLGT_INT | KILLGE_INT | KILLNE_INT | KILLGT_UINT | KILLGE_UINT => {
                if self.s.kind != ShaderKind::Pixel {
                    return Err(unsupported(a.op, format!("{} outside a pixel shader", a.name), pc));
                }
                let (x, y) = (next(), next());
                let m = match a.op {
                    KILLE => ib(IntBinOp::EqF, x, y),
                    KILLGT => ib(IntBinOp::GtF, x, y),
                    KILLGE => ib(IntBinOp::GeF, x, y),
                    KILLNE => iu(IntUnOp::Not, ib(IntBinOp::EqF, x, y)),
                    KILLE_INT => ib(IntBinOp::EqI, x, y),
                    KILLGT_INT => ib(IntBinOp::GtI, x, y),
                    KILLGE_INT => ib(IntBinOp::GeI, x, y),
                    KILLNE_INT => ib(IntBinOp::NeI, x, y),
                    KILLGT_UINT => ib(IntBinOp::GtU, x, y),
                    _ => ib(IntBinOp::GeU, x, y),
                };
                let v = one_if(m);
                let slot_reg = if a.slot == 4 { PS[self.pv] } else { PV[self.pv] };
                let lane = if a.slot == 4 { 0 } else { a.slot as u8 };
                post.push(Stmt::Discard(is_set(slot_reg, lane)));
                v
            }
            PRED_SETE | PRED_SETGT | PRED_SETGE | PRED_SETNE | PRED_SETE_INT | PRED_SETGT_INT | PRED_SETGE_INT | PRED_SETNE_INT | PRED_SETGT_UINT
            | PRED_SETGE_UINT | PRED_SET_CLR | PRED_SET_RESTORE => {
                let (x, y) = (next(), next());
                let m = match a.op {
                    PRED_SETE => ib(IntBinOp::EqF, x, y),
                    PRED_SETGT => ib(IntBinOp::GtF, x, y),
                    PRED_SETGE => ib(IntBinOp::GeF, x, y),
                    PRED_SETNE => iu(IntUnOp::Not, ib(IntBinOp::EqF, x, y)),
                    PRED_SETE_INT => ib(IntBinOp::EqI, x, y),
                    PRED_SETGT_INT => ib(IntBinOp::GtI, x, y),
                    PRED_SETGE_INT => ib(IntBinOp::GeI, x, y),
                    PRED_SETNE_INT => ib(IntBinOp::NeI, x, y),
                    PRED_SETGT_UINT => ib(IntBinOp::GtU, x, y),
                    PRED_SETGE_UINT => ib(IntBinOp::GeU, x, y),
                    PRED_SET_CLR => bits(0),
                    _ => ib(IntBinOp::EqF, x, lit(0.0)),
                };
                // result: 1.0 / 0.0 (PRED_SET_CLR: FLT_MAX, predicate false)
                let v = if a.op == PRED_SET_CLR { lit(f32::MAX) } else { one_if(m) };
                // the predicate / exec-mask updates run after the group's GPR writes, so they
                // read this slot's buffered result, not the sources again (a source may be a
                // GPR the same group overwrites)
                let slot_reg = if a.slot == 4 { PS[self.pv] } else { PV[self.pv] };
                let lane = if a.slot == 4 { 0 } else { a.slot as u8 };
                let cond = if a.op == PRED_SET_CLR {
                    lit(0.0)
                } else {
                    Expr::Select {
                        cmp: CmpOp::Ne,
                        a: Box::new(rd(slot_reg, lane)),
                        b: Box::new(lit(0.0)),
                        if_true: Box::new(lit(1.0)),
                        if_false: Box::new(lit(0.0)),
                    }
                };
                let c = broadcast_all(cond);
                if a.update_pred {
                    post.push(assign(t(ST), 2, c.clone()));
                }
                if a.update_exec_mask {
                    *exec = true;
                    post.push(assign(t(ST), 8, c));
                }
                v
            }
            // the reductions: `terms` holds (src0, src1) of the x, y, z, w slots (see `group`)
            DOT4 | DOT4_IEEE | MAX4 | CUBE if terms.len() != 4 => {
                return Err(structure(Some(pc), format!("{} outside a four-slot reduction", a.name)));
            }
            DOT4 | DOT4_IEEE => {
                let op = if a.op == DOT4 { legacy_mul() } else { BinOp::Mul };
                let mut it = terms.iter().map(|(x, y)| bin(op, x.clone(), y.clone().unwrap_or(lit(0.0))));
                let first = it.next().unwrap_or(lit(0.0));
                it.fold(first, |acc, p| bin(BinOp::Add, acc, p))
            }
            MAX4 => {
                let mut it = terms.iter().map(|(x, _)| x.clone());
                let first = it.next().unwrap_or(lit(0.0));
                it.fold(first, |acc, p| bin(BinOp::Max, acc, p))
            }
            CUBE => {
                // the direction is src0 of the z, w and x slots (the compilers' Rn.zzxy /
                // Rn.yxzz operand pattern; docs/gx2.md: CUBE)
                let (z, x, y) = (terms[0].0.clone(), terms[2].0.clone(), terms[3].0.clone());
                let [v0, v1, v2, v3] = cube::cube(x, y, z, cube::SignTest::GeZero);
                [v0, v1, v2, v3].into_iter().nth(a.slot).unwrap_or(lit(0.0))
            }
            // rejected by the table (docs/opcodes/gx2.md gives the reasons)
            FREXP_64 | ADD_64 | MUL_64 | FLT64_TO_FLT32 | FLT32_TO_FLT64 | LDEXP_64 | FRACT_64 | PRED_SETGT_64 | PRED_SETE_64 | PRED_SETGE_64
            | MULADD_64 | MULADD_64_M2 | MULADD_64_M4 | MULADD_64_D2 | PRED_SET_INV | PRED_SET_POP | PRED_SETE_PUSH | PRED_SETGT_PUSH
            | PRED_SETGE_PUSH | PRED_SETNE_PUSH | PRED_SETE_PUSH_INT | PRED_SETGT_PUSH_INT | PRED_SETGE_PUSH_INT | PRED_SETNE_PUSH_INT
            | PRED_SETLT_PUSH_INT | PRED_SETLE_PUSH_INT | MUL_LIT | MUL_LIT_M2 | MUL_LIT_M4 | MUL_LIT_D2 | GROUP_BARRIER | GROUP_SEQ_BEGIN
            | GROUP_SEQ_END | SET_MODE | SET_CF_IDX0 | SET_CF_IDX1 | SET_LDS_SIZE | MUL_INT24 | MULHI_INT24 | RECIP_INT | RECIP_UINT
            | MOVA_GPR_INT => return Err(rejected(a.op, pc)),
        };
        Ok(Some(v))
    }

    /// The texture declared for (RESOURCE_ID `res`, SAMPLER_ID `smp`), its dimension and kind
    /// from the resource's GX2SamplerVar (a resource without one is a 2D texture with a plain
    /// sampler, as the SDK's default).
    fn texture(&mut self, res: u32, smp: u32, pc: u32, op: TexOp) -> Result<(u32, SamplerDecl), ShaderError> {
        let decl = match self.s.sampler_vars.iter().find(|v| v.location == res) {
            None => SamplerDecl { dim: TexDim::D2, compare: false },
            Some(v) => sampler_type(v.ty).map_err(|why| unsupported(op, format!("{op} on {why} (GX2SamplerType {})", v.ty), pc))?,
        };
        if let Some(x) = self.tex.iter().find(|x| x.0 == (res, smp)) {
            return Ok((x.1, decl));
        }
        let idx = self.m.textures.len() as u32;
        self.m.textures.push(Texture {
            tex_var: format!("t{res}_s{smp}"),
            smp_var: format!("s{smp}_t{res}"),
            dim: decl.dim,
            compare: decl.compare,
            texture_binding: self.binding(Layout::VK_TEXTURE_BASE + res, res),
            sampler_binding: self.binding(Layout::VK_SAMPLER_BASE + smp, smp),
        });
        self.tex.push(((res, smp), idx));
        Ok((idx, decl))
    }

    /// The texture of RESOURCE_ID `res` for an instruction that does not sample (LD,
    /// GET_TEXTURE_INFO): the sampler is not used, so any texture already declared for the
    /// resource serves; otherwise the pair (`res`, `smp`) is declared.
    fn resource(&mut self, res: u32, smp: u32, pc: u32, op: TexOp) -> Result<(u32, TexDim), ShaderError> {
        match self.tex.iter().find(|x| x.0 .0 == res) {
            Some(x) => Ok((x.1, self.m.textures[x.1 as usize].dim)),
            None => self.texture(res, smp, pc, op).map(|(i, d)| (i, d.dim)),
        }
    }

    /// The coordinate of a sample of an array texture: src.z is the slice, an unnormalized
    /// coordinate the texture unit does not round (Mesa r600 `get_src_coords` marks the
    /// array lane unnormalized and rounds it in the shader before the fetch), so it selects
    /// slice floor(z), clamped to the slices; `floor` makes HLSL's round-to-nearest of the
    /// lane exact. Other dimensions: `coord` unchanged.
    fn array_slice(&self, x: &TexInst, dim: TexDim, coord: Expr, pc: u32) -> Result<Expr, ShaderError> {
        if dim != TexDim::D2Array {
            return Ok(coord);
        }
        if x.coord_norm[2] {
            return Err(unsupported(x.op, format!("{} on a 2D array with a normalized slice coordinate (COORD_TYPE_Z)", x.name), pc));
        }
        let slice = un(UnOp::Floor, swz(coord.clone(), [2; 4]));
        Ok(Expr::Compose(Box::new([swz(coord.clone(), [0; 4]), swz(coord, [1; 4]), slice, lit(0.0)])))
    }

    fn tex(&mut self, x: &TexInst, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        if x.src_rel || x.dst_rel {
            return Err(unsupported(x.op, format!("{} with relative GPR addressing", x.name), pc));
        }
        let sel = |s: u8| -> Expr {
            match s {
                0..=3 => rd(x.src_gpr, s),
                5 => lit(1.0),
                _ => lit(0.0),
            }
        };
        let coord = Expr::Compose(Box::new([sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2]), sel(x.src_sel[3])]));
        use TexOp::*;
        let value = match x.op {
            SAMPLE | SAMPLE_L | SAMPLE_LB | SAMPLE_LZ | SAMPLE_G => {
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if decl.compare {
                    return Err(unsupported(x.op, format!("{} on a shadow sampler (only SAMPLE_C* compare)", x.name), pc));
                }
                let dim = decl.dim;
                let offset = texel_offset(x, dim, pc)?;
                // a cube resource takes face coordinates (s, t, face id), as CUBE makes them
                let coord = if dim == TexDim::Cube {
                    if x.op == SAMPLE_G {
                        return Err(unsupported(x.op, "SAMPLE_G on a cube texture (face-coordinate gradients)", pc));
                    }
                    cube::cube_direction(sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2]))
                } else {
                    self.array_slice(x, dim, coord, pc)?
                };
                let bias = ((x.lod_bias << 25) as i32 >> 25) as f32 / 8.0;
                let w = sel(x.src_sel[3]);
                let mode = match x.op {
                    SAMPLE => SampleMode::Bias(bias),
                    SAMPLE_L => SampleMode::Lod(Box::new(bin(BinOp::Add, w, lit(bias)))),
                    SAMPLE_LB => SampleMode::BiasExpr(Box::new(bin(BinOp::Add, w, lit(bias)))),
                    SAMPLE_LZ => SampleMode::Lod(Box::new(lit(0.0))),
                    _ => SampleMode::Grad(Box::new(rd4(GRAD_H)), Box::new(rd4(GRAD_V))),
                };
                Expr::Sample { tex: ti, coord: Box::new(coord), mode, offset }
            }
            SAMPLE_C | SAMPLE_C_LZ => {
                // Depth compare (docs/gx2.md "Depth compare"): the reference is src.w for these
                // forms (Mesa r600 `TexInstr::prepare_source`: "other ops have shadow in w";
                // decaf `translateGenericSample` reads Dref from lane 3; Cemu's
                // `_emitTEXSampleTextureCode` passes srcSel[3] as the compare value). The
                // comparison function is sampler state; the result is one value in lane x.
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if !decl.compare {
                    return Err(unsupported(x.op, format!("{} on a sampler not declared shadow", x.name), pc));
                }
                // only lane x of the result is defined in every source (decaf writes (c, 0, 0, 1),
                // Cemu asserts that only x is read)
                if x.dst_sel.iter().any(|&d| (1..=3).contains(&d)) {
                    return Err(unsupported(x.op, format!("{} reading lane y, z or w of its result (the sources define lane x only)", x.name), pc));
                }
                let dim = decl.dim;
                let offset = texel_offset(x, dim, pc)?;
                let coord = if dim == TexDim::Cube {
                    cube::cube_direction(sel(x.src_sel[0]), sel(x.src_sel[1]), sel(x.src_sel[2]))
                } else {
                    self.array_slice(x, dim, coord, pc)?
                };
                // a vertex or geometry shader has no implicit derivatives: the hardware samples
                // level 0 there (decaf forces LOD zero outside pixel shaders)
                let level_zero = x.op == SAMPLE_C_LZ || self.s.kind != ShaderKind::Pixel;
                Expr::SampleCmp { tex: ti, coord: Box::new(coord), reference: Box::new(sel(x.src_sel[3])), level_zero, offset }
            }
            FETCH4 => {
                // Gather: the red component of the four texels bilinear filtering would read
                // (docs/gx2.md "FETCH4"); the lane order is reordered after the fetch.
                if x.coord_norm.iter().take(2).any(|n| !n) {
                    return Err(unsupported(x.op, format!("{} with unnormalized coordinates", x.name), pc));
                }
                let (ti, decl) = self.texture(x.resource_id, x.sampler_id, pc, x.op)?;
                if decl.compare || !matches!(decl.dim, TexDim::D2 | TexDim::D2Array) {
                    return Err(unsupported(
                        x.op,
                        format!("{} on a {:?}{} texture (2D and 2D-array only)", x.name, decl.dim, if decl.compare { " shadow" } else { "" }),
                        pc,
                    ));
                }
                let offset = texel_offset(x, decl.dim, pc)?;
                let coord = self.array_slice(x, decl.dim, coord, pc)?;
                let gather = Expr::Gather { tex: ti, coord: Box::new(coord), offset };
                // R700 lane k = HLSL Gather lane FETCH4_FROM_GATHER[k]
                swz(gather, FETCH4_FROM_GATHER)
            }
            LD => {
                // Texel fetch. Sources (docs/gx2.md "LD and GET_TEXTURE_INFO"): the coordinate
                // lanes are integer bit patterns (decaf `translateTex_LD` → OpImageFetch of the
                // source bitcast to uint; Cemu `_emitTEXSampleTextureCode` reads them as
                // SIGNED_INT for texelFetch; Mesa r600 emits nir `txf`, whose coordinates are
                // ints, as LD: `TexInstr::Inputs::get_opcode`); the mip level is the integer
                // in src.w (Mesa `LowerTexToBackend::lower_txf` puts the txf lod in lane 3; Cemu
                // and decaf fetch level 0, both marked to do). COORD_TYPE is not read (Mesa
                // leaves it normalized on its LDs).
                let (ti, dim) = self.resource(x.resource_id, x.sampler_id, pc, x.op)?;
                if dim.is_cube() {
                    return Err(unsupported(x.op, "LD on a cube texture (no texel fetch from a cube map in the sources or in HLSL)", pc));
                }
                // Mesa r600_shader.c `tgsi_tex`: "The texture offset feature doesn't work with
                // the TXF instruction and must be emulated by adding the offset to the texture
                // coordinates" (and nir is told `lower_txf_offset`); Cemu leaves LD offsets
                // unimplemented. What the hardware does with them is unknown: refused.
                if x.offset != [0, 0, 0] {
                    return Err(unsupported(x.op, "LD with texel offsets (Mesa r600: the offset fields do not work with LD)", pc));
                }
                Expr::Load { tex: ti, coord: Box::new(coord), lod: Box::new(sel(x.src_sel[3])) }
            }
            GET_TEXTURE_INFO => {
                // (width, height, depth, levels) of mip level asint(src.x) as integer bit
                // patterns (decaf `translateTex_GET_TEXTURE_INFO`: OpImageQuerySizeLod at the
                // bitcast src.x, 1 for a 2D resource's depth, OpImageQueryLevels in w; Mesa r600
                // `TexInstr::emit_tex_txs` emits nir txs as GET_TEXTURE_RESINFO with the lod in
                // the source and reads query_levels from lane w). Cemu writes level 0's size
                // and 1 in w (its mip input is a to do).
                let (ti, dim) = self.resource(x.resource_id, x.sampler_id, pc, x.op)?;
                if dim.is_cube() {
                    return Err(unsupported(x.op, "GET_TEXTURE_INFO on a cube texture (its z lane is not documented)", pc));
                }
                Expr::TexInfo { tex: ti, lod: Box::new(sel(x.src_sel[0])) }
            }
            SET_GRADIENTS_H | SET_GRADIENTS_V => {
                let r = if x.op == SET_GRADIENTS_H { GRAD_H } else { GRAD_V };
                out.push(assign(t(r), 0xF, coord));
                return Ok(());
            }
            GET_GRADIENTS_H | GET_GRADIENTS_V => {
                if self.s.kind != ShaderKind::Pixel {
                    return Err(unsupported(x.op, format!("{} outside a pixel shader", x.name), pc));
                }
                un(if x.op == GET_GRADIENTS_H { UnOp::Ddx } else { UnOp::Ddy }, coord)
            }
            VTX_FETCH if x.resource_id >= 0x80 && x.resource_id < 0x80 + 15 => {
                // uniform block read with a dynamic index: element = asint(src.x) + offset/16
                let loc = x.resource_id - 0x80;
                let cb = self.const_buffer_for_block(loc);
                let w2 = x.raw[2];
                let off = (w2 & 0xFFFF) / 16;
                let src_x = (x.raw[0] >> 24) & 3;
                let idx = Expr::IntUnary(IntUnOp::IntToFloat, Box::new(rd(x.src_gpr, src_x as u8)));
                Expr::Read(Src {
                    reg: RegRef {
                        file: RegFile::Const(cb),
                        index: Index::Dynamic { base: off as i32, value: Box::new(idx), conv: IndexConv::Trunc },
                    },
                    swizzle: XYZW,
                    abs: false,
                    negate: false,
                })
            }
            VTX_FETCH => return Err(unsupported(x.op, format!("VTX_FETCH of resource {} (only uniform blocks 0x80-0x8E)", x.resource_id), pc)),
            // rejected by the table (docs/opcodes/gx2.md)
            VTX_SEMANTIC | MEM | GET_SAMPLE_INFO | GET_COMP_TEX_LOD | GET_LERP | KEEP_GRADIENTS | PASS | SET_CUBEMAP_INDEX | SAMPLE_G_L
            | SAMPLE_G_LB | SAMPLE_G_LZ | SAMPLE_C_L | SAMPLE_C_LB | SAMPLE_C_G | SAMPLE_C_G_L | SAMPLE_C_G_LB | SAMPLE_C_G_LZ
            | SET_TEXTURE_OFFSETS | GATHER4 | GATHER4_O | GATHER4_C | GATHER4_C_O | GET_BUFFER_RESINFO => return Err(rejected(x.op, pc)),
        };
        // fetch once into a scratch temp, then the destination select
        out.push(assign(t(TEX_TMP), 0xF, value));
        let mut comps = [lit(0.0), lit(0.0), lit(0.0), lit(0.0)];
        let mut mask = 0;
        for k in 0..4 {
            comps[k] = match x.dst_sel[k] {
                0..=3 => rd(TEX_TMP, x.dst_sel[k]),
                4 => lit(0.0),
                5 => lit(1.0),
                _ => continue,
            };
            mask |= 1 << k;
        }
        if mask != 0 {
            out.push(assign(t(x.dst_gpr), mask, Expr::Compose(Box::new(comps))));
        }
        Ok(())
    }
}

/// The TEX word's OFFSET_X/Y/Z as whole texels of the sampled level. The fields are 5-bit
/// signed in half-texel units (docs/isa/gx2.md: s1.3.1; Cemu's LatteDecompiler halves the field
/// into the `textureOffset` offset; Mesa r600 `TexInstr::get_offset` doubles GL's whole texels
/// into it: docs/gx2.md "Texel offsets"). The hardware range is -8..7.5 texels; HLSL's
/// `Sample(s, uv, offset)` takes constant whole texels in -8..7, so a half-texel offset, an
/// offset on a cube resource, or one on a lane the resource lacks is rejected.
fn texel_offset(x: &TexInst, dim: TexDim, pc: u32) -> Result<[i8; 3], ShaderError> {
    if x.offset == [0, 0, 0] {
        return Ok([0; 3]);
    }
    if dim.is_cube() {
        return Err(unsupported(x.op, format!("{} with texel offsets on a cube texture", x.name), pc));
    }
    let lanes = dim.texel_lanes();
    let mut out = [0i8; 3];
    for (k, &o) in x.offset.iter().enumerate() {
        if o % 2 != 0 {
            return Err(unsupported(x.op, format!("{} with a half-texel offset ({} texels)", x.name, o as f32 / 2.0), pc));
        }
        if k >= lanes && o != 0 {
            return Err(unsupported(x.op, format!("{} with a texel offset on lane {k} of a {lanes}-lane resource", x.name), pc));
        }
        out[k] = (o / 2) as i8;
    }
    Ok(out)
}

/// FETCH4's lane k is HLSL `Gather`'s lane `FETCH4_FROM_GATHER[k]`: the R700 returns the
/// footprint's texels as x = (i1, j0), y = (i0, j1), z = (i1, j1), w = (i0, j0) (Cemu
/// `_emitTEXSampleTextureCode`: fetch4 x/y/z/w ← textureGather z/x/y/w; Mesa r600
/// `LowerTexToBackend::lower_tg4`: destination swizzle (1, 2, 0, 3) on R600-Evergreen, the
/// same permutation read the other way).
pub const FETCH4_FROM_GATHER: [u8; 4] = [2, 0, 1, 3];

/// The non-IEEE multiply (0 × anything = 0).
fn legacy_mul() -> BinOp {
    BinOp::MulLegacy
}

/// Every lane of a value computed from broadcast operands already holds the scalar; keep as is.
fn broadcast_all(e: Expr) -> Expr {
    e
}
