//! Disassembly in the style of Microsoft's `xps_3_0` / `xvs_3_0` listings (the `.asm` files of the
//! corpus): CF instructions in order, each exec followed by its fetch / ALU instructions, co-issued
//! scalar operations on a `+` line.

use super::container::{Container, DECL_USAGE_NAMES};
use super::ucode::*;
use std::fmt::Write;

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

/// Swizzle text, D3D style: identity → empty, trailing repeats dropped (`.yx` = yxxx).
pub fn swizzle_text(s: &[u8; 4], lanes: u8) -> String {
    let mut v: Vec<u8> = s[..lanes as usize].to_vec();
    if lanes == 4 {
        if v == [0, 1, 2, 3] {
            return String::new();
        }
        while v.len() > 1 && v[v.len() - 1] == v[v.len() - 2] {
            v.pop();
        }
    }
    let t: String = v.iter().map(|&l| LANES[l as usize & 3]).collect();
    format!(".{t}")
}

fn reg_text(is_temp: bool, index: u32, addr: Addr, abs: bool) -> String {
    let base = if is_temp { 'r' } else { 'c' };
    let abs = if abs { "_abs" } else { "" };
    match addr {
        Addr::Static => format!("{base}{index}{abs}"),
        Addr::A0 => format!("{base}[{index}+a0]{abs}"),
        Addr::AL => format!("{base}[{index}+aL]{abs}"),
    }
}

pub fn operand_text(o: &Operand) -> String {
    let n = if o.negate { "-" } else { "" };
    format!("{n}{}{}", reg_text(o.is_temp, o.index, o.addr, o.abs), swizzle_text(&o.swizzle, o.lanes))
}

/// Name of an export register.
pub fn export_name(is_vertex: bool, r: u32) -> String {
    match r {
        32 => "eA".into(),
        33..=37 => format!("eM{}", r - 33),
        62 if is_vertex => "oPos".into(),
        63 if is_vertex => "oPts".into(),
        61 if !is_vertex => "oDepth".into(),
        0..=15 if is_vertex => format!("o{r}"),
        0..=3 => format!("oC{r}"),
        _ => format!("oUnknown{r}"),
    }
}

fn dest_text(a: &Alu, is_vertex: bool, reg: u32, rel: bool, mask: u32, with_consts: bool) -> String {
    let name = if a.is_export() {
        export_name(is_vertex, reg)
    } else if rel {
        format!("r[{reg}+aL]")
    } else {
        format!("r{reg}")
    };
    let (c0, c1) = if with_consts { (a.const0_mask(), a.const1_mask()) } else { (0, 0) };
    if c0 | c1 != 0 {
        let s: String = (0..4)
            .map(|i| {
                let b = 1 << i;
                if mask & b != 0 {
                    LANES[i]
                } else if c1 & b != 0 {
                    '1'
                } else if c0 & b != 0 {
                    '0'
                } else {
                    '_'
                }
            })
            .collect();
        return format!("{name}.{s}");
    }
    match mask {
        0xF => name,
        0 => format!("{name}._"),
        m => format!("{name}.{}", (0..4).filter(|i| m >> i & 1 == 1).map(|i| LANES[i]).collect::<String>()),
    }
}

fn pred_prefix(predicated: bool, cond: bool) -> &'static str {
    match (predicated, cond) {
        (false, _) => "",
        (true, true) => "(p0) ",
        (true, false) => "(!p0) ",
    }
}

/// The vector mnemonic MS prints (max with identical operands is `mov`).
fn vector_mnemonic(a: &Alu) -> String {
    let op = a.vector_op();
    let mut name = op.map_or("?", VectorOp::name).to_string();
    if op == Some(VectorOp::Max) && a.vector_src(1) == a.vector_src(2) {
        name = "mov".into();
    }
    if op == Some(VectorOp::MaxA) && a.vector_src(1) == a.vector_src(2) {
        name = "mova".into();
    }
    if a.vector_clamp() {
        name.push_str("_sat");
    }
    name
}

