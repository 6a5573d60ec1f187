//! PICA200 → IR.
//!
//! Programs whose control flow nests properly are lowered structured (`if`/`else`, `loop`,
//! inlined calls; see `structured` for the exact conditions). Every other program is lowered
//! to an exact model of Azahar's interpreter (`shader_interpreter.cpp`):
//! a dispatch loop over the program counter with the hardware's three scope stacks (IF depth 8,
//! CALL depth 4, LOOP depth 4, each a ring that overwrites its oldest entry when full), checked in
//! the interpreter's order after every instruction (CALL pops — up to four, the fourth not updating
//! pc —, then IF, then LOOP). This form handles every opcode and every control-flow shape
//! (backward `jmpc`/`jmpu`, jumps out of scopes, `break` through calls) and never falls back.
//!
//! Register layout in the IR: temps 0-15 = r0-r15, 16-31 = o0-o15 (current bank), 32-47 = the other
//! output bank (geometry), 48 = scratch, 49.. = float uniforms that a geometry shader receives as
//! input (fixed / variable mode). Float uniforms are `Const(0)` (`c[96]`), i0-i3 and b0-b15 are
//! `uint_buffers[0]` (`pica_int[5]`), a0.x/a0.y/aL/cc and the stacks are integer variables.
//! Semantics where the hardware is open are chosen in one place: docs/pica.md.

use super::decode::{self, CmpKind, DstReg, FlowCond, Instr, Op, Operand, Reg, Rel};
use super::dvlb::{ConstValue, DvleInfo, GsMode, Program};
use super::error::PicaError;
use crate::formats::{Family, ShaderError, Stage};
use crate::ir::build::*;
use crate::ir::*;
use std::cell::Cell;
use std::collections::BTreeSet;

mod structured;

thread_local! {
    static FORCE_DISPATCH: Cell<bool> = const { Cell::new(false) };
}

/// Tests: lower every program on this thread with pc-dispatch, so a program with structured
/// control flow can be executed in both forms.
pub fn set_force_dispatch(on: bool) {
    FORCE_DISPATCH.with(|f| f.set(on));
}

/// First line of the header comment that names the control-flow form.
pub const FORM_STRUCTURED: &str = "control flow: structured";
pub const FORM_DISPATCH: &str = "control flow: pc-dispatch";

/// Whether a lowered module took the structured form (from its header comments).
pub fn is_structured(m: &Module) -> bool {
    m.header_comments.iter().any(|c| c == FORM_STRUCTURED)
}

// Integer variables.
const A0X: u32 = 0;
const A0Y: u32 = 1;
const AL: u32 = 2;
const CCX: u32 = 3;
const CCY: u32 = 4;
const PC: u32 = 5;
const OLD: u32 = 6;
const BRK: u32 = 7;
const EVID: u32 = 8;
const EPRIM: u32 = 9;
const EINV: u32 = 10;
const IF_ELSE: u32 = 11;
const IF_END: u32 = 12;
const IF_TOP: u32 = 13;
const IF_SIZE: u32 = 14;
const CALL_END: u32 = 15;
const CALL_RET: u32 = 16;
const CALL_TOP: u32 = 17;
const CALL_SIZE: u32 = 18;
const LOOP_ENTRY: u32 = 19;
const LOOP_END: u32 = 20;
const LOOP_CNT: u32 = 21;
const LOOP_INC: u32 = 22;
const LOOP_PREV: u32 = 23;
const LOOP_TOP: u32 = 24;
const LOOP_SIZE: u32 = 25;
const NEXT: u32 = 26;
// Structured form: per static loop depth, the count, step and aL to restore.
const S_CNT: u32 = 27;
const S_INC: u32 = 28;
const S_PREV: u32 = 29;

const INT_VARS: [(&str, u32); 30] = [
    ("a0x", 0),
    ("a0y", 0),
    ("aL", 0),
    ("ccx", 0),
    ("ccy", 0),
    ("pc", 0),
    ("old_pc", 0),
    ("is_break", 0),
    ("emit_vertex", 0),
    ("emit_prim", 0),
    ("emit_inv", 0),
    ("if_else", 8),
    ("if_end", 8),
    ("if_top", 0),
    ("if_size", 0),
    ("call_end", 4),
    ("call_ret", 4),
    ("call_top", 0),
    ("call_size", 0),
    ("loop_entry", 4),
    ("loop_end", 4),
    ("loop_count", 4),
    ("loop_inc", 4),
    ("loop_prev", 4),
    ("loop_top", 0),
    ("loop_size", 0),
    ("next_pc", 0),
    ("s_count", 4),
    ("s_inc", 4),
    ("s_prev", 4),
];

const T_O: u32 = 16;
const T_OTHER: u32 = 32;
const T_SCRATCH: u32 = 48;
const T_CIN: u32 = 49;

/// Vulkan bindings (set 0) and D3D registers (space 0) of the PICA uniform buffers.
pub struct Layout;
impl Layout {
    pub const FLOAT_UNIFORMS: u32 = 0;
    pub const INT_UNIFORMS: u32 = 1;
    /// `pica_int[BOOL_ELEMENT].x` holds b0..b15 as bits.
    pub const BOOL_ELEMENT: u32 = 4;
}

