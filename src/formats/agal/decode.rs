//! AGAL bytecode: header, 24-byte tokens, operand fields, and validation with Flash's error numbers.
//!
//! Layouts (Adobe "AGAL bytecode format"; docs/isa/agal.md §2-§4):
//! ```text
//! header : A0 | u32 LE version | A1 | u8 type (0 vertex, 1 fragment)
//! token  : u32 opcode | u32 dest | u64 source1 | u64 source2-or-sampler      (little-endian)
//! dest   : bits 0-15 register number, 16-19 write mask, 24-27 register type
//! source : bits 0-15 register number (indirect: index register number), 16-23 indirect offset,
//!          24-31 swizzle (2 bits per lane, x in bits 0-1), 32-35 register type,
//!          40-43 index register type, 48-49 index lane, 63 indirect flag
//! sampler: bits 0-15 register number, 16-23 LOD bias (i8, /8), 32-35 register type (5),
//!          40-43 format, 44-47 dimension, 48-51 special flags, 52-55 wrap, 56-59 mip, 60-63 filter
//! ```

use crate::formats::opcodes::{Row, Status, Status::*};
use crate::formats::Stage;

pub const HEADER_LEN: usize = 7;
pub const TOKEN_LEN: usize = 24;

use super::error::Operand as Which;
pub use super::error::{flash_error, AgalError, TokenError};

/// Register types (the `T` fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegType {
    Attribute,
    Constant,
    Temporary,
    Output,
    Varying,
    Sampler,
    /// `od` / `fd`: fragment depth output (AGAL2+).
    Depth,
    /// `iid`: vertex instance id (AGAL3).
    InstanceId,
}

impl RegType {
    pub fn from_code(code: u32) -> Option<RegType> {
        Some(match code {
            0 => RegType::Attribute,
            1 => RegType::Constant,
            2 => RegType::Temporary,
            3 => RegType::Output,
            4 => RegType::Varying,
            5 => RegType::Sampler,
            6 => RegType::Depth,
            7 => RegType::InstanceId,
            _ => return None,
        })
    }

    /// Assembler name in a program of `stage`.
    pub fn name(self, stage: Stage) -> &'static str {
        let frag = stage == Stage::Pixel;
        match self {
            RegType::Attribute => "va",
            RegType::Constant => {
                if frag {
                    "fc"
                } else {
                    "vc"
                }
            }
            RegType::Temporary => {
                if frag {
                    "ft"
                } else {
                    "vt"
                }
            }
            RegType::Output => {
                if frag {
                    "oc"
                } else {
                    "op"
                }
            }
            RegType::Varying => "v",
            RegType::Sampler => {
                if frag {
                    "fs"
                } else {
                    "vs"
                }
            }
            RegType::Depth => "od",
            RegType::InstanceId => "iid",
        }
    }
}

/// Static facts about one opcode: a row of the opcode table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// The 32-bit opcode field.
    pub code: u32,
    /// Number of register sources (a sampler operand is not counted).
    pub sources: u8,
    pub has_dest: bool,
    pub sampler: bool,
    /// Lowest AGAL version that has it.
    pub min_version: u32,
    /// `Some(stage)` when only that stage may use it.
    pub only: Option<Stage>,
    /// Rows of the matrix read from consecutive registers of source 2 (`m33`/`m34` 3, `m44` 4).
    pub matrix_rows: u16,
    pub status: Status,
}

const fn op(code: u32, sources: u8, has_dest: bool) -> OpInfo {
    OpInfo { code, sources, has_dest, sampler: false, min_version: 1, only: None, matrix_rows: 0, status: Translated }
}
const fn v2(mut o: OpInfo) -> OpInfo {
    o.min_version = 2;
    o
}
const fn frag(mut o: OpInfo) -> OpInfo {
    o.only = Some(Stage::Pixel);
    o
}
const fn tex(mut o: OpInfo) -> OpInfo {
    o.sampler = true;
    o
}
const fn matrix(mut o: OpInfo, rows: u16) -> OpInfo {
    o.matrix_rows = rows;
    o
}
const fn status(mut o: OpInfo, s: Status) -> OpInfo {
    o.status = s;
    o
}

