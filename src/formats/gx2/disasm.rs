//! Latte disassembly in the latte-assembler syntax (decaf tools/latte-assembler grammar.txt):
//! `00 CALL_FS NO_BARRIER`, `01 ALU: ADDR(32) CNT(14) KCACHE0(CB1:0-15)`, groups
//! `    0  x: MULADD R127.x, R1.y, C1.x, PV0.x`, `02 EXP_DONE: POS0, R1`, `END_OF_PROGRAM`.

use super::isa::*;
use std::fmt::Write;

const CH: [char; 4] = ['x', 'y', 'z', 'w'];

fn sel_char(s: u8) -> char {
    match s {
        0..=3 => CH[s as usize],
        4 => '0',
        5 => '1',
        6 => '?',
        _ => '_',
    }
}

fn swz(sel: &[u8; 4]) -> String {
    sel.iter().map(|&s| sel_char(s)).collect()
}

fn fmt_float(bits: u32) -> String {
    let f = f32::from_bits(bits);
    if f.is_finite() {
        let s = format!("{f:?}");
        format!("{s}f")
    } else {
        format!("0x{bits:08X}")
    }
}

pub fn alu_src_text(s: &AluSrc, index_mode: u32, group: u32) -> String {
    let c = CH[s.chan as usize];
    let rel = if s.rel {
        if index_mode == 4 {
            "[AL]".to_string()
        } else {
            format!("[AR.{}]", CH[(index_mode & 3) as usize])
        }
    } else {
        String::new()
    };
    let v = match s.sel {
        0..=127 => format!("R{}{rel}.{c}", s.sel),
        128..=159 => format!("KC0[{}]{rel}.{c}", s.sel - 128),
        160..=191 => format!("KC1[{}]{rel}.{c}", s.sel - 160),
        248 => "0.0f".into(),
        249 => "1.0f".into(),
        250 => "1".into(),
        251 => "-1".into(),
        252 => "0.5f".into(),
        SEL_LITERAL => format!("(0x{:08X}, {})", s.literal, fmt_float(s.literal)),
        SEL_PV => format!("PV{}.{c}", group.wrapping_sub(1)),
        SEL_PS => format!("PS{}", group.wrapping_sub(1)),
        256..=511 => format!("C{}{rel}.{c}", s.sel - 256),
        other => format!("SPECIAL{other}.{c}"),
    };
    let v = if s.abs { format!("|{v}|") } else { v };
    if s.neg {
        format!("-{v}")
    } else {
        v
    }
}

pub fn alu_inst_text(a: &AluInst, group: u32) -> String {
    let mut t = format!("{}: {}", b"xyzwt"[a.slot] as char, a.name);
    match a.omod {
        1 => t.push_str("*2"),
        2 => t.push_str("*4"),
        3 => t.push_str("/2"),
        _ => {}
    }
    let dst = if !a.write_mask {
        "____".to_string()
    } else {
        let rel = if a.dst_rel {
            if a.index_mode == 4 {
                "[AL]".to_string()
            } else {
                format!("[AR.{}]", CH[(a.index_mode & 3) as usize])
            }
        } else {
            String::new()
        };
        format!("R{}{rel}.{}", a.dst_gpr, CH[a.dst_chan as usize])
    };
    t.push(' ');
    t.push_str(&dst);
    for s in &a.srcs {
        t.push_str(", ");
        t.push_str(&alu_src_text(s, a.index_mode, group));
    }
    if a.update_exec_mask {
        t.push_str(" UPDATE_EXEC_MASK");
    }
    if a.update_pred {
        t.push_str(" UPDATE_PRED");
    }
    match a.pred_sel {
        2 => t.push_str(" PRED_SEL_ZERO"),
        3 => t.push_str(" PRED_SEL_ONE"),
        _ => {}
    }
    if a.clamp {
        t.push_str(" CLAMP");
    }
    if a.bank_swizzle != 0 {
        let names = if a.slot == 4 {
            ["SCL_210", "SCL_122", "SCL_212", "SCL_221", "?", "?", "?", "?"]
        } else {
            ["VEC_012", "VEC_021", "VEC_120", "VEC_102", "VEC_201", "VEC_210", "?", "?"]
        };
        let _ = write!(t, " {}", names[a.bank_swizzle as usize]);
    }
    t
}

