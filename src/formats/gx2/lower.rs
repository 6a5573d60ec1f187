//! Latte → IR.
//!
//! Conventions (also in shader_common.h, GX2 section, and docs/gx2.md):
//! - Registers hold raw 32-bit patterns: every GPR is an IR temp (`float4`) used as a container
//!   of bits; integer ops go through `asuint`/`asfloat` (`Expr::Int*`), never through float math.
//! - Temps: R0-R127 = temps 0-127; PV/PS double-buffered in 128-131; AR 132 (as float integer
//!   values); state 133 (.x active, .y predicate, .z AL, .w pending exec mask); the
//!   execution-mask stack 134..165; TEX scratch 165; gradients 166/167; bounded-loop counters
//!   and saved AL 168.. (one per LOOP_START/_NO_AL nesting level); the cube-array index
//!   SET_CUBEMAP_INDEX sets for texture resource r in 176 + r (lane x).
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

use super::cf_stack::{self, JumpCheck, Phase, StackEffect, Step};
use super::error::{Gx2Error, Opcode};
use super::isa::{self, AluCfOp, AluGroup, AluInst, AluOp, AluSrc, Cf, CfOp, Clause, ExpOp, Kcache, Program, TexInst, TexOp};
use super::shader_struct::{sampler_type, Gx2Shader, SamplerDecl, ShaderKind, MODE_UNIFORM_BLOCK};
use crate::formats::{cube, Family, ShaderError};
use crate::ir::build::*;
use crate::ir::*;

mod alu;
mod gs;
mod scratch;
mod stream;
mod tex;

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
/// The cube-array index of texture resource r (SET_CUBEMAP_INDEX's src.x) in lane x of temp
/// `CUBE_INDEX + r`, r < `CUBE_INDEX_SLOTS` (the texture units of a stage).
const CUBE_INDEX: u32 = LOOP_TMP + LOOP_MAX;
const CUBE_INDEX_SLOTS: u32 = 18;
const TEMP_COUNT: u32 = CUBE_INDEX + CUBE_INDEX_SLOTS;

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

/// One shader's lowering: the shader and program, the declarations made so far and the CF walk's
/// state (mask-stack depth, loops, calls).
struct Lowering<'a> {
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
    /// Texture resources a SET_CUBEMAP_INDEX has named so far (in program order).
    cube_index_set: Vec<u32>,
    /// An instruction at mask-stack depth 0 may have cleared the lane's active flag (an ALU
    /// clause with UPDATE_EXEC_MASK, an else step): from there on nothing is known to run.
    exec_maybe_cleared: bool,
    /// Stream-out writes so far (see `lower::stream`).
    stream: stream::StreamState,
    /// Jumps of the callers of the subroutine being inlined that have not reached their
    /// targets (set aside while it is lowered).
    caller_jumps: usize,
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
    let mut l = Lowering {
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
        cube_index_set: Vec::new(),
        exec_maybe_cleared: false,
        stream: Default::default(),
        caller_jumps: 0,
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
    if let Some((pc, why)) = super::scratch::ordering_problem(&prog) {
        return Err(structure(Some(pc), why));
    }
    let n = prog.main_len;
    l.cf_range(0, n, &mut body)?;
    l.arrive_at_end(n as u32)?;
    l.finish_stream_out()?;
    l.m.body = body;
    Ok(l.m)
}

/// First word of the stream-out block of a GX2 entry's metadata (`"SO"`, version 1).
pub const META_STREAM_OUT_TAG: u32 = 0x534F_0001;

/// Metadata words (docs/cache-abi.md): per sampler var, (location, type); then, when the
/// module streams out, [`META_STREAM_OUT_TAG`], the entry count, the four strides in bytes and
/// per entry (buffer, dword offset, dword count, `SHREC_SO` index), sorted by (buffer, offset).
pub fn meta(s: &Gx2Shader, m: &Module) -> Vec<u32> {
    let mut out: Vec<u32> = s.sampler_vars.iter().flat_map(|v| [v.location, v.ty]).collect();
    if let Some(so) = &m.ext.stream_out {
        out.extend([META_STREAM_OUT_TAG, so.entries.len() as u32]);
        out.extend(so.strides);
        for e in &so.entries {
            let v = &m.outputs[e.output as usize];
            let index = match v.semantic {
                Semantic::StreamOut { index, .. } => index,
                _ => u32::MAX,
            };
            out.extend([e.buffer, e.offset, u32::from(v.components), index]);
        }
    }
    out
}

