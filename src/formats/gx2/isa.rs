//! Latte (R600/R700) microcode: opcode tables and decoding of the CF stream, ALU clauses (VLIW5
//! groups with literals), TEX and VTX clauses. Bit layouts: docs/isa/gx2.md §5-§7 (decaf
//! latte_instructions.h / Mesa r700_sq.h); opcode numbers: decaf latte_instructions_def.inl.

use super::error::{ClauseKind, Gx2Error, Table};

// ---------------------------------------------------------------------------------------------
// Opcode tables (one row per opcode: mnemonic, encoding, operands, translation status)
// ---------------------------------------------------------------------------------------------

use crate::formats::opcodes::{Row, Status, Status::*};
use crate::op_enum;

/// ALU opcode unit flags.
pub mod flags {
    /// Can sit in a vector slot (x, y, z, w).
    pub const VEC: u8 = 1;
    /// Can sit in the transcendental slot (t).
    pub const TRANS: u8 = 2;
    /// A reduction over the four vector slots (DOT4, CUBE, MAX4, the 64-bit ops).
    pub const REDUC: u8 = 4;
    /// Sets the predicate / execution mask.
    pub const PRED: u8 = 8;
}

use flags::*;

/// A row of the CF, ALU CF, export, TEX and VTX tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfInfo {
    pub code: u32,
    pub status: Status,
}

const fn cf(code: u32, status: Status) -> CfInfo {
    CfInfo { code, status }
}

/// A row of the ALU table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AluInfo {
    /// OP3 form (3 sources, 5-bit opcode) or OP2 (11-bit opcode).
    pub op3: bool,
    pub code: u32,
    pub srcs: u8,
    /// [`flags`]: VEC / TRANS / REDUC / PRED.
    pub flags: u8,
    pub status: Status,
}

const fn op2(code: u32, srcs: u8, flags: u8, status: Status) -> AluInfo {
    AluInfo { op3: false, code, srcs, flags, status }
}

const fn op3(code: u32, flags: u8, status: Status) -> AluInfo {
    AluInfo { op3: true, code, srcs: 3, flags, status }
}

const R_DOUBLE: &str = "double-precision ops pair slots; not translated (no known GX2 shader uses them)";
const R_PRED_STACK: &str = "predicate-stack variants of PRED_SET are not modelled yet";
const R_MUL_LIT: &str = "LIT-specific multiply not translated yet";
const R_COMPUTE: &str = "compute / Evergreen-only instruction with no meaning in a GX2 VS/PS";
const R_INT24: &str = "24-bit integer multiply not translated yet";
const R_RECIP_INT: &str = "integer reciprocal approximation not translated yet";
const R_MOVA_GPR: &str = "GPR-indexed MOVA (Evergreen) not translated";
const R_VTX: &str = "vertex fetch outside the fetch shader and the GS rings";
const R_TEX: &str = "not translated";
const R_TEX_5BIT: &str = "TEX_INST is 5 bits: cannot occur in a Latte TEX word";
const GS_ONLY: &str = "geometry shaders only";

op_enum! {
    /// CF_INST of a normal CF instruction (CF_WORD1 bits 23-29; decaf latte_instructions_def.inl
    /// `CF_INST`, Mesa r700_sq.h `SQ_CF_INST_*`).
    pub enum CfOp: CfInfo {
        NOP => cf(0x00, Translated),
        TEX => cf(0x01, Translated),
        VTX => cf(0x02, Limited("in a geometry shader or its copy program (ring FETCHes); elsewhere rejected (vertex fetch outside the fetch shader)")),
        VTX_TC => cf(0x03, Rejected(R_VTX)),
        LOOP_START => cf(0x04, Limited("bounded by the shader's GX2LoopVar integer constant")),
        LOOP_END => cf(0x05, Translated),
        LOOP_START_DX10 => cf(0x06, Translated),
        LOOP_START_NO_AL => cf(0x07, Limited("bounded by the shader's GX2LoopVar integer constant")),
        LOOP_CONTINUE => cf(0x08, Translated),
        LOOP_BREAK => cf(0x09, Translated),
        JUMP => cf(0x0A, Translated),
        PUSH => cf(0x0B, Translated),
        PUSH_ELSE => cf(0x0C, Translated),
        ELSE => cf(0x0D, Translated),
        POP => cf(0x0E, Translated),
        POP_JUMP => cf(0x0F, Translated),
        POP_PUSH => cf(0x10, Translated),
        POP_PUSH_ELSE => cf(0x11, Translated),
        CALL => cf(0x12, Limited("the subroutine is inlined (up to 64 calls)")),
        CALL_FS => cf(0x13, Limited("vertex shaders only")),
        RETURN => cf(0x14, Limited("ends an inlined subroutine")),
        EMIT_VERTEX => cf(0x15, Limited(GS_ONLY)),
        EMIT_CUT_VERTEX => cf(0x16, Limited(GS_ONLY)),
        CUT_VERTEX => cf(0x17, Limited(GS_ONLY)),
        KILL => cf(0x18, Limited("pixel shaders only")),
        END_PROGRAM => cf(0x19, Translated),
        WAIT_ACK => cf(0x1A, Translated),
        TEX_ACK => cf(0x1B, Translated),
        VTX_ACK => cf(0x1C, Rejected(R_VTX)),
        VTX_TC_ACK => cf(0x1D, Rejected(R_VTX)),
    }
}

