//! PICA200 instruction decoding (docs/isa/pica.md §3-§4; bit layouts from nihstro `shader_bytecode.h`
//! and the picasso encoder). One 32-bit word per instruction plus the operand-descriptor table.

use super::error::PicaError;

use crate::formats::opcodes::{Row, Status, Status::*};

/// A row of the PICA opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The 6-bit opcode range (`cmp` 0x2E-0x2F, `madi` 0x30-0x37, `mad` 0x38-0x3F).
    pub lo: u32,
    pub hi: u32,
    /// The instruction format (nihstro `shader_bytecode.h`: 0, 1, 1i, 1u, 1c, 2, 3, 4, 5, 5i).
    pub format: &'static str,
    /// Source operands.
    pub srcs: u8,
    pub status: Status,
}

const fn op(lo: u32, hi: u32, format: &'static str, srcs: u8, status: Status) -> OpInfo {
    OpInfo { lo, hi, format, srcs, status }
}

const GS_ONLY: &str = "geometry shaders only (the vertex stage has no emitter)";

crate::op_enum! {
    /// The 39 mnemonics, one row each (docs/isa/pica.md §3; opcode numbers and formats from
    /// nihstro `shader_bytecode.h` and the picasso encoder).
    pub enum Op: OpInfo {
        Add("add") => op(0x00, 0x00, "1", 2, Translated),
        Dp3("dp3") => op(0x01, 0x01, "1", 2, Translated),
        Dp4("dp4") => op(0x02, 0x02, "1", 2, Translated),
        Dph("dph") => op(0x03, 0x03, "1", 2, Translated),
        Dst("dst") => op(0x04, 0x04, "1", 2, Translated),
        Ex2("ex2") => op(0x05, 0x05, "1u", 1, Translated),
        Lg2("lg2") => op(0x06, 0x06, "1u", 1, Translated),
        Litp("litp") => op(0x07, 0x07, "1u", 1, Translated),
        Mul("mul") => op(0x08, 0x08, "1", 2, Translated),
        Sge("sge") => op(0x09, 0x09, "1", 2, Translated),
        Slt("slt") => op(0x0A, 0x0A, "1", 2, Translated),
        Flr("flr") => op(0x0B, 0x0B, "1u", 1, Translated),
        Max("max") => op(0x0C, 0x0C, "1", 2, Translated),
        Min("min") => op(0x0D, 0x0D, "1", 2, Translated),
        Rcp("rcp") => op(0x0E, 0x0E, "1u", 1, Translated),
        Rsq("rsq") => op(0x0F, 0x0F, "1u", 1, Translated),
        Mova("mova") => op(0x12, 0x12, "1u", 1, Translated),
        Mov("mov") => op(0x13, 0x13, "1u", 1, Translated),
        Dphi("dphi") => op(0x18, 0x18, "1i", 2, Translated),
        Dsti("dsti") => op(0x19, 0x19, "1i", 2, Translated),
        Sgei("sgei") => op(0x1A, 0x1A, "1i", 2, Translated),
        Slti("slti") => op(0x1B, 0x1B, "1i", 2, Translated),
        Break("break") => op(0x20, 0x20, "0", 0, Translated),
        Nop("nop") => op(0x21, 0x21, "0", 0, Translated),
        End("end") => op(0x22, 0x22, "0", 0, Translated),
        Breakc("breakc") => op(0x23, 0x23, "2", 0, Translated),
        Call("call") => op(0x24, 0x24, "2", 0, Translated),
        Callc("callc") => op(0x25, 0x25, "2", 0, Translated),
        Callu("callu") => op(0x26, 0x26, "3", 0, Translated),
        Ifu("ifu") => op(0x27, 0x27, "3", 0, Translated),
        Ifc("ifc") => op(0x28, 0x28, "2", 0, Translated),
        Loop("loop") => op(0x29, 0x29, "3", 0, Translated),
        Emit("emit") => op(0x2A, 0x2A, "0", 0, Limited(GS_ONLY)),
        Setemit("setemit") => op(0x2B, 0x2B, "4", 0, Limited(GS_ONLY)),
        Jmpc("jmpc") => op(0x2C, 0x2C, "2", 0, Translated),
        Jmpu("jmpu") => op(0x2D, 0x2D, "3", 0, Translated),
        Cmp("cmp") => op(0x2E, 0x2F, "1c", 2, Translated),
        Madi("madi") => op(0x30, 0x37, "5i", 3, Translated),
        Mad("mad") => op(0x38, 0x3F, "5", 3, Translated),
    }
}

