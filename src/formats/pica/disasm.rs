//! picasso-like disassembly of a DVLB: header comments for every DVLE (entry, outputs,
//! uniforms, constants, GS mode), then the shared code blob, one instruction per line with its
//! word index, `main`/`endmain` marks of each DVLE and `label_N` marks for branch targets.

use super::decode::{self, CmpKind, Instr, Op, Operand, Rel};
use super::dvlb::{self, ConstValue, Program};
use crate::formats::pica::error::PicaError;
use crate::formats::ShaderError;
use std::collections::BTreeSet;
use std::fmt::Write;

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

fn mask_text(mask: u8) -> String {
    if mask == 0xF {
        String::new()
    } else {
        format!(".{}", (0..4).filter(|i| mask >> i & 1 != 0).map(|i| LANES[i]).collect::<String>())
    }
}

fn operand_text(o: &Operand) -> String {
    let mut t = String::new();
    if o.negate {
        t.push('-');
    }
    t += &o.reg.to_string();
    if o.rel != Rel::None && matches!(o.reg, decode::Reg::C(_)) {
        let _ = write!(t, "[{}]", o.rel.name());
    }
    if o.swizzle != [0, 1, 2, 3] {
        t.push('.');
        t.extend(o.swizzle.iter().map(|&s| LANES[s as usize]));
    }
    t
}

fn cond_text(c: &decode::FlowCond) -> String {
    let x = format!("{}cmp.x", if c.refx { "" } else { "!" });
    let y = format!("{}cmp.y", if c.refy { "" } else { "!" });
    match c.op {
        0 => format!("{x} || {y}"),
        1 => format!("{x} && {y}"),
        2 => x,
        _ => y,
    }
}

/// Text of one instruction (no index, no label).
pub fn instr_text(i: &Instr) -> String {
    match i {
        Instr::Arith { op: Op::Mova, mask, srcs, .. } => {
            format!("mova a0{}, {}", mask_text(mask & 3), operand_text(&srcs[0]))
        }
        Instr::Arith { op, dst, mask, srcs, .. } => {
            let s: Vec<String> = srcs.iter().map(operand_text).collect();
            format!("{} {dst}{}, {}", op.name(), mask_text(*mask), s.join(", "))
        }
        Instr::Cmp { x, y, src1, src2, .. } => {
            let n = |k: &CmpKind| k.name();
            format!("cmp {}, {}, {}, {}", operand_text(src1), n(x), n(y), operand_text(src2))
        }
        Instr::Mad { op, dst, mask, src1, src2, src3, .. } => {
            format!("{} {dst}{}, {}, {}, {}", op.name(), mask_text(*mask), operand_text(src1), operand_text(src2), operand_text(src3))
        }
        Instr::Simple(op) => op.name().to_string(),
        Instr::Flow { op, cond, bool_id, int_id, dest, num } => match op {
            Op::Ifc | Op::Jmpc | Op::Callc | Op::Breakc => {
                let c = cond_text(cond.as_ref().unwrap());
                match op {
                    Op::Breakc => format!("breakc {c}"),
                    Op::Jmpc => format!("jmpc {c}, label_{dest}"),
                    _ => format!("{} {c}, {dest}, {num}", op.name()),
                }
            }
            Op::Ifu | Op::Callu => format!("{} b{bool_id}, {dest}, {num}", op.name()),
            Op::Jmpu => format!("jmpu {}b{bool_id}, label_{dest}", if num & 1 != 0 { "!" } else { "" }),
            Op::Loop => format!("loop i{int_id}, {dest}"),
            Op::Call => format!("call {dest}, {num}"),
            _ => op.name().to_string(),
        },
        Instr::Setemit { vertex, prim, winding } => {
            let mut t = format!("setemit {vertex}");
            if *prim || *winding {
                t += ",";
                if *prim {
                    t += " prim";
                }
                if *winding {
                    t += " inv";
                }
            }
            t
        }
    }
}

/// Decodes every word; an undecodable word is printed as `.word` with the reason.
pub fn disassemble(p: &Program) -> Result<String, ShaderError> {
    let mut out = String::new();
    let _ = writeln!(out, "; DVLB: {} code words, {} operand descriptors, {} DVLE(s)", p.code.len(), p.opdescs.len(), p.dvles.len());
    for d in &p.dvles {
        let _ = writeln!(
            out,
            "; DVLE {}: {} shader, main {}, endmain {}{}",
            d.index,
            d.stage.name_in(crate::Family::Pica),
            d.main,
            d.endmain,
            if d.merge_outmaps { ", merge outmaps" } else { "" }
        );
        if d.stage == crate::Stage::Geometry {
            let _ = writeln!(out, ";   .gsh {:?} (bytes {:?})", d.gs_mode(), d.gs_bytes);
        }
        for o in &d.outputs {
            let _ = writeln!(out, ";   .out o{}{} {}", o.reg, mask_text(o.mask), dvlb::output_type_name(o.ty));
        }
        for u in &d.uniforms {
            let _ = writeln!(out, ";   uniform {} {}", u.name, u.range_text());
        }
        for c in &d.constants {
            let _ = match &c.value {
                ConstValue::Bool(b) => writeln!(out, ";   .constb b{} = {b}", c.reg),
                ConstValue::Int(v) => writeln!(out, ";   .consti i{} = ({}, {}, {}, {})", c.reg, v[0], v[1], v[2], v[3]),
                ConstValue::Float(v) => writeln!(out, ";   .constf c{} = ({:?}, {:?}, {:?}, {:?})", c.reg, v[0], v[1], v[2], v[3]),
            };
        }
        for l in &d.labels {
            let _ = writeln!(out, ";   label {} {} at {}", l.id, l.name, l.offset);
        }
    }
    let decoded: Vec<Result<Instr, PicaError>> = (0..p.code.len()).map(|pc| decode::decode(&p.code, &p.opdescs, pc)).collect();
    let mut targets = BTreeSet::new();
    for i in decoded.iter().flatten() {
        if let Instr::Flow { op: Op::Jmpc | Op::Jmpu, dest, .. } = i {
            targets.insert(*dest as usize);
        }
    }
    for (pc, i) in decoded.iter().enumerate() {
        for d in &p.dvles {
            if d.main as usize == pc {
                let _ = writeln!(out, "; main of DVLE {}", d.index);
            }
        }
        if targets.contains(&pc) {
            let _ = writeln!(out, "label_{pc}:");
        }
        match i {
            Ok(i) => {
                let _ = writeln!(out, "    {:<40} ; {pc:3}: {:08X}", instr_text(i), p.code[pc]);
            }
            Err(e) => {
                let _ = writeln!(out, "    .word 0x{:08X}                          ; {pc:3}: {}", p.code[pc], e);
            }
        }
    }
    Ok(out)
}