fn bx<T>(t: T) -> Box<T> {
    Box::new(t)
}
fn iv(v: u32) -> IExpr {
    IExpr::Var(v)
}
fn ic(c: i32) -> IExpr {
    IExpr::Const(c)
}
fn el(v: u32, i: IExpr) -> IExpr {
    IExpr::Elem(v, bx(i))
}
fn add(a: IExpr, b: IExpr) -> IExpr {
    IExpr::Add(bx(a), bx(b))
}
fn icmp(op: CmpOp, a: IExpr, b: IExpr) -> Cond {
    Cond::IntCmp(op, a, b)
}
fn and(a: Cond, b: Cond) -> Cond {
    Cond::And(bx(a), bx(b))
}
fn or(a: Cond, b: Cond) -> Cond {
    Cond::Or(bx(a), bx(b))
}
fn set(var: u32, value: IExpr) -> Stmt {
    Stmt::SetInt { var, index: None, value }
}
fn set_el(var: u32, index: IExpr, value: IExpr) -> Stmt {
    Stmt::SetInt { var, index: Some(index), value }
}
fn if_(cond: Cond, then_body: Vec<Stmt>) -> Stmt {
    Stmt::If { cond, then_body, else_body: vec![] }
}
fn temp(i: u32) -> Expr {
    read(RegFile::Temp, i, XYZW)
}
fn lit(v: f32) -> Expr {
    Expr::Literal([v; 4])
}

/// Pushes onto a ring stack of capacity `cap` (a power of two): the oldest entry is overwritten
/// when full (boost::circular_buffer::push_back).
fn push(top: u32, size: u32, cap: i32, values: &[(u32, IExpr)]) -> Vec<Stmt> {
    let mut v = vec![set(top, IExpr::And(bx(add(iv(top), ic(1))), bx(ic(cap - 1))))];
    for (arr, val) in values {
        v.push(set_el(*arr, iv(top), val.clone()));
    }
    v.push(set(size, IExpr::Min(bx(add(iv(size), ic(1))), bx(ic(cap)))));
    v
}
fn pop(top: u32, size: u32, cap: i32) -> Vec<Stmt> {
    vec![set(top, IExpr::And(bx(add(iv(top), ic(cap - 1))), bx(ic(cap - 1)))), set(size, IExpr::Sub(bx(iv(size)), bx(ic(1))))]
}

/// One rasterizer / GS-feeding output variable and where its lanes come from.
struct OutVar {
    var: IoVar,
    /// (semantic lane, o-register, register lane, negate)
    lanes: Vec<(u8, u16, u8, bool)>,
}

struct Lowerer<'a> {
    p: &'a Program,
    d: &'a DvleInfo,
    gs: bool,
    /// v-register → index in `inputs`.
    v_input: [Option<u32>; 16],
    /// float uniforms [lo, hi) received as GS input (held in temps from `T_CIN`).
    c_in: Option<(u32, u32)>,
    inputs: Vec<IoVar>,
    outputs: Vec<OutVar>,
    geometry: Option<GeometryInfo>,
    comments: Vec<String>,
}

/// Word offsets reachable from `entry` (over-approximation: both sides of every branch and every
/// scope end).
fn reachable(code: &[u32], opdescs: &[u32], entry: usize) -> Result<BTreeSet<usize>, ShaderError> {
    let mut seen = BTreeSet::new();
    let mut work = vec![entry];
    while let Some(pc) = work.pop() {
        if pc >= code.len() || !seen.insert(pc) {
            continue;
        }
        let i = decode::decode(code, opdescs, pc)?;
        match i {
            Instr::Simple(Op::End) => {}
            Instr::Flow { op, dest, num, .. } => {
                let (dest, num) = (dest as usize, num as usize);
                work.extend([pc + 1, dest, dest + num]);
                if op == Op::Loop {
                    work.push(dest + 1);
                }
            }
            _ => work.push(pc + 1),
        }
    }
    Ok(seen)
}

fn ty_location(ty: u16) -> u32 {
    ty as u32
}

fn type_name(ty: u16) -> &'static str {
    super::dvlb::output_type_name(ty)
}

/// Rasterizer outputs from an output table (`vs` = the VS's table for merge-outmaps GS).
fn typed_outputs(d: &DvleInfo, vs: Option<&DvleInfo>) -> Vec<OutVar> {
    let mut entries: Vec<(u16, u16, u8)> = Vec::new();
    for o in &d.outputs {
        if o.ty == 9 {
            let from_vs: Vec<_> = vs
                .filter(|_| d.merge_outmaps)
                .map(|v| v.outputs.iter().filter(|x| x.reg == o.reg && x.ty != 9).map(|x| (x.ty, x.reg, x.mask)).collect())
                .unwrap_or_default();
            if from_vs.is_empty() {
                entries.push((9, o.reg, 0xF));
            } else {
                entries.extend(from_vs);
            }
        } else {
            entries.push((o.ty, o.reg, o.mask));
        }
    }
    let mut vars: Vec<OutVar> = Vec::new();
    for (ty, reg, mask) in entries {
        let (name, semantic) = match ty {
            0 => ("out_position".to_string(), Semantic::Position),
            9 => (format!("out_o{reg}"), Semantic::Texcoord(16 + reg as u32)),
            t => (format!("out_{}", type_name(t)), Semantic::Texcoord(ty_location(t))),
        };
        let idx = match vars.iter().position(|v| v.var.name == name) {
            Some(i) => i,
            None => {
                vars.push(OutVar { var: IoVar { name, semantic, components: 4 }, lanes: vec![] });
                vars.len() - 1
            }
        };
        let mut sem_lane = 0u8;
        for lane in 0..4u8 {
            if mask >> lane & 1 != 0 {
                let neg = ty == 0 && lane == 2;
                let v = &mut vars[idx];
                v.lanes.retain(|l| l.0 != sem_lane);
                v.lanes.push((sem_lane, reg, lane, neg));
                sem_lane += 1;
            }
        }
    }
    vars.sort_by_key(|v| match v.var.semantic {
        Semantic::Position => 0,
        Semantic::Texcoord(n) => 1 + n,
        _ => 100,
    });
    vars
}