/// Every mnemonic (the table order).
pub const ALL_OPS: &[Op] = Op::ALL;

impl Op {
    /// The mnemonic of 6-bit opcode `opcode`, if it is used.
    pub fn from_opcode(opcode: u32) -> Option<Op> {
        Op::ALL.iter().copied().find(|o| (o.info().lo..=o.info().hi).contains(&opcode))
    }
    pub const fn status(self) -> Status {
        self.info().status
    }
}

/// Every PICA opcode as rows of the generated table (docs/opcodes/pica.md).
pub fn opcode_rows() -> Vec<Row> {
    Op::ALL
        .iter()
        .map(|o| {
            let i = o.info();
            let encoding = if i.lo == i.hi { format!("0x{:02X}", i.lo) } else { format!("0x{:02X}-0x{:02X}", i.lo, i.hi) };
            Row { class: "op", name: o.name(), encoding, operands: format!("format {}; {} src", i.format, i.srcs), status: i.status }
        })
        .collect()
}

/// A source register (7-bit encoding): 0x00-0x0F `v`, 0x10-0x1F `r`, 0x20-0x7F `c0..c95`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    V(u8),
    R(u8),
    C(u8),
}

impl Reg {
    pub fn from_raw(raw: u32) -> Reg {
        match raw & 0x7F {
            r @ 0x00..=0x0F => Reg::V(r as u8),
            r @ 0x10..=0x1F => Reg::R(r as u8 - 0x10),
            r => Reg::C(r as u8 - 0x20),
        }
    }
}

impl std::fmt::Display for Reg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Reg::V(i) => write!(f, "v{i}"),
            Reg::R(i) => write!(f, "r{i}"),
            Reg::C(i) => write!(f, "c{i}"),
        }
    }
}

/// A destination register (5-bit): 0x00-0x0F `o`, 0x10-0x1F `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DstReg {
    O(u8),
    R(u8),
}

impl std::fmt::Display for DstReg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DstReg::O(i) => write!(f, "o{i}"),
            DstReg::R(i) => write!(f, "r{i}"),
        }
    }
}

/// Relative-addressing register of an operand (the `idx` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rel {
    None,
    A0x,
    A0y,
    AL,
}

impl Rel {
    fn from_raw(v: u32) -> Rel {
        [Rel::None, Rel::A0x, Rel::A0y, Rel::AL][v as usize & 3]
    }
    pub fn name(self) -> &'static str {
        match self {
            Rel::None => "",
            Rel::A0x => "a0.x",
            Rel::A0y => "a0.y",
            Rel::AL => "aL",
        }
    }
}

/// One source operand after applying its operand descriptor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub reg: Reg,
    /// Relative addressing (only meaningful on `c` registers; ignored on `v`/`r`, as Azahar).
    pub rel: Rel,
    /// Lane `i` reads lane `swizzle[i]`.
    pub swizzle: [u8; 4],
    pub negate: bool,
}

/// Condition of `ifc`/`jmpc`/`callc`/`breakc`: `(refx == cc.x) op (refy == cc.y)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowCond {
    pub refx: bool,
    pub refy: bool,
    /// 0 OR, 1 AND, 2 X only, 3 Y only.
    pub op: u8,
}