pub fn tex_inst_text(t: &TexInst) -> String {
    if t.op == TexOp::MEM {
        return mem_read_text(t);
    }
    let dst = if t.dst_sel.iter().all(|&s| s == 7) {
        "____".to_string()
    } else if t.dst_sel == [0, 1, 2, 3] {
        format!("R{}", t.dst_gpr)
    } else {
        format!("R{}.{}", t.dst_gpr, swz(&t.dst_sel))
    };
    let rel = if t.src_rel { "[AL]" } else { "" };
    let mut s = format!("{} {dst}, R{}{rel}.{}, t{}, s{}", t.name, t.src_gpr, swz(&t.src_sel), t.resource_id, t.sampler_id);
    if t.alt_const {
        s.push_str(" ALT_CONST");
    }
    if t.bc_frac_mode {
        s.push_str(" BC_FRAC_MODE");
    }
    let denorm: String = (0..4).filter(|&i| !t.coord_norm[i]).map(|i| CH[i]).collect();
    if !denorm.is_empty() {
        let _ = write!(s, " DENORM({denorm})");
    }
    if t.lod_bias != 0 {
        let v = ((t.lod_bias << 25) as i32 >> 25) as f32 / 8.0;
        let _ = write!(s, " LOD({v:?})");
    }
    for (i, n) in ["XOFFSET", "YOFFSET", "ZOFFSET"].iter().enumerate() {
        if t.offset[i] != 0 {
            let _ = write!(s, " {n}({:?})", t.offset[i] as f32 / 2.0);
        }
    }
    if t.fetch_whole_quad {
        s.push_str(" WHOLE_QUAD_MODE");
    }
    s
}

/// A TEX-clause `MEM` in the MEM_RD_WORD0-2 layout (the fields Mesa r600's
/// `r700_bytecode_fetch_mem_build` writes and Cemu's decoder reads): which memory (MEM_OP 0
/// scratch, 2 the scatter buffer MEM_EXPORT writes), the element size, the index register, the
/// destination and the array. shrec translates direct scratch reads (docs/gx2.md "GX2 scratch
/// memory").
fn mem_read_text(t: &TexInst) -> String {
    let m = t.mem_read();
    let memory = match m.mem_op {
        0 => "scratch",
        2 => "scatter buffer",
        _ => "unknown",
    };
    let mut s = format!(
        "{} {}, MEM_OP({}: {memory}) ELEM_SIZE({}) ARRAY_BASE({}) ARRAY_SIZE({}) FORMAT({})",
        t.name,
        fetch_operands(m.dst_gpr, &m.dst_sel, m.src_gpr, m.src_rel, m.src_sel_x),
        m.mem_op,
        m.elem_size,
        m.array_base,
        m.array_size,
        m.data_format,
    );
    if m.indexed {
        s.push_str(" INDEXED");
    }
    s
}

/// `R<dst>.<dst_sel>, R<src>[AL].<chan>`: the operands of a one-channel-address fetch (VTX, MEM).
fn fetch_operands(dst_gpr: u32, dst_sel: &[u8; 4], src_gpr: u32, src_rel: bool, src_chan: u8) -> String {
    let rel = if src_rel { "[AL]" } else { "" };
    format!("R{dst_gpr}.{}, R{src_gpr}{rel}.{}", swz(dst_sel), CH[src_chan as usize])
}

pub fn vtx_inst_text(v: &VtxInst) -> String {
    format!(
        "{} {}, b{} FORMAT({}, {}) OFFSET({}) ENDIAN({}){}",
        v.name,
        fetch_operands(v.dst_gpr, &v.dst_sel, v.src_gpr, v.src_rel, v.src_sel_x),
        v.buffer_id,
        v.data_format,
        v.num_format_all,
        v.offset,
        v.endian_swap,
        if v.fetch_type == 1 { " INSTANCE" } else { "" }
    )
}