op_enum! {
    /// CF_INST of an ALU clause instruction (CF_ALU_WORD1 bits 26-29).
    pub enum AluCfOp: CfInfo {
        ALU => cf(0x08, Translated),
        ALU_PUSH_BEFORE => cf(0x09, Translated),
        ALU_POP_AFTER => cf(0x0A, Translated),
        ALU_POP2_AFTER => cf(0x0B, Translated),
        ALU_EXT => cf(0x0C, Rejected("Evergreen extended kcache")),
        ALU_CONTINUE => cf(0x0D, Translated),
        ALU_BREAK => cf(0x0E, Translated),
        ALU_ELSE_AFTER => cf(0x0F, Translated),
    }
}

/// What MEM_STREAM0-3 covers (docs/gx2.md "GX2 stream-out").
const R_STREAM: &str = "stream-out in a vertex shader: WRITE / WRITE_ACK, ELEM_SIZE 0, no burst, COMP_MASK lanes within ARRAY_SIZE, each dword once, outside flow control (docs/gx2.md \"GX2 stream-out\")";

op_enum! {
    /// CF_INST of an export / memory instruction (CF_ALLOC_EXPORT_WORD1 bits 23-29).
    pub enum ExpOp: CfInfo {
        MEM_STREAM0 => cf(0x20, Limited(R_STREAM)),
        MEM_STREAM1 => cf(0x21, Limited(R_STREAM)),
        MEM_STREAM2 => cf(0x22, Limited(R_STREAM)),
        MEM_STREAM3 => cf(0x23, Limited(R_STREAM)),
        MEM_SCRATCH => cf(0x24, Limited("direct writes (WRITE / WRITE_ACK, ELEM_SIZE 3, one element, ARRAY_SIZE 0) to the invocation's scratch memory, acknowledged (WAIT_ACK) before any read and loop edge; not in geometry shaders (docs/gx2.md \"GX2 scratch memory\")")),
        MEM_REDUCTION => cf(0x25, Rejected("reduction memory not modelled")),
        MEM_RING => cf(0x26, Limited("the ES / GS ring model (docs/gx2.md \"GX2 geometry shaders\"); not in a pixel shader")),
        EXP => cf(0x27, Translated),
        EXP_DONE => cf(0x28, Translated),
        MEM_EXPORT => cf(0x3A, Rejected("memory export not modelled")),
    }
}

