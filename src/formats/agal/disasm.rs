//! AGAL disassembly in AGALMiniAssembler syntax (the syntax of the corpus `.agal.txt` programs).

use super::decode::{Op, Operand2, Program, RegType, Sampler, Source};
use crate::formats::Stage;
use std::fmt::Write;

const LANES: [char; 4] = ['x', 'y', 'z', 'w'];

fn swizzle(s: [u8; 4]) -> String {
    if s == [0, 1, 2, 3] {
        return String::new();
    }
    let text: String = s.iter().map(|&l| LANES[l as usize]).collect();
    if s.iter().all(|&l| l == s[0]) {
        format!(".{}", LANES[s[0] as usize])
    } else {
        format!(".{text}")
    }
}

fn mask(m: u8) -> String {
    if m == 0xF {
        return String::new();
    }
    let lanes: String = (0..4).filter(|i| m >> i & 1 == 1).map(|i| LANES[i]).collect();
    format!(".{lanes}")
}

/// Register name; output 0 is written without its number (`op`, `oc`), as the assembler's
/// own listings do.
fn reg(r: RegType, num: u16, stage: Stage) -> String {
    match r {
        RegType::Output if num == 0 => r.name(stage).into(),
        RegType::Depth => "od".into(),
        RegType::InstanceId => "iid".into(),
        _ => format!("{}{num}", r.name(stage)),
    }
}

fn source(s: &Source, stage: Stage) -> String {
    match s.indirect {
        None => format!("{}{}", reg(s.reg, s.num, stage), swizzle(s.swizzle)),
        Some(ind) => {
            format!("{}[{}.{}+{}]{}", s.reg.name(stage), reg(ind.reg, ind.num, stage), LANES[ind.lane as usize], ind.offset, swizzle(s.swizzle))
        }
    }
}

/// Sampler options spelled as the assembler accepts them.
pub fn sampler_options(s: &Sampler) -> Vec<String> {
    let mut o = vec![
        ["2d", "cube", "3d"].get(s.dim as usize).unwrap_or(&"2d").to_string(),
        ["nearest", "linear", "anisotropic2x", "anisotropic4x", "anisotropic8x", "anisotropic16x"][s.filter as usize].to_string(),
        ["mipnone", "mipnearest", "miplinear"][s.mip as usize].to_string(),
        ["clamp", "repeat", "clamp_u_repeat_v", "repeat_u_clamp_v"][s.wrap as usize].to_string(),
    ];
    if s.format != 0 {
        o.push(["rgba", "dxt1", "dxt5", "video"][s.format as usize].to_string());
    }
    for (bit, name) in [(1, "centroid"), (2, "single"), (4, "ignoresampler")] {
        if s.special & bit != 0 {
            o.push(name.to_string());
        }
    }
    if s.bias != 0 {
        // Always with a fractional part ("-1.0", "0.125"), as Python prints floats.
        o.push(format!("{:?}", f32::from(s.bias) / 8.0));
    }
    o
}

/// One line per token, indented inside if/els/eif blocks.
pub fn disassemble(p: &Program) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "// AGAL{} {} program, {} tokens", p.version, if p.stage == Stage::Pixel { "fragment" } else { "vertex" }, p.tokens.len());
    let mut depth = 0usize;
    for t in &p.tokens {
        if matches!(t.op, Op::Els | Op::Eif) {
            depth = depth.saturating_sub(1);
        }
        let mut parts = Vec::new();
        if let Some(d) = t.dest {
            parts.push(format!("{}{}", reg(d.reg, d.num, p.stage), mask(d.mask)));
        }
        if let Some(s) = &t.src1 {
            parts.push(source(s, p.stage));
        }
        match &t.src2 {
            Operand2::Source(s) => parts.push(source(s, p.stage)),
            Operand2::Sampler(s) => parts.push(format!("{}{} <{}>", s.reg.name(p.stage), s.num, sampler_options(s).join(","))),
            Operand2::None => {}
        }
        let _ = writeln!(out, "{}{} {}", "  ".repeat(depth), t.op, parts.join(", "));
        if t.op.opens_block() || t.op == Op::Els {
            depth += 1;
        }
    }
    out
}