/// Comparison of `cmp` (3 bits; 6 and 7 are undefined).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpKind {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Unknown(u8),
}

impl CmpKind {
    fn from_raw(v: u32) -> CmpKind {
        match v & 7 {
            0 => CmpKind::Eq,
            1 => CmpKind::Ne,
            2 => CmpKind::Lt,
            3 => CmpKind::Le,
            4 => CmpKind::Gt,
            5 => CmpKind::Ge,
            x => CmpKind::Unknown(x as u8),
        }
    }
    pub fn name(self) -> String {
        match self {
            CmpKind::Eq => "eq".into(),
            CmpKind::Ne => "ne".into(),
            CmpKind::Lt => "lt".into(),
            CmpKind::Le => "le".into(),
            CmpKind::Gt => "gt".into(),
            CmpKind::Ge => "ge".into(),
            CmpKind::Unknown(x) => format!("cmp{x}"),
        }
    }
}

/// A decoded instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Instr {
    /// Formats 1, 1i, 1u: `srcs` has 1 (1u) or 2 entries, already un-inverted (src1 first).
    Arith { op: Op, dst: DstReg, mask: u8, srcs: Vec<Operand>, desc: u8 },
    /// Format 1c.
    Cmp { x: CmpKind, y: CmpKind, src1: Operand, src2: Operand, desc: u8 },
    /// Formats 5 / 5i (`op` is Mad or Madi).
    Mad { op: Op, dst: DstReg, mask: u8, src1: Operand, src2: Operand, src3: Operand, desc: u8 },
    /// Format 0.
    Simple(Op),
    /// Formats 2 and 3. `cond` for the *c forms, `bool_id` for ifu/callu/jmpu, `int_id` for loop.
    Flow { op: Op, cond: Option<FlowCond>, bool_id: u8, int_id: u8, dest: u32, num: u32 },
    /// Format 4.
    Setemit { vertex: u8, prim: bool, winding: bool },
}

impl Instr {
    pub fn op(&self) -> Op {
        match self {
            Instr::Arith { op, .. } | Instr::Mad { op, .. } | Instr::Simple(op) | Instr::Flow { op, .. } => *op,
            Instr::Cmp { .. } => Op::Cmp,
            Instr::Setemit { .. } => Op::Setemit,
        }
    }
}

/// Lanes enabled by an operand descriptor, IR order (bit 0 = x; the descriptor has bit 3 = x).
pub fn desc_mask(desc: u32) -> u8 {
    let m = desc & 0xF;
    ((m >> 3) & 1 | (m >> 1) & 2 | (m << 1) & 4 | (m << 3) & 8) as u8
}

/// Swizzle of source `n` (0, 1, 2) of a descriptor: selector for lane 0 in the top bits.
pub fn desc_swizzle(desc: u32, n: u32) -> [u8; 4] {
    let base = [5, 14, 23][n as usize];
    let s = desc >> base;
    [(s >> 6 & 3) as u8, (s >> 4 & 3) as u8, (s >> 2 & 3) as u8, (s & 3) as u8]
}

pub fn desc_negate(desc: u32, n: u32) -> bool {
    desc >> [4, 13, 22][n as usize] & 1 != 0
}

