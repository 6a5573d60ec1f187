//! Xenos microcode decoding (bit layouts as in Xenia `src/xenia/gpu/ucode.h`, notes §5).
//!
//! A program is a control-flow (CF) region followed by 96-bit instruction slots. Each dword triple
//! of the CF region holds two 48-bit CF instructions; the CF region ends at the smallest exec
//! address. Exec instructions point (by slot address) at runs of fetch / ALU instructions, one bit
//! pair per instruction in the `sequence` field telling fetch (bit 0) and serialize (bit 1).

use super::error::XenosError;
use crate::formats::opcodes::{Row, Status, Status::*};

/// One decoded control-flow instruction (48 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cf {
    pub raw: u64,
}

impl Cf {
    fn bits(&self, lo: u32, n: u32) -> u32 {
        ((self.raw >> lo) & ((1u64 << n) - 1)) as u32
    }
    pub fn op(&self) -> CfOp {
        CfOp::from_code(self.bits(44, 4))
    }
    pub fn opcode(&self) -> u32 {
        self.bits(44, 4)
    }
    pub fn is_exec(&self) -> bool {
        matches!(
            self.op(),
            CfOp::Exec
                | CfOp::ExecEnd
                | CfOp::CondExec
                | CfOp::CondExecEnd
                | CfOp::CondExecPred
                | CfOp::CondExecPredEnd
                | CfOp::CondExecPredClean
                | CfOp::CondExecPredCleanEnd
        )
    }
    pub fn ends_shader(&self) -> bool {
        matches!(self.op(), CfOp::ExecEnd | CfOp::CondExecEnd | CfOp::CondExecPredEnd | CfOp::CondExecPredCleanEnd)
    }
    /// 1 = a0-relative addressing in the clause, 0 = aL.
    pub fn address_mode(&self) -> u32 {
        self.bits(43, 1)
    }
    // Exec family.
    pub fn exec_address(&self) -> u32 {
        self.bits(0, 12)
    }
    pub fn exec_count(&self) -> u32 {
        self.bits(12, 3)
    }
    pub fn is_yield(&self) -> bool {
        self.bits(15, 1) == 1
    }
    pub fn sequence(&self) -> u32 {
        self.bits(16, 12)
    }
    pub fn vc(&self) -> u32 {
        self.bits(28, 4) | self.bits(32, 2) << 4
    }
    /// Exec / cond_exec_pred(_clean): `clean` bit (bit 41).
    pub fn clean(&self) -> bool {
        self.bits(41, 1) == 1
    }
    pub fn bool_address(&self) -> u32 {
        self.bits(34, 8)
    }
    pub fn condition(&self) -> bool {
        self.bits(42, 1) == 1
    }
    // Loops, calls, jumps.
    pub fn target(&self) -> u32 {
        self.bits(0, 13)
    }
    pub fn is_repeat(&self) -> bool {
        self.bits(13, 1) == 1
    }
    pub fn loop_id(&self) -> u32 {
        self.bits(16, 5)
    }
    pub fn is_predicated_break(&self) -> bool {
        self.bits(21, 1) == 1
    }
    pub fn is_unconditional(&self) -> bool {
        self.bits(13, 1) == 1
    }
    pub fn is_predicated(&self) -> bool {
        self.bits(14, 1) == 1
    }
    pub fn direction(&self) -> u32 {
        self.bits(33, 1)
    }
    // Alloc.
    pub fn alloc_size(&self) -> u32 {
        self.bits(0, 3)
    }
    pub fn alloc_type(&self) -> u32 {
        self.bits(41, 2)
    }
    pub fn alloc_unserialized(&self) -> bool {
        self.bits(40, 1) == 1
    }
}

// ---------------------------------------------------------------------------------------------
// Opcode tables (one row per opcode: the numbers and names of Xenia `src/xenia/gpu/ucode.h`,
// operand shapes from its `ucode.h` comments and translators; docs/isa/xenos.md).
// ---------------------------------------------------------------------------------------------

/// A row of a Xenos opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The opcode field's value.
    pub code: u32,
    /// Operand shape (ALU: source count; fetch and CF: a short description).
    pub operands: &'static str,
    /// Vector ops: register sources read.
    pub srcs: u8,
    /// Scalar ops: how the sources are read.
    pub shape: SOps,
    pub status: Status,
}

/// Scalar operand shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SOps {
    /// No operand.
    None,
    /// `src.a`
    A,
    /// `src.ab`
    AB,
    /// Constant `.a` and temp `.b` (mulsc / addsc / subsc).
    ConstTemp,
}