impl Lowering<'_> {
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
            let (name, only_pops) = match &cf.cf {
                Cf::Normal { op, .. } => (op.name(), matches!(op, CfOp::POP | CfOp::NOP)),
                Cf::Alu { op, .. } => (op.name(), false),
                Cf::Export { op, .. } => (op.name(), false),
            };
            self.arrive(pc, name, only_pops)?;
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
                        if self.depth == 0 {
                            self.exec_maybe_cleared = true;
                        }
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
                Cf::Export { op: ExpOp::MEM_STREAM0 | ExpOp::MEM_STREAM1 | ExpOp::MEM_STREAM2 | ExpOp::MEM_STREAM3, .. } => {
                    let c = cf.cf.clone();
                    self.mem_stream(&c, pc, out)?;
                }
                Cf::Export { op: ExpOp::MEM_SCRATCH, .. } => {
                    let c = cf.cf.clone();
                    self.scratch_write(&c, pc, out)?;
                }
                Cf::Export { op, ty, array_base, rw_gpr, rw_rel, sel, burst_count, .. } => {
                    match op {
                        ExpOp::EXP | ExpOp::EXP_DONE => {}
                        ExpOp::MEM_RING => return Err(unsupported(*op, "MEM_RING in a pixel shader", pc)),
                        ExpOp::MEM_STREAM0 | ExpOp::MEM_STREAM1 | ExpOp::MEM_STREAM2 | ExpOp::MEM_STREAM3 => unreachable!("handled above"),
                        ExpOp::MEM_SCRATCH => unreachable!("handled above"),
                        ExpOp::MEM_REDUCTION | ExpOp::MEM_EXPORT => return Err(rejected(*op, pc)),
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
                            self.arrive(end_pc, "LOOP_END", false)?;
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
                            self.caller_jumps += outer.len();
                            let r = self.cf_range(target, ret, &mut sub).and_then(|()| self.arrive_at_end(self.prog.cfs[ret].0.pc));
                            self.caller_jumps -= outer.len();
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
        let depth = self.depth;
        for j in self.jumps.iter_mut().filter(|j| j.skips(pc)) {
            // below the jump's depth a pop restores an entry saved before the jump: only the
            // pops the taken jump stands for may do that
            if let Err(why) = j.pop_to(depth) {
                return Err(jump_mismatch(j, pc, &why));
            }
        }
        out.push(assign(t(ST), 1, rd(STACK + self.depth, 0)));
        Ok(())
    }

    /// Applies a [`cf_stack`] row's steps on the fall-through path (the per-lane view).
    fn stack_steps(&mut self, e: &StackEffect, pop_count: u32, addr: u32, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        for step in e.steps {
            if !matches!(step, Step::Pop(_)) {
                self.only_pops_left(e.name, pc)?;
            }
            match *step {
                Step::Pop(c) => self.pop(c.resolve(pop_count), pc, out)?,
                Step::Push => self.push(out)?,
                Step::Else => {
                    self.inactive_lanes_change(e.name, pc)?;
                    if self.depth == 0 {
                        self.exec_maybe_cleared = true;
                    }
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

    /// Inside the code a jump skips, once a pop has restored an entry saved before the jump
    /// ([`Phase::Draining`]), the lane may be active: anything but a pop (here a step of `name`
    /// at CF `pc`) could act where the taken jump acts on nothing.
    fn only_pops_left(&self, name: &str, pc: u32) -> Result<(), ShaderError> {
        match self.jumps.iter().find(|j| !j.allows_more_than_pops(pc)) {
            Some(j) => {
                Err(jump_mismatch(j, pc, &format!("runs {name} after a pop restored an entry saved before the jump, where only pops may follow")))
            }
            None => Ok(()),
        }
    }

    /// An else step (or ALU_BREAK / ALU_CONTINUE) at CF `pc` can change a lane that is
    /// inactive; inside the code a jump skips, that is allowed only on entries pushed after the
    /// jump (their lanes are all inactive, so nothing changes).
    fn inactive_lanes_change(&self, name: &str, pc: u32) -> Result<(), ShaderError> {
        let loop_op = name.starts_with("ALU_BREAK") || name.starts_with("ALU_CONTINUE");
        let loop_nest = self.loop_nest;
        match self
            .jumps
            .iter()
            .find(|j| j.skips(pc) && (if loop_op { loop_nest <= j.loops } else { j.phase != Phase::Skipping || self.depth <= j.jump_depth }))
        {
            Some(j) => Err(jump_mismatch(j, pc, &format!("runs {name} there, which would change a lane the taken jump leaves alone"))),
            None => Ok(()),
        }
    }

    /// The fall-through path reaches CF `pc`, named `name`, which does nothing but pop when
    /// `only_pops` (POP, or NOP): jumps targeting it must find the depth they leave; a jump
    /// whose region `pc` lies in must not have landed yet, and must still be skipping unless
    /// the instruction only pops.
    fn arrive(&mut self, pc: u32, name: &str, only_pops: bool) -> Result<(), ShaderError> {
        let depth = self.depth;
        let bad = |j: &&JumpCheck| {
            (j.target == pc && depth != j.target_depth)
                || (j.skips(pc) && j.phase == Phase::Landed)
                || (!only_pops && !j.allows_more_than_pops(pc))
                || j.target < pc
        };
        if let Some(j) = self.jumps.iter().find(bad) {
            let why = if j.target < pc {
                "never reaches its target on the fall-through path".to_string()
            } else if j.target == pc {
                format!("reaches the target at depth {depth} where the taken jump leaves {}", j.target_depth)
            } else if j.phase == Phase::Landed {
                format!("still runs CF {pc:02} after the pop the jump stands for")
            } else {
                format!("runs {name} after a pop restored an entry saved before the jump, where only pops may follow")
            };
            return Err(jump_mismatch(j, pc, &why));
        }
        self.jumps.retain(|j| j.target != pc);
        Ok(())
    }

    /// End of a CF range (the program or a subroutine): every jump must have reached its target.
    fn arrive_at_end(&mut self, end_pc: u32) -> Result<(), ShaderError> {
        self.arrive(end_pc, "the end of the program", false)?;
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
}