fn scalar_mnemonic(a: &Alu) -> String {
    let op = a.scalar_op();
    let mut name = op.map_or("?", ScalarOp::name).to_string();
    let srcs = a.scalar_srcs();
    // maxs / maxas / maxasf of one lane with itself: Microsoft's listings print a move.
    let mov = match op {
        Some(ScalarOp::Maxs) => Some("movs"),
        Some(ScalarOp::MaxAs) => Some("movas"),
        Some(ScalarOp::MaxAsf) => Some("movasf"),
        _ => None,
    };
    if let Some(mov) = mov.filter(|_| srcs.len() == 1 && srcs[0].swizzle[0] == srcs[0].swizzle[1]) {
        name = mov.into();
    }
    if a.scalar_clamp() {
        name.push_str("_sat");
    }
    name
}

pub fn alu_lines(a: &Alu, is_vertex: bool) -> Vec<String> {
    let mut out = Vec::new();
    let pred = pred_prefix(a.is_predicated(), a.pred_condition());
    let vec_op = a.has_vector_op();
    if vec_op {
        let n = a.vector_operand_count();
        let mut t =
            format!("{pred}{} {}", vector_mnemonic(a), dest_text(a, is_vertex, a.vector_dest(), a.vector_dest_rel(), a.vector_result_mask(), true));
        let srcs: Vec<Operand> = (1..=n as u32).map(|i| a.vector_src(i)).collect();
        let movlike = matches!(a.vector_op(), Some(VectorOp::Max | VectorOp::MaxA)) && srcs[0] == srcs[1];
        for (k, s) in srcs.iter().enumerate() {
            if movlike && k == 1 {
                break;
            }
            let _ = write!(t, ", {}", operand_text(s));
        }
        out.push(t);
    }
    if a.has_scalar_op() {
        let dreg = if a.is_export() { a.vector_dest() } else { a.scalar_dest() };
        let drel = !a.is_export() && a.scalar_dest_rel();
        let mut t = format!(
            "{}{pred}{} {}",
            if vec_op { "+ " } else { "" },
            scalar_mnemonic(a),
            dest_text(a, is_vertex, if a.is_export() { dreg } else { a.scalar_dest() }, drel, a.scalar_result_mask(), !vec_op)
        );
        let srcs = a.scalar_srcs();
        let movlike = matches!(a.scalar_op(), Some(ScalarOp::Maxs | ScalarOp::MaxAs | ScalarOp::MaxAsf))
            && srcs.len() == 1
            && srcs[0].swizzle[0] == srcs[0].swizzle[1];
        for s in &srcs {
            let mut s = *s;
            if movlike {
                s.lanes = 1;
            }
            let _ = write!(t, ", {}", operand_text(&s));
        }
        out.push(t);
    }
    out
}

fn fetch_dest(f: &Fetch) -> String {
    let s = f.dst_swizzle();
    let name = if f.dst_rel() { format!("r[{}+aL]", f.dst_reg()) } else { format!("r{}", f.dst_reg()) };
    if s == [0, 1, 2, 3] {
        return name;
    }
    let t: String = s
        .iter()
        .map(|&c| match c {
            0..=3 => LANES[c as usize],
            4 => '0',
            5 => '1',
            6 => '?',
            _ => '_',
        })
        .collect();
    format!("{name}.{t}")
}

fn fetch_src(f: &Fetch, lanes: usize) -> String {
    let name = if f.src_rel() { format!("r[{}+aL]", f.src_reg()) } else { format!("r{}", f.src_reg()) };
    let s = f.tfetch_src_swizzle();
    let t: String = s[..lanes].iter().map(|&c| LANES[c as usize]).collect();
    format!("{name}.{t}")
}