const fn row(code: u32, operands: &'static str, srcs: u8, shape: SOps, status: Status) -> OpInfo {
    OpInfo { code, operands, srcs, shape, status }
}
const fn cf(code: u32, operands: &'static str) -> OpInfo {
    row(code, operands, 0, SOps::None, Translated)
}
const fn v(code: u32, srcs: u8) -> OpInfo {
    row(code, SRC_COUNT[srcs as usize], srcs, SOps::None, Translated)
}
const fn s(code: u32, shape: SOps) -> OpInfo {
    let operands = match shape {
        SOps::None => "none",
        SOps::A => "src.a",
        SOps::AB => "src.ab",
        SOps::ConstTemp => "const.a, temp.b",
    };
    row(code, operands, 0, shape, Translated)
}
const fn fe(code: u32, operands: &'static str) -> OpInfo {
    row(code, operands, 0, SOps::None, Translated)
}
const fn limited(mut o: OpInfo, why: &'static str) -> OpInfo {
    o.status = Limited(why);
    o
}
const fn rejected(mut o: OpInfo, why: &'static str) -> OpInfo {
    o.status = Rejected(why);
    o
}
const SRC_COUNT: [&str; 4] = ["0 src", "1 src", "2 src", "3 src"];
const PIXEL_ONLY: &str = "pixel shaders only (a kill in a vertex shader is refused)";
const EXEC: &str = "clause address, count, sequence";
const COND_EXEC: &str = "clause address, count, sequence; boolean constant b#";
const PRED_EXEC: &str = "clause address, count, sequence; predicate p0";

crate::op_enum! {
    /// Control-flow opcodes (4-bit field, bits 44-47 of a 48-bit CF instruction). The variant
    /// names are Xenia's (`ControlFlowOpcode`), the mnemonics Microsoft's disassembler's.
    pub enum CfOp: OpInfo {
        Nop("nop") => cf(0, "none"),
        Exec("exec") => cf(1, EXEC),
        ExecEnd("exece") => cf(2, EXEC),
        CondExec("cexec") => cf(3, COND_EXEC),
        CondExecEnd("cexece") => cf(4, COND_EXEC),
        CondExecPred("exec_pred") => cf(5, PRED_EXEC),
        CondExecPredEnd("exece_pred") => cf(6, PRED_EXEC),
        LoopStart("loop") => cf(7, "loop constant i#, end address"),
        LoopEnd("endloop") => cf(8, "loop constant i#, start address; predicated break"),
        CondCall("call") => cf(9, "target; unconditional, boolean b# or predicate"),
        Return("ret") => cf(10, "none"),
        CondJmp("jmp") => cf(11, "target; unconditional, boolean b# or predicate"),
        Alloc("alloc") => cf(12, "size, type (position / interpolators / colors / memory export)"),
        CondExecPredClean("exec_pred_clean") => cf(13, COND_EXEC),
        CondExecPredCleanEnd("exece_pred_clean") => cf(14, COND_EXEC),
        MarkVsFetchDone("vfetch_end") => cf(15, "none"),
    }
}

crate::op_enum! {
    /// Fetch opcodes (5-bit field, bits 0-4 of the first dword; Xenia `FetchOpcode`). The other
    /// 23 values of the field are not opcodes: the lowering refuses them ([`XenosError`]).
    pub enum FetchOp: OpInfo {
        VertexFetch("vfetch") => fe(0, "dest, src.c, vf#"),
        TextureFetch("tfetch") => fe(1, "dest, src.xyz, tf#"),
        GetTextureBorderColorFrac("getBCF") => rejected(
            fe(16, "dest, src.xyz, tf#"),
            "the border colour fraction needs the fetch constant's clamp modes and border colour, which the shader does not see (Xenia does not translate it either)"
        ),
        GetTextureComputedLod("getCompTexLOD") => fe(17, "dest, src.xyz, tf#"),
        GetTextureGradients("getGradients") => fe(18, "dest, src.xy, tf#"),
        GetTextureWeights("getWeights") => fe(19, "dest, src.xyz, tf#"),
        SetTextureLod("setTexLOD") => fe(24, "src.x, tf#"),
        SetTextureGradientsHorz("setGradientsH") => fe(25, "src.xyz, tf#"),
        SetTextureGradientsVert("setGradientsV") => fe(26, "src.xyz, tf#"),
    }
}

