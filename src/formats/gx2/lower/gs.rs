//! Geometry shaders and ES vertex shaders (the ring model of `super::super::ring`).
//!
//! - ES (a VS with MEM_RING): each written ESGS slot s becomes output `ring{s}` at location s.
//! - GS: one HLSL geometry shader (triangle input). Input vertex k's ring slots arrive as
//!   `ShaderInput.ring{s}` (location s); a ring FETCH reads them through a bit-exact select
//!   ladder over the possible (vertex, slot) addresses. GSVS MEM_RING writes go to the local
//!   array `shrec_ring`; EMIT_VERTEX runs the copy program's mapping (parsed here: it is a fixed
//!   pattern of ring FETCHes and POS/PARAM exports) on the ring at the current vertex base,
//!   appends the vertex and advances the base by SQ_GS_VERT_ITEMSIZE; CUT_VERTEX restarts the
//!   strip.

use super::*;
use crate::formats::gx2::ring::{self, ESGS_ITEM_DWORDS, ES_SLOTS, GS_INPUT_VERTICES, GS_OFFSET_REGS};

/// Where one lane of a copy-shader GPR comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LaneSrc {
    /// Lane `lane` of the float4 at ring offset `slot` (float4s past R0.x).
    Ring {
        slot: u32,
        lane: u8,
    },
    Const(f32),
    Unset,
}

/// One export of the copy program: target and, per lane, its source (`None`: not written).
#[derive(Clone, Debug)]
pub(super) struct CopyOut {
    ty: u32,
    index: u32,
    lanes: [Option<LaneSrc>; 4],
}

/// GS translation state.
pub(super) struct GsCtx {
    copy: Vec<(CopyOut, u32)>,
    /// SQ_GS_VERT_ITEMSIZE in float4s.
    vert_vec4s: u32,
    /// ESGS slots declared per input vertex (`0..slots`).
    slots: u32,
    /// `Module::inputs` index of vertex 0 slot 0 (vertex k slot s at `+ k * slots + s`).
    input_base: u32,
}

/// The emitted-vertex base (in GSVS float4s) lives in int var 0.
const BASE_VAR: u32 = 0;

fn copy_problem(what: String, pc: u32) -> ShaderError {
    structure(Some(pc), format!("unsupported GS copy program: {what} (CF {pc:02})"))
}

/// Parses the copy program: ring FETCHes (src R0.x) into GPRs, then EXP/EXP_DONE of POS0 /
/// PARAMn from those GPRs. Anything else is rejected by name.
pub(super) fn parse_copy(program: &[u8]) -> Result<Vec<CopyOut>, ShaderError> {
    if program.is_empty() {
        return Err(structure(None, "GX2 geometry shader has no copy program (GX2GeometryShader 0x54/0x58)"));
    }
    let p = isa::decode(program).map_err(|e| Gx2Error::CopyProgram(Box::new(e)))?;
    let mut gpr: Vec<[LaneSrc; 4]> = vec![[LaneSrc::Unset; 4]; 128];
    let mut outs: Vec<CopyOut> = Vec::new();
    for (cf, clause) in &p.cfs[..p.main_len] {
        let pc = cf.pc;
        match (&cf.cf, clause) {
            (Cf::Normal { op: CfOp::NOP, .. }, _) => {}
            (Cf::Normal { op: CfOp::VTX, cond: 0, .. }, Clause::Vtx(vs)) => {
                for v in vs {
                    if let Some(why) = ring::ring_fetch_problem(v) {
                        return Err(copy_problem(why, pc));
                    }
                    if v.src_gpr != 0 || v.src_sel_x != 0 {
                        return Err(copy_problem(
                            format!("ring FETCH addressed by R{}.{} (only R0.x)", v.src_gpr, ['x', 'y', 'z', 'w'][v.src_sel_x as usize]),
                            pc,
                        ));
                    }
                    let g = &mut gpr[v.dst_gpr as usize];
                    for k in 0..4 {
                        g[k] = match v.dst_sel[k] {
                            0..=3 => LaneSrc::Ring { slot: v.offset / 16, lane: v.dst_sel[k] },
                            4 => LaneSrc::Const(0.0),
                            5 => LaneSrc::Const(1.0),
                            _ => continue,
                        };
                    }
                }
            }
            (Cf::Export { op: ExpOp::EXP | ExpOp::EXP_DONE, ty, array_base, rw_gpr, rw_rel: false, sel, burst_count, .. }, _) => {
                for b in 0..=*burst_count {
                    let (ty, index) = (*ty, array_base + b);
                    if !(ty == 1 && index == 60 || ty == 2 && index < 32) {
                        return Err(copy_problem(format!("EXP to target type {ty} index {index} (only POS0 and PARAM0-31)"), pc));
                    }
                    let g = gpr.get((rw_gpr + b) as usize).copied().unwrap_or([LaneSrc::Unset; 4]);
                    let o = match outs.iter_mut().position(|o| (o.ty, o.index) == (ty, index)) {
                        Some(i) => &mut outs[i],
                        None => {
                            outs.push(CopyOut { ty, index, lanes: [None; 4] });
                            outs.last_mut().unwrap()
                        }
                    };
                    for k in 0..4 {
                        o.lanes[k] = match sel[k] {
                            0..=3 => Some(g[sel[k] as usize]),
                            4 => Some(LaneSrc::Const(0.0)),
                            5 => Some(LaneSrc::Const(1.0)),
                            _ => continue,
                        };
                        if o.lanes[k] == Some(LaneSrc::Unset) {
                            return Err(copy_problem(format!("EXP of R{} lane {k}, which no ring FETCH wrote", rw_gpr + b), pc));
                        }
                    }
                }
            }
            (c, _) => {
                let name = match c {
                    Cf::Alu { op, .. } => op.name(),
                    Cf::Export { op, .. } => op.name(),
                    Cf::Normal { op, .. } => op.name(),
                };
                return Err(copy_problem(format!("{name} (a copy program only fetches the ring and exports)"), pc));
            }
        }
    }
    Ok(outs)
}