pub fn fetch_line(f: &Fetch, c: &Container, address: u32) -> String {
    let pred = pred_prefix(f.is_predicated(), f.pred_condition());
    let op = f.op();
    match op {
        Some(FetchOp::VertexFetch) => {
            let src = format!(
                "{}.{}",
                if f.src_rel() { format!("r[{}+aL]", f.src_reg()) } else { format!("r{}", f.src_reg()) },
                LANES[f.vfetch_src_swizzle() as usize]
            );
            let sem = c
                .vertex_elements
                .iter()
                .find(|e| e.address == address)
                .map(|e| {
                    let n = DECL_USAGE_NAMES.get(e.usage as usize).copied().unwrap_or("usage?");
                    if e.usage_index == 0 {
                        n.to_string()
                    } else {
                        format!("{n}{}", e.usage_index)
                    }
                })
                .unwrap_or_else(|| format!("vf{}", f.vfetch_const()));
            let name = if f.is_mini() { "vfetch_mini" } else { "vfetch" };
            format!(
                "{pred}{name} {}, {src}, {sem}    // vf{} format={} stride={} offset={} signed={} integer={} exp_adjust={}",
                fetch_dest(f),
                f.vfetch_const(),
                f.format(),
                f.stride(),
                f.offset(),
                f.is_signed() as u8,
                f.is_integer() as u8,
                f.exp_adjust()
            )
        }
        _ => {
            let (name, lanes) = match (op, f.dimension()) {
                (Some(FetchOp::TextureFetch), 0) => ("tfetch1D".to_string(), 1),
                (Some(FetchOp::TextureFetch), 1) => ("tfetch2D".to_string(), 2),
                (Some(FetchOp::TextureFetch), 2) => ("tfetch3D".to_string(), 3),
                (Some(FetchOp::TextureFetch), _) => ("tfetchCube".to_string(), 3),
                _ => (f.name().unwrap_or("fetch?").to_string(), 3),
            };
            let sets_state = matches!(op, Some(FetchOp::SetTextureLod | FetchOp::SetTextureGradientsHorz | FetchOp::SetTextureGradientsVert));
            let mut t = if sets_state {
                format!("{pred}{name} {}, tf{}", fetch_src(f, 3), f.const_index())
            } else {
                format!("{pred}{name} {}, {}, tf{}", fetch_dest(f), fetch_src(f, lanes), f.const_index())
            };
            let mut opts = Vec::new();
            if !f.bit19() && !sets_state {
                opts.push("FetchValidOnly=false".to_string());
            }
            if f.coord_denorm() {
                opts.push("UnnormalizedTextureCoords=true".into());
            }
            if !matches!(
                op,
                Some(FetchOp::GetTextureGradients | FetchOp::SetTextureLod | FetchOp::SetTextureGradientsHorz | FetchOp::SetTextureGradientsVert)
            ) {
                opts.extend(f.filter_overrides());
            }
            if !f.use_comp_lod() && op == Some(FetchOp::TextureFetch) {
                // default is UseComputedLOD=true
                opts.push("UseComputedLOD=false".to_string());
            }
            if f.use_reg_lod() {
                opts.push("UseRegisterLOD=true".into());
            }
            if f.use_reg_gradients() {
                opts.push("UseRegisterGradients=true".into());
            }
            if f.lod_bias() != 0.0 {
                opts.push(format!("LODBias={}", f.lod_bias()));
            }
            let o = f.offsets();
            if o != [0.0; 3] {
                opts.push(format!("OffsetX={}, OffsetY={}, OffsetZ={}", o[0], o[1], o[2]));
            }
            if !opts.is_empty() {
                let _ = write!(t, ", {}", opts.join(", "));
            }
            t
        }
    }
}