crate::op_enum! {
    /// Vector ALU opcodes 0-29 (5-bit field; 30 and 31 do not exist). Variant order = encoding.
    pub enum VectorOp: OpInfo {
        Add("add") => v(0, 2),
        Mul("mul") => v(1, 2),
        Max("max") => v(2, 2),
        Min("min") => v(3, 2),
        Seq("seq") => v(4, 2),
        Sgt("sgt") => v(5, 2),
        Sge("sge") => v(6, 2),
        Sne("sne") => v(7, 2),
        Frc("frc") => v(8, 1),
        Trunc("trunc") => v(9, 1),
        Floor("floor") => v(10, 1),
        Mad("mad") => v(11, 3),
        CndEq("cndeq") => v(12, 3),
        CndGe("cndge") => v(13, 3),
        CndGt("cndgt") => v(14, 3),
        Dp4("dp4") => v(15, 2),
        Dp3("dp3") => v(16, 2),
        Dp2Add("dp2add") => v(17, 3),
        Cube("cube") => v(18, 2),
        Max4("max4") => v(19, 1),
        SetpEqPush("setp_eq_push") => v(20, 2),
        SetpNePush("setp_ne_push") => v(21, 2),
        SetpGtPush("setp_gt_push") => v(22, 2),
        SetpGePush("setp_ge_push") => v(23, 2),
        KillEq("kill_eq") => limited(v(24, 2), PIXEL_ONLY),
        KillGt("kill_gt") => limited(v(25, 2), PIXEL_ONLY),
        KillGe("kill_ge") => limited(v(26, 2), PIXEL_ONLY),
        KillNe("kill_ne") => limited(v(27, 2), PIXEL_ONLY),
        Dst("dst") => v(28, 2),
        MaxA("maxa") => v(29, 2),
    }
}

crate::op_enum! {
    /// Scalar ALU opcodes 0-50 (6-bit field; 51-63 do not exist). Variant order = encoding;
    /// 41 is a hole in Xenia's table (`kSqrt = 40`, `kMulsc0 = 42`), kept as a rejected row so
    /// that listings name it; `mulsc` / `addsc` / `subsc` have two encodings each (the low bit
    /// is bit 0 of the temp register number).
    pub enum ScalarOp: OpInfo {
        Adds("adds") => s(0, SOps::AB),
        AddsPrev("adds_prev") => s(1, SOps::A),
        Muls("muls") => s(2, SOps::AB),
        MulsPrev("muls_prev") => s(3, SOps::A),
        MulsPrev2("muls_prev2") => s(4, SOps::AB),
        Maxs("maxs") => s(5, SOps::AB),
        Mins("mins") => s(6, SOps::AB),
        Seqs("seqs") => s(7, SOps::A),
        Sgts("sgts") => s(8, SOps::A),
        Sges("sges") => s(9, SOps::A),
        Snes("snes") => s(10, SOps::A),
        Frcs("frcs") => s(11, SOps::A),
        Truncs("truncs") => s(12, SOps::A),
        Floors("floors") => s(13, SOps::A),
        Exp("exp") => s(14, SOps::A),
        Logc("logc") => s(15, SOps::A),
        Log("log") => s(16, SOps::A),
        Rcpc("rcpc") => s(17, SOps::A),
        Rcpf("rcpf") => s(18, SOps::A),
        Rcp("rcp") => s(19, SOps::A),
        Rsqc("rsqc") => s(20, SOps::A),
        Rsqf("rsqf") => s(21, SOps::A),
        Rsq("rsq") => s(22, SOps::A),
        MaxAs("maxas") => s(23, SOps::AB),
        MaxAsf("maxasf") => s(24, SOps::AB),
        Subs("subs") => s(25, SOps::AB),
        SubsPrev("subs_prev") => s(26, SOps::A),
        SetpEq("setp_eq") => s(27, SOps::A),
        SetpNe("setp_ne") => s(28, SOps::A),
        SetpGt("setp_gt") => s(29, SOps::A),
        SetpGe("setp_ge") => s(30, SOps::A),
        SetpInv("setp_inv") => s(31, SOps::A),
        SetpPop("setp_pop") => s(32, SOps::A),
        SetpClr("setp_clr") => s(33, SOps::None),
        SetpRstr("setp_rstr") => s(34, SOps::A),
        KillsEq("kills_eq") => limited(s(35, SOps::A), PIXEL_ONLY),
        KillsGt("kills_gt") => limited(s(36, SOps::A), PIXEL_ONLY),
        KillsGe("kills_ge") => limited(s(37, SOps::A), PIXEL_ONLY),
        KillsNe("kills_ne") => limited(s(38, SOps::A), PIXEL_ONLY),
        KillsOne("kills_one") => limited(s(39, SOps::A), PIXEL_ONLY),
        Sqrt("sqrt") => s(40, SOps::A),
        Undefined41("?41") => rejected(s(41, SOps::None), "not an opcode (a hole in the table)"),
        Mulsc0("mulsc") => s(42, SOps::ConstTemp),
        Mulsc1("mulsc") => s(43, SOps::ConstTemp),
        Addsc0("addsc") => s(44, SOps::ConstTemp),
        Addsc1("addsc") => s(45, SOps::ConstTemp),
        Subsc0("subsc") => s(46, SOps::ConstTemp),
        Subsc1("subsc") => s(47, SOps::ConstTemp),
        Sin("sin") => s(48, SOps::A),
        Cos("cos") => s(49, SOps::A),
        RetainPrev("retain_prev") => s(50, SOps::None),
    }
}