pub fn cf_text(c: &CfInst) -> String {
    let mut s = format!("{:02} ", c.pc);
    match &c.cf {
        Cf::Alu { op, addr, count, kcache, wqm, barrier, .. } => {
            let _ = write!(s, "{}: ADDR({addr}) CNT({count})", op.name());
            for (i, k) in kcache.iter().enumerate() {
                if k.mode != 0 {
                    let n = if k.mode == 2 { 32 } else { 16 };
                    let lo = k.addr * 16;
                    let _ = write!(s, " KCACHE{i}(CB{}:{}-{})", k.bank, lo, lo + n - 1);
                }
            }
            if *wqm {
                s.push_str(" WHOLE_QUAD_MODE");
            }
            if !barrier {
                s.push_str(" NO_BARRIER");
            }
        }
        Cf::Export { op, ty, array_base, rw_gpr, rw_rel, sel, burst_count, vpm, barrier, elem_size, array_size, comp_mask, .. } => {
            let name = op.name();
            if matches!(op, ExpOp::EXP | ExpOp::EXP_DONE) {
                let target = match ty {
                    0 => format!("PIX{array_base}"),
                    1 => format!("POS{}", array_base.wrapping_sub(60)),
                    2 => format!("PARAM{array_base}"),
                    _ => format!("TYPE3_{array_base}"),
                };
                let rel = if *rw_rel { "[AL]" } else { "" };
                let sw = if *sel == [0, 1, 2, 3] { String::new() } else { format!(".{}", swz(sel)) };
                let _ = write!(s, "{name}: {target}, R{rw_gpr}{rel}{sw}");
            } else {
                let mask: String = (0..4).map(|i| if comp_mask >> i & 1 != 0 { CH[i] } else { '_' }).collect();
                let _ = write!(s, "{name}: BASE({array_base}) SIZE({array_size}) TYPE({ty}), R{rw_gpr}.{mask} ELEM_SIZE({elem_size})");
            }
            if *burst_count != 0 {
                let _ = write!(s, " BURSTCNT({burst_count})");
            }
            if *vpm {
                s.push_str(" VALID_PIX");
            }
            if !barrier {
                s.push_str(" NO_BARRIER");
            }
        }
        Cf::Normal { op, addr, count, cf_const, cond, pop_count, vpm, wqm, barrier, call_count } => {
            let name = op.name();
            use CfOp::*;
            match op {
                TEX | VTX | VTX_TC | TEX_ACK | VTX_ACK | VTX_TC_ACK => {
                    let _ = write!(s, "{name}: ADDR({addr}) CNT({count})");
                }
                _ => {
                    s.push_str(name);
                    if matches!(
                        op,
                        LOOP_START
                            | LOOP_END
                            | LOOP_START_DX10
                            | LOOP_START_NO_AL
                            | LOOP_CONTINUE
                            | LOOP_BREAK
                            | JUMP
                            | PUSH_ELSE
                            | ELSE
                            | POP_JUMP
                            | POP_PUSH_ELSE
                            | CALL
                    ) {
                        let _ = write!(s, " ADDR({addr})");
                    }
                }
            }
            if matches!(op, LOOP_START | LOOP_END | LOOP_START_DX10 | LOOP_CONTINUE | LOOP_BREAK) || *cf_const != 0 {
                let _ = write!(s, " CF_CONST({cf_const})");
            }
            if *cond != 0 {
                let _ = write!(s, " CND({})", ["ACTIVE", "FALSE", "BOOL", "NOT_BOOL"][*cond as usize]);
            }
            if *pop_count != 0 {
                let _ = write!(s, " POP_CNT({pop_count})");
            }
            if *op == CALL && *call_count != 0 {
                let _ = write!(s, " CALL_COUNT({call_count})");
            }
            if *vpm {
                s.push_str(" VALID_PIX");
            }
            if *wqm {
                s.push_str(" WHOLE_QUAD_MODE");
            }
            if !barrier {
                s.push_str(" NO_BARRIER");
            }
        }
    }
    s
}

/// The whole program as text.
pub fn disassemble(p: &Program) -> String {
    let mut out = String::new();
    for (i, (cf, clause)) in p.cfs.iter().enumerate() {
        if i == p.main_len {
            out.push_str("END_OF_PROGRAM\n; subroutines after END_OF_PROGRAM (CALL targets)\n");
        }
        out.push_str(&cf_text(cf));
        out.push('\n');
        match clause {
            Clause::None => {}
            Clause::Alu(groups) => {
                for g in groups {
                    for (k, a) in g.insts.iter().enumerate() {
                        let head = if k == 0 { format!("    {:<3}", g.id) } else { "       ".into() };
                        let _ = writeln!(out, "{head}{}", alu_inst_text(a, g.id));
                    }
                }
            }
            Clause::Tex(t) => {
                for x in t {
                    let _ = writeln!(out, "    {:<3}{}", x.id, tex_inst_text(x));
                }
            }
            Clause::Vtx(t) => {
                for x in t {
                    let _ = writeln!(out, "    {:<3}{}", x.id, vtx_inst_text(x));
                }
            }
        }
    }
    if p.main_len == p.cfs.len() {
        out.push_str("END_OF_PROGRAM\n");
    }
    out
}