const XYZ_ONLY: &str = "writes x, y and z only; a destination mask of w alone is refused";
const FRAGMENT_ONLY: &str = "fragment programs only";

crate::op_enum! {
    /// Every opcode AGAL defines, one row each (docs/isa/agal.md §5; opcode numbers from Adobe's
    /// AGALMiniAssembler and the "AGAL bytecode format" page). `ted` is decoded so that it can be
    /// named in errors; `tld` is the AGAL4 ("enhanced" profile) vertex texture fetch.
    pub enum Op: OpInfo {
        Mov("mov") => op(0x00, 1, true),
        Add("add") => op(0x01, 2, true),
        Sub("sub") => op(0x02, 2, true),
        Mul("mul") => op(0x03, 2, true),
        Div("div") => op(0x04, 2, true),
        Rcp("rcp") => op(0x05, 1, true),
        Min("min") => op(0x06, 2, true),
        Max("max") => op(0x07, 2, true),
        Frc("frc") => op(0x08, 1, true),
        Sqt("sqt") => op(0x09, 1, true),
        Rsq("rsq") => op(0x0A, 1, true),
        Pow("pow") => op(0x0B, 2, true),
        Log("log") => op(0x0C, 1, true),
        Exp("exp") => op(0x0D, 1, true),
        Nrm("nrm") => status(op(0x0E, 1, true), Limited(XYZ_ONLY)),
        Sin("sin") => op(0x0F, 1, true),
        Cos("cos") => op(0x10, 1, true),
        Crs("crs") => status(op(0x11, 2, true), Limited(XYZ_ONLY)),
        Dp3("dp3") => op(0x12, 2, true),
        Dp4("dp4") => op(0x13, 2, true),
        Abs("abs") => op(0x14, 1, true),
        Neg("neg") => op(0x15, 1, true),
        Sat("sat") => op(0x16, 1, true),
        M33("m33") => status(matrix(op(0x17, 2, true), 3), Limited(XYZ_ONLY)),
        M44("m44") => matrix(op(0x18, 2, true), 4),
        M34("m34") => status(matrix(op(0x19, 2, true), 3), Limited(XYZ_ONLY)),
        Ddx("ddx") => status(frag(v2(op(0x1A, 1, true))), Limited(FRAGMENT_ONLY)),
        Ddy("ddy") => status(frag(v2(op(0x1B, 1, true))), Limited(FRAGMENT_ONLY)),
        Ife("ife") => v2(op(0x1C, 2, false)),
        Ine("ine") => v2(op(0x1D, 2, false)),
        Ifg("ifg") => v2(op(0x1E, 2, false)),
        Ifl("ifl") => v2(op(0x1F, 2, false)),
        Els("els") => v2(op(0x20, 0, false)),
        Eif("eif") => v2(op(0x21, 0, false)),
        // The 2015 assembler comments `ted` out ("not available in AGAL2") and no Flash profile
        // documents its semantics: rejected by name rather than guessed.
        Ted("ted") => status(tex(op(0x26, 1, true)), Rejected(TED_REASON)),
        Kil("kil") => status(frag(op(0x27, 1, false)), Limited(FRAGMENT_ONLY)),
        Tex("tex") => status(frag(tex(op(0x28, 1, true))), Limited(FRAGMENT_ONLY)),
        Sge("sge") => op(0x29, 2, true),
        Slt("slt") => op(0x2A, 2, true),
        Sgn("sgn") => op(0x2B, 1, true),
        Seq("seq") => op(0x2C, 2, true),
        Sne("sne") => op(0x2D, 2, true),
        Tld("tld") => OpInfo {
            code: 0x2E,
            sources: 1,
            has_dest: true,
            sampler: true,
            min_version: 4,
            only: Some(Stage::Vertex),
            matrix_rows: 0,
            status: Limited("AGAL4 vertex programs only (`--agal4`)"),
        },
    }
}

const TED_REASON: &str = "not available in any Flash Stage3D profile and no documented semantics";