impl CfOp {
    /// The CF opcode of a 4-bit field (all 16 values are opcodes).
    pub const fn from_code(code: u32) -> CfOp {
        CfOp::ALL[(code & 0xF) as usize]
    }
    pub const fn code(self) -> u32 {
        self.info().code
    }
}

impl FetchOp {
    pub fn from_code(code: u32) -> Option<FetchOp> {
        FetchOp::ALL.iter().copied().find(|o| o.info().code == code)
    }
    pub const fn code(self) -> u32 {
        self.info().code
    }
}

impl VectorOp {
    /// The vector opcode of a field value (`None` for 30 and 31).
    pub fn from_code(code: u32) -> Option<VectorOp> {
        VectorOp::ALL.get(code as usize).copied()
    }
    pub const fn code(self) -> u32 {
        self.info().code
    }
    pub const fn operand_count(self) -> u8 {
        self.info().srcs
    }
}

impl ScalarOp {
    /// The scalar opcode of a field value (`None` for 51-63).
    pub fn from_code(code: u32) -> Option<ScalarOp> {
        ScalarOp::ALL.get(code as usize).copied()
    }
    pub const fn code(self) -> u32 {
        self.info().code
    }
    pub const fn shape(self) -> SOps {
        self.info().shape
    }
}

/// Vector opcodes 0-29 (name, operand count), derived from [`VectorOp`] (for listings and the
/// verification crate, which index by number).
pub const VECTOR_OPS: [(&str, u8); 30] = {
    let mut a = [("", 0u8); 30];
    let mut i = 0;
    while i < 30 {
        a[i] = (VectorOp::ALL[i].name(), VectorOp::ALL[i].info().srcs);
        i += 1;
    }
    a
};

/// Scalar opcodes 0-50 (41 unused), name and operand shape, derived from [`ScalarOp`].
pub const SCALAR_OPS: [(&str, SOps); 51] = {
    let mut a = [("", SOps::None); 51];
    let mut i = 0;
    while i < 51 {
        a[i] = (ScalarOp::ALL[i].name(), ScalarOp::ALL[i].info().shape);
        i += 1;
    }
    a
};

/// CF mnemonics by opcode, derived from [`CfOp`].
pub const CF_NAMES: [&str; 16] = {
    let mut a = [""; 16];
    let mut i = 0;
    while i < 16 {
        a[i] = CfOp::ALL[i].name();
        i += 1;
    }
    a
};

pub const SCALAR_RETAIN_PREV: u32 = ScalarOp::RetainPrev.code();

/// Every Xenos opcode as rows of the generated table (docs/opcodes/xenos.md).
pub fn opcode_rows() -> Vec<Row> {
    let mut rows = Vec::new();
    let mut add = |class: &'static str, name: &'static str, i: OpInfo| {
        rows.push(Row { class, name, encoding: i.code.to_string(), operands: i.operands.to_string(), status: i.status });
    };
    for o in CfOp::ALL {
        add("CF", o.name(), o.info());
    }
    for o in FetchOp::ALL {
        add("fetch", o.name(), o.info());
    }
    for o in VectorOp::ALL {
        add("vector ALU", o.name(), o.info());
    }
    for o in ScalarOp::ALL {
        add("scalar ALU", o.name(), o.info());
    }
    rows
}

// ---------------------------------------------------------------------------------------------
// Fetch
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fetch {
    pub d: [u32; 3],
}

fn bf(v: u32, lo: u32, n: u32) -> u32 {
    (v >> lo) & ((1u32 << n) - 1)
}
fn sext(v: u32, n: u32) -> i32 {
    ((v << (32 - n)) as i32) >> (32 - n)
}