fn cf_line(cf: &Cf) -> String {
    match cf.op() {
        CfOp::Nop => "cnop".into(),
        CfOp::Exec | CfOp::ExecEnd => {
            let n = if cf.op() == CfOp::ExecEnd { "exece" } else { "exec" };
            if cf.clean() {
                n.into()
            } else {
                format!("{n}    // PredicateClean=false")
            }
        }
        // 13 / 14 (cond_exec_pred_clean) are conditioned on a boolean constant like 3 / 4
        // (Xenia's ParseControlFlowCondExec prints both as cexec / cexece b#).
        CfOp::CondExec | CfOp::CondExecEnd | CfOp::CondExecPredClean | CfOp::CondExecPredCleanEnd => {
            let n = if cf.ends_shader() { "exece" } else { "exec" };
            format!("c{n} {}b{}", if cf.condition() { "" } else { "!" }, cf.bool_address())
        }
        CfOp::CondExecPred | CfOp::CondExecPredEnd => {
            let n = if cf.ends_shader() { "exece" } else { "exec" };
            let p = if cf.condition() { "(p0)" } else { "(!p0)" };
            if cf.clean() {
                format!("{p} {n}")
            } else {
                format!("{p} {n}    // PredicateClean=false")
            }
        }
        CfOp::LoopStart => format!("loop i{}, L{}{}", cf.loop_id(), cf.target(), if cf.is_repeat() { "    // repeat" } else { "" }),
        CfOp::LoopEnd => {
            let p = if cf.is_predicated_break() {
                if cf.condition() {
                    "(p0) "
                } else {
                    "(!p0) "
                }
            } else {
                ""
            };
            format!("{p}endloop i{}, L{}", cf.loop_id(), cf.target())
        }
        CfOp::CondCall | CfOp::CondJmp => {
            let n = if cf.op() == CfOp::CondCall { "call" } else { "jmp" };
            if cf.is_unconditional() {
                format!("{n} L{}", cf.target())
            } else if cf.is_predicated() {
                format!("({}p0) {n} L{}", if cf.condition() { "" } else { "!" }, cf.target())
            } else {
                format!("c{n} {}b{}, L{}", if cf.condition() { "" } else { "!" }, cf.bool_address(), cf.target())
            }
        }
        CfOp::Return => "ret".into(),
        CfOp::Alloc => {
            let t = match cf.alloc_type() {
                1 => "position",
                2 => "interpolators",
                3 => "export",
                _ => "none",
            };
            format!("alloc {t}{}", if cf.alloc_size() != 0 { format!(", {}", cf.alloc_size() + 1) } else { String::new() })
        }
        CfOp::MarkVsFetchDone => "vfetch_end".into(),
    }
}

/// The instruction lines only (what the corpus test compares), one entry per line.
pub fn listing_lines(c: &Container, p: &Program) -> Vec<String> {
    let is_vertex = c.is_vertex();
    let is_ps = !is_vertex;
    let mut out = Vec::new();
    for (i, cf) in p.cf.iter().enumerate() {
        let mut l = cf_line(cf);
        if is_ps && cf.op() == CfOp::Alloc && cf.alloc_type() == 2 {
            l = "alloc colors".into();
        }
        if cf.op() == CfOp::Nop {
            continue;
        }
        out.push(l);
        for s in &p.clauses[i] {
            match &s.instr {
                Instr::Fetch(f) => out.push(fetch_line(f, c, s.address)),
                Instr::Alu(a) => out.extend(alu_lines(a, is_vertex)),
            }
        }
    }
    out
}

pub fn disassemble(c: &Container, p: &Program) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "// Shader type: {}", if c.is_vertex() { "vertex" } else { "pixel" });
    let _ = writeln!(s, "{}", if c.is_vertex() { "xvs_3_0" } else { "xps_3_0" });
    if let Some(ct) = &c.constant_table {
        let _ = writeln!(s, "// creator: {}  target: {}", ct.creator, ct.target);
        for k in &ct.constants {
            let _ = writeln!(s, "// {:<24} {:?} {} count {}", k.name, k.register_set, k.register_index, k.register_count);
        }
    }
    for e in &c.vertex_elements {
        let _ = writeln!(s, "// vertex element: slot {} {}{}", e.address, DECL_USAGE_NAMES.get(e.usage as usize).unwrap_or(&"?"), e.usage_index);
    }
    for i in &c.interpolators {
        let _ = writeln!(s, "// interpolator r{}: {}{}", i.reg, DECL_USAGE_NAMES.get(i.usage as usize).unwrap_or(&"?"), i.usage_index);
    }
    for d in &c.float_defs {
        for (k, v) in d.values.chunks(4).enumerate() {
            let vals: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
            let _ = writeln!(s, "def c{}, {}", d.register + k as u32, vals.join(", "));
        }
    }
    for d in &c.int_defs {
        let _ = writeln!(s, "defi i{}, {:?}", d.register, d.values);
    }
    let _ = writeln!(s);
    for l in listing_lines(c, p) {
        let indent = if l.starts_with("+ ") { "  " } else { "    " };
        let _ = writeln!(s, "{indent}{l}");
    }
    s
}