op_enum! {
    /// An ALU instruction: OP2 (ALU_WORD1_OP2 bits 7-17) or OP3 (ALU_WORD1_OP3 bits 13-17);
    /// source counts and slot flags from decaf latte_instructions_def.inl.
    pub enum AluOp: AluInfo {
        ADD => op2(0x00, 2, VEC | TRANS, Translated),
        MUL => op2(0x01, 2, VEC | TRANS, Translated),
        MUL_IEEE => op2(0x02, 2, VEC | TRANS, Translated),
        MAX => op2(0x03, 2, VEC | TRANS, Translated),
        MIN => op2(0x04, 2, VEC | TRANS, Translated),
        MAX_DX10 => op2(0x05, 2, VEC | TRANS, Translated),
        MIN_DX10 => op2(0x06, 2, VEC | TRANS, Translated),
        FREXP_64 => op2(0x07, 1, VEC | REDUC, Rejected(R_DOUBLE)),
        SETE => op2(0x08, 2, VEC | TRANS, Translated),
        SETGT => op2(0x09, 2, VEC | TRANS, Translated),
        SETGE => op2(0x0A, 2, VEC | TRANS, Translated),
        SETNE => op2(0x0B, 2, VEC | TRANS, Translated),
        SETE_DX10 => op2(0x0C, 2, VEC | TRANS, Translated),
        SETGT_DX10 => op2(0x0D, 2, VEC | TRANS, Translated),
        SETGE_DX10 => op2(0x0E, 2, VEC | TRANS, Translated),
        SETNE_DX10 => op2(0x0F, 2, VEC | TRANS, Translated),
        FRACT => op2(0x10, 1, VEC | TRANS, Translated),
        TRUNC => op2(0x11, 1, VEC | TRANS, Translated),
        CEIL => op2(0x12, 1, VEC | TRANS, Translated),
        RNDNE => op2(0x13, 1, VEC | TRANS, Translated),
        FLOOR => op2(0x14, 1, VEC | TRANS, Translated),
        MOVA => op2(0x15, 1, VEC, Translated),
        MOVA_FLOOR => op2(0x16, 1, VEC, Translated),
        ADD_64 => op2(0x17, 2, VEC | TRANS, Rejected(R_DOUBLE)),
        MOVA_INT => op2(0x18, 1, VEC, Translated),
        MOV => op2(0x19, 1, VEC | TRANS, Translated),
        NOP => op2(0x1A, 0, VEC | TRANS, Translated),
        MUL_64 => op2(0x1B, 2, VEC | REDUC, Rejected(R_DOUBLE)),
        FLT64_TO_FLT32 => op2(0x1C, 1, VEC | REDUC, Rejected(R_DOUBLE)),
        FLT32_TO_FLT64 => op2(0x1D, 1, VEC | REDUC, Rejected(R_DOUBLE)),
        PRED_SETGT_UINT => op2(0x1E, 2, VEC | TRANS | PRED, Translated),
        PRED_SETGE_UINT => op2(0x1F, 2, VEC | TRANS | PRED, Translated),
        PRED_SETE => op2(0x20, 2, VEC | TRANS | PRED, Translated),
        PRED_SETGT => op2(0x21, 2, VEC | TRANS | PRED, Translated),
        PRED_SETGE => op2(0x22, 2, VEC | TRANS | PRED, Translated),
        PRED_SETNE => op2(0x23, 2, VEC | TRANS | PRED, Translated),
        PRED_SET_INV => op2(0x24, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SET_POP => op2(0x25, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SET_CLR => op2(0x26, 2, VEC | TRANS | PRED, Translated),
        PRED_SET_RESTORE => op2(0x27, 2, VEC | TRANS | PRED, Translated),
        PRED_SETE_PUSH => op2(0x28, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETGT_PUSH => op2(0x29, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETGE_PUSH => op2(0x2A, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETNE_PUSH => op2(0x2B, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        KILLE => op2(0x2C, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLGT => op2(0x2D, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLGE => op2(0x2E, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLNE => op2(0x2F, 2, VEC | TRANS, Limited("pixel shaders only")),
        AND_INT => op2(0x30, 2, VEC | TRANS, Translated),
        OR_INT => op2(0x31, 2, VEC | TRANS, Translated),
        XOR_INT => op2(0x32, 2, VEC | TRANS, Translated),
        NOT_INT => op2(0x33, 1, VEC | TRANS, Translated),
        ADD_INT => op2(0x34, 2, VEC | TRANS, Translated),
        SUB_INT => op2(0x35, 2, VEC | TRANS, Translated),
        MAX_INT => op2(0x36, 2, VEC | TRANS, Translated),
        MIN_INT => op2(0x37, 2, VEC | TRANS, Translated),
        MAX_UINT => op2(0x38, 2, VEC | TRANS, Translated),
        MIN_UINT => op2(0x39, 2, VEC | TRANS, Translated),
        SETE_INT => op2(0x3A, 2, VEC | TRANS, Translated),
        SETGT_INT => op2(0x3B, 2, VEC | TRANS, Translated),
        SETGE_INT => op2(0x3C, 2, VEC | TRANS, Translated),
        SETNE_INT => op2(0x3D, 2, VEC | TRANS, Translated),
        SETGT_UINT => op2(0x3E, 2, VEC | TRANS, Translated),
        SETGE_UINT => op2(0x3F, 2, VEC | TRANS, Translated),
        KILLGT_UINT => op2(0x40, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLGE_UINT => op2(0x41, 2, VEC | TRANS, Limited("pixel shaders only")),
        PRED_SETE_INT => op2(0x42, 2, VEC | TRANS | PRED, Translated),
        PRED_SETGT_INT => op2(0x43, 2, VEC | TRANS | PRED, Translated),
        PRED_SETGE_INT => op2(0x44, 2, VEC | TRANS | PRED, Translated),
        PRED_SETNE_INT => op2(0x45, 2, VEC | TRANS | PRED, Translated),
        KILLE_INT => op2(0x46, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLGT_INT => op2(0x47, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLGE_INT => op2(0x48, 2, VEC | TRANS, Limited("pixel shaders only")),
        KILLNE_INT => op2(0x49, 2, VEC | TRANS, Limited("pixel shaders only")),
        PRED_SETE_PUSH_INT => op2(0x4A, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETGT_PUSH_INT => op2(0x4B, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETGE_PUSH_INT => op2(0x4C, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETNE_PUSH_INT => op2(0x4D, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETLT_PUSH_INT => op2(0x4E, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        PRED_SETLE_PUSH_INT => op2(0x4F, 2, VEC | TRANS | PRED, Rejected(R_PRED_STACK)),
        DOT4 => op2(0x50, 2, VEC | REDUC, Limited("in the four vector slots of one group")),
        DOT4_IEEE => op2(0x51, 2, VEC | REDUC, Limited("in the four vector slots of one group")),
        CUBE => op2(0x52, 2, VEC | REDUC, Limited("in the x, y, z and w slots of one group")),
        MAX4 => op2(0x53, 1, VEC | REDUC, Limited("in the four vector slots of one group")),
        GROUP_BARRIER => op2(0x54, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        GROUP_SEQ_BEGIN => op2(0x55, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        GROUP_SEQ_END => op2(0x56, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        SET_MODE => op2(0x57, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        SET_CF_IDX0 => op2(0x58, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        SET_CF_IDX1 => op2(0x59, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        SET_LDS_SIZE => op2(0x5A, 0, VEC | TRANS, Rejected(R_COMPUTE)),
        MUL_INT24 => op2(0x5B, 2, VEC | TRANS, Rejected(R_INT24)),
        MULHI_INT24 => op2(0x5C, 2, VEC | TRANS, Rejected(R_INT24)),
        MOVA_GPR_INT => op2(0x60, 1, VEC, Rejected(R_MOVA_GPR)),
        EXP_IEEE => op2(0x61, 1, TRANS, Translated),
        LOG_CLAMPED => op2(0x62, 1, TRANS, Translated),
        LOG_IEEE => op2(0x63, 1, TRANS, Translated),
        RECIP_CLAMPED => op2(0x64, 1, TRANS, Translated),
        RECIP_FF => op2(0x65, 1, TRANS, Translated),
        RECIP_IEEE => op2(0x66, 1, TRANS, Translated),
        RECIPSQRT_CLAMPED => op2(0x67, 1, TRANS, Translated),
        RECIPSQRT_FF => op2(0x68, 1, TRANS, Translated),
        RECIPSQRT_IEEE => op2(0x69, 1, TRANS, Translated),
        SQRT_IEEE => op2(0x6A, 1, TRANS, Translated),
        FLT_TO_INT => op2(0x6B, 1, TRANS, Translated),
        INT_TO_FLT => op2(0x6C, 1, TRANS, Translated),
        UINT_TO_FLT => op2(0x6D, 1, TRANS, Translated),
        SIN => op2(0x6E, 1, TRANS, Translated),
        COS => op2(0x6F, 1, TRANS, Translated),
        ASHR_INT => op2(0x70, 2, VEC | TRANS, Translated),
        LSHR_INT => op2(0x71, 2, VEC | TRANS, Translated),
        LSHL_INT => op2(0x72, 2, VEC | TRANS, Translated),
        MULLO_INT => op2(0x73, 2, TRANS, Translated),
        MULHI_INT => op2(0x74, 2, TRANS, Translated),
        MULLO_UINT => op2(0x75, 2, TRANS, Translated),
        MULHI_UINT => op2(0x76, 2, TRANS, Translated),
        RECIP_INT => op2(0x77, 1, TRANS, Rejected(R_RECIP_INT)),
        RECIP_UINT => op2(0x78, 1, TRANS, Rejected(R_RECIP_INT)),
        FLT_TO_UINT => op2(0x79, 1, TRANS, Translated),
        LDEXP_64 => op2(0x7A, 2, VEC | REDUC, Rejected(R_DOUBLE)),
        FRACT_64 => op2(0x7B, 1, VEC | REDUC, Rejected(R_DOUBLE)),
        PRED_SETGT_64 => op2(0x7C, 2, VEC | REDUC | PRED, Rejected(R_DOUBLE)),
        PRED_SETE_64 => op2(0x7D, 2, VEC | REDUC | PRED, Rejected(R_DOUBLE)),
        PRED_SETGE_64 => op2(0x7E, 2, VEC | REDUC | PRED, Rejected(R_DOUBLE)),
        BFE_UINT => op3(0x04, VEC | TRANS, Translated),
        BFE_INT => op3(0x05, VEC | TRANS, Translated),
        BFI_INT => op3(0x06, VEC | TRANS, Translated),
        FMA => op3(0x07, VEC | TRANS, Translated),
        MULADD_64 => op3(0x08, VEC | REDUC, Rejected(R_DOUBLE)),
        MULADD_64_M2 => op3(0x09, VEC | REDUC, Rejected(R_DOUBLE)),
        MULADD_64_M4 => op3(0x0A, VEC | REDUC, Rejected(R_DOUBLE)),
        MULADD_64_D2 => op3(0x0B, VEC | REDUC, Rejected(R_DOUBLE)),
        MUL_LIT => op3(0x0C, TRANS, Rejected(R_MUL_LIT)),
        MUL_LIT_M2 => op3(0x0D, TRANS, Rejected(R_MUL_LIT)),
        MUL_LIT_M4 => op3(0x0E, TRANS, Rejected(R_MUL_LIT)),
        MUL_LIT_D2 => op3(0x0F, TRANS, Rejected(R_MUL_LIT)),
        MULADD => op3(0x10, VEC | TRANS, Translated),
        MULADD_M2 => op3(0x11, VEC | TRANS, Translated),
        MULADD_M4 => op3(0x12, VEC | TRANS, Translated),
        MULADD_D2 => op3(0x13, VEC | TRANS, Translated),
        MULADD_IEEE => op3(0x14, VEC | TRANS, Translated),
        MULADD_IEEE_M2 => op3(0x15, VEC | TRANS, Translated),
        MULADD_IEEE_M4 => op3(0x16, VEC | TRANS, Translated),
        MULADD_IEEE_D2 => op3(0x17, VEC | TRANS, Translated),
        CNDE => op3(0x18, VEC | TRANS, Translated),
        CNDGT => op3(0x19, VEC | TRANS, Translated),
        CNDGE => op3(0x1A, VEC | TRANS, Translated),
        CNDE_INT => op3(0x1C, VEC | TRANS, Translated),
        CNDGT_INT => op3(0x1D, VEC | TRANS, Translated),
        CNDGE_INT => op3(0x1E, VEC | TRANS, Translated),
    }
}

op_enum! {
    /// TEX_INST of a TEX-clause fetch (TEX_WORD0 bits 0-4).
    pub enum TexOp: CfInfo {
        VTX_FETCH => cf(0x00, Limited("uniform-block reads (RESOURCE_ID 0x80 + block)")),
        VTX_SEMANTIC => cf(0x01, Rejected(R_TEX)),
        MEM => cf(0x02, Limited("scratch reads (MEM_OP 0): direct, UNCACHED, ELEM_SIZE 3, FMT_32_32_32_32 INT; MEM_OP 2 (the scatter buffer MEM_EXPORT writes) is refused: its address and size are register state no shader struct carries (docs/gx2.md \"GX2 scratch memory\")")),
        LD => cf(0x03, Limited("2D, 2D-array and 3D resources, no texel offsets")),
        GET_TEXTURE_INFO => cf(0x04, Limited("2D, 2D-array and 3D resources; cubes and 1D arrays refused")),
        GET_SAMPLE_INFO => cf(0x05, Rejected(R_TEX)),
        GET_COMP_TEX_LOD => cf(0x06, Limited("pixel shaders; 2D, 2D-array and 3D resources; x the computed LOD, y the clamped level")),
        GET_GRADIENTS_H => cf(0x07, Limited("pixel shaders only")),
        GET_GRADIENTS_V => cf(0x08, Limited("pixel shaders only")),
        GET_LERP => cf(0x09, Rejected(R_TEX)),
        KEEP_GRADIENTS => cf(0x0A, Rejected(R_TEX)),
        SET_GRADIENTS_H => cf(0x0B, Translated),
        SET_GRADIENTS_V => cf(0x0C, Translated),
        PASS => cf(0x0D, Rejected(R_TEX)),
        SET_CUBEMAP_INDEX => cf(0x0E, Limited("sets the cube index (src.x) of later cube-array samples of its resource; texture units 0-17")),
        FETCH4 => cf(0x0F, Limited("2D and 2D-array resources, whole-texel offsets")),
        SAMPLE => cf(0x10, Limited("normalized coordinates, whole-texel offsets; 2D arrays take slice floor(src.z), cube arrays the SET_CUBEMAP_INDEX index")),
        SAMPLE_L => cf(0x11, Limited("normalized coordinates, whole-texel offsets")),
        SAMPLE_LB => cf(0x12, Limited("normalized coordinates, whole-texel offsets")),
        SAMPLE_LZ => cf(0x13, Limited("normalized coordinates, whole-texel offsets")),
        SAMPLE_G => cf(0x14, Limited("normalized coordinates, whole-texel offsets, not on cubes (gradient space undocumented)")),
        SAMPLE_G_L => cf(0x15, Limited("normalized coordinates, whole-texel offsets; LOD = src.w + LOD_BIAS (gradients shape no footprint)")),
        SAMPLE_G_LB => cf(0x16, Limited("normalized coordinates, whole-texel offsets, not on cubes; LOD of the gradients + src.w + LOD_BIAS")),
        SAMPLE_G_LZ => cf(0x17, Limited("normalized coordinates, whole-texel offsets; LOD 0 (gradients shape no footprint)")),
        SAMPLE_C => cf(0x18, Limited("shadow 2D, 2D-array, cube and cube-array samplers; reference in src.w; LOD_BIAS in pixel shaders (shader model 6.8); result lane x only")),
        SAMPLE_C_L => cf(0x19, Limited("shadow 2D samplers; reference in src.z, LOD src.w + LOD_BIAS (SampleCmpLevel, shader model 6.7); result lane x only")),
        SAMPLE_C_LB => cf(0x1A, Limited("shadow 2D samplers in pixel shaders; reference in src.z, bias src.w + LOD_BIAS (SampleCmpBias, shader model 6.8); result lane x only")),
        SAMPLE_C_LZ => cf(0x1B, Limited("shadow 2D, 2D-array, cube and cube-array samplers; reference in src.w; result lane x only")),
        SAMPLE_C_G => cf(0x1C, Limited("shadow 2D and 2D-array samplers; reference in src.w, SET_GRADIENTS_H/V gradients (SampleCmpGrad, shader model 6.8); result lane x only")),
        SAMPLE_C_G_L => cf(0x1D, Limited("shadow 2D samplers; reference in src.z, LOD src.w + LOD_BIAS (SampleCmpLevel, shader model 6.7); result lane x only")),
        SAMPLE_C_G_LB => cf(0x1E, Limited("shadow 2D samplers; reference in src.z, gradient LOD + src.w + LOD_BIAS (SampleCmpGrad, shader model 6.8); result lane x only")),
        SAMPLE_C_G_LZ => cf(0x1F, Limited("shadow 2D, 2D-array, cube and cube-array samplers; reference in src.w; level 0; result lane x only")),
        SET_TEXTURE_OFFSETS => cf(0x20, Rejected(R_TEX_5BIT)),
        GATHER4 => cf(0x21, Rejected(R_TEX_5BIT)),
        GATHER4_O => cf(0x22, Rejected(R_TEX_5BIT)),
        GATHER4_C => cf(0x23, Rejected(R_TEX_5BIT)),
        GATHER4_C_O => cf(0x24, Rejected(R_TEX_5BIT)),
        GET_BUFFER_RESINFO => cf(0x25, Rejected(R_TEX_5BIT)),
    }
}

op_enum! {
    /// VTX_INST of a VTX-clause fetch (VTX_WORD0 bits 0-4).
    pub enum VtxOp: CfInfo {
        FETCH => cf(0x00, Limited("ring FETCHes in a geometry shader or its copy program")),
        SEMANTIC => cf(0x01, Rejected(R_VTX)),
        BUFINFO => cf(0x0E, Rejected(R_VTX)),
    }
}

macro_rules! by_code {
    ($E:ident) => {
        impl $E {
            /// The encoding of this opcode.
            pub const fn code(self) -> u32 {
                self.info().code
            }
            /// The opcode encoded as `code`, if any.
            pub fn from_code(code: u32) -> Option<$E> {
                $E::ALL.iter().copied().find(|o| o.code() == code)
            }
            pub const fn status(self) -> Status {
                self.info().status
            }
        }
    };
}
by_code!(CfOp);
by_code!(AluCfOp);
by_code!(ExpOp);
by_code!(TexOp);
by_code!(VtxOp);

impl AluOp {
    pub const fn code(self) -> u32 {
        self.info().code
    }
    pub const fn status(self) -> Status {
        self.info().status
    }
    pub const fn flags(self) -> u8 {
        self.info().flags
    }
    pub const fn srcs(self) -> u8 {
        self.info().srcs
    }
    /// The OP2 (`op3 == false`) or OP3 opcode encoded as `code`, if any.
    pub fn from_code(op3: bool, code: u32) -> Option<AluOp> {
        AluOp::ALL.iter().copied().find(|o| o.info().op3 == op3 && o.info().code == code)
    }
    /// The mnemonic's opcode (test assemblers).
    pub fn from_name(name: &str) -> Option<AluOp> {
        AluOp::ALL.iter().copied().find(|o| o.name() == name)
    }
}

impl TexOp {
    /// The mnemonic's opcode (test assemblers).
    pub fn from_name(name: &str) -> Option<TexOp> {
        TexOp::ALL.iter().copied().find(|o| o.name() == name)
    }
}

impl CfOp {
    /// The mnemonic's opcode (test assemblers).
    pub fn from_name(name: &str) -> Option<CfOp> {
        CfOp::ALL.iter().copied().find(|o| o.name() == name)
    }
}

impl AluCfOp {
    /// The mnemonic's opcode (test assemblers).
    pub fn from_name(name: &str) -> Option<AluCfOp> {
        AluCfOp::ALL.iter().copied().find(|o| o.name() == name)
    }
}

fn unit_text(flags: u8) -> String {
    let mut u = Vec::new();
    if flags & VEC != 0 {
        u.push("vector");
    }
    if flags & TRANS != 0 {
        u.push("trans");
    }
    if flags & REDUC != 0 {
        u.push("reduction");
    }
    if flags & PRED != 0 {
        u.push("predicate");
    }
    u.join(", ")
}

/// Every GX2 opcode as rows of the generated table (docs/opcodes/gx2.md).
pub fn opcode_rows() -> Vec<Row> {
    let hex = |c: u32| format!("0x{c:02X}");
    let mut rows = Vec::new();
    let simple = |class, name, info: CfInfo| Row { class, name, encoding: hex(info.code), operands: String::new(), status: info.status };
    rows.extend(CfOp::ALL.iter().map(|o| simple("CF", o.name(), o.info())));
    rows.extend(AluCfOp::ALL.iter().map(|o| simple("CF ALU", o.name(), o.info())));
    rows.extend(ExpOp::ALL.iter().map(|o| simple("EXP", o.name(), o.info())));
    rows.extend(AluOp::ALL.iter().map(|o| {
        let i = o.info();
        Row {
            class: if i.op3 { "OP3" } else { "OP2" },
            name: o.name(),
            encoding: hex(i.code),
            operands: format!("{} src; {}", i.srcs, unit_text(i.flags)),
            status: i.status,
        }
    }));
    rows.extend(TexOp::ALL.iter().map(|o| simple("TEX", o.name(), o.info())));
    rows.extend(VtxOp::ALL.iter().map(|o| simple("VTX", o.name(), o.info())));
    rows
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
        op: CfOp,
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
        op: AluCfOp,
        addr: u32,
        /// Slot count (already +1).
        count: u32,
        kcache: [Kcache; 2],
        alt_const: bool,
        wqm: bool,
        barrier: bool,
    },
    Export {
        op: ExpOp,
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
    pub op: AluOp,
    /// `op.info().op3`, `op.name()`, `op.flags()` (kept for the listing and the interpreters).
    pub op3: bool,
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
    pub op: TexOp,
    /// `op.name()`.
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

/// The MEM_RD_WORD0-2 fields of a TEX-clause `MEM` (a memory read), in the layout Mesa r600's
/// `r700_bytecode_fetch_mem_build` writes and Cemu's decoder reads. Decoded from
/// [`TexInst::raw`] by [`TexInst::mem_read`]: the disassembler prints these fields and the
/// scratch model ([`super::scratch::read`]) checks them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemRead {
    /// MEM_OP: 0 scratch, 2 the scatter buffer MEM_EXPORT writes.
    pub mem_op: u32,
    /// ELEM_SIZE: dwords per element minus one.
    pub elem_size: u32,
    pub uncached: bool,
    pub indexed: bool,
    pub src_gpr: u32,
    pub src_rel: bool,
    /// SRC_SEL_X: the index register's channel.
    pub src_sel_x: u8,
    pub burst_count: u32,
    pub dst_gpr: u32,
    pub dst_rel: bool,
    /// DST_SEL_X..W (0-3 xyzw, 4 = 0, 5 = 1, 7 = masked).
    pub dst_sel: [u8; 4],
    pub data_format: u32,
    pub num_format_all: u32,
    pub array_base: u32,
    pub endian_swap: u32,
    pub array_size: u32,
}

impl TexInst {
    /// This instruction's words read as MEM_RD_WORD0-2 (meaningful for [`TexOp::MEM`]).
    pub fn mem_read(&self) -> MemRead {
        let [w0, w1, w2] = self.raw;
        MemRead {
            mem_op: bits(w0, 8, 3),
            elem_size: bits(w0, 5, 2),
            uncached: bits(w0, 11, 1) != 0,
            indexed: bits(w0, 12, 1) != 0,
            src_gpr: bits(w0, 16, 7),
            src_rel: bits(w0, 23, 1) != 0,
            src_sel_x: bits(w0, 24, 2) as u8,
            burst_count: bits(w0, 26, 4),
            dst_gpr: bits(w1, 0, 7),
            dst_rel: bits(w1, 7, 1) != 0,
            dst_sel: std::array::from_fn(|i| bits(w1, 9 + 3 * i as u32, 3) as u8),
            data_format: bits(w1, 22, 6),
            num_format_all: bits(w1, 28, 2),
            array_base: bits(w2, 0, 13),
            endian_swap: bits(w2, 16, 2),
            array_size: bits(w2, 20, 12),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct VtxInst {
    pub id: u32,
    pub op: VtxOp,
    /// `op.name()`.
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

/// Decodes the CF stream and every clause. Offsets in errors are program-relative bytes.
pub fn decode(prog: &[u8]) -> Result<Program, Gx2Error> {
    let nslots = prog.len() / 8;
    let mut cfs = Vec::new();
    let mut gid = 0u32;
    let mut pc = 0usize;
    let mut main_len = None;
    loop {
        if pc >= nslots {
            return Err(Gx2Error::NoEnd { offset: pc as u64 * 8, len: prog.len(), subroutine: main_len.is_some() });
        }
        let (w0, w1) = (word(prog, pc * 2).unwrap(), word(prog, pc * 2 + 1).unwrap());
        let class = bits(w1, 28, 2);
        let mut eop = false;
        let unknown = |table, code| Gx2Error::UnknownOpcode { offset: pc as u64 * 8, pc: Some(pc as u32), table, code };
        let (cf, clause) = if class >= 2 {
            // bits 26-29 with bit 29 set (class 2 or 3): 8-15, every value has a row
            let code = bits(w1, 26, 4);
            let op = AluCfOp::from_code(code).ok_or(unknown(Table::Cf, code))?;
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
            let code = bits(w1, 23, 7);
            eop = bits(w1, 21, 1) != 0;
            let vpm = bits(w1, 22, 1) != 0;
            let barrier = bits(w1, 31, 1) != 0;
            if class == 1 {
                let op = ExpOp::from_code(code).ok_or(unknown(Table::Export, code))?;
                let mem = !matches!(op, ExpOp::EXP | ExpOp::EXP_DONE);
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
                let op = CfOp::from_code(code).ok_or(unknown(Table::Cf, code))?;
                let count = (bits(w1, 10, 3) | bits(w1, 19, 1) << 3) + 1;
                let addr = w0;
                let clause = match op {
                    CfOp::TEX | CfOp::TEX_ACK => Clause::Tex(decode_tex(prog, addr as usize, count as usize, &mut gid)?),
                    CfOp::VTX | CfOp::VTX_TC | CfOp::VTX_ACK | CfOp::VTX_TC_ACK => {
                        Clause::Vtx(decode_vtx(prog, addr as usize, count as usize, &mut gid)?)
                    }
                    CfOp::NOP
                    | CfOp::LOOP_START
                    | CfOp::LOOP_END
                    | CfOp::LOOP_START_DX10
                    | CfOp::LOOP_START_NO_AL
                    | CfOp::LOOP_CONTINUE
                    | CfOp::LOOP_BREAK
                    | CfOp::JUMP
                    | CfOp::PUSH
                    | CfOp::PUSH_ELSE
                    | CfOp::ELSE
                    | CfOp::POP
                    | CfOp::POP_JUMP
                    | CfOp::POP_PUSH
                    | CfOp::POP_PUSH_ELSE
                    | CfOp::CALL
                    | CfOp::CALL_FS
                    | CfOp::RETURN
                    | CfOp::EMIT_VERTEX
                    | CfOp::EMIT_CUT_VERTEX
                    | CfOp::CUT_VERTEX
                    | CfOp::KILL
                    | CfOp::END_PROGRAM
                    | CfOp::WAIT_ACK => Clause::None,
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
                Cf::Normal { op: CfOp::CALL, addr, .. } => Some(addr as usize),
                _ => None,
            });
            let want = last_call.max().unwrap_or(0);
            let is_return = matches!(cfs.last().unwrap().0.cf, Cf::Normal { op: CfOp::RETURN, .. });
            if pc >= want && (is_return || Some(cfs.len()) == main_len) {
                break;
            }
        }
        pc += 1;
    }
    Ok(Program { cfs, main_len: main_len.unwrap() })
}

fn decode_alu(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<AluGroup>, Gx2Error> {
    let end = addr + count;
    if end * 8 > prog.len() {
        return Err(Gx2Error::ClausePastEnd { offset: addr as u64 * 8, kind: ClauseKind::Alu, addr: addr as u32, count: count as u32 });
    }
    let mut groups = Vec::new();
    let mut i = addr;
    while i < end {
        let mut insts: Vec<AluInst> = Vec::new();
        let mut taken = [false; 5];
        let mut lit_need = 0usize;
        loop {
            if i >= end {
                return Err(Gx2Error::GroupPastClause { offset: i as u64 * 8 });
            }
            let (w0, w1) = (word(prog, i * 2).unwrap(), word(prog, i * 2 + 1).unwrap());
            i += 1;
            let op3 = bits(w1, 15, 3) != 0;
            let (code, table) = if op3 { (bits(w1, 13, 5), Table::AluOp3) } else { (bits(w1, 7, 11), Table::AluOp2) };
            let op = AluOp::from_code(op3, code).ok_or(Gx2Error::UnknownOpcode { offset: (i as u64 - 1) * 8, pc: None, table, code })?;
            let (nsrc, fl) = (op.srcs(), op.flags());
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
                return Err(Gx2Error::SlotTaken { offset: (i as u64 - 1) * 8, slot: b"xyzwt"[slot] as char });
            }
            taken[slot] = true;
            insts.push(AluInst {
                slot,
                op,
                op3,
                name: op.name(),
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
                return Err(Gx2Error::LiteralsPastClause { offset: i as u64 * 8 });
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

fn fetch_words(prog: &[u8], addr: usize, count: usize, kind: ClauseKind) -> Result<Vec<[u32; 3]>, Gx2Error> {
    if (addr + count * 2) * 8 > prog.len() {
        return Err(Gx2Error::ClausePastEnd { offset: addr as u64 * 8, kind, addr: addr as u32, count: count as u32 });
    }
    Ok((0..count).map(|k| [0, 1, 2].map(|j| word(prog, addr * 2 + k * 4 + j).unwrap())).collect())
}

fn sext(v: u32, n: u32) -> i32 {
    ((v << (32 - n)) as i32) >> (32 - n)
}

fn decode_tex(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<TexInst>, Gx2Error> {
    let mut out = Vec::new();
    for (k, w) in fetch_words(prog, addr, count, ClauseKind::Tex)?.into_iter().enumerate() {
        let code = bits(w[0], 0, 5);
        let op = TexOp::from_code(code).ok_or(Gx2Error::UnknownOpcode { offset: (addr + 2 * k) as u64 * 8, pc: None, table: Table::Tex, code })?;
        out.push(TexInst {
            id: *gid,
            op,
            name: op.name(),
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

fn decode_vtx(prog: &[u8], addr: usize, count: usize, gid: &mut u32) -> Result<Vec<VtxInst>, Gx2Error> {
    let mut out = Vec::new();
    for (k, w) in fetch_words(prog, addr, count, ClauseKind::Vtx)?.into_iter().enumerate() {
        let code = bits(w[0], 0, 5);
        let op = VtxOp::from_code(code).ok_or(Gx2Error::UnknownOpcode { offset: (addr + 2 * k) as u64 * 8, pc: None, table: Table::Vtx, code })?;
        out.push(VtxInst {
            id: *gid,
            op,
            name: op.name(),
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