/// The raw output registers of a VS (output mask, else the output table's registers).
fn raw_regs(vs: &DvleInfo) -> Vec<u16> {
    let mut regs: Vec<u16> = (0..16).filter(|r| vs.output_mask >> r & 1 != 0).collect();
    if regs.is_empty() {
        let set: BTreeSet<u16> = vs.outputs.iter().map(|o| o.reg).collect();
        regs = set.into_iter().collect();
    }
    regs
}

fn raw_var(reg: u16) -> IoVar {
    IoVar { name: format!("o{reg}"), semantic: Semantic::Texcoord(reg as u32), components: 4 }
}

fn prim_for(k: usize) -> Option<GsPrimitive> {
    Some(match k {
        1 => GsPrimitive::Point,
        2 => GsPrimitive::Line,
        3 => GsPrimitive::Triangle,
        4 => GsPrimitive::LineAdj,
        5 | 6 => GsPrimitive::TriangleAdj,
        _ => return None,
    })
}

pub fn lower(p: &Program, index: u32) -> Result<(Module, Vec<u32>), ShaderError> {
    let d = p.dvles.get(index as usize).ok_or_else(|| super::error::no_such_shader(format!("DVLE index {index} out of range")))?;
    let gs = d.stage == Stage::Geometry;
    let reach = reachable(&p.code, &p.opdescs, d.main as usize)?;
    let decoded: Vec<(usize, Instr)> = reach.iter().map(|&pc| decode::decode(&p.code, &p.opdescs, pc).map(|i| (pc, i))).collect::<Result<_, _>>()?;
    // v registers read
    let mut v_read = BTreeSet::new();
    for (_, i) in &decoded {
        let ops: Vec<&Operand> = match i {
            Instr::Arith { srcs, .. } => srcs.iter().collect(),
            Instr::Cmp { src1, src2, .. } => vec![src1, src2],
            Instr::Mad { src1, src2, src3, .. } => vec![src1, src2, src3],
            _ => vec![],
        };
        for o in ops {
            if let Reg::V(v) = o.reg {
                v_read.insert(v);
            }
        }
    }
    let vs = p.dvles.iter().find(|x| x.stage == Stage::Vertex);
    let has_gs = p.dvles.iter().any(|x| x.stage == Stage::Geometry);
    let mut l = Lowerer { p, d, gs, v_input: [None; 16], c_in: None, inputs: vec![], outputs: vec![], geometry: None, comments: vec![] };
    l.comments.push(format!("PICA200 DVLE {index}: entry {} (word), {} code words shared by {} DVLE(s)", d.main, p.code.len(), p.dvles.len()));
    if !gs {
        for &v in &v_read {
            l.v_input[v as usize] = Some(l.inputs.len() as u32);
            l.inputs.push(IoVar { name: format!("v{v}"), semantic: Semantic::Texcoord(v as u32), components: 4 });
        }
        if has_gs {
            l.comments.push("feeds the geometry shader of its DVLB: raw output registers o<r> at TEXCOORD<r>".into());
            l.outputs = raw_regs(d).into_iter().map(|r| OutVar { var: raw_var(r), lanes: (0..4).map(|k| (k, r, k, false)).collect() }).collect();
        } else {
            l.outputs = typed_outputs(d, None);
        }
    } else {
        l.outputs = typed_outputs(d, vs);
        let n = vs.map(raw_regs).unwrap_or_default();
        let fields: Vec<IoVar> = n.iter().map(|&r| raw_var(r)).collect();
        let nn = n.len();
        let mode = d.gs_mode()?;
        let first_uniform = d
            .uniforms
            .iter()
            .filter(|u| (0x10..0x70).contains(&u.first))
            .map(|u| u.first as u32 - 0x10)
            .chain(d.constants.iter().filter(|c| matches!(c.value, ConstValue::Float(_))).map(|c| c.reg as u32))
            .min()
            .unwrap_or(96);
        let packed_c = |l: &mut Lowerer, lo: u32| {
            let hi = first_uniform.min(lo + 32).max(lo);
            l.c_in = Some((lo, hi));
            let mut vf = vec![];
            let mut src = vec![];
            for k in lo..hi {
                vf.push(IoVar { name: format!("c{k}"), semantic: Semantic::Texcoord(k - lo), components: 4 });
                l.inputs.push(IoVar { name: format!("cin{k}"), semantic: Semantic::Texcoord(k), components: 4 });
                src.push((0, k - lo));
            }
            (GsPrimitive::Point, vf, src)
        };
        let (primitive, vertex_fields, input_sources) = match mode {
            GsMode::Point => {
                let s = v_read.iter().next_back().map_or(0, |&v| v as usize + 1);
                match (nn > 0).then(|| prim_for(s.div_ceil(nn).max(1))).flatten() {
                    Some(prim) => {
                        let mut src = vec![];
                        for &v in &v_read {
                            l.v_input[v as usize] = Some(l.inputs.len() as u32);
                            l.inputs.push(IoVar { name: format!("v{v}"), semantic: Semantic::Texcoord(v as u32), components: 4 });
                            src.push(((v as usize / nn) as u32, (v as usize % nn) as u32));
                        }
                        l.comments.push(format!("point mode: {} input register(s), {nn} per vertex", s));
                        (prim, fields, src)
                    }
                    None => {
                        let mut vf = vec![];
                        let mut src = vec![];
                        for v in 0..s as u32 {
                            vf.push(IoVar { name: format!("v{v}"), semantic: Semantic::Texcoord(v), components: 4 });
                            if v_read.contains(&(v as u8)) {
                                l.v_input[v as usize] = Some(l.inputs.len() as u32);
                                l.inputs.push(IoVar { name: format!("v{v}"), semantic: Semantic::Texcoord(v), components: 4 });
                                src.push((0, v));
                            }
                        }
                        l.comments.push("point mode, packed: one point carries v0..".into());
                        (GsPrimitive::Point, vf, src)
                    }
                }
            }
            GsMode::Fixed { start, count } => match (nn > 0).then(|| prim_for(count as usize)).flatten() {
                Some(prim) => {
                    let lo = start as u32;
                    let hi = (lo + count as u32 * nn as u32).min(96);
                    l.c_in = Some((lo, hi));
                    let mut src = vec![];
                    for k in lo..hi {
                        l.inputs.push(IoVar { name: format!("cin{k}"), semantic: Semantic::Texcoord(k), components: 4 });
                        let j = (k - lo) as usize;
                        src.push(((j / nn) as u32, (j % nn) as u32));
                    }
                    l.comments.push(format!("fixed mode: {count} vertices x {nn} registers in c{lo}..c{}", hi - 1));
                    (prim, fields, src)
                }
                None => {
                    l.comments.push("fixed mode, packed: one point carries the input float uniforms".into());
                    packed_c(&mut l, start as u32)
                }
            },
            GsMode::Variable { full } => {
                l.comments.push(format!("variable mode ({full} full vertices), packed: one point carries the input float uniforms"));
                packed_c(&mut l, 0)
            }
        };
        let scalars = (4 * l.outputs.len()).max(4) as u32;
        let max_vertices = ((1024 / scalars).min(1024) / 3) * 3;
        l.geometry = Some(GeometryInfo { primitive, vertex_fields, input_sources, max_vertices, strip: None });
    }
    let body = l.body(&decoded)?;
    let temps = TempFile { count: T_CIN + l.c_in.map_or(0, |(lo, hi)| hi - lo), prefix: "t".into(), indexable: l.c_in.is_some() };
    let module = Module {
        family: Family::Pica,
        stage: d.stage,
        inputs: l.inputs,
        outputs: l.outputs.iter().map(|o| o.var.clone()).collect(),
        const_buffers: vec![ConstBuffer {
            block: "PicaFloatUniforms".into(),
            var: "c".into(),
            len: 96,
            binding: Binding { dx_register: 0, dx_space: 0, vk_set: 0, vk_binding: Layout::FLOAT_UNIFORMS },
        }],
        textures: vec![],
        temps,
        body,
        header_comments: l.comments,
        ext: ModuleExt {
            int_vars: INT_VARS.iter().map(|(n, len)| IntVar { name: format!("pica_{n}"), len: *len }).collect(),
            uint_buffers: vec![ConstBuffer {
                block: "PicaIntUniforms".into(),
                var: "pica_int".into(),
                len: 5,
                binding: Binding { dx_register: 1, dx_space: 0, vk_set: 0, vk_binding: Layout::INT_UNIFORMS },
            }],
            geometry: l.geometry,
            ..Default::default()
        },
    };
    // Metadata: per DVLE constant: kind (0 bool, 1 int, 2 float), register, four value words
    // (f32 bits / u8 lanes / bool).
    let mut meta = Vec::new();
    for c in &d.constants {
        let (kind, v) = match &c.value {
            ConstValue::Bool(b) => (0, [*b as u32, 0, 0, 0]),
            ConstValue::Int(i) => (1, i.map(u32::from)),
            ConstValue::Float(f) => (2, f.map(f32::to_bits)),
        };
        meta.extend([kind, c.reg as u32]);
        meta.extend(v);
    }
    Ok((module, meta))
}

