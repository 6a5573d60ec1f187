//! Xenos microcode decoding (bit layouts as in Xenia `src/xenia/gpu/ucode.h`, notes §5).
//!
//! A program is a control-flow (CF) region followed by 96-bit instruction slots. Each dword triple
//! of the CF region holds two 48-bit CF instructions; the CF region ends at the smallest exec
//! address. Exec instructions point (by slot address) at runs of fetch / ALU instructions, one bit
//! pair per instruction in the `sequence` field telling fetch (bit 0) and serialize (bit 1).

use crate::formats::ShaderError;

pub const CF_NAMES: [&str; 16] = [
    "nop",
    "exec",
    "exece",
    "cexec",
    "cexece",
    "exec_pred",
    "exece_pred",
    "loop",
    "endloop",
    "call",
    "ret",
    "jmp",
    "alloc",
    "exec_pred_clean",
    "exece_pred_clean",
    "vfetch_end",
];

/// One decoded control-flow instruction (48 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cf {
    pub raw: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfOp {
    Nop,
    Exec,
    ExecEnd,
    CondExec,
    CondExecEnd,
    CondExecPred,
    CondExecPredEnd,
    LoopStart,
    LoopEnd,
    CondCall,
    Return,
    CondJmp,
    Alloc,
    CondExecPredClean,
    CondExecPredCleanEnd,
    MarkVsFetchDone,
}

