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

use crate::formats::Stage;

pub const HEADER_LEN: usize = 7;
pub const TOKEN_LEN: usize = 24;

/// Flash Player's own error numbers, quoted in our messages so users can match them with what
/// Flash reported for the same program.
pub mod flash_error {
    pub const LITTLE_ENDIAN: u32 = 3612;
    pub const BELOW_MINIMUM: u32 = 3615;
    pub const BAD_OPCODE: u32 = 3620;
    pub const SAMPLER_ONLY_IN_TEX: u32 = 3638;
    pub const INDIRECT_ONLY_VERTEX: u32 = 3639;
    pub const INDIRECT_ONLY_CONST: u32 = 3640;
    pub const READ_OUTPUT: u32 = 3646;
    pub const WRITE_SAMPLER: u32 = 3649;
    pub const WRITE_ATTRIBUTE: u32 = 3651;
    pub const WRITE_CONSTANT: u32 = 3652;
    pub const SAMPLER_CONFLICT: u32 = 3696;
    pub const DEPTH_OUT_OF_BOUNDS: u32 = 3749;
}

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

/// Static facts about one opcode: table data, not code.
#[derive(Clone, Copy, Debug)]
pub struct OpInfo {
    pub code: u32,
    pub name: &'static str,
    /// Number of register sources (a sampler operand is not counted).
    pub sources: u8,
    pub has_dest: bool,
    pub sampler: bool,
    /// Lowest AGAL version that has it.
    pub min_version: u32,
    /// `Some(stage)` when only that stage may use it.
    pub only: Option<Stage>,
}

const fn op(code: u32, name: &'static str, sources: u8, has_dest: bool) -> OpInfo {
    OpInfo { code, name, sources, has_dest, sampler: false, min_version: 1, only: None }
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

/// Every opcode AGAL defines (docs/isa/agal.md §5). `ted` and `tld` are decoded so that they can be
/// named in errors; see `lower.rs` for how each is handled.
pub const OPCODES: &[OpInfo] = &[
    op(0x00, "mov", 1, true),
    op(0x01, "add", 2, true),
    op(0x02, "sub", 2, true),
    op(0x03, "mul", 2, true),
    op(0x04, "div", 2, true),
    op(0x05, "rcp", 1, true),
    op(0x06, "min", 2, true),
    op(0x07, "max", 2, true),
    op(0x08, "frc", 1, true),
    op(0x09, "sqt", 1, true),
    op(0x0A, "rsq", 1, true),
    op(0x0B, "pow", 2, true),
    op(0x0C, "log", 1, true),
    op(0x0D, "exp", 1, true),
    op(0x0E, "nrm", 1, true),
    op(0x0F, "sin", 1, true),
    op(0x10, "cos", 1, true),
    op(0x11, "crs", 2, true),
    op(0x12, "dp3", 2, true),
    op(0x13, "dp4", 2, true),
    op(0x14, "abs", 1, true),
    op(0x15, "neg", 1, true),
    op(0x16, "sat", 1, true),
    op(0x17, "m33", 2, true),
    op(0x18, "m44", 2, true),
    op(0x19, "m34", 2, true),
    frag(v2(op(0x1A, "ddx", 1, true))),
    frag(v2(op(0x1B, "ddy", 1, true))),
    v2(op(0x1C, "ife", 2, false)),
    v2(op(0x1D, "ine", 2, false)),
    v2(op(0x1E, "ifg", 2, false)),
    v2(op(0x1F, "ifl", 2, false)),
    v2(op(0x20, "els", 0, false)),
    v2(op(0x21, "eif", 0, false)),
    tex(op(0x26, "ted", 1, true)),
    frag(op(0x27, "kil", 1, false)),
    frag(tex(op(0x28, "tex", 1, true))),
    op(0x29, "sge", 2, true),
    op(0x2A, "slt", 2, true),
    op(0x2B, "sgn", 1, true),
    op(0x2C, "seq", 2, true),
    op(0x2D, "sne", 2, true),
    OpInfo { code: 0x2E, name: "tld", sources: 1, has_dest: true, sampler: true, min_version: 4, only: Some(Stage::Vertex) },
];

pub fn op_info(code: u32) -> Option<&'static OpInfo> {
    OPCODES.iter().find(|o| o.code == code)
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
    pub op: &'static OpInfo,
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

/// A validation failure: the message, the Flash error number when Flash has one, and the byte
/// offset of the offending token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgalError {
    pub flash_error: Option<u32>,
    pub offset: Option<u64>,
    pub message: String,
}