/// Decodes word `pc` of `code`. Operand descriptor indices past the table are an error naming
/// the instruction.
pub fn decode(code: &[u32], opdescs: &[u32], pc: usize) -> Result<Instr, PicaError> {
    let w = code[pc];
    let opcode = w >> 26;
    let op = Op::from_opcode(opcode).ok_or(PicaError::UnusedOpcode { pc: pc as u32, word: w, opcode })?;
    let bits = |hi: u32, lo: u32| (w >> lo) & ((1u32 << (hi - lo + 1)) - 1);
    let desc_of = |idx: u32| -> Result<u32, PicaError> {
        opdescs.get(idx as usize).copied().ok_or(PicaError::DescriptorPastTable { pc: pc as u32, op, idx, len: opdescs.len() })
    };
    let operand = |raw: u32, rel: Rel, desc: u32, n: u32| Operand {
        reg: Reg::from_raw(raw),
        rel,
        swizzle: desc_swizzle(desc, n),
        negate: desc_negate(desc, n),
    };
    let dst_of = |raw: u32| if raw < 0x10 { DstReg::O(raw as u8) } else { DstReg::R(raw as u8 - 0x10) };
    use Op::*;
    Ok(match op {
        Add | Dp3 | Dp4 | Dph | Dst | Mul | Sge | Slt | Max | Min => {
            let di = bits(6, 0);
            let d = desc_of(di)?;
            let rel = Rel::from_raw(bits(20, 19));
            Instr::Arith {
                op,
                dst: dst_of(bits(25, 21)),
                mask: desc_mask(d),
                srcs: vec![operand(bits(18, 12), rel, d, 0), operand(bits(11, 7), Rel::None, d, 1)],
                desc: di as u8,
            }
        }
        Dphi | Dsti | Sgei | Slti => {
            let di = bits(6, 0);
            let d = desc_of(di)?;
            let rel = Rel::from_raw(bits(20, 19));
            Instr::Arith {
                op,
                dst: dst_of(bits(25, 21)),
                mask: desc_mask(d),
                srcs: vec![operand(bits(18, 14), Rel::None, d, 0), operand(bits(13, 7), rel, d, 1)],
                desc: di as u8,
            }
        }
        Ex2 | Lg2 | Litp | Flr | Rcp | Rsq | Mova | Mov => {
            let di = bits(6, 0);
            let d = desc_of(di)?;
            Instr::Arith {
                op,
                dst: dst_of(bits(25, 21)),
                mask: desc_mask(d),
                srcs: vec![operand(bits(18, 12), Rel::from_raw(bits(20, 19)), d, 0)],
                desc: di as u8,
            }
        }
        Cmp => {
            let di = bits(6, 0);
            let d = desc_of(di)?;
            Instr::Cmp {
                x: CmpKind::from_raw(bits(26, 24)),
                y: CmpKind::from_raw(bits(23, 21)),
                src1: operand(bits(18, 12), Rel::from_raw(bits(20, 19)), d, 0),
                src2: operand(bits(11, 7), Rel::None, d, 1),
                desc: di as u8,
            }
        }
        Mad | Madi => {
            let di = bits(4, 0);
            let d = desc_of(di)?;
            let rel = Rel::from_raw(bits(23, 22));
            let (s2, s3) = if op == Mad {
                (operand(bits(16, 10), rel, d, 1), operand(bits(9, 5), Rel::None, d, 2))
            } else {
                (operand(bits(16, 12), Rel::None, d, 1), operand(bits(11, 5), rel, d, 2))
            };
            Instr::Mad {
                op,
                dst: dst_of(bits(28, 24)),
                mask: desc_mask(d),
                src1: operand(bits(21, 17), Rel::None, d, 0),
                src2: s2,
                src3: s3,
                desc: di as u8,
            }
        }
        Break | Nop | End | Emit => Instr::Simple(op),
        Breakc | Call | Callc | Ifc | Jmpc | Callu | Ifu | Loop | Jmpu => {
            let cond = matches!(op, Breakc | Callc | Ifc | Jmpc).then(|| FlowCond {
                refx: bits(25, 25) != 0,
                refy: bits(24, 24) != 0,
                op: bits(23, 22) as u8,
            });
            Instr::Flow { op, cond, bool_id: bits(25, 22) as u8, int_id: bits(23, 22) as u8, dest: bits(21, 10), num: bits(7, 0) }
        }
        Setemit => Instr::Setemit { vertex: bits(25, 24) as u8, prim: bits(23, 23) != 0, winding: bits(22, 22) != 0 },
    })
}