impl Fetch {
    pub fn opcode(&self) -> u32 {
        bf(self.d[0], 0, 5)
    }
    /// The fetch opcode (`None`: the field holds a value that is not an opcode).
    pub fn op(&self) -> Option<FetchOp> {
        FetchOp::from_code(self.opcode())
    }
    pub fn name(&self) -> Option<&'static str> {
        self.op().map(FetchOp::name)
    }
    /// Whether the fetch reads the texture its fetch constant names (tfetch, getBCF,
    /// getCompTexLOD, getWeights): not vfetch, getGradients (source derivatives only) or the
    /// set* ops (sampler state for later fetches).
    pub fn reads_texture(&self) -> bool {
        use FetchOp::*;
        !matches!(self.op(), Some(VertexFetch | GetTextureGradients | SetTextureLod | SetTextureGradientsHorz | SetTextureGradientsVert))
    }
    pub fn src_reg(&self) -> u32 {
        bf(self.d[0], 5, 6)
    }
    pub fn src_rel(&self) -> bool {
        bf(self.d[0], 11, 1) == 1
    }
    pub fn dst_reg(&self) -> u32 {
        bf(self.d[0], 12, 6)
    }
    pub fn dst_rel(&self) -> bool {
        bf(self.d[0], 18, 1) == 1
    }
    /// tfetch: fetch_valid_only; vfetch: must be one.
    pub fn bit19(&self) -> bool {
        bf(self.d[0], 19, 1) == 1
    }
    pub fn const_index(&self) -> u32 {
        bf(self.d[0], 20, 5)
    }
    /// Vertex fetch constant `vf#` (0-95).
    pub fn vfetch_const(&self) -> u32 {
        self.const_index() * 3 + bf(self.d[0], 25, 2)
    }
    pub fn prefetch_count(&self) -> u32 {
        bf(self.d[0], 27, 3)
    }
    /// vfetch source component (0-3).
    pub fn vfetch_src_swizzle(&self) -> u32 {
        bf(self.d[0], 30, 2)
    }
    /// tfetch: unnormalised coordinates.
    pub fn coord_denorm(&self) -> bool {
        bf(self.d[0], 25, 1) == 1
    }
    /// tfetch source components, 2 bits each (x, y, z), absolute.
    pub fn tfetch_src_swizzle(&self) -> [u8; 3] {
        let s = bf(self.d[0], 26, 6);
        [(s & 3) as u8, (s >> 2 & 3) as u8, (s >> 4 & 3) as u8]
    }
    /// Destination selects: 0-3 lane, 4 = 0.0, 5 = 1.0, 6 = ?, 7 = keep.
    pub fn dst_swizzle(&self) -> [u8; 4] {
        let s = bf(self.d[1], 0, 12);
        [(s & 7) as u8, (s >> 3 & 7) as u8, (s >> 6 & 7) as u8, (s >> 9 & 7) as u8]
    }
    pub fn is_predicated(&self) -> bool {
        bf(self.d[1], 31, 1) == 1
    }
    pub fn pred_condition(&self) -> bool {
        bf(self.d[2], 31, 1) == 1
    }
    // vfetch
    pub fn is_signed(&self) -> bool {
        bf(self.d[1], 12, 1) == 1
    }
    pub fn is_integer(&self) -> bool {
        bf(self.d[1], 13, 1) == 1
    }
    pub fn signed_rf_mode_all(&self) -> bool {
        bf(self.d[1], 14, 1) == 1
    }
    pub fn is_index_rounded(&self) -> bool {
        bf(self.d[1], 15, 1) == 1
    }
    pub fn format(&self) -> u32 {
        bf(self.d[1], 16, 6)
    }
    pub fn exp_adjust(&self) -> i32 {
        sext(bf(self.d[1], 24, 6), 6)
    }
    pub fn is_mini(&self) -> bool {
        bf(self.d[1], 30, 1) == 1
    }
    pub fn stride(&self) -> u32 {
        bf(self.d[2], 0, 8)
    }
    pub fn offset(&self) -> u32 {
        bf(self.d[2], 8, 23)
    }
    // tfetch
    pub fn mag_filter(&self) -> u32 {
        bf(self.d[1], 12, 2)
    }
    pub fn min_filter(&self) -> u32 {
        bf(self.d[1], 14, 2)
    }
    pub fn mip_filter(&self) -> u32 {
        bf(self.d[1], 16, 2)
    }
    pub fn aniso_filter(&self) -> u32 {
        bf(self.d[1], 18, 3)
    }
    pub fn vol_mag_filter(&self) -> u32 {
        bf(self.d[1], 24, 2)
    }
    pub fn vol_min_filter(&self) -> u32 {
        bf(self.d[1], 26, 2)
    }
    /// The texture filters this instruction sets itself, as the disassembly lists them
    /// (`MagFilter=point`, names as Xenia's disassembler); a filter left to the fetch constant
    /// ("keep": 3, aniso 7) is not listed. Volume filters belong to 3D fetches only.
    pub fn filter_overrides(&self) -> Vec<String> {
        const FILTERS: [&str; 4] = ["point", "linear", "BASEMAP", "keep"];
        const ANISO: [&str; 8] = ["disabled", "max1to1", "max2to1", "max4to1", "max8to1", "max16to1", "aniso6", "keep"];
        let fields = [("MagFilter", self.mag_filter()), ("MinFilter", self.min_filter()), ("MipFilter", self.mip_filter())];
        let mut list: Vec<String> = fields.into_iter().filter(|&(_, v)| v != 3).map(|(n, v)| format!("{n}={}", FILTERS[v as usize])).collect();
        if self.aniso_filter() != 7 {
            list.push(format!("AnisoFilter={}", ANISO[self.aniso_filter() as usize]));
        }
        if self.dimension() == 2 {
            for (n, v) in [("VolMagFilter", self.vol_mag_filter()), ("VolMinFilter", self.vol_min_filter())] {
                if v != 3 {
                    list.push(format!("{n}={}", FILTERS[v as usize]));
                }
            }
        }
        list
    }
    pub fn use_comp_lod(&self) -> bool {
        bf(self.d[1], 28, 1) == 1
    }
    pub fn use_reg_lod(&self) -> bool {
        bf(self.d[1], 29, 1) == 1
    }
    pub fn use_reg_gradients(&self) -> bool {
        bf(self.d[2], 0, 1) == 1
    }
    pub fn sample_location_center(&self) -> bool {
        bf(self.d[2], 1, 1) == 1
    }
    /// LOD bias in 1/16 steps, [-4, 4).
    pub fn lod_bias(&self) -> f32 {
        sext(bf(self.d[2], 2, 7), 7) as f32 / 16.0
    }
    /// 0 = 1D, 1 = 2D, 2 = 3D / stacked, 3 = cube.
    pub fn dimension(&self) -> u32 {
        bf(self.d[2], 14, 2)
    }
    /// Texel offsets in half texels.
    pub fn offsets(&self) -> [f32; 3] {
        [16, 21, 26].map(|lo| sext(bf(self.d[2], lo, 5), 5) as f32 / 2.0)
    }
}

