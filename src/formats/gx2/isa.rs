//! Latte (R600/R700) microcode: opcode tables and decoding of the CF stream, ALU clauses (VLIW5
//! groups with literals), TEX and VTX clauses. Bit layouts: docs/isa/gx2.md §5-§7 (decaf
//! latte_instructions.h / Mesa r700_sq.h); opcode numbers: decaf latte_instructions_def.inl.

use crate::formats::ShaderError;

// ---------------------------------------------------------------------------------------------
// Opcode tables
// ---------------------------------------------------------------------------------------------

pub const CF_NAMES: [&str; 30] = [
    "NOP",
    "TEX",
    "VTX",
    "VTX_TC",
    "LOOP_START",
    "LOOP_END",
    "LOOP_START_DX10",
    "LOOP_START_NO_AL",
    "LOOP_CONTINUE",
    "LOOP_BREAK",
    "JUMP",
    "PUSH",
    "PUSH_ELSE",
    "ELSE",
    "POP",
    "POP_JUMP",
    "POP_PUSH",
    "POP_PUSH_ELSE",
    "CALL",
    "CALL_FS",
    "RETURN",
    "EMIT_VERTEX",
    "EMIT_CUT_VERTEX",
    "CUT_VERTEX",
    "KILL",
    "END_PROGRAM",
    "WAIT_ACK",
    "TEX_ACK",
    "VTX_ACK",
    "VTX_TC_ACK",
];

pub fn cf_name(op: u32) -> Option<&'static str> {
    CF_NAMES.get(op as usize).copied()
}

pub fn exp_name(op: u32) -> Option<&'static str> {
    Some(match op {
        0x20 => "MEM_STREAM0",
        0x21 => "MEM_STREAM1",
        0x22 => "MEM_STREAM2",
        0x23 => "MEM_STREAM3",
        0x24 => "MEM_SCRATCH",
        0x25 => "MEM_REDUCTION",
        0x26 => "MEM_RING",
        0x27 => "EXP",
        0x28 => "EXP_DONE",
        0x3A => "MEM_EXPORT",
        _ => return None,
    })
}

pub const ALU_CF_NAMES: [&str; 8] =
    ["ALU", "ALU_PUSH_BEFORE", "ALU_POP_AFTER", "ALU_POP2_AFTER", "ALU_EXT", "ALU_CONTINUE", "ALU_BREAK", "ALU_ELSE_AFTER"];

/// ALU opcode flags.
pub mod flags {
    pub const VEC: u8 = 1;
    pub const TRANS: u8 = 2;
    pub const REDUC: u8 = 4;
    pub const PRED: u8 = 8;
}

use flags::*;