impl Lowering<'_> {
    /// Sets up a GS module: inputs, outputs, R0/R1, the ring and the geometry shape.
    pub(super) fn gs_setup(&mut self, body: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let s = self.s;
        let output = match s.reg(0x04) {
            0 => GsOutput::Points,
            1 => GsOutput::LineStrip,
            2 => GsOutput::TriangleStrip,
            t => {
                return Err(structure(None, format!("GX2 geometry shader: VGT_GS_OUT_PRIM_TYPE {t} (only 0 points, 1 line strip, 2 triangle strip)")))
            }
        };
        let vert_dwords = s.reg(0x14) & 0x7FFF;
        let ring_dwords = s.reg(0x88) & 0x7FFF;
        if vert_dwords == 0 || !vert_dwords.is_multiple_of(4) || ring_dwords < vert_dwords || !ring_dwords.is_multiple_of(4) {
            return Err(structure(None, format!(
                "GX2 geometry shader: SQ_GS_VERT_ITEMSIZE {vert_dwords} / ringItemSize {ring_dwords} dwords (need whole float4s and ringItemSize >= vertex size)"
            )));
        }
        let copy = parse_copy(&s.copy_program)?;
        // outputs: POS0 → position, PARAMn → SPI_VS_OUT_ID semantic (GS struct 0x20)
        let mut copy_idx = Vec::new();
        for c in &copy {
            let (name, semantic) = if c.ty == 1 {
                ("pos".to_string(), Semantic::Position)
            } else {
                let word = s.reg(0x20 + 4 * (c.index / 4) as usize);
                (format!("o{}", c.index), Semantic::Texcoord(word >> (8 * (c.index % 4)) & 0xFF))
            };
            if self.m.outputs.iter().any(|o| o.semantic == semantic) {
                return Err(structure(None, format!("GS copy program: two exports map to {semantic:?}")));
            }
            copy_idx.push(self.m.outputs.len() as u32);
            self.m.outputs.push(IoVar { name, semantic, components: 4 });
        }
        let max_vertices = ring_dwords / vert_dwords;
        let scalars = max_vertices * 4 * self.m.outputs.len().max(1) as u32;
        if scalars > ring::HLSL_GS_MAX_SCALARS {
            return Err(structure(
                None,
                format!(
                    "GX2 geometry shader: {max_vertices} vertices × {} outputs exceed HLSL's {} scalars per invocation",
                    self.m.outputs.len(),
                    ring::HLSL_GS_MAX_SCALARS
                ),
            ));
        }
        // ESGS slots the program's ring fetches reach
        let mut slots = 0;
        for (cf, clause) in &self.prog.cfs {
            if let (Cf::Normal { op: CfOp::VTX | CfOp::VTX_TC | CfOp::VTX_ACK | CfOp::VTX_TC_ACK, .. }, Clause::Vtx(vs)) = (&cf.cf, clause) {
                for v in vs {
                    if let Some(why) = ring::ring_fetch_problem(v) {
                        return Err(unsupported(v.op, why, cf.pc));
                    }
                    slots = slots.max(v.offset / 16 + 1);
                }
            }
        }
        if slots > ES_SLOTS {
            return Err(structure(None, format!("GS ring FETCH past ESGS slot {ES_SLOTS}")));
        }
        let vertex_fields: Vec<IoVar> =
            (0..slots).map(|k| IoVar { name: format!("ring{k}"), semantic: Semantic::Texcoord(k), components: 4 }).collect();
        let input_base = self.m.inputs.len() as u32;
        let mut input_sources = Vec::new();
        for v in 0..GS_INPUT_VERTICES {
            for k in 0..slots {
                self.m.inputs.push(IoVar { name: format!("gin{v}_{k}"), semantic: Semantic::Texcoord(k), components: 4 });
                input_sources.push((v, k));
            }
        }
        let pid = self.m.inputs.len() as u32;
        self.m.inputs.push(IoVar { name: "gprim".into(), semantic: Semantic::Texcoord(u32::MAX), components: 4 });
        // R0 / R1: ESGS item offsets (dwords) and the primitive id
        for (r, lanes) in GS_OFFSET_REGS.iter().enumerate() {
            let v: [u32; 4] = lanes.map(|l| l.map_or(0, |k| k * ESGS_ITEM_DWORDS));
            body.push(assign(t(r as u32), 0xF, Expr::Bits(v)));
        }
        body.push(assign(t(0), 4, read(RegFile::Input, pid, [0; 4])));
        self.m.ext.int_vars.push(IntVar { name: "gs_ring_base".into(), len: 0 });
        self.m.ext.geometry = Some(GeometryInfo {
            primitive: GsPrimitive::Triangle,
            vertex_fields,
            input_sources,
            max_vertices,
            strip: Some(GsStrip { output, primitive_id: Some(pid) }),
        });
        // the GSVS ring: the invocation-local array
        self.m.ext.local_array = ring_dwords / 4;
        self.gs = Some(GsCtx { copy: copy.into_iter().zip(copy_idx).collect(), vert_vec4s: vert_dwords / 4, slots, input_base });
        Ok(())
    }

    /// A VTX clause of a GS: ESGS ring reads.
    pub(super) fn gs_vtx_clause(&mut self, vs: &[isa::VtxInst], pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let g = self.gs.as_ref().expect("GS context");
        let mut body = Vec::new();
        for v in vs {
            if let Some(why) = ring::ring_fetch_problem(v) {
                return Err(unsupported(v.op, why, pc));
            }
            // dword address = asint(src) + OFFSET / 4; select the matching (vertex, slot) input
            let addr = Expr::IntBinary(IntBinOp::Add, Box::new(rd(v.src_gpr, v.src_sel_x)), Box::new(bits(v.offset / 4)));
            let mut acc = bits(0);
            for k in 0..GS_INPUT_VERTICES {
                for s in 0..g.slots {
                    let at = k * ESGS_ITEM_DWORDS + s * 4;
                    let hit = Expr::IntBinary(IntBinOp::EqI, Box::new(addr.clone()), Box::new(bits(at)));
                    let input = read(RegFile::Input, g.input_base + k * g.slots + s, XYZW);
                    acc = Expr::IntTernary(IntTerOp::Bfi, Box::new(hit), Box::new(input), Box::new(acc));
                }
            }
            body.push(assign(t(TEX_TMP), 0xF, acc));
            self.fetch_dst(v.dst_gpr, &v.dst_sel, &mut body);
        }
        out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
        Ok(())
    }

    /// `R[dst]` lanes from TEX_TMP through a fetch's DST_SEL.
    fn fetch_dst(&self, dst: u32, sel: &[u8; 4], out: &mut Vec<Stmt>) {
        let mut comps = [lit(0.0), lit(0.0), lit(0.0), lit(0.0)];
        let mut mask = 0;
        for k in 0..4 {
            comps[k] = match sel[k] {
                0..=3 => rd(TEX_TMP, sel[k]),
                4 => lit(0.0),
                5 => lit(1.0),
                _ => continue,
            };
            mask |= 1 << k;
        }
        if mask != 0 {
            out.push(assign(t(dst), mask, Expr::Compose(Box::new(comps))));
        }
    }

    /// MEM_RING in an ES (ESGS slots as outputs) or a GS (the local GSVS array).
    pub(super) fn mem_ring(&mut self, cf: &Cf, pc: u32, out: &mut Vec<Stmt>) -> Result<(), ShaderError> {
        let Cf::Export { ty, array_base, rw_gpr, rw_rel, index_gpr, elem_size, array_size, comp_mask, burst_count, .. } = *cf else { unreachable!() };
        let is_gs = self.s.kind == ShaderKind::Geometry;
        let slots = (!is_gs).then_some(ES_SLOTS);
        if let Some(why) = ring::mem_ring_problem(ty, array_base, elem_size, array_size, rw_rel, burst_count, is_gs, slots) {
            return Err(unsupported(ExpOp::MEM_RING, why, pc));
        }
        let mask = comp_mask as u8;
        if mask == 0 {
            return Ok(());
        }
        let mut body = Vec::new();
        for b in 0..=burst_count {
            let value = rd4(rw_gpr + b);
            let elem = array_base / 4 + b;
            if is_gs {
                let index = if ty & 1 == 1 {
                    // WRITE_IND: + asint(R[INDEX_GPR].x) elements (exact through float: see ring.rs)
                    let i = Expr::IntUnary(IntUnOp::IntToFloat, Box::new(rd(index_gpr, 0)));
                    Index::Dynamic { base: elem as i32, value: Box::new(i), conv: IndexConv::Trunc }
                } else {
                    Index::Fixed(elem)
                };
                body.push(Stmt::LocalStore { index, mask, value });
            } else {
                let name = format!("ring{elem}");
                let oi = match self.outputs.iter().find(|o| o.0 == name) {
                    Some(o) => o.1,
                    None => {
                        let i = self.m.outputs.len() as u32;
                        self.m.outputs.push(IoVar { name: name.clone(), semantic: Semantic::Texcoord(elem), components: 4 });
                        self.outputs.push((name, i));
                        i
                    }
                };
                body.push(assign(RegRef::fixed(RegFile::Output, oi), mask, value));
            }
        }
        out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
        Ok(())
    }

    /// EMIT_VERTEX / EMIT_CUT_VERTEX / CUT_VERTEX.
    pub(super) fn gs_emit(&mut self, emit: bool, cut: bool, out: &mut Vec<Stmt>) {
        let g = self.gs.as_ref().expect("GS context");
        let mut body = Vec::new();
        if emit {
            // the copy shader for this vertex: every output from the ring at the current base
            for (c, oi) in &g.copy {
                let mut loaded: Option<u32> = None;
                // lanes below `start` are stored already
                let mut start = 0;
                let mut comps = [lit(0.0), lit(0.0), lit(0.0), lit(0.0)];
                for k in 0..4 {
                    comps[k] = match c.lanes[k] {
                        Some(LaneSrc::Ring { slot, lane }) => {
                            if loaded != Some(slot) {
                                if loaded.is_some() {
                                    // lanes from several ring slots: store what is composed so far
                                    let m = ((1u8 << k) - 1) & !((1u8 << start) - 1);
                                    body.push(assign(RegRef::fixed(RegFile::Output, *oi), m, Expr::Compose(Box::new(comps.clone()))));
                                    start = k;
                                }
                                let index = Index::Int(Box::new(IExpr::Add(Box::new(IExpr::Var(BASE_VAR)), Box::new(IExpr::Const(slot as i32)))));
                                body.push(Stmt::LocalLoad { dst: Dst { reg: t(TEX_TMP), mask: 0xF }, index });
                                loaded = Some(slot);
                            }
                            rd(TEX_TMP, lane)
                        }
                        Some(LaneSrc::Const(x)) => lit(x),
                        Some(LaneSrc::Unset) | None => lit(0.0),
                    };
                }
                // unwritten lanes are 0: the copy shader starts afresh for every vertex
                body.push(assign(RegRef::fixed(RegFile::Output, *oi), 0xF & !((1u8 << start) - 1), Expr::Compose(Box::new(comps))));
            }
            body.push(Stmt::GsEmitVertex);
            let step = IExpr::Add(Box::new(IExpr::Var(BASE_VAR)), Box::new(IExpr::Const(g.vert_vec4s as i32)));
            body.push(Stmt::SetInt { var: BASE_VAR, index: None, value: step });
        }
        if cut {
            body.push(Stmt::GsCutStrip);
        }
        out.push(Stmt::If { cond: active(), then_body: body, else_body: vec![] });
    }
}