impl Lowerer<'_> {
    fn flow_cond(&self, c: &FlowCond) -> Cond {
        let x = icmp(CmpOp::Eq, iv(CCX), ic(c.refx as i32));
        let y = icmp(CmpOp::Eq, iv(CCY), ic(c.refy as i32));
        match c.op {
            0 => or(x, y),
            1 => and(x, y),
            2 => x,
            _ => y,
        }
    }

    fn bool_uniform(&self, id: u8) -> Cond {
        let b = IExpr::Uniform { buffer: 0, reg: Layout::BOOL_ELEMENT, lane: 0 };
        icmp(CmpOp::Ne, IExpr::And(bx(b), bx(ic(1 << id))), ic(0))
    }

    fn int_uniform(&self, id: u8, lane: u8) -> IExpr {
        IExpr::And(bx(IExpr::Uniform { buffer: 0, reg: id as u32, lane }), bx(ic(0xFF)))
    }

    fn c_fixed(&self, i: u32) -> Expr {
        match self.c_in {
            Some((lo, hi)) if (lo..hi).contains(&i) => temp(T_CIN + i - lo),
            _ => read(RegFile::Const(0), i, XYZW),
        }
    }

    fn c_relative(&self, i: u32, rel: Rel) -> Expr {
        let var = match rel {
            Rel::A0x => A0X,
            Rel::A0y => A0Y,
            _ => AL,
        };
        let off = IExpr::Select(bx(or(icmp(CmpOp::Lt, iv(var), ic(-128)), icmp(CmpOp::Gt, iv(var), ic(127)))), bx(ic(0)), bx(iv(var)));
        let idx = IExpr::And(bx(add(ic(i as i32), off)), bx(ic(0x7F)));
        let cb = Expr::Read(Src {
            reg: RegRef { file: RegFile::Const(0), index: Index::Int(bx(IExpr::Min(bx(idx.clone()), bx(ic(95))))) },
            swizzle: XYZW,
            abs: false,
            negate: false,
        });
        let inner = match self.c_in {
            Some((lo, hi)) if hi > lo => {
                let (lo, hi) = (lo as i32, hi as i32);
                let clamped = IExpr::Select(
                    bx(icmp(CmpOp::Lt, idx.clone(), ic(lo))),
                    bx(ic(0)),
                    bx(IExpr::Sub(bx(IExpr::Min(bx(idx.clone()), bx(ic(hi - 1)))), bx(ic(lo)))),
                );
                let t = Expr::Read(Src {
                    reg: RegRef { file: RegFile::Temp, index: Index::Int(bx(add(clamped, ic(T_CIN as i32)))) },
                    swizzle: XYZW,
                    abs: false,
                    negate: false,
                });
                Expr::SelectIf(bx(and(icmp(CmpOp::Ge, idx.clone(), ic(lo)), icmp(CmpOp::Lt, idx.clone(), ic(hi)))), bx(t), bx(cb))
            }
            _ => cb,
        };
        Expr::SelectIf(bx(icmp(CmpOp::Ge, idx, ic(96))), bx(lit(1.0)), bx(inner))
    }

    fn operand(&self, o: &Operand) -> Expr {
        let base = match o.reg {
            Reg::V(v) => match self.v_input[v as usize] {
                Some(i) => read(RegFile::Input, i, XYZW),
                None => lit(0.0),
            },
            Reg::R(r) => temp(r as u32),
            Reg::C(c) if o.rel == Rel::None => self.c_fixed(c as u32),
            Reg::C(c) => self.c_relative(c as u32, o.rel),
        };
        let e = match base {
            Expr::Read(mut s) => {
                s.swizzle = o.swizzle;
                s.negate = o.negate;
                return Expr::Read(s);
            }
            e if o.swizzle == XYZW => e,
            e => swz(e, o.swizzle),
        };
        if o.negate {
            un(UnOp::Neg, e)
        } else {
            e
        }
    }

    fn dst(&self, d: DstReg) -> RegRef {
        RegRef::fixed(
            RegFile::Temp,
            match d {
                DstReg::R(r) => r as u32,
                DstReg::O(o) => T_O + o as u32,
            },
        )
    }

    /// Copies o-registers to the stage outputs.
    fn epilogue(&self) -> Vec<Stmt> {
        let mut v = vec![];
        for (j, o) in self.outputs.iter().enumerate() {
            for &(sl, reg, rl, neg) in &o.lanes {
                let mut e = broadcast(temp(T_O + reg as u32), rl);
                if neg {
                    e = un(UnOp::Neg, e);
                }
                v.push(Stmt::Assign { dst: Dst { reg: RegRef::fixed(RegFile::Output, j as u32), mask: 1 << sl }, value: e, saturate: false });
            }
        }
        v
    }

    fn body(&mut self, decoded: &[(usize, Instr)]) -> Result<Vec<Stmt>, ShaderError> {
        let mut out = vec![];
        if let Some((lo, hi)) = self.c_in {
            for k in lo..hi {
                let i = self.inputs.iter().position(|x| x.name == format!("cin{k}")).unwrap() as u32;
                out.push(Stmt::Assign {
                    dst: Dst { reg: RegRef::fixed(RegFile::Temp, T_CIN + k - lo), mask: 0xF },
                    value: read(RegFile::Input, i, XYZW),
                    saturate: false,
                });
            }
        }
        let mut end = self.epilogue();
        end.push(Stmt::Return);
        let why = if FORCE_DISPATCH.with(|f| f.get()) {
            "forced by the test hook".to_string()
        } else {
            match self.structured(&end) {
                Ok(s) => {
                    self.comments.push(FORM_STRUCTURED.into());
                    out.extend(s);
                    return Ok(out);
                }
                Err(why) => why,
            }
        };
        self.comments.push(FORM_DISPATCH.into());
        self.comments.push(format!("pc-dispatch because {why}"));
        out.push(set(PC, ic(self.d.main as i32)));
        let n = self.p.code.len().min(4095) as i32;
        let mut lp = vec![set(OLD, iv(PC)), set(PC, add(iv(OLD), ic(1))), set(BRK, ic(0))];
        lp.push(if_(or(icmp(CmpOp::Lt, iv(OLD), ic(0)), icmp(CmpOp::Ge, iv(OLD), ic(n))), end.clone()));
        for (pc, ins) in decoded {
            if *pc as i32 >= n {
                continue;
            }
            let mut s = vec![Stmt::Comment(format!("{pc}: {}", super::disasm::instr_text(ins)))];
            s.extend(self.instr(*pc, ins, &end)?);
            lp.push(if_(icmp(CmpOp::Eq, iv(OLD), ic(*pc as i32)), s));
        }
        lp.extend(self.post_step());
        out.push(Stmt::Loop { body: lp });
        Ok(out)
    }

    fn post_step(&self) -> Vec<Stmt> {
        let mut v = vec![set(NEXT, add(iv(OLD), ic(1)))];
        // CALL: up to four pops; the fourth does not update pc (hardware bug, Azahar).
        let mut inner: Vec<Stmt> = vec![];
        for i in (0..4).rev() {
            let mut body = vec![];
            if i < 3 {
                body.push(set(PC, el(CALL_RET, iv(CALL_TOP))));
                body.push(set(NEXT, iv(PC)));
            }
            body.extend(pop(CALL_TOP, CALL_SIZE, 4));
            body.extend(inner);
            inner = vec![if_(and(icmp(CmpOp::Gt, iv(CALL_SIZE), ic(0)), icmp(CmpOp::Eq, el(CALL_END, iv(CALL_TOP)), iv(NEXT))), body)];
        }
        v.extend(inner);
        // IF
        let mut b = vec![set(PC, el(IF_END, iv(IF_TOP)))];
        b.extend(pop(IF_TOP, IF_SIZE, 8));
        v.push(if_(and(icmp(CmpOp::Gt, iv(IF_SIZE), ic(0)), icmp(CmpOp::Eq, el(IF_ELSE, iv(IF_TOP)), add(iv(OLD), ic(1)))), b));
        // LOOP
        let again =
            vec![set_el(LOOP_CNT, iv(LOOP_TOP), IExpr::Sub(bx(el(LOOP_CNT, iv(LOOP_TOP))), bx(ic(1)))), set(PC, el(LOOP_ENTRY, iv(LOOP_TOP)))];
        let mut leave =
            vec![set(PC, el(LOOP_END, iv(LOOP_TOP))), if_(icmp(CmpOp::Gt, iv(LOOP_SIZE), ic(1)), vec![set(AL, el(LOOP_PREV, iv(LOOP_TOP)))])];
        leave.extend(pop(LOOP_TOP, LOOP_SIZE, 4));
        let body = vec![
            set(AL, add(iv(AL), el(LOOP_INC, iv(LOOP_TOP)))),
            Stmt::If {
                cond: and(icmp(CmpOp::Eq, iv(BRK), ic(0)), icmp(CmpOp::Ne, el(LOOP_CNT, iv(LOOP_TOP)), ic(0))),
                then_body: again,
                else_body: leave,
            },
        ];
        v.push(if_(
            and(
                icmp(CmpOp::Gt, iv(LOOP_SIZE), ic(0)),
                or(icmp(CmpOp::Eq, el(LOOP_END, iv(LOOP_TOP)), add(iv(OLD), ic(1))), icmp(CmpOp::Ne, iv(BRK), ic(0))),
            ),
            body,
        ));
        v
    }

    fn assign(&self, dst: DstReg, mask: u8, value: Expr) -> Vec<Stmt> {
        if mask == 0 {
            return vec![];
        }
        vec![Stmt::Assign { dst: Dst { reg: self.dst(dst), mask }, value, saturate: false }]
    }

    fn instr(&self, pc: usize, ins: &Instr, end: &[Stmt]) -> Result<Vec<Stmt>, ShaderError> {
        let reject = |why: &str| ShaderError::from(PicaError::Unsupported { pc: pc as u32, op: ins.op(), what: why.to_string() });
        Ok(match ins {
            Instr::Arith { op, dst, mask, srcs, .. } => {
                let s1 = self.operand(&srcs[0]);
                let s2 = srcs.get(1).map(|o| self.operand(o));
                let x = |e: &Expr| broadcast(e.clone(), 0);
                let value = match op {
                    Op::Add => bin(BinOp::Add, s1, s2.unwrap()),
                    Op::Mul => bin(BinOp::MulPica, s1, s2.unwrap()),
                    Op::Dp3 => Expr::DotPica(3, bx(s1), bx(s2.unwrap())),
                    Op::Dp4 => Expr::DotPica(4, bx(s1), bx(s2.unwrap())),
                    Op::Dph | Op::Dphi => {
                        let h = Expr::Compose(bx([broadcast(s1.clone(), 0), broadcast(s1.clone(), 1), broadcast(s1, 2), lit(1.0)]));
                        Expr::DotPica(4, bx(h), bx(s2.unwrap()))
                    }
                    Op::Dst | Op::Dsti => {
                        let s2 = s2.unwrap();
                        let y = bin(BinOp::MulPica, broadcast(s1.clone(), 1), broadcast(s2.clone(), 1));
                        Expr::Compose(bx([lit(1.0), y, broadcast(s1, 2), broadcast(s2, 3)]))
                    }
                    Op::Ex2 => un(UnOp::Exp2, x(&s1)),
                    // SPIR-V Log2 / InverseSqrt are undefined for x <= 0 (lavapipe folds
                    // ex2(lg2(x)) to x for x < 0: fuzz seed 1 #2279), so the PICA results there
                    // (lg2: 0 → −inf, < 0 → NaN; rsq: ±0 → ±inf, < 0 → NaN) are selected.
                    Op::Lg2 => {
                        let neg_or_nan =
                            Expr::SelectIf(bx(Cond::Compare(CmpOp::Eq, x(&s1), lit(0.0))), bx(lit(f32::NEG_INFINITY)), bx(lit(f32::NAN)));
                        Expr::SelectIf(bx(Cond::Compare(CmpOp::Gt, x(&s1), lit(0.0))), bx(un(UnOp::Log2, x(&s1))), bx(neg_or_nan))
                    }
                    Op::Rcp => un(UnOp::Rcp, x(&s1)),
                    Op::Rsq => {
                        let zero_or_neg =
                            Expr::SelectIf(bx(Cond::Compare(CmpOp::Eq, x(&s1), lit(0.0))), bx(un(UnOp::Rcp, x(&s1))), bx(lit(f32::NAN)));
                        Expr::SelectIf(bx(Cond::Compare(CmpOp::Gt, x(&s1), lit(0.0))), bx(un(UnOp::Rsq, x(&s1))), bx(zero_or_neg))
                    }
                    Op::Flr => un(UnOp::Floor, s1),
                    Op::Max => bin(BinOp::MaxPica, s1, s2.unwrap()),
                    Op::Min => bin(BinOp::MinPica, s1, s2.unwrap()),
                    Op::Sge | Op::Sgei => bin(BinOp::Sge, s1, s2.unwrap()),
                    Op::Slt | Op::Slti => bin(BinOp::Slt, s1, s2.unwrap()),
                    Op::Mov => s1,
                    Op::Litp => {
                        // Panda3DS: cc.x = s.x >= 0, cc.y = s.w >= 0;
                        // (max(s.x, 0), clamp(s.y, ±127.99609375), 0, max(s.w, 0)).
                        let m = 127.0f32 + 255.0 / 256.0; // 127.99609375, exact in f32
                        let zero = lit(0.0);
                        let v = Expr::Compose(bx([
                            bin(BinOp::MaxPica, broadcast(s1.clone(), 0), zero.clone()),
                            bin(BinOp::MinPica, bin(BinOp::MaxPica, broadcast(s1.clone(), 1), lit(-m)), lit(m)),
                            zero.clone(),
                            bin(BinOp::MaxPica, broadcast(s1.clone(), 3), zero.clone()),
                        ]));
                        let mut st = vec![
                            set(CCX, IExpr::Select(bx(Cond::Compare(CmpOp::Ge, broadcast(s1.clone(), 0), zero.clone())), bx(ic(1)), bx(ic(0)))),
                            set(CCY, IExpr::Select(bx(Cond::Compare(CmpOp::Ge, broadcast(s1.clone(), 3), zero)), bx(ic(1)), bx(ic(0)))),
                        ];
                        // cc from the source as read, before the write (litp r0, r0 would
                        // otherwise test the clamped value: fuzz seed 1 #8574).
                        st.extend(self.assign(*dst, *mask, v));
                        return Ok(st);
                    }
                    Op::Mova => {
                        let mut v = vec![];
                        if mask & 1 != 0 {
                            v.push(set(A0X, IExpr::TruncX86(bx(x(&s1)))));
                        }
                        if mask & 2 != 0 {
                            v.push(set(A0Y, IExpr::TruncX86(bx(broadcast(s1, 1)))));
                        }
                        return Ok(v);
                    }
                    _ => return Err(reject("not an arithmetic instruction")),
                };
                self.assign(*dst, *mask, value)
            }
            Instr::Cmp { x, y, src1, src2, .. } => {
                let (a, b) = (self.operand(src1), self.operand(src2));
                let mut v = vec![];
                for (lane, kind, var) in [(0u8, x, CCX), (1, y, CCY)] {
                    let op = match kind {
                        CmpKind::Eq => CmpOp::Eq,
                        CmpKind::Ne => CmpOp::Ne,
                        CmpKind::Lt => CmpOp::Lt,
                        CmpKind::Le => CmpOp::Le,
                        CmpKind::Gt => CmpOp::Gt,
                        CmpKind::Ge => CmpOp::Ge,
                        // Azahar logs and leaves the flag unchanged.
                        CmpKind::Unknown(k) => {
                            v.push(Stmt::Comment(format!("cmp mode {k} is undefined: cc.{} unchanged (Azahar)", ['x', 'y'][lane as usize])));
                            continue;
                        }
                    };
                    let (al, bl) = (broadcast(a.clone(), lane), broadcast(b.clone(), lane));
                    // `ne` is true with a NaN operand (C++ `!=`, Azahar "CMP … NaN semantics"):
                    // the IR's IEEE `Ne`
                    v.push(set(var, IExpr::Select(bx(Cond::Compare(op, al, bl)), bx(ic(1)), bx(ic(0)))));
                }
                v
            }
            Instr::Mad { dst, mask, src1, src2, src3, .. } => {
                let value = bin(BinOp::Add, bin(BinOp::MulPica, self.operand(src1), self.operand(src2)), self.operand(src3));
                self.assign(*dst, *mask, value)
            }
            Instr::Simple(Op::Nop) => vec![],
            Instr::Simple(Op::End) => end.to_vec(),
            Instr::Simple(Op::Break) => vec![set(BRK, ic(1))],
            Instr::Simple(Op::Emit) => {
                if !self.gs {
                    return Err(reject("emit in a vertex shader (the hardware has no emitter there)"));
                }
                let mut v = self.epilogue();
                v.push(Stmt::GsStore(iv(EVID)));
                let invert = icmp(CmpOp::Ne, iv(EINV), ic(0));
                v.push(if_(icmp(CmpOp::Ne, iv(EPRIM), ic(0)), vec![Stmt::GsEmitTriangle { invert }]));
                // flip the output bank
                for r in 0..16u32 {
                    v.push(Stmt::Assign {
                        dst: Dst { reg: RegRef::fixed(RegFile::Temp, T_SCRATCH), mask: 0xF },
                        value: temp(T_O + r),
                        saturate: false,
                    });
                    v.push(Stmt::Assign {
                        dst: Dst { reg: RegRef::fixed(RegFile::Temp, T_O + r), mask: 0xF },
                        value: temp(T_OTHER + r),
                        saturate: false,
                    });
                    v.push(Stmt::Assign {
                        dst: Dst { reg: RegRef::fixed(RegFile::Temp, T_OTHER + r), mask: 0xF },
                        value: temp(T_SCRATCH),
                        saturate: false,
                    });
                }
                v
            }
            Instr::Setemit { vertex, prim, winding } => {
                if !self.gs {
                    return Err(reject("setemit in a vertex shader (the hardware has no emitter there)"));
                }
                if *vertex > 2 {
                    return Err(reject(&format!("vertex slot {vertex} (only 0-2 exist)")));
                }
                vec![set(EVID, ic(*vertex as i32)), set(EPRIM, ic(*prim as i32)), set(EINV, ic(*winding as i32))]
            }
            Instr::Flow { op, cond, bool_id, int_id, dest, num } => {
                let (dest, num) = (*dest as i32, *num as i32);
                let jump = vec![set(PC, ic(dest))];
                let call = || {
                    let mut v = push(CALL_TOP, CALL_SIZE, 4, &[(CALL_END, ic(dest + num)), (CALL_RET, ic(pc as i32 + 1))]);
                    v.push(set(PC, ic(dest)));
                    v
                };
                let do_if = |c: Cond| {
                    vec![Stmt::If {
                        cond: c,
                        then_body: push(IF_TOP, IF_SIZE, 8, &[(IF_ELSE, ic(dest)), (IF_END, ic(dest + num))]),
                        else_body: jump.clone(),
                    }]
                };
                match op {
                    Op::Jmpc => vec![if_(self.flow_cond(cond.as_ref().unwrap()), jump.clone())],
                    Op::Jmpu => {
                        let b = self.bool_uniform(*bool_id);
                        vec![if_(if num & 1 == 0 { b } else { Cond::Not(bx(b)) }, jump.clone())]
                    }
                    Op::Call => call(),
                    Op::Callc => vec![if_(self.flow_cond(cond.as_ref().unwrap()), call())],
                    Op::Callu => vec![if_(self.bool_uniform(*bool_id), call())],
                    Op::Ifc => do_if(self.flow_cond(cond.as_ref().unwrap())),
                    Op::Ifu => do_if(self.bool_uniform(*bool_id)),
                    Op::Breakc => vec![if_(self.flow_cond(cond.as_ref().unwrap()), vec![set(BRK, ic(1))])],
                    Op::Loop => {
                        let mut v = vec![set(NEXT, IExpr::And(bx(iv(AL)), bx(ic(0xFF))))];
                        v.extend(push(
                            LOOP_TOP,
                            LOOP_SIZE,
                            4,
                            &[
                                (LOOP_ENTRY, ic(pc as i32 + 1)),
                                (LOOP_END, ic(dest + 1)),
                                (LOOP_CNT, self.int_uniform(*int_id, 0)),
                                (LOOP_INC, self.int_uniform(*int_id, 2)),
                                (LOOP_PREV, iv(NEXT)),
                            ],
                        ));
                        v.push(set(AL, self.int_uniform(*int_id, 1)));
                        v
                    }
                    _ => return Err(reject("not a flow-control instruction")),
                }
            }
            Instr::Simple(_) => return Err(reject("unexpected format")),
        })
    }
}