// ---------------------------------------------------------------------------------------------
// ALU
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alu {
    pub d: [u32; 3],
}

/// How an operand's register is addressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addr {
    Static,
    /// `[index + a0]`
    A0,
    /// `[index + aL]`
    AL,
}

/// One resolved ALU operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Operand {
    pub is_temp: bool,
    pub index: u32,
    pub addr: Addr,
    pub abs: bool,
    pub negate: bool,
    /// Components read (vector: 4; scalar: 1 or 2 meaningful).
    pub swizzle: [u8; 4],
    /// How many swizzle lanes are meaningful (4 vector, 2 for `.ab`, 1 for `.a`).
    pub lanes: u8,
}

impl Alu {
    pub fn vector_dest(&self) -> u32 {
        bf(self.d[0], 0, 6)
    }
    pub fn vector_dest_rel(&self) -> bool {
        bf(self.d[0], 6, 1) == 1
    }
    pub fn abs_constants(&self) -> bool {
        bf(self.d[0], 7, 1) == 1
    }
    pub fn scalar_dest(&self) -> u32 {
        bf(self.d[0], 8, 6)
    }
    pub fn scalar_dest_rel(&self) -> bool {
        bf(self.d[0], 14, 1) == 1
    }
    pub fn is_export(&self) -> bool {
        bf(self.d[0], 15, 1) == 1
    }
    pub fn vector_mask(&self) -> u32 {
        bf(self.d[0], 16, 4)
    }
    pub fn scalar_mask(&self) -> u32 {
        bf(self.d[0], 20, 4)
    }
    pub fn vector_clamp(&self) -> bool {
        bf(self.d[0], 24, 1) == 1
    }
    pub fn scalar_clamp(&self) -> bool {
        bf(self.d[0], 25, 1) == 1
    }
    pub fn scalar_opcode(&self) -> u32 {
        bf(self.d[0], 26, 6)
    }
    pub fn src_swizzle(&self, i: u32) -> u32 {
        bf(self.d[1], 16 - 8 * (i - 1), 8)
    }
    pub fn src_negate(&self, i: u32) -> bool {
        bf(self.d[1], 26 - (i - 1), 1) == 1
    }
    pub fn pred_condition(&self) -> bool {
        bf(self.d[1], 27, 1) == 1
    }
    pub fn is_predicated(&self) -> bool {
        bf(self.d[1], 28, 1) == 1
    }
    /// "address_absolute": relative constants use a0 (1) or aL (0).
    pub fn address_absolute(&self) -> bool {
        bf(self.d[1], 29, 1) == 1
    }
    pub fn const1_rel(&self) -> bool {
        bf(self.d[1], 30, 1) == 1
    }
    pub fn const0_rel(&self) -> bool {
        bf(self.d[1], 31, 1) == 1
    }
    pub fn src_reg(&self, i: u32) -> u32 {
        bf(self.d[2], 16 - 8 * (i - 1), 8)
    }
    pub fn vector_opcode(&self) -> u32 {
        bf(self.d[2], 24, 5)
    }
    /// The vector opcode (`None` for field values 30 and 31; [`decode`] refuses them).
    pub fn vector_op(&self) -> Option<VectorOp> {
        VectorOp::from_code(self.vector_opcode())
    }
    /// The scalar opcode (`None` for field values 51-63; [`decode`] refuses them).
    pub fn scalar_op(&self) -> Option<ScalarOp> {
        ScalarOp::from_code(self.scalar_opcode())
    }
    pub fn src_is_temp(&self, i: u32) -> bool {
        bf(self.d[2], 31 - (i - 1), 1) == 1
    }