impl Op {
    /// The opcode of a 32-bit opcode field, if AGAL defines it.
    pub fn from_code(code: u32) -> Option<Op> {
        Op::ALL.iter().copied().find(|o| o.info().code == code)
    }
    /// The opcode of an assembler mnemonic.
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.iter().copied().find(|o| o.name() == name)
    }
    pub const fn status(self) -> Status {
        self.info().status
    }
    /// `ife`, `ine`, `ifg`, `ifl`: opens an if block.
    pub const fn opens_block(self) -> bool {
        matches!(self, Op::Ife | Op::Ine | Op::Ifg | Op::Ifl)
    }
    /// Rows of the matrix `m33` / `m34` / `m44` reads from source 2 (0 for other ops).
    pub const fn matrix_rows(self) -> u16 {
        self.info().matrix_rows
    }
}

/// Every AGAL opcode as rows of the generated table (docs/opcodes/agal.md).
pub fn opcode_rows() -> Vec<Row> {
    Op::ALL
        .iter()
        .map(|o| {
            let i = o.info();
            let mut operands = format!("{} src", i.sources);
            if i.sampler {
                operands.push_str(" + sampler");
            }
            operands.push_str(if i.has_dest { ", dest" } else { ", no dest" });
            if i.min_version > 1 {
                operands += &format!("; AGAL{}+", i.min_version);
            }
            Row { class: "op", name: o.name(), encoding: format!("0x{:02X}", i.code), operands, status: i.status }
        })
        .collect()
}

/// Per-version register counts (docs/isa/agal.md §4).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub attributes: u32,
    pub vertex_constants: u32,
    pub fragment_constants: u32,
    pub temporaries: u32,
    pub outputs: u32,
    pub varyings: u32,
    pub samplers: u32,
    pub tokens: usize,
}

pub fn limits(version: u32) -> Limits {
    match version {
        1 => {
            Limits { attributes: 8, vertex_constants: 128, fragment_constants: 28, temporaries: 8, outputs: 1, varyings: 8, samplers: 8, tokens: 200 }
        }
        2 => Limits {
            attributes: 8,
            vertex_constants: 250,
            fragment_constants: 64,
            temporaries: 26,
            outputs: 4,
            varyings: 10,
            samplers: 16,
            tokens: 1024,
        },
        // AGAL3 and the AGAL4 ("enhanced") profile share AGAL3's register file.
        _ => Limits {
            attributes: 16,
            vertex_constants: 250,
            fragment_constants: 200,
            temporaries: 26,
            outputs: 4,
            varyings: 10,
            samplers: 16,
            tokens: 2048,
        },
    }
}