/// (opcode, name, source count, flags) for OP2.
pub const OP2: &[(u32, &str, u8, u8)] = &[
    (0x00, "ADD", 2, VEC | TRANS),
    (0x01, "MUL", 2, VEC | TRANS),
    (0x02, "MUL_IEEE", 2, VEC | TRANS),
    (0x03, "MAX", 2, VEC | TRANS),
    (0x04, "MIN", 2, VEC | TRANS),
    (0x05, "MAX_DX10", 2, VEC | TRANS),
    (0x06, "MIN_DX10", 2, VEC | TRANS),
    (0x07, "FREXP_64", 1, VEC | REDUC),
    (0x08, "SETE", 2, VEC | TRANS),
    (0x09, "SETGT", 2, VEC | TRANS),
    (0x0A, "SETGE", 2, VEC | TRANS),
    (0x0B, "SETNE", 2, VEC | TRANS),
    (0x0C, "SETE_DX10", 2, VEC | TRANS),
    (0x0D, "SETGT_DX10", 2, VEC | TRANS),
    (0x0E, "SETGE_DX10", 2, VEC | TRANS),
    (0x0F, "SETNE_DX10", 2, VEC | TRANS),
    (0x10, "FRACT", 1, VEC | TRANS),
    (0x11, "TRUNC", 1, VEC | TRANS),
    (0x12, "CEIL", 1, VEC | TRANS),
    (0x13, "RNDNE", 1, VEC | TRANS),
    (0x14, "FLOOR", 1, VEC | TRANS),
    (0x15, "MOVA", 1, VEC),
    (0x16, "MOVA_FLOOR", 1, VEC),
    (0x17, "ADD_64", 2, VEC | TRANS),
    (0x18, "MOVA_INT", 1, VEC),
    (0x19, "MOV", 1, VEC | TRANS),
    (0x1A, "NOP", 0, VEC | TRANS),
    (0x1B, "MUL_64", 2, VEC | REDUC),
    (0x1C, "FLT64_TO_FLT32", 1, VEC | REDUC),
    (0x1D, "FLT32_TO_FLT64", 1, VEC | REDUC),
    (0x1E, "PRED_SETGT_UINT", 2, VEC | TRANS | PRED),
    (0x1F, "PRED_SETGE_UINT", 2, VEC | TRANS | PRED),
    (0x20, "PRED_SETE", 2, VEC | TRANS | PRED),
    (0x21, "PRED_SETGT", 2, VEC | TRANS | PRED),
    (0x22, "PRED_SETGE", 2, VEC | TRANS | PRED),
    (0x23, "PRED_SETNE", 2, VEC | TRANS | PRED),
    (0x24, "PRED_SET_INV", 2, VEC | TRANS | PRED),
    (0x25, "PRED_SET_POP", 2, VEC | TRANS | PRED),
    (0x26, "PRED_SET_CLR", 2, VEC | TRANS | PRED),
    (0x27, "PRED_SET_RESTORE", 2, VEC | TRANS | PRED),
    (0x28, "PRED_SETE_PUSH", 2, VEC | TRANS | PRED),
    (0x29, "PRED_SETGT_PUSH", 2, VEC | TRANS | PRED),
    (0x2A, "PRED_SETGE_PUSH", 2, VEC | TRANS | PRED),
    (0x2B, "PRED_SETNE_PUSH", 2, VEC | TRANS | PRED),
    (0x2C, "KILLE", 2, VEC | TRANS),
    (0x2D, "KILLGT", 2, VEC | TRANS),
    (0x2E, "KILLGE", 2, VEC | TRANS),
    (0x2F, "KILLNE", 2, VEC | TRANS),
    (0x30, "AND_INT", 2, VEC | TRANS),
    (0x31, "OR_INT", 2, VEC | TRANS),
    (0x32, "XOR_INT", 2, VEC | TRANS),
    (0x33, "NOT_INT", 1, VEC | TRANS),
    (0x34, "ADD_INT", 2, VEC | TRANS),
    (0x35, "SUB_INT", 2, VEC | TRANS),
    (0x36, "MAX_INT", 2, VEC | TRANS),
    (0x37, "MIN_INT", 2, VEC | TRANS),
    (0x38, "MAX_UINT", 2, VEC | TRANS),
    (0x39, "MIN_UINT", 2, VEC | TRANS),
    (0x3A, "SETE_INT", 2, VEC | TRANS),
    (0x3B, "SETGT_INT", 2, VEC | TRANS),
    (0x3C, "SETGE_INT", 2, VEC | TRANS),
    (0x3D, "SETNE_INT", 2, VEC | TRANS),
    (0x3E, "SETGT_UINT", 2, VEC | TRANS),
    (0x3F, "SETGE_UINT", 2, VEC | TRANS),
    (0x40, "KILLGT_UINT", 2, VEC | TRANS),
    (0x41, "KILLGE_UINT", 2, VEC | TRANS),
    (0x42, "PRED_SETE_INT", 2, VEC | TRANS | PRED),
    (0x43, "PRED_SETGT_INT", 2, VEC | TRANS | PRED),
    (0x44, "PRED_SETGE_INT", 2, VEC | TRANS | PRED),
    (0x45, "PRED_SETNE_INT", 2, VEC | TRANS | PRED),
    (0x46, "KILLE_INT", 2, VEC | TRANS),
    (0x47, "KILLGT_INT", 2, VEC | TRANS),
    (0x48, "KILLGE_INT", 2, VEC | TRANS),
    (0x49, "KILLNE_INT", 2, VEC | TRANS),
    (0x4A, "PRED_SETE_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x4B, "PRED_SETGT_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x4C, "PRED_SETGE_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x4D, "PRED_SETNE_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x4E, "PRED_SETLT_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x4F, "PRED_SETLE_PUSH_INT", 2, VEC | TRANS | PRED),
    (0x50, "DOT4", 2, VEC | REDUC),
    (0x51, "DOT4_IEEE", 2, VEC | REDUC),
    (0x52, "CUBE", 2, VEC | REDUC),
    (0x53, "MAX4", 1, VEC | REDUC),
    (0x54, "GROUP_BARRIER", 0, VEC | TRANS),
    (0x55, "GROUP_SEQ_BEGIN", 0, VEC | TRANS),
    (0x56, "GROUP_SEQ_END", 0, VEC | TRANS),
    (0x57, "SET_MODE", 0, VEC | TRANS),
    (0x58, "SET_CF_IDX0", 0, VEC | TRANS),
    (0x59, "SET_CF_IDX1", 0, VEC | TRANS),
    (0x5A, "SET_LDS_SIZE", 0, VEC | TRANS),
    (0x5B, "MUL_INT24", 2, VEC | TRANS),
    (0x5C, "MULHI_INT24", 2, VEC | TRANS),
    (0x60, "MOVA_GPR_INT", 1, VEC),
    (0x61, "EXP_IEEE", 1, TRANS),
    (0x62, "LOG_CLAMPED", 1, TRANS),
    (0x63, "LOG_IEEE", 1, TRANS),
    (0x64, "RECIP_CLAMPED", 1, TRANS),
    (0x65, "RECIP_FF", 1, TRANS),
    (0x66, "RECIP_IEEE", 1, TRANS),
    (0x67, "RECIPSQRT_CLAMPED", 1, TRANS),
    (0x68, "RECIPSQRT_FF", 1, TRANS),
    (0x69, "RECIPSQRT_IEEE", 1, TRANS),
    (0x6A, "SQRT_IEEE", 1, TRANS),
    (0x6B, "FLT_TO_INT", 1, TRANS),
    (0x6C, "INT_TO_FLT", 1, TRANS),
    (0x6D, "UINT_TO_FLT", 1, TRANS),
    (0x6E, "SIN", 1, TRANS),
    (0x6F, "COS", 1, TRANS),
    (0x70, "ASHR_INT", 2, VEC | TRANS),
    (0x71, "LSHR_INT", 2, VEC | TRANS),
    (0x72, "LSHL_INT", 2, VEC | TRANS),
    (0x73, "MULLO_INT", 2, TRANS),
    (0x74, "MULHI_INT", 2, TRANS),
    (0x75, "MULLO_UINT", 2, TRANS),
    (0x76, "MULHI_UINT", 2, TRANS),
    (0x77, "RECIP_INT", 1, TRANS),
    (0x78, "RECIP_UINT", 1, TRANS),
    (0x79, "FLT_TO_UINT", 1, TRANS),
    (0x7A, "LDEXP_64", 2, VEC | REDUC),
    (0x7B, "FRACT_64", 1, VEC | REDUC),
    (0x7C, "PRED_SETGT_64", 2, VEC | REDUC | PRED),
    (0x7D, "PRED_SETE_64", 2, VEC | REDUC | PRED),
    (0x7E, "PRED_SETGE_64", 2, VEC | REDUC | PRED),
];

/// (opcode, name, flags) for OP3 (all take 3 sources).
pub const OP3: &[(u32, &str, u8)] = &[
    (0x04, "BFE_UINT", VEC | TRANS),
    (0x05, "BFE_INT", VEC | TRANS),
    (0x06, "BFI_INT", VEC | TRANS),
    (0x07, "FMA", VEC | TRANS),
    (0x08, "MULADD_64", VEC | REDUC),
    (0x09, "MULADD_64_M2", VEC | REDUC),
    (0x0A, "MULADD_64_M4", VEC | REDUC),
    (0x0B, "MULADD_64_D2", VEC | REDUC),
    (0x0C, "MUL_LIT", TRANS),
    (0x0D, "MUL_LIT_M2", TRANS),
    (0x0E, "MUL_LIT_M4", TRANS),
    (0x0F, "MUL_LIT_D2", TRANS),
    (0x10, "MULADD", VEC | TRANS),
    (0x11, "MULADD_M2", VEC | TRANS),
    (0x12, "MULADD_M4", VEC | TRANS),
    (0x13, "MULADD_D2", VEC | TRANS),
    (0x14, "MULADD_IEEE", VEC | TRANS),
    (0x15, "MULADD_IEEE_M2", VEC | TRANS),
    (0x16, "MULADD_IEEE_M4", VEC | TRANS),
    (0x17, "MULADD_IEEE_D2", VEC | TRANS),
    (0x18, "CNDE", VEC | TRANS),
    (0x19, "CNDGT", VEC | TRANS),
    (0x1A, "CNDGE", VEC | TRANS),
    (0x1C, "CNDE_INT", VEC | TRANS),
    (0x1D, "CNDGT_INT", VEC | TRANS),
    (0x1E, "CNDGE_INT", VEC | TRANS),
];

pub const TEX_NAMES: [&str; 38] = [
    "VTX_FETCH",
    "VTX_SEMANTIC",
    "MEM",
    "LD",
    "GET_TEXTURE_INFO",
    "GET_SAMPLE_INFO",
    "GET_COMP_TEX_LOD",
    "GET_GRADIENTS_H",
    "GET_GRADIENTS_V",
    "GET_LERP",
    "KEEP_GRADIENTS",
    "SET_GRADIENTS_H",
    "SET_GRADIENTS_V",
    "PASS",
    "SET_CUBEMAP_INDEX",
    "FETCH4",
    "SAMPLE",
    "SAMPLE_L",
    "SAMPLE_LB",
    "SAMPLE_LZ",
    "SAMPLE_G",
    "SAMPLE_G_L",
    "SAMPLE_G_LB",
    "SAMPLE_G_LZ",
    "SAMPLE_C",
    "SAMPLE_C_L",
    "SAMPLE_C_LB",
    "SAMPLE_C_LZ",
    "SAMPLE_C_G",
    "SAMPLE_C_G_L",
    "SAMPLE_C_G_LB",
    "SAMPLE_C_G_LZ",
    "SET_TEXTURE_OFFSETS",
    "GATHER4",
    "GATHER4_O",
    "GATHER4_C",
    "GATHER4_C_O",
    "GET_BUFFER_RESINFO",
];

pub fn vtx_name(op: u32) -> Option<&'static str> {
    Some(match op {
        0 => "FETCH",
        1 => "SEMANTIC",
        0xE => "BUFINFO",
        _ => return None,
    })
}

