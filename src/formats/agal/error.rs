//! Typed errors of the AGAL decoder and lowering. Every error names the byte offset of its cause
//! in the program (a token's offset is `7 + 24 × (token − 1)`); the rules that Flash Player
//! itself enforces carry Flash's error number ([`AgalError::flash_error`]), quoted in the message
//! as Flash prints it ("Flash Error #3696: …") so users can match them with what Flash reported.

use super::decode::Op;

/// Flash Player's own error numbers (the `Program3D.upload` errors of the Flash runtime).
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

/// Which operand of a token a rule is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Destination,
    /// Source operand 1 or 2.
    Source(u8),
}

impl std::fmt::Display for Operand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Operand::Destination => f.write_str("destination operand"),
            Operand::Source(n) => write!(f, "source operand {n}"),
        }
    }
}

/// Why one token (or the program's structure at one token) is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    #[error("Invalid opcode, value out of range: {code}")]
    BadOpcode { code: u32 },
    #[error("opcode {op} needs AGAL{min} (program is AGAL{version})")]
    NeedsVersion { op: Op, min: u32, version: u32 },
    #[error("opcode {op} is not allowed in a {stage} program")]
    WrongStage { op: Op, stage: &'static str },
    /// An opcode the table marks rejected (`ted`); the reason is the table's.
    #[error("opcode {op} (0x{code:02X}) is rejected: {reason}", code = op.info().code)]
    Rejected { op: Op, reason: &'static str },
    #[error("{op} has no destination, but the destination field is 0x{word:08X} (must be 0)")]
    DestinationNotZero { op: Op, word: u32 },
    #[error("{op} has no source operands, but source 1 is 0x{word:016X} (must be 0)")]
    Source1NotZero { op: Op, word: u64 },
    #[error("{op} has no second operand, but it is 0x{word:016X} (must be 0)")]
    Source2NotZero { op: Op, word: u64 },
    #[error("reserved bits set in destination operand (0x{word:08X})")]
    DestinationReserved { word: u32 },
    #[error("reserved bits set in {operand} (0x{word:016X})")]
    SourceReserved { operand: Operand, word: u64 },
    #[error("invalid register type {code} for {operand}")]
    RegisterType { code: u32, operand: Operand },
    #[error("destination write mask is empty")]
    EmptyMask,
    #[error("Attribute registers can not be written to for destination operand")]
    WriteAttribute,
    #[error("Constant registers can not be written to for destination operand")]
    WriteConstant,
    #[error("Sampler registers can not be written to for destination operand")]
    WriteSampler,
    #[error("the instance id register iid can not be written to")]
    WriteInstanceId,
    #[error("Depth output register index out of bounds for {operand}")]
    DepthOutOfBounds { operand: Operand },
    /// `reg` is the register's assembler name (`vt`, `fc`, `v`, …).
    #[error("{reg}{num} is out of range for AGAL{version} (limit {limit}) in {operand}")]
    RegisterOutOfRange { reg: &'static str, num: u16, version: u32, limit: u32, operand: Operand },
    #[error("Can not read from output register for {operand}")]
    ReadOutput { operand: Operand },
    #[error("Sampler register only allowed as second operand in texture instructions for {operand}")]
    SamplerOutsideTex { operand: Operand },
    #[error("attribute registers can not be read in a fragment program ({operand})")]
    AttributeInFragment { operand: Operand },
    #[error("iid is only available in AGAL3 vertex programs ({operand})")]
    InstanceIdUnavailable { operand: Operand },
    #[error("Indirect addressing only allowed in vertex programs for {operand}")]
    IndirectOutsideVertex { operand: Operand },
    #[error("Indirect addressing only allowed into constant registers for {operand}")]
    IndirectNotConstant { operand: Operand },
    #[error("index register type {code} is not va, vc or vt in {operand}")]
    IndexRegisterType { code: u32, operand: Operand },
    #[error("indirect fields set on a direct {operand} (0x{word:016X})")]
    IndirectFieldsOnDirect { operand: Operand, word: u64 },
    #[error("invalid register type in sampler operand")]
    SamplerRegisterType,
    #[error("second operand of a texture instruction must be a sampler register, found {found}")]
    NotASampler { found: &'static str },
    #[error("reserved bits set in sampler operand (0x{word:016X})")]
    SamplerReserved { word: u64 },
    #[error("sampler fs{num} is out of range for AGAL{version} (limit {limit})")]
    SamplerOutOfRange { num: u16, version: u32, limit: u32 },
    #[error("sampler dimension {dim} is not supported (only 2d and cube exist in Flash)")]
    SamplerDimension { dim: u8 },
    #[error("invalid sampler options (wrap {wrap}, mip {mip}, filter {filter}, format {format})")]
    SamplerOptions { wrap: u8, mip: u8, filter: u8, format: u8 },
    #[error("{op} reads two constant registers (only one source may be a constant)")]
    TwoConstants { op: Op },
    #[error("{op} uses indirect addressing in both sources")]
    TwoIndirect { op: Op },
    /// `m33` / `m34` / `m44` whose matrix rows run past the register file.
    #[error("{op} reads its matrix from {reg}{first}–{reg}{last}, past the register file (AGAL{version} has {limit})")]
    MatrixPastRegisterFile { op: Op, reg: &'static str, first: u16, last: u16, version: u32, limit: u32 },
    #[error("second els in one if block")]
    SecondEls,
    #[error("els without an open if")]
    ElsWithoutIf,
    #[error("eif without an open if")]
    EifWithoutIf,
    #[error("{open} if block(s) not closed by eif at the end of the program")]
    UnclosedIf { open: usize },
    #[error("Second use of sampler register needs to specify the exact same properties")]
    SamplerConflict,
}

impl TokenError {
    /// Flash Player's error number for this rule, when Flash has one.
    pub fn flash_error(&self) -> Option<u32> {
        use flash_error::*;
        use TokenError::*;
        match self {
            BadOpcode { .. } => Some(BAD_OPCODE),
            WriteAttribute => Some(WRITE_ATTRIBUTE),
            WriteConstant => Some(WRITE_CONSTANT),
            WriteSampler => Some(WRITE_SAMPLER),
            DepthOutOfBounds { .. } => Some(DEPTH_OUT_OF_BOUNDS),
            ReadOutput { .. } => Some(READ_OUTPUT),
            SamplerOutsideTex { .. } => Some(SAMPLER_ONLY_IN_TEX),
            IndirectOutsideVertex { .. } => Some(INDIRECT_ONLY_VERTEX),
            IndirectNotConstant { .. } => Some(INDIRECT_ONLY_CONST),
            SamplerConflict => Some(SAMPLER_CONFLICT),
            NeedsVersion { .. }
            | WrongStage { .. }
            | Rejected { .. }
            | DestinationNotZero { .. }
            | Source1NotZero { .. }
            | Source2NotZero { .. }
            | DestinationReserved { .. }
            | SourceReserved { .. }
            | RegisterType { .. }
            | EmptyMask
            | WriteInstanceId
            | RegisterOutOfRange { .. }
            | AttributeInFragment { .. }
            | InstanceIdUnavailable { .. }
            | IndexRegisterType { .. }
            | IndirectFieldsOnDirect { .. }
            | SamplerRegisterType
            | NotASampler { .. }
            | SamplerReserved { .. }
            | SamplerOutOfRange { .. }
            | SamplerDimension { .. }
            | SamplerOptions { .. }
            | TwoConstants { .. }
            | TwoIndirect { .. }
            | MatrixPastRegisterFile { .. }
            | SecondEls
            | ElsWithoutIf
            | EifWithoutIf
            | UnclosedIf { .. } => None,
        }
    }
}

fn flash_prefix(e: &TokenError) -> String {
    e.flash_error().map(|n| format!("Flash Error #{n}: ")).unwrap_or_default()
}

/// Why an AGAL program could not be decoded or translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgalError {
    /// No `A0 … A1` header (Flash Error #3612); offset 0.
    #[error("Flash Error #3612: Programs must be in little endian format (bad or truncated AGAL header)")]
    BadHeader,
    /// Fewer bytes than a header and one token (Flash Error #3615); offset 0.
    #[error("Flash Error #3615: AGAL validation failed: Program size below minimum length ({len} bytes, at least 31 needed)")]
    BelowMinimum { len: usize },
    /// Version 0, above 4, or 4 without `--agal4`; offset 1.
    #[error("unsupported AGAL version {version}{}", if *version == 4 { " (AGAL4 needs --agal4)" } else { "" })]
    Version { version: u32 },
    /// Program type byte neither 0 nor 1; offset 6.
    #[error("unknown AGAL program type {ty} (0 vertex, 1 fragment)")]
    ProgramType { ty: u8 },
    /// The body is not a whole number of tokens; offset = the program's length.
    #[error("program length {len} is not 7 + 24·k: {} trailing bytes after the last whole token", len.saturating_sub(super::decode::HEADER_LEN) % super::decode::TOKEN_LEN)]
    PartialToken { len: usize },
    /// More tokens than the version allows; offset = the first token past the limit.
    #[error("{count} tokens exceed the AGAL{version} limit of {limit}")]
    TooManyTokens { count: usize, version: u32, limit: usize },
    /// A token breaks a rule. `token` is 1-based (as Flash counts), `offset` its byte offset,
    /// `stage` "vertex" or "fragment".
    #[error("{}AGAL validation failed: {reason} at token {token} of {stage} program", flash_prefix(reason))]
    Token { offset: u64, token: usize, stage: &'static str, reason: TokenError },
    /// Lowering: an op that defines only xyz (`nrm`, `crs`, `m33`, `m34`) whose destination mask
    /// writes only w, so the instruction would write nothing.
    #[error("{op} defines only x, y and z, but its destination mask writes only w")]
    WritesOnlyW { offset: u64, op: Op },
    /// Lowering: an opcode the table marks rejected (the decoder refuses it first).
    #[error("opcode {op} is rejected: {reason}")]
    Rejected { offset: u64, op: Op, reason: &'static str },
}

impl AgalError {
    /// Byte offset of the cause in the program.
    pub fn offset(&self) -> u64 {
        match self {
            AgalError::BadHeader | AgalError::BelowMinimum { .. } => 0,
            AgalError::Version { .. } => 1,
            AgalError::ProgramType { .. } => 6,
            AgalError::PartialToken { len } => *len as u64,
            AgalError::TooManyTokens { limit, .. } => (super::decode::HEADER_LEN + limit * super::decode::TOKEN_LEN) as u64,
            AgalError::Token { offset, .. } | AgalError::WritesOnlyW { offset, .. } | AgalError::Rejected { offset, .. } => *offset,
        }
    }
    /// Flash Player's error number, when Flash has one for this rule.
    pub fn flash_error(&self) -> Option<u32> {
        match self {
            AgalError::BadHeader => Some(flash_error::LITTLE_ENDIAN),
            AgalError::BelowMinimum { .. } => Some(flash_error::BELOW_MINIMUM),
            AgalError::Token { reason, .. } => reason.flash_error(),
            AgalError::Version { .. }
            | AgalError::ProgramType { .. }
            | AgalError::PartialToken { .. }
            | AgalError::TooManyTokens { .. }
            | AgalError::WritesOnlyW { .. }
            | AgalError::Rejected { .. } => None,
        }
    }
    /// The token-level reason, if the error is about one token.
    pub fn token_reason(&self) -> Option<&TokenError> {
        match self {
            AgalError::Token { reason, .. } => Some(reason),
            _ => None,
        }
    }
}