/// Varyings declared in every stage regardless of version, so that any vertex program links with
/// any fragment program (D3D12 compares whole signatures).
pub const VARYING_SLOTS: u32 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dest {
    pub reg: RegType,
    pub num: u16,
    pub mask: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indirect {
    pub reg: RegType,
    /// Number of the index register.
    pub num: u16,
    /// Lane of the index register (0 = x).
    pub lane: u8,
    /// Constant offset added to the index.
    pub offset: u8,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Source {
    pub reg: RegType,
    /// Register number (0 and meaningless when indirect: the base is the offset).
    pub num: u16,
    pub swizzle: [u8; 4],
    pub indirect: Option<Indirect>,
}

/// A decoded sampler word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sampler {
    pub num: u16,
    pub reg: RegType,
    /// LOD bias in 1/8 units.
    pub bias: i8,
    pub format: u8,
    /// 0 2d, 1 cube, 2 3d.
    pub dim: u8,
    pub special: u8,
    pub wrap: u8,
    pub mip: u8,
    pub filter: u8,
    /// The whole 64-bit word as found (exported as cache metadata).
    pub word: u64,
}

impl Sampler {
    fn decode(word: u64) -> Option<Sampler> {
        Some(Sampler {
            num: (word & 0xFFFF) as u16,
            reg: RegType::from_code(((word >> 32) & 0xF) as u32)?,
            bias: ((word >> 16) & 0xFF) as u8 as i8,
            format: ((word >> 40) & 0xF) as u8,
            dim: ((word >> 44) & 0xF) as u8,
            special: ((word >> 48) & 0xF) as u8,
            wrap: ((word >> 52) & 0xF) as u8,
            mip: ((word >> 56) & 0xF) as u8,
            filter: ((word >> 60) & 0xF) as u8,
            word,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand2 {
    None,
    Source(Source),
    Sampler(Sampler),
}

#[derive(Clone, Copy, Debug)]
pub struct Token {
    pub op: Op,
    pub dest: Option<Dest>,
    pub src1: Option<Source>,
    pub src2: Operand2,
}

#[derive(Clone, Debug)]
pub struct Program {
    pub version: u32,
    pub stage: Stage,
    pub tokens: Vec<Token>,
}

/// Decoding options.
#[derive(Clone, Copy, Debug, Default)]
pub struct DecodeOptions {
    /// Accept version-4 ("enhanced" profile) programs with `tld`.
    pub allow_agal4: bool,
}

/// Byte offset of 1-based token `token` in its program.
pub fn token_offset(token: usize) -> u64 {
    (HEADER_LEN + token.saturating_sub(1) * TOKEN_LEN) as u64
}

fn stage_word(stage: Stage) -> &'static str {
    if stage == Stage::Pixel {
        "fragment"
    } else {
        "vertex"
    }
}

struct Ctx {
    version: u32,
    stage: Stage,
    limits: Limits,
    /// 1-based token number, as Flash counts.
    token: usize,
}

impl Ctx {
    fn err(&self, reason: TokenError) -> AgalError {
        AgalError::Token { offset: token_offset(self.token), token: self.token, stage: stage_word(self.stage), reason }
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

/// Parses the 7-byte header: (version, stage).
pub fn parse_header(bytes: &[u8], opts: DecodeOptions) -> Result<(u32, Stage), AgalError> {
    if bytes.len() < HEADER_LEN || bytes[0] != 0xA0 || bytes[5] != 0xA1 {
        return Err(AgalError::BadHeader);
    }
    if bytes.len() < HEADER_LEN + TOKEN_LEN {
        return Err(AgalError::BelowMinimum { len: bytes.len() });
    }
    let version = u32_at(bytes, 1);
    let max_version = if opts.allow_agal4 { 4 } else { 3 };
    if version == 0 || version > max_version {
        return Err(AgalError::Version { version });
    }
    let stage = match bytes[6] {
        0 => Stage::Vertex,
        1 => Stage::Pixel,
        ty => return Err(AgalError::ProgramType { ty }),
    };
    Ok((version, stage))
}

/// Decodes and validates a whole program. `bytes` must be exactly the program (7 + 24·k bytes).
pub fn decode(bytes: &[u8], opts: DecodeOptions) -> Result<Program, AgalError> {
    let (version, stage) = parse_header(bytes, opts)?;
    let body = bytes.len() - HEADER_LEN;
    if !body.is_multiple_of(TOKEN_LEN) {
        return Err(AgalError::PartialToken { len: bytes.len() });
    }
    let count = body / TOKEN_LEN;
    let limits = limits(version);
    if count > limits.tokens {
        return Err(AgalError::TooManyTokens { count, version, limit: limits.tokens });
    }
    let mut ctx = Ctx { version, stage, limits, token: 0 };
    let mut tokens = Vec::with_capacity(count);
    for i in 0..count {
        ctx.token = i + 1;
        tokens.push(decode_token(&ctx, &bytes[HEADER_LEN + i * TOKEN_LEN..HEADER_LEN + (i + 1) * TOKEN_LEN])?);
    }
    check_program(&mut ctx, &tokens)?;
    Ok(Program { version, stage, tokens })
}

/// As much of a program as decodes, for listing invalid programs: every token up to the first
/// that does not decode, and the error [`decode`] gives for the whole program (a bad token, a
/// trailing partial token, a token limit or a program-level rule such as a sampler conflict).
/// `None` as the program only when the header itself is invalid.
pub fn decode_prefix(bytes: &[u8], opts: DecodeOptions) -> (Option<Program>, Option<AgalError>) {
    let error = decode(bytes, opts).err();
    let Ok((version, stage)) = parse_header(bytes, opts) else { return (None, error) };
    let ctx = Ctx { version, stage, limits: limits(version), token: 0 };
    let tokens =
        bytes[HEADER_LEN..].chunks_exact(TOKEN_LEN).enumerate().map_while(|(i, raw)| decode_token(&Ctx { token: i + 1, ..ctx }, raw).ok()).collect();
    (Some(Program { version, stage, tokens }), error)
}

/// True when the 24 bytes form a token a program of this version and stage may contain
/// (used by detection to find where an embedded program ends).
pub fn token_is_valid(raw: &[u8], version: u32, stage: Stage) -> bool {
    let ctx = Ctx { version, stage, limits: limits(version), token: 1 };
    raw.len() == TOKEN_LEN && decode_token(&ctx, raw).is_ok()
}

fn decode_token(ctx: &Ctx, raw: &[u8]) -> Result<Token, AgalError> {
    let code = u32_at(raw, 0);
    let dest_word = u32_at(raw, 4);
    let s1 = u64_at(raw, 8);
    let s2 = u64_at(raw, 16);
    let op = Op::from_code(code).ok_or_else(|| ctx.err(TokenError::BadOpcode { code }))?;
    let info = op.info();
    if info.min_version > ctx.version {
        return Err(ctx.err(TokenError::NeedsVersion { op, min: info.min_version, version: ctx.version }));
    }
    if let Some(only) = info.only {
        if only != ctx.stage {
            return Err(ctx.err(TokenError::WrongStage { op, stage: stage_word(ctx.stage) }));
        }
    }
    // Rejected rows of the table (`ted`) are refused by name here, before their operands.
    if let Some(reason) = info.status.reason() {
        return Err(ctx.err(TokenError::Rejected { op, reason }));
    }
    let dest = if info.has_dest {
        Some(decode_dest(ctx, dest_word)?)
    } else {
        if dest_word != 0 {
            return Err(ctx.err(TokenError::DestinationNotZero { op, word: dest_word }));
        }
        None
    };
    let src1 = if info.sources >= 1 {
        Some(decode_source(ctx, s1, 1)?)
    } else {
        if s1 != 0 {
            return Err(ctx.err(TokenError::Source1NotZero { op, word: s1 }));
        }
        None
    };
    let src2 = if info.sampler {
        Operand2::Sampler(decode_sampler(ctx, s2)?)
    } else if info.sources >= 2 {
        Operand2::Source(decode_source(ctx, s2, 2)?)
    } else {
        if s2 != 0 {
            return Err(ctx.err(TokenError::Source2NotZero { op, word: s2 }));
        }
        Operand2::None
    };
    let token = Token { op, dest, src1, src2 };
    check_operand_pairs(ctx, &token)?;
    Ok(token)
}

fn decode_dest(ctx: &Ctx, word: u32) -> Result<Dest, AgalError> {
    let num = (word & 0xFFFF) as u16;
    let mask = ((word >> 16) & 0xF) as u8;
    let reserved = word & 0xF0F0_0000;
    if reserved != 0 {
        return Err(ctx.err(TokenError::DestinationReserved { word }));
    }
    let reg = RegType::from_code((word >> 24) & 0xF)
        .ok_or_else(|| ctx.err(TokenError::RegisterType { code: (word >> 24) & 0xF, operand: Which::Destination }))?;
    if mask == 0 {
        return Err(ctx.err(TokenError::EmptyMask));
    }
    let frag = ctx.stage == Stage::Pixel;
    let limit = match reg {
        RegType::Attribute => return Err(ctx.err(TokenError::WriteAttribute)),
        RegType::Constant => return Err(ctx.err(TokenError::WriteConstant)),
        RegType::Sampler => return Err(ctx.err(TokenError::WriteSampler)),
        RegType::InstanceId => return Err(ctx.err(TokenError::WriteInstanceId)),
        RegType::Depth => {
            if !frag || ctx.version < 2 {
                return Err(ctx.err(TokenError::DepthOutOfBounds { operand: Which::Destination }));
            }
            1
        }
        RegType::Temporary => ctx.limits.temporaries,
        RegType::Output => {
            if frag {
                ctx.limits.outputs
            } else {
                1
            }
        }
        RegType::Varying => ctx.limits.varyings,
    };
    if u32::from(num) >= limit {
        return Err(ctx.err(TokenError::RegisterOutOfRange {
            reg: reg.name(ctx.stage),
            num,
            version: ctx.version,
            limit,
            operand: Which::Destination,
        }));
    }
    Ok(Dest { reg, num, mask })
}

fn decode_source(ctx: &Ctx, word: u64, which: u8) -> Result<Source, AgalError> {
    let num = (word & 0xFFFF) as u16;
    let offset = ((word >> 16) & 0xFF) as u8;
    let swz = ((word >> 24) & 0xFF) as u8;
    let type_code = ((word >> 32) & 0xF) as u32;
    let index_type = ((word >> 40) & 0xF) as u32;
    let lane = ((word >> 48) & 0x3) as u8;
    let indirect = word >> 63 == 1;
    let operand = Which::Source(which);
    let reserved = word & 0x7FFC_F0F0_0000_0000;
    if reserved != 0 {
        return Err(ctx.err(TokenError::SourceReserved { operand, word }));
    }
    let reg = RegType::from_code(type_code).ok_or_else(|| ctx.err(TokenError::RegisterType { code: type_code, operand }))?;
    let swizzle = [swz & 3, (swz >> 2) & 3, (swz >> 4) & 3, (swz >> 6) & 3];
    let frag = ctx.stage == Stage::Pixel;
    match reg {
        RegType::Output => return Err(ctx.err(TokenError::ReadOutput { operand })),
        RegType::Sampler => return Err(ctx.err(TokenError::SamplerOutsideTex { operand })),
        RegType::Depth => return Err(ctx.err(TokenError::DepthOutOfBounds { operand })),
        RegType::Attribute if frag => return Err(ctx.err(TokenError::AttributeInFragment { operand })),
        RegType::InstanceId if frag || ctx.version < 3 => return Err(ctx.err(TokenError::InstanceIdUnavailable { operand })),
        _ => {}
    }
    if indirect {
        if frag {
            return Err(ctx.err(TokenError::IndirectOutsideVertex { operand }));
        }
        if reg != RegType::Constant {
            return Err(ctx.err(TokenError::IndirectNotConstant { operand }));
        }
        let index_reg = RegType::from_code(index_type)
            .filter(|r| matches!(r, RegType::Attribute | RegType::Constant | RegType::Temporary))
            .ok_or_else(|| ctx.err(TokenError::IndexRegisterType { code: index_type, operand }))?;
        check_range(ctx, index_reg, num, which)?;
        return Ok(Source { reg, num: 0, swizzle, indirect: Some(Indirect { reg: index_reg, num, lane, offset }) });
    }
    if offset != 0 || index_type != 0 || lane != 0 {
        return Err(ctx.err(TokenError::IndirectFieldsOnDirect { operand, word }));
    }
    check_range(ctx, reg, num, which)?;
    Ok(Source { reg, num, swizzle, indirect: None })
}

/// How many registers of a type a source may read in this version and stage.
fn source_limit(ctx: &Ctx, reg: RegType) -> u32 {
    let frag = ctx.stage == Stage::Pixel;
    match reg {
        RegType::Attribute => ctx.limits.attributes,
        RegType::Constant => {
            if frag {
                ctx.limits.fragment_constants
            } else {
                ctx.limits.vertex_constants
            }
        }
        RegType::Temporary => ctx.limits.temporaries,
        RegType::Varying => ctx.limits.varyings,
        RegType::InstanceId => 1,
        RegType::Output | RegType::Sampler | RegType::Depth => 0,
    }
}

fn check_range(ctx: &Ctx, reg: RegType, num: u16, which: u8) -> Result<(), AgalError> {
    let limit = source_limit(ctx, reg);
    if u32::from(num) >= limit {
        return Err(ctx.err(TokenError::RegisterOutOfRange {
            reg: reg.name(ctx.stage),
            num,
            version: ctx.version,
            limit,
            operand: Which::Source(which),
        }));
    }
    Ok(())
}

fn decode_sampler(ctx: &Ctx, word: u64) -> Result<Sampler, AgalError> {
    let s = Sampler::decode(word).ok_or_else(|| ctx.err(TokenError::SamplerRegisterType))?;
    if s.reg != RegType::Sampler {
        return Err(ctx.err(TokenError::NotASampler { found: s.reg.name(ctx.stage) }));
    }
    if word & 0x0000_00F0_FF00_0000 != 0 {
        return Err(ctx.err(TokenError::SamplerReserved { word }));
    }
    if u32::from(s.num) >= ctx.limits.samplers {
        return Err(ctx.err(TokenError::SamplerOutOfRange { num: s.num, version: ctx.version, limit: ctx.limits.samplers }));
    }
    if s.dim > 1 {
        return Err(ctx.err(TokenError::SamplerDimension { dim: s.dim }));
    }
    if s.wrap > 3 || s.mip > 2 || s.filter > 5 || s.format > 3 {
        return Err(ctx.err(TokenError::SamplerOptions { wrap: s.wrap, mip: s.mip, filter: s.filter, format: s.format }));
    }
    Ok(s)
}

/// Rules that look at both sources of a token (Program3D.upload docs).
fn check_operand_pairs(ctx: &Ctx, t: &Token) -> Result<(), AgalError> {
    if let (Some(a), Operand2::Source(b)) = (t.src1, t.src2) {
        if a.reg == RegType::Constant && b.reg == RegType::Constant {
            return Err(ctx.err(TokenError::TwoConstants { op: t.op }));
        }
        if a.indirect.is_some() && b.indirect.is_some() {
            return Err(ctx.err(TokenError::TwoIndirect { op: t.op }));
        }
    }
    // m33/m34/m44 read their matrix from 3-4 consecutive registers of source 2: every row must
    // exist (fuzzing found `m33 vt4, vc0, iid` and `m44 op, v5, v7`, whose rows ran past the
    // register file). Indirect rows are clamped by the constant read like any indirect read.
    let rows = t.op.matrix_rows();
    if rows == 0 {
        return Ok(());
    }
    if let Operand2::Source(m) = t.src2 {
        if m.indirect.is_none() {
            let last = m.num.saturating_add(rows - 1);
            let limit = source_limit(ctx, m.reg);
            if u32::from(last) >= limit {
                return Err(ctx.err(TokenError::MatrixPastRegisterFile {
                    op: t.op,
                    reg: m.reg.name(ctx.stage),
                    first: m.num,
                    last,
                    version: ctx.version,
                    limit,
                }));
            }
        }
    }
    Ok(())
}

/// Whole-program rules: balanced if/els/eif, identical sampler words per sampler slot (#3696).
fn check_program(ctx: &mut Ctx, tokens: &[Token]) -> Result<(), AgalError> {
    let mut depth: Vec<bool> = Vec::new(); // per open if: has seen els
    let mut samplers: Vec<(u16, u64)> = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        ctx.token = i + 1;
        if t.op.opens_block() {
            depth.push(false);
        } else if t.op == Op::Els {
            match depth.last_mut() {
                Some(seen) if !*seen => *seen = true,
                Some(_) => return Err(ctx.err(TokenError::SecondEls)),
                None => return Err(ctx.err(TokenError::ElsWithoutIf)),
            }
        } else if t.op == Op::Eif && depth.pop().is_none() {
            return Err(ctx.err(TokenError::EifWithoutIf));
        }
        if let Operand2::Sampler(s) = t.src2 {
            match samplers.iter().find(|(n, _)| *n == s.num) {
                Some((_, w)) if *w != s.word => return Err(ctx.err(TokenError::SamplerConflict)),
                Some(_) => {}
                None => samplers.push((s.num, s.word)),
            }
        }
    }
    if !depth.is_empty() {
        ctx.token = tokens.len();
        return Err(ctx.err(TokenError::UnclosedIf { open: depth.len() }));
    }
    Ok(())
}

/// Length of the AGAL program at the start of `buf`: a valid header followed by the longest run
/// of valid tokens (at least one). Whole-program rules are not checked here: a program that
/// breaks them is still *found*, and its translation reports why it is invalid.
pub fn probe(buf: &[u8], opts: DecodeOptions) -> Option<usize> {
    if buf.len() < HEADER_LEN + TOKEN_LEN || buf[0] != 0xA0 || buf[5] != 0xA1 {
        return None;
    }
    let (version, stage) = parse_header(buf, opts).ok()?;
    let max_tokens = limits(version).tokens;
    let mut n = 0;
    while n < max_tokens {
        let at = HEADER_LEN + n * TOKEN_LEN;
        match buf.get(at..at + TOKEN_LEN) {
            Some(raw) if token_is_valid(raw, version, stage) => n += 1,
            _ => break,
        }
    }
    (n > 0).then_some(HEADER_LEN + n * TOKEN_LEN)
}