pub fn op2_info(op: u32) -> Option<(&'static str, u8, u8)> {
    OP2.iter().find(|e| e.0 == op).map(|e| (e.1, e.2, e.3))
}

pub fn op3_info(op: u32) -> Option<(&'static str, u8)> {
    OP3.iter().find(|e| e.0 == op).map(|e| (e.1, e.2))
}

// ---------------------------------------------------------------------------------------------
// Decoded instructions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Kcache {
    pub bank: u32,
    /// 0 none, 1 lock 16 constants, 2 lock 32, 3 loop-index relative.
    pub mode: u32,
    /// In units of 16 vec4 constants.
    pub addr: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Cf {
    /// Normal CF instruction (CF_WORD0/1).
    Normal {
        op: u32,
        addr: u32,
        /// TEX/VTX: instruction count (already +1).
        count: u32,
        cf_const: u32,
        cond: u32,
        pop_count: u32,
        call_count: u32,
        vpm: bool,
        wqm: bool,
        barrier: bool,
    },
    Alu {
        /// 8..15.
        op: u32,
        addr: u32,
        /// Slot count (already +1).
        count: u32,
        kcache: [Kcache; 2],
        alt_const: bool,
        wqm: bool,
        barrier: bool,
    },
    Export {
        op: u32,
        /// 0 PIXEL, 1 POS, 2 PARAM (3 = reserved / memory "read" for MEM ops).
        ty: u32,
        array_base: u32,
        rw_gpr: u32,
        rw_rel: bool,
        index_gpr: u32,
        elem_size: u32,
        /// EXP/EXP_DONE: SEL_X..W (0-3 xyzw, 4 = 0, 5 = 1, 7 = masked).
        sel: [u8; 4],
        /// MEM_*: ARRAY_SIZE, COMP_MASK.
        array_size: u32,
        comp_mask: u32,
        burst_count: u32,
        vpm: bool,
        barrier: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct CfInst {
    /// Index in the CF stream (64-bit slot).
    pub pc: u32,
    pub cf: Cf,
    pub end_of_program: bool,
    pub raw: [u32; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AluSrc {
    pub sel: u32,
    pub rel: bool,
    pub chan: u8,
    pub neg: bool,
    pub abs: bool,
    /// The literal dword when `sel == 253`.
    pub literal: u32,
}

pub const SEL_LITERAL: u32 = 253;
pub const SEL_PV: u32 = 254;
pub const SEL_PS: u32 = 255;

#[derive(Clone, Debug, PartialEq)]
pub struct AluInst {
    /// 0-3 = x..w, 4 = t.
    pub slot: usize,
    pub op3: bool,
    pub op: u32,
    pub name: &'static str,
    pub flags: u8,
    pub srcs: Vec<AluSrc>,
    pub index_mode: u32,
    pub pred_sel: u32,
    pub dst_gpr: u32,
    pub dst_rel: bool,
    pub dst_chan: u8,
    pub clamp: bool,
    pub write_mask: bool,
    pub omod: u32,
    pub update_exec_mask: bool,
    pub update_pred: bool,
    pub bank_swizzle: u32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AluGroup {
    /// Global instruction-group number (counts groups and fetches across clauses, as the
    /// latte-assembler listing does).
    pub id: u32,
    pub insts: Vec<AluInst>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TexInst {
    pub id: u32,
    pub op: u32,
    pub name: &'static str,
    pub bc_frac_mode: bool,
    pub fetch_whole_quad: bool,
    pub resource_id: u32,
    pub src_gpr: u32,
    pub src_rel: bool,
    pub alt_const: bool,
    pub dst_gpr: u32,
    pub dst_rel: bool,
    pub dst_sel: [u8; 4],
    /// LOD_BIAS raw 7-bit s1.3.3 field.
    pub lod_bias: u32,
    /// COORD_TYPE_X..W: true = normalized.
    pub coord_norm: [bool; 4],
    pub offset: [i32; 3],
    pub sampler_id: u32,
    pub src_sel: [u8; 4],
    pub raw: [u32; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub struct VtxInst {
    pub id: u32,
    pub op: u32,
    pub name: &'static str,
    pub fetch_type: u32,
    pub buffer_id: u32,
    pub src_gpr: u32,
    pub src_rel: bool,
    pub src_sel_x: u8,
    pub mega_fetch_count: u32,
    pub dst_gpr: u32,
    pub dst_rel: bool,
    pub dst_sel: [u8; 4],
    pub use_const_fields: bool,
    pub data_format: u32,
    pub num_format_all: u32,
    pub format_comp_all: bool,
    pub srf_mode_all: bool,
    pub offset: u32,
    pub endian_swap: u32,
    pub mega_fetch: bool,
    pub raw: [u32; 3],
}

#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    None,
    Alu(Vec<AluGroup>),
    Tex(Vec<TexInst>),
    Vtx(Vec<VtxInst>),
}

/// A decoded program: the CF stream up to END_OF_PROGRAM, each CF's clause, then the
/// subroutines placed after END_OF_PROGRAM that a CALL targets (up to their RETURN).
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub cfs: Vec<(CfInst, Clause)>,
    /// Number of CFs up to and including the one with END_OF_PROGRAM (`cfs[main_len..]` are
    /// subroutine bodies).
    pub main_len: usize,
}

fn word(p: &[u8], i: usize) -> Option<u32> {
    p.get(i * 4..i * 4 + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap()))
}

fn bits(w: u32, lo: u32, n: u32) -> u32 {
    (w >> lo) & ((1u32 << n) - 1)
}

fn err(at: usize, msg: String) -> ShaderError {
    ShaderError::at(at as u64, msg)
}

/// Decodes the CF stream and every clause. Offsets in errors are program-relative bytes.
pub fn decode(prog: &[u8]) -> Result<Program, ShaderError> {
    let nslots = prog.len() / 8;
    let mut cfs = Vec::new();
    let mut gid = 0u32;
    let mut pc = 0usize;
    let mut main_len = None;
    loop {
        if pc >= nslots {
            if main_len.is_some() {
                return Err(err(pc * 8, format!("CALL target subroutine runs past the end of the {}-byte program without RETURN", prog.len())));
            }
            return Err(err(pc * 8, format!("CF stream runs past the end of the {}-byte program without END_OF_PROGRAM", prog.len())));
        }
        let (w0, w1) = (word(prog, pc * 2).unwrap(), word(prog, pc * 2 + 1).unwrap());
        let class = bits(w1, 28, 2);
        let mut eop = false;
        let (cf, clause) = if class >= 2 {
            let op = bits(w1, 26, 4);
            let addr = bits(w0, 0, 22);
            let count = bits(w1, 18, 7) + 1;
            let kcache = [
                Kcache { bank: bits(w0, 22, 4), mode: bits(w0, 30, 2), addr: bits(w1, 2, 8) },
                Kcache { bank: bits(w0, 26, 4), mode: bits(w1, 0, 2), addr: bits(w1, 10, 8) },
            ];
            let groups = decode_alu(prog, addr as usize, count as usize, &mut gid)?;
            (
                Cf::Alu { op, addr, count, kcache, alt_const: bits(w1, 25, 1) != 0, wqm: bits(w1, 30, 1) != 0, barrier: bits(w1, 31, 1) != 0 },
                Clause::Alu(groups),
            )
        } else {
            let op = bits(w1, 23, 7);
            eop = bits(w1, 21, 1) != 0;
            let vpm = bits(w1, 22, 1) != 0;
            let barrier = bits(w1, 31, 1) != 0;
            if class == 1 {
                if exp_name(op).is_none() {
                    return Err(err(pc * 8, format!("CF {pc}: unknown export/memory instruction 0x{op:02X}")));
                }
                let mem = op != 0x27 && op != 0x28;
                (
                    Cf::Export {
                        op,
                        ty: bits(w0, 13, 2),
                        array_base: bits(w0, 0, 13),
                        rw_gpr: bits(w0, 15, 7),
                        rw_rel: bits(w0, 22, 1) != 0,
                        index_gpr: bits(w0, 23, 7),
                        elem_size: bits(w0, 30, 2),
                        sel: if mem { [0, 1, 2, 3] } else { [0, 3, 6, 9].map(|s| bits(w1, s, 3) as u8) },
                        array_size: if mem { bits(w1, 0, 12) } else { 0 },
                        comp_mask: if mem { bits(w1, 12, 4) } else { 0xF },
                        burst_count: bits(w1, 17, 4),
                        vpm,
                        barrier,
                    },
                    Clause::None,
                )
            } else {
                if cf_name(op).is_none() {
                    return Err(err(pc * 8, format!("CF {pc}: unknown CF instruction 0x{op:02X}")));
                }
                let count = (bits(w1, 10, 3) | bits(w1, 19, 1) << 3) + 1;
                let addr = w0;
                let clause = match op {
                    1 | 0x1B => Clause::Tex(decode_tex(prog, addr as usize, count as usize, &mut gid)?),
                    2 | 3 | 0x1C | 0x1D => Clause::Vtx(decode_vtx(prog, addr as usize, count as usize, &mut gid)?),
                    _ => Clause::None,
                };
                (
                    Cf::Normal {
                        op,
                        addr,
                        count,
                        cf_const: bits(w1, 3, 5),
                        cond: bits(w1, 8, 2),
                        pop_count: bits(w1, 0, 3),
                        call_count: bits(w1, 13, 6),
                        vpm,
                        wqm: bits(w1, 30, 1) != 0,
                        barrier,
                    },
                    clause,
                )
            }
        };
        cfs.push((CfInst { pc: pc as u32, cf, end_of_program: eop, raw: [w0, w1] }, clause));
        if eop && main_len.is_none() {
            main_len = Some(cfs.len());
        }
        if main_len.is_some() {
            // keep decoding while a CALL targets a CF not decoded yet, up to a RETURN
            let last_call = cfs.iter().filter_map(|(c, _)| match c.cf {
                Cf::Normal { op: 0x12, addr, .. } => Some(addr as usize),
                _ => None,
            });
            let want = last_call.max().unwrap_or(0);
            let is_return = matches!(cfs.last().unwrap().0.cf, Cf::Normal { op: 0x14, .. });
            if pc >= want && (is_return || Some(cfs.len()) == main_len) {
                break;
            }
        }
        pc += 1;
    }
    Ok(Program { cfs, main_len: main_len.unwrap() })
}

fn decode_alu(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<AluGroup>, ShaderError> {
    let end = addr + count;
    if end * 8 > prog.len() {
        return Err(err(addr * 8, format!("ALU clause [{addr}, {end}) lies past the end of the program")));
    }
    let mut groups = Vec::new();
    let mut i = addr;
    while i < end {
        let mut insts: Vec<AluInst> = Vec::new();
        let mut taken = [false; 5];
        let mut lit_need = 0usize;
        loop {
            if i >= end {
                return Err(err(i * 8, "ALU group runs past the end of its clause (no LAST bit)".into()));
            }
            let (w0, w1) = (word(prog, i * 2).unwrap(), word(prog, i * 2 + 1).unwrap());
            i += 1;
            let op3 = bits(w1, 15, 3) != 0;
            let (op, name, nsrc, fl) = if op3 {
                let op = bits(w1, 13, 5);
                let (n, f) = op3_info(op).ok_or_else(|| err((i - 1) * 8, format!("unknown ALU OP3 opcode 0x{op:02X}")))?;
                (op, n, 3u8, f)
            } else {
                let op = bits(w1, 7, 11);
                let (n, s, f) = op2_info(op).ok_or_else(|| err((i - 1) * 8, format!("unknown ALU OP2 opcode 0x{op:02X}")))?;
                (op, n, s, f)
            };
            let mut srcs = vec![
                AluSrc {
                    sel: bits(w0, 0, 9),
                    rel: bits(w0, 9, 1) != 0,
                    chan: bits(w0, 10, 2) as u8,
                    neg: bits(w0, 12, 1) != 0,
                    abs: false,
                    literal: 0,
                },
                AluSrc {
                    sel: bits(w0, 13, 9),
                    rel: bits(w0, 22, 1) != 0,
                    chan: bits(w0, 23, 2) as u8,
                    neg: bits(w0, 25, 1) != 0,
                    abs: false,
                    literal: 0,
                },
                AluSrc {
                    sel: bits(w1, 0, 9),
                    rel: bits(w1, 9, 1) != 0,
                    chan: bits(w1, 10, 2) as u8,
                    neg: bits(w1, 12, 1) != 0,
                    abs: false,
                    literal: 0,
                },
            ];
            if !op3 {
                srcs[0].abs = bits(w1, 0, 1) != 0;
                srcs[1].abs = bits(w1, 1, 1) != 0;
            }
            srcs.truncate(nsrc as usize);
            for s in &srcs {
                if s.sel == SEL_LITERAL {
                    lit_need = lit_need.max(s.chan as usize + 1);
                }
            }
            let dst_chan = bits(w1, 29, 2) as u8;
            let slot = if fl & VEC == 0 || taken[dst_chan as usize] { 4 } else { dst_chan as usize };
            if taken[slot] {
                return Err(err((i - 1) * 8, format!("ALU group has two instructions for slot {}", b"xyzwt"[slot] as char)));
            }
            taken[slot] = true;
            insts.push(AluInst {
                slot,
                op3,
                op,
                name,
                flags: fl,
                srcs,
                index_mode: bits(w0, 26, 3),
                pred_sel: bits(w0, 29, 2),
                dst_gpr: bits(w1, 21, 7),
                dst_rel: bits(w1, 28, 1) != 0,
                dst_chan,
                clamp: bits(w1, 31, 1) != 0,
                write_mask: if op3 { true } else { bits(w1, 4, 1) != 0 },
                omod: if op3 { 0 } else { bits(w1, 5, 2) },
                update_exec_mask: !op3 && bits(w1, 2, 1) != 0,
                update_pred: !op3 && bits(w1, 3, 1) != 0,
                bank_swizzle: bits(w1, 18, 3),
            });
            if bits(w0, 31, 1) != 0 {
                break;
            }
        }
        if lit_need > 0 {
            let slots = lit_need.div_ceil(2);
            if i + slots > end {
                return Err(err(i * 8, "ALU literals run past the end of the clause".into()));
            }
            let lits: Vec<u32> = (0..lit_need).map(|k| word(prog, i * 2 + k).unwrap()).collect();
            for inst in &mut insts {
                for s in &mut inst.srcs {
                    if s.sel == SEL_LITERAL {
                        s.literal = lits[s.chan as usize];
                    }
                }
            }
            i += slots;
        }
        insts.sort_by_key(|x| x.slot);
        groups.push(AluGroup { id: *gid, insts });
        *gid += 1;
    }
    Ok(groups)
}

fn fetch_words(prog: &[u8], addr: usize, count: usize, what: &str) -> Result<Vec<[u32; 3]>, ShaderError> {
    if (addr + count * 2) * 8 > prog.len() {
        return Err(err(addr * 8, format!("{what} clause at slot {addr} ({count} fetches) lies past the end of the program")));
    }
    Ok((0..count).map(|k| [0, 1, 2].map(|j| word(prog, addr * 2 + k * 4 + j).unwrap())).collect())
}

fn sext(v: u32, n: u32) -> i32 {
    ((v << (32 - n)) as i32) >> (32 - n)
}

fn decode_tex(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<TexInst>, ShaderError> {
    let mut out = Vec::new();
    for (k, w) in fetch_words(prog, addr, count, "TEX")?.into_iter().enumerate() {
        let op = bits(w[0], 0, 5);
        let name = TEX_NAMES.get(op as usize).copied().ok_or_else(|| err((addr + 2 * k) * 8, format!("unknown TEX instruction 0x{op:02X}")))?;
        out.push(TexInst {
            id: *gid,
            op,
            name,
            bc_frac_mode: bits(w[0], 5, 1) != 0,
            fetch_whole_quad: bits(w[0], 7, 1) != 0,
            resource_id: bits(w[0], 8, 8),
            src_gpr: bits(w[0], 16, 7),
            src_rel: bits(w[0], 23, 1) != 0,
            alt_const: bits(w[0], 24, 1) != 0,
            dst_gpr: bits(w[1], 0, 7),
            dst_rel: bits(w[1], 7, 1) != 0,
            dst_sel: [9, 12, 15, 18].map(|s| bits(w[1], s, 3) as u8),
            lod_bias: bits(w[1], 21, 7),
            coord_norm: [28, 29, 30, 31].map(|s| bits(w[1], s, 1) != 0),
            offset: [0, 5, 10].map(|s| sext(bits(w[2], s, 5), 5)),
            sampler_id: bits(w[2], 15, 5),
            src_sel: [20, 23, 26, 29].map(|s| bits(w[2], s, 3) as u8),
            raw: w,
        });
        *gid += 1;
    }
    Ok(out)
}

fn decode_vtx(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<VtxInst>, ShaderError> {
    let mut out = Vec::new();
    for (k, w) in fetch_words(prog, addr, count, "VTX")?.into_iter().enumerate() {
        let op = bits(w[0], 0, 5);
        let name = vtx_name(op).ok_or_else(|| err((addr + 2 * k) * 8, format!("unknown VTX instruction 0x{op:02X}")))?;
        out.push(VtxInst {
            id: *gid,
            op,
            name,
            fetch_type: bits(w[0], 5, 2),
            buffer_id: bits(w[0], 8, 8),
            src_gpr: bits(w[0], 16, 7),
            src_rel: bits(w[0], 23, 1) != 0,
            src_sel_x: bits(w[0], 24, 2) as u8,
            mega_fetch_count: bits(w[0], 26, 6),
            dst_gpr: bits(w[1], 0, 7),
            dst_rel: bits(w[1], 7, 1) != 0,
            dst_sel: [9, 12, 15, 18].map(|s| bits(w[1], s, 3) as u8),
            use_const_fields: bits(w[1], 21, 1) != 0,
            data_format: bits(w[1], 22, 6),
            num_format_all: bits(w[1], 28, 2),
            format_comp_all: bits(w[1], 30, 1) != 0,
            srf_mode_all: bits(w[1], 31, 1) != 0,
            offset: bits(w[2], 0, 16),
            endian_swap: bits(w[2], 16, 2),
            mega_fetch: bits(w[2], 19, 1) != 0,
            raw: w,
        });
        *gid += 1;
    }
    Ok(out)
}