impl std::fmt::Display for AgalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.flash_error {
            Some(n) => write!(f, "Flash Error #{n}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
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
    fn err(&self, flash: Option<u32>, what: impl std::fmt::Display) -> AgalError {
        AgalError {
            flash_error: flash,
            offset: Some((HEADER_LEN + (self.token - 1) * TOKEN_LEN) as u64),
            message: format!("AGAL validation failed: {what} at token {} of {} program", self.token, stage_word(self.stage)),
        }
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
    let header_err = |msg: String| AgalError { flash_error: Some(flash_error::LITTLE_ENDIAN), offset: Some(0), message: msg };
    if bytes.len() < HEADER_LEN || bytes[0] != 0xA0 || bytes[5] != 0xA1 {
        return Err(header_err("Programs must be in little endian format (bad or truncated AGAL header)".into()));
    }
    if bytes.len() < HEADER_LEN + TOKEN_LEN {
        return Err(AgalError {
            flash_error: Some(flash_error::BELOW_MINIMUM),
            offset: Some(0),
            message: format!("AGAL validation failed: Program size below minimum length ({} bytes, at least 31 needed)", bytes.len()),
        });
    }
    let version = u32_at(bytes, 1);
    let max_version = if opts.allow_agal4 { 4 } else { 3 };
    if version == 0 || version > max_version {
        let hint = if version == 4 { " (AGAL4 needs --agal4)" } else { "" };
        return Err(AgalError { flash_error: None, offset: Some(1), message: format!("unsupported AGAL version {version}{hint}") });
    }
    let stage = match bytes[6] {
        0 => Stage::Vertex,
        1 => Stage::Pixel,
        t => return Err(AgalError { flash_error: None, offset: Some(6), message: format!("unknown AGAL program type {t} (0 vertex, 1 fragment)") }),
    };
    Ok((version, stage))
}

/// Decodes and validates a whole program. `bytes` must be exactly the program (7 + 24·k bytes).
pub fn decode(bytes: &[u8], opts: DecodeOptions) -> Result<Program, AgalError> {
    let (version, stage) = parse_header(bytes, opts)?;
    let body = bytes.len() - HEADER_LEN;
    if !body.is_multiple_of(TOKEN_LEN) {
        return Err(AgalError {
            flash_error: None,
            offset: Some(bytes.len() as u64),
            message: format!("program length {} is not 7 + 24·k: {} trailing bytes after the last whole token", bytes.len(), body % TOKEN_LEN),
        });
    }
    let count = body / TOKEN_LEN;
    let limits = limits(version);
    if count > limits.tokens {
        return Err(AgalError {
            flash_error: None,
            offset: Some((HEADER_LEN + limits.tokens * TOKEN_LEN) as u64),
            message: format!("{count} tokens exceed the AGAL{version} limit of {}", limits.tokens),
        });
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
    let op = op_info(code).ok_or_else(|| ctx.err(Some(flash_error::BAD_OPCODE), format_args!("Invalid opcode, value out of range: {code}")))?;
    if op.min_version > ctx.version {
        return Err(ctx.err(None, format_args!("opcode {} needs AGAL{} (program is AGAL{})", op.name, op.min_version, ctx.version)));
    }
    if let Some(only) = op.only {
        if only != ctx.stage {
            return Err(ctx.err(None, format_args!("opcode {} is not allowed in a {} program", op.name, stage_word(ctx.stage))));
        }
    }
    if op.code == 0x26 {
        // The 2015 assembler comments `ted` out ("not available in AGAL2") and no Flash profile
        // documents its semantics: reject it by name rather than guess.
        return Err(ctx.err(None, "opcode ted (0x26) is not available in any Flash Stage3D profile and has no documented semantics"));
    }
    let dest = if op.has_dest {
        Some(decode_dest(ctx, dest_word)?)
    } else {
        if dest_word != 0 {
            return Err(ctx.err(None, format_args!("{} has no destination, but the destination field is 0x{dest_word:08X} (must be 0)", op.name)));
        }
        None
    };
    let src1 = if op.sources >= 1 {
        Some(decode_source(ctx, s1, 1)?)
    } else {
        if s1 != 0 {
            return Err(ctx.err(None, format_args!("{} has no source operands, but source 1 is 0x{s1:016X} (must be 0)", op.name)));
        }
        None
    };
    let src2 = if op.sampler {
        Operand2::Sampler(decode_sampler(ctx, s2)?)
    } else if op.sources >= 2 {
        Operand2::Source(decode_source(ctx, s2, 2)?)
    } else {
        if s2 != 0 {
            return Err(ctx.err(None, format_args!("{} has no second operand, but it is 0x{s2:016X} (must be 0)", op.name)));
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
        return Err(ctx.err(None, format_args!("reserved bits set in destination operand (0x{word:08X})")));
    }
    let reg = RegType::from_code((word >> 24) & 0xF)
        .ok_or_else(|| ctx.err(None, format_args!("invalid register type {} for destination operand", (word >> 24) & 0xF)))?;
    if mask == 0 {
        return Err(ctx.err(None, "destination write mask is empty"));
    }
    let frag = ctx.stage == Stage::Pixel;
    let limit = match reg {
        RegType::Attribute => {
            return Err(ctx.err(Some(flash_error::WRITE_ATTRIBUTE), "Attribute registers can not be written to for destination operand"))
        }
        RegType::Constant => {
            return Err(ctx.err(Some(flash_error::WRITE_CONSTANT), "Constant registers can not be written to for destination operand"))
        }
        RegType::Sampler => return Err(ctx.err(Some(flash_error::WRITE_SAMPLER), "Sampler registers can not be written to for destination operand")),
        RegType::InstanceId => return Err(ctx.err(None, "the instance id register iid can not be written to")),
        RegType::Depth => {
            if !frag || ctx.version < 2 {
                return Err(ctx.err(Some(flash_error::DEPTH_OUT_OF_BOUNDS), "Depth output register index out of bounds for destination operand"));
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
        return Err(ctx
            .err(None, format_args!("{}{num} is out of range for AGAL{} (limit {limit}) in destination operand", reg.name(ctx.stage), ctx.version)));
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
    let reserved = word & 0x7FFC_F0F0_0000_0000;
    if reserved != 0 {
        return Err(ctx.err(None, format_args!("reserved bits set in source operand {which} (0x{word:016X})")));
    }
    let reg =
        RegType::from_code(type_code).ok_or_else(|| ctx.err(None, format_args!("invalid register type {type_code} for source operand {which}")))?;
    let swizzle = [swz & 3, (swz >> 2) & 3, (swz >> 4) & 3, (swz >> 6) & 3];
    let frag = ctx.stage == Stage::Pixel;
    match reg {
        RegType::Output => {
            return Err(ctx.err(Some(flash_error::READ_OUTPUT), format_args!("Can not read from output register for source operand {which}")))
        }
        RegType::Sampler => {
            return Err(ctx.err(
                Some(flash_error::SAMPLER_ONLY_IN_TEX),
                format_args!("Sampler register only allowed as second operand in texture instructions for source operand {which}"),
            ))
        }
        RegType::Depth => {
            return Err(
                ctx.err(Some(flash_error::DEPTH_OUT_OF_BOUNDS), format_args!("Depth output register index out of bounds for source operand {which}"))
            )
        }
        RegType::Attribute if frag => {
            return Err(ctx.err(None, format_args!("attribute registers can not be read in a fragment program (source operand {which})")))
        }
        RegType::InstanceId if frag || ctx.version < 3 => {
            return Err(ctx.err(None, format_args!("iid is only available in AGAL3 vertex programs (source operand {which})")))
        }
        _ => {}
    }
    if indirect {
        if frag {
            return Err(ctx.err(
                Some(flash_error::INDIRECT_ONLY_VERTEX),
                format_args!("Indirect addressing only allowed in vertex programs for source operand {which}"),
            ));
        }
        if reg != RegType::Constant {
            return Err(ctx.err(
                Some(flash_error::INDIRECT_ONLY_CONST),
                format_args!("Indirect addressing only allowed into constant registers for source operand {which}"),
            ));
        }
        let index_reg = RegType::from_code(index_type)
            .filter(|r| matches!(r, RegType::Attribute | RegType::Constant | RegType::Temporary))
            .ok_or_else(|| ctx.err(None, format_args!("index register type {index_type} is not va, vc or vt in source operand {which}")))?;
        check_range(ctx, index_reg, num, which)?;
        return Ok(Source { reg, num: 0, swizzle, indirect: Some(Indirect { reg: index_reg, num, lane, offset }) });
    }
    if offset != 0 || index_type != 0 || lane != 0 {
        return Err(ctx.err(None, format_args!("indirect fields set on a direct source operand {which} (0x{word:016X})")));
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
        return Err(ctx.err(
            None,
            format_args!("{}{num} is out of range for AGAL{} (limit {limit}) in source operand {which}", reg.name(ctx.stage), ctx.version),
        ));
    }
    Ok(())
}

fn decode_sampler(ctx: &Ctx, word: u64) -> Result<Sampler, AgalError> {
    let s = Sampler::decode(word).ok_or_else(|| ctx.err(None, "invalid register type in sampler operand"))?;
    if s.reg != RegType::Sampler {
        return Err(
            ctx.err(None, format_args!("second operand of a texture instruction must be a sampler register, found {}", s.reg.name(ctx.stage)))
        );
    }
    if word & 0x0000_00F0_FF00_0000 != 0 {
        return Err(ctx.err(None, format_args!("reserved bits set in sampler operand (0x{word:016X})")));
    }
    if u32::from(s.num) >= ctx.limits.samplers {
        return Err(ctx.err(None, format_args!("sampler fs{} is out of range for AGAL{} (limit {})", s.num, ctx.version, ctx.limits.samplers)));
    }
    if s.dim > 1 {
        return Err(ctx.err(None, format_args!("sampler dimension {} is not supported (only 2d and cube exist in Flash)", s.dim)));
    }
    if s.wrap > 3 || s.mip > 2 || s.filter > 5 || s.format > 3 {
        return Err(ctx.err(None, format_args!("invalid sampler options (wrap {}, mip {}, filter {}, format {})", s.wrap, s.mip, s.filter, s.format)));
    }
    Ok(s)
}

/// Rules that look at both sources of a token (Program3D.upload docs).
fn check_operand_pairs(ctx: &Ctx, t: &Token) -> Result<(), AgalError> {
    if let (Some(a), Operand2::Source(b)) = (t.src1, t.src2) {
        if a.reg == RegType::Constant && b.reg == RegType::Constant {
            return Err(ctx.err(None, format_args!("{} reads two constant registers (only one source may be a constant)", t.op.name)));
        }
        if a.indirect.is_some() && b.indirect.is_some() {
            return Err(ctx.err(None, format_args!("{} uses indirect addressing in both sources", t.op.name)));
        }
    }
    // m33/m34/m44 read their matrix from 3-4 consecutive registers of source 2: every row must
    // exist (fuzzing found `m33 vt4, vc0, iid` and `m44 op, v5, v7`, whose rows ran past the
    // register file). Indirect rows are clamped by the constant read like any indirect read.
    let rows: u16 = match t.op.name {
        "m33" | "m34" => 3,
        "m44" => 4,
        _ => return Ok(()),
    };
    if let Operand2::Source(m) = t.src2 {
        if m.indirect.is_none() {
            let last = m.num.saturating_add(rows - 1);
            let limit = source_limit(ctx, m.reg);
            if u32::from(last) >= limit {
                let name = m.reg.name(ctx.stage);
                return Err(ctx.err(
                    None,
                    format_args!(
                        "{} reads its matrix from {name}{}–{name}{last}, past the register file (AGAL{} has {limit})",
                        t.op.name, m.num, ctx.version
                    ),
                ));
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
        match t.op.name {
            "ife" | "ine" | "ifg" | "ifl" => depth.push(false),
            "els" => match depth.last_mut() {
                Some(seen) if !*seen => *seen = true,
                Some(_) => return Err(ctx.err(None, "second els in one if block")),
                None => return Err(ctx.err(None, "els without an open if")),
            },
            "eif" if depth.pop().is_none() => {
                return Err(ctx.err(None, "eif without an open if"));
            }
            _ => {}
        }
        if let Operand2::Sampler(s) = t.src2 {
            match samplers.iter().find(|(n, _)| *n == s.num) {
                Some((_, w)) if *w != s.word => {
                    return Err(
                        ctx.err(Some(flash_error::SAMPLER_CONFLICT), "Second use of sampler register needs to specify the exact same properties")
                    )
                }
                Some(_) => {}
                None => samplers.push((s.num, s.word)),
            }
        }
    }
    if !depth.is_empty() {
        ctx.token = tokens.len();
        return Err(ctx.err(None, format_args!("{} if block(s) not closed by eif at the end of the program", depth.len())));
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