    /// Vector result lanes (exports: the lanes that are not constant 1).
    pub fn vector_result_mask(&self) -> u32 {
        if self.is_export() {
            self.vector_mask() & !self.scalar_mask()
        } else {
            self.vector_mask()
        }
    }
    pub fn scalar_result_mask(&self) -> u32 {
        if self.is_export() {
            self.scalar_mask() & !self.vector_mask()
        } else {
            self.scalar_mask()
        }
    }
    /// Export lanes written with 0.0.
    pub fn const0_mask(&self) -> u32 {
        if self.is_export() && self.scalar_dest_rel() {
            0xF & !(self.vector_mask() | self.scalar_mask())
        } else {
            0
        }
    }
    /// Export lanes written with 1.0.
    pub fn const1_mask(&self) -> u32 {
        if self.is_export() {
            self.vector_mask() & self.scalar_mask()
        } else {
            0
        }
    }

    pub fn vector_operand_count(&self) -> u8 {
        VECTOR_OPS[self.vector_opcode() as usize].1
    }

    /// Whether the vector operation has an effect (writes lanes, exports constants, or changes
    /// state: predicate push, kill, a0).
    pub fn has_vector_op(&self) -> bool {
        use VectorOp::*;
        self.vector_result_mask() != 0
            || matches!(self.vector_op(), Some(SetpEqPush | SetpNePush | SetpGtPush | SetpGePush | KillEq | KillGt | KillGe | KillNe | MaxA))
    }
    pub fn has_scalar_op(&self) -> bool {
        self.scalar_opcode() != SCALAR_RETAIN_PREV || (!self.is_export() && self.scalar_mask() != 0)
    }

    fn const_addr(&self, slot: u32) -> Addr {
        let rel = if slot == 0 { self.const0_rel() } else { self.const1_rel() };
        match (rel, self.address_absolute()) {
            (false, _) => Addr::Static,
            (true, true) => Addr::A0,
            (true, false) => Addr::AL,
        }
    }

    fn operand_from(&self, is_temp: bool, reg: u32, negate: bool, const_slot: u32) -> Operand {
        if is_temp {
            Operand {
                is_temp,
                index: reg & 0x3F,
                addr: if reg & 0x40 != 0 { Addr::AL } else { Addr::Static },
                abs: reg & 0x80 != 0,
                negate,
                swizzle: [0, 1, 2, 3],
                lanes: 4,
            }
        } else {
            Operand { is_temp, index: reg, addr: self.const_addr(const_slot), abs: self.abs_constants(), negate, swizzle: [0, 1, 2, 3], lanes: 4 }
        }
    }

    /// Constant slot of source `i` = number of constant sources before it.
    fn const_slot(&self, i: u32) -> u32 {
        (1..i).filter(|&k| !self.src_is_temp(k)).count() as u32
    }

    /// Vector source `i` (1-3), swizzle resolved (`((s >> 2k) + k) & 3`).
    pub fn vector_src(&self, i: u32) -> Operand {
        let mut o = self.operand_from(self.src_is_temp(i), self.src_reg(i), self.src_negate(i), self.const_slot(i));
        let s = self.src_swizzle(i);
        for k in 0..4 {
            o.swizzle[k] = (((s >> (2 * k)) + k as u32) & 3) as u8;
        }
        o
    }