impl Cf {
    fn bits(&self, lo: u32, n: u32) -> u32 {
        ((self.raw >> lo) & ((1u64 << n) - 1)) as u32
    }
    pub fn op(&self) -> CfOp {
        use CfOp::*;
        [
            Nop,
            Exec,
            ExecEnd,
            CondExec,
            CondExecEnd,
            CondExecPred,
            CondExecPredEnd,
            LoopStart,
            LoopEnd,
            CondCall,
            Return,
            CondJmp,
            Alloc,
            CondExecPredClean,
            CondExecPredCleanEnd,
            MarkVsFetchDone,
        ][self.bits(44, 4) as usize]
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
// Fetch
// ---------------------------------------------------------------------------------------------

pub const FETCH_NAMES: [(u32, &str); 9] = [
    (0, "vfetch"),
    (1, "tfetch"),
    (16, "getBCF"),
    (17, "getCompTexLOD"),
    (18, "getGradients"),
    (19, "getWeights"),
    (24, "setTexLOD"),
    (25, "setGradientsH"),
    (26, "setGradientsV"),
];

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
    pub fn name(&self) -> Option<&'static str> {
        FETCH_NAMES.iter().find(|(o, _)| *o == self.opcode()).map(|(_, n)| *n)
    }
    /// Whether the fetch reads the texture its fetch constant names (tfetch, getBCF,
    /// getCompTexLOD, getWeights): not vfetch, getGradients (source derivatives only) or the
    /// set* ops (sampler state for later fetches).
    pub fn reads_texture(&self) -> bool {
        !matches!(self.opcode(), 0 | 18 | 24..=26)
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

/// Vector opcodes 0-29 (name, operand count).
pub const VECTOR_OPS: [(&str, u8); 30] = [
    ("add", 2),
    ("mul", 2),
    ("max", 2),
    ("min", 2),
    ("seq", 2),
    ("sgt", 2),
    ("sge", 2),
    ("sne", 2),
    ("frc", 1),
    ("trunc", 1),
    ("floor", 1),
    ("mad", 3),
    ("cndeq", 3),
    ("cndge", 3),
    ("cndgt", 3),
    ("dp4", 2),
    ("dp3", 2),
    ("dp2add", 3),
    ("cube", 2),
    ("max4", 1),
    ("setp_eq_push", 2),
    ("setp_ne_push", 2),
    ("setp_gt_push", 2),
    ("setp_ge_push", 2),
    ("kill_eq", 2),
    ("kill_gt", 2),
    ("kill_ge", 2),
    ("kill_ne", 2),
    ("dst", 2),
    ("maxa", 2),
];

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

/// Scalar opcodes 0-50 (41 unused), name and operand shape.
pub const SCALAR_OPS: [(&str, SOps); 51] = [
    ("adds", SOps::AB),
    ("adds_prev", SOps::A),
    ("muls", SOps::AB),
    ("muls_prev", SOps::A),
    ("muls_prev2", SOps::AB),
    ("maxs", SOps::AB),
    ("mins", SOps::AB),
    ("seqs", SOps::A),
    ("sgts", SOps::A),
    ("sges", SOps::A),
    ("snes", SOps::A),
    ("frcs", SOps::A),
    ("truncs", SOps::A),
    ("floors", SOps::A),
    ("exp", SOps::A),
    ("logc", SOps::A),
    ("log", SOps::A),
    ("rcpc", SOps::A),
    ("rcpf", SOps::A),
    ("rcp", SOps::A),
    ("rsqc", SOps::A),
    ("rsqf", SOps::A),
    ("rsq", SOps::A),
    ("maxas", SOps::AB),
    ("maxasf", SOps::AB),
    ("subs", SOps::AB),
    ("subs_prev", SOps::A),
    ("setp_eq", SOps::A),
    ("setp_ne", SOps::A),
    ("setp_gt", SOps::A),
    ("setp_ge", SOps::A),
    ("setp_inv", SOps::A),
    ("setp_pop", SOps::A),
    ("setp_clr", SOps::None),
    ("setp_rstr", SOps::A),
    ("kills_eq", SOps::A),
    ("kills_gt", SOps::A),
    ("kills_ge", SOps::A),
    ("kills_ne", SOps::A),
    ("kills_one", SOps::A),
    ("sqrt", SOps::A),
    ("?41", SOps::None),
    ("mulsc", SOps::ConstTemp),
    ("mulsc", SOps::ConstTemp),
    ("addsc", SOps::ConstTemp),
    ("addsc", SOps::ConstTemp),
    ("subsc", SOps::ConstTemp),
    ("subsc", SOps::ConstTemp),
    ("sin", SOps::A),
    ("cos", SOps::A),
    ("retain_prev", SOps::None),
];

pub const SCALAR_RETAIN_PREV: u32 = 50;

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
        self.vector_result_mask() != 0 || matches!(self.vector_opcode(), 20..=27 | 29)
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
        let shape = SCALAR_OPS.get(op as usize).map(|s| s.1).unwrap_or(SOps::None);
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
/// naming the CF index.
pub fn decode(code: &[u32]) -> Result<Program, ShaderError> {
    let slots = (code.len() / 3) as u32;
    if slots == 0 {
        return Err(ShaderError::new("empty microcode"));
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
                    return Err(ShaderError::new(format!(
                        "CF {i} ({}) addresses slot {addr}, past the {slots} slots of the microcode",
                        CF_NAMES[c.opcode() as usize]
                    )));
                }
                let d = [code[(3 * addr) as usize], code[(3 * addr + 1) as usize], code[(3 * addr + 2) as usize]];
                let seq = c.sequence() >> (2 * k);
                let instr = if seq & 1 == 1 { Instr::Fetch(Fetch { d }) } else { Instr::Alu(Alu { d }) };
                if let Instr::Alu(a) = &instr {
                    // The opcode fields are wider than the opcode tables: 30 vector, 49+ scalar ops.
                    if a.vector_opcode() as usize >= VECTOR_OPS.len() || a.scalar_opcode() as usize >= SCALAR_OPS.len() {
                        return Err(ShaderError::new(format!(
                            "CF {i} slot {addr}: ALU opcode vector {} / scalar {} does not exist (the ALU has {} vector and {} scalar ops)",
                            a.vector_opcode(),
                            a.scalar_opcode(),
                            VECTOR_OPS.len(),
                            SCALAR_OPS.len()
                        )));
                    }
                }
                v.push(Slot { address: addr, serialize: seq & 2 != 0, instr });
            }
        }
        clauses.push(v);
    }
    Ok(Program { cf, clauses, slot_count: slots })
}