    /// Scalar operands. For ordinary ops: src3 with `.a` = `((s >> 6) + 3) & 3`, `.b` = `s & 3`.
    /// mulsc/addsc/subsc: constant src3 `.a` and a temp whose number is
    /// `(op & 1) | src3_sel << 1 | (swizzle & 0x3C)` read at `.b`.
    pub fn scalar_srcs(&self) -> Vec<Operand> {
        let op = self.scalar_opcode();
        let shape = self.scalar_op().map_or(SOps::None, ScalarOp::shape);
        let s = self.src_swizzle(3);
        let a = (((s >> 6) + 3) & 3) as u8;
        let b = (s & 3) as u8;
        match shape {
            SOps::None => vec![],
            SOps::A | SOps::AB => {
                let mut o = self.operand_from(self.src_is_temp(3), self.src_reg(3), self.src_negate(3), self.const_slot(3));
                o.swizzle = [a, b, b, b];
                o.lanes = if shape == SOps::A { 1 } else { 2 };
                vec![o]
            }
            SOps::ConstTemp => {
                let mut c = self.operand_from(false, self.src_reg(3), self.src_negate(3), 0);
                c.swizzle = [a; 4];
                c.lanes = 1;
                let reg2 = (op & 1) | (self.src_is_temp(3) as u32) << 1 | (s & 0x3C);
                let slot = if self.src_is_temp(1) || self.src_is_temp(2) { 1 } else { 0 };
                let _ = slot;
                let mut t = self.operand_from(true, reg2, self.src_negate(3), 0);
                t.swizzle = [b; 4];
                t.lanes = 1;
                vec![c, t]
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Program
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instr {
    Fetch(Fetch),
    Alu(Alu),
}

/// One instruction of an exec clause with its slot address and serialize bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub address: u32,
    pub serialize: bool,
    pub instr: Instr,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub cf: Vec<Cf>,
    /// For each CF instruction that is an exec: its instructions.
    pub clauses: Vec<Vec<Slot>>,
    pub slot_count: u32,
}

/// Decodes a microcode program. Bounds are checked: an exec pointing past the end is an error
/// naming the CF index. Error offsets are from the start of `code` (see
/// [`XenosError::in_container`]).
pub fn decode(code: &[u32]) -> Result<Program, XenosError> {
    let slots = (code.len() / 3) as u32;
    if slots == 0 {
        return Err(XenosError::EmptyMicrocode { dwords: code.len(), microcode_base: 0 });
    }
    let mut cf = Vec::new();
    // Walk CF pairs until the smallest exec address seen so far.
    let mut limit = slots;
    let mut t = 0u32;
    while t < limit {
        let d = &code[(3 * t) as usize..(3 * t + 3) as usize];
        let a = Cf { raw: d[0] as u64 | ((d[1] & 0xFFFF) as u64) << 32 };
        let b = Cf { raw: (d[1] >> 16) as u64 | (d[2] as u64) << 16 };
        for c in [a, b] {
            if c.is_exec() && c.exec_count() > 0 {
                limit = limit.min(c.exec_address());
            }
            cf.push(c);
        }
        t += 1;
    }
    // Keep everything up to the last end-of-shader exec (what follows is padding), and beyond it
    // the subroutines that kept code calls or jumps to, each up to its ret or end.
    if let Some(last_end) = cf.iter().rposition(|c| c.ends_shader()) {
        let mut keep = last_end;
        let mut k = 0;
        while k <= keep {
            let c = cf[k];
            if matches!(c.op(), CfOp::CondCall | CfOp::CondJmp) {
                let t = c.target() as usize;
                if t > keep && t < cf.len() {
                    let end = cf[t..].iter().position(|x| x.op() == CfOp::Return || x.ends_shader()).map_or(cf.len() - 1, |p| t + p);
                    keep = keep.max(end);
                }
            }
            k += 1;
        }
        cf.truncate(keep + 1);
    }
    let mut clauses = Vec::with_capacity(cf.len());
    for (i, c) in cf.iter().enumerate() {
        let mut v = Vec::new();
        if c.is_exec() {
            for k in 0..c.exec_count() {
                let addr = c.exec_address() + k;
                if addr >= slots {
                    return Err(XenosError::ExecPastEnd { cf: i, op: c.op(), slot: addr, slots, microcode_base: 0 });
                }
                let d = [code[(3 * addr) as usize], code[(3 * addr + 1) as usize], code[(3 * addr + 2) as usize]];
                let seq = c.sequence() >> (2 * k);
                let instr = if seq & 1 == 1 { Instr::Fetch(Fetch { d }) } else { Instr::Alu(Alu { d }) };
                if let Instr::Alu(a) = &instr {
                    // The opcode fields are wider than the opcode tables (30 vector, 51 scalar ops).
                    if a.vector_op().is_none() || a.scalar_op().is_none() {
                        let (vector, scalar) = (a.vector_opcode(), a.scalar_opcode());
                        return Err(XenosError::UnknownAluOpcode { cf: i, slot: addr, vector, scalar, microcode_base: 0 });
                    }
                }
                v.push(Slot { address: addr, serialize: seq & 2 != 0, instr });
            }
        }
        clauses.push(v);
    }
    Ok(Program { cf, clauses, slot_count: slots })
}
