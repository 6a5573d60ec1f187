//! Typed errors of the GX2 microcode decoder and lowering. Decoder offsets are bytes from the
//! start of the shader's program (the microcode); lowering errors name the CF index `pc` (its
//! 64-bit slot, so the byte offset in the program is `8 × pc`). Container errors (GFD, SHARCFB,
//! the GX2 shader structs) carry their offset from the start of the container.

use super::isa::{AluCfOp, AluOp, CfOp, ExpOp, TexOp, VtxOp};
use crate::formats::container_fault::ContainerFault;
use crate::formats::ShaderError;

/// An opcode of any GX2 table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opcode {
    Cf(CfOp),
    AluCf(AluCfOp),
    Exp(ExpOp),
    Alu(AluOp),
    Tex(TexOp),
    Vtx(VtxOp),
}

impl Opcode {
    /// The table's status of this opcode.
    pub fn status(self) -> crate::formats::opcodes::Status {
        match self {
            Opcode::Cf(o) => o.status(),
            Opcode::AluCf(o) => o.status(),
            Opcode::Exp(o) => o.status(),
            Opcode::Alu(o) => o.status(),
            Opcode::Tex(o) => o.status(),
            Opcode::Vtx(o) => o.status(),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Opcode::Cf(o) => o.name(),
            Opcode::AluCf(o) => o.name(),
            Opcode::Exp(o) => o.name(),
            Opcode::Alu(o) => o.name(),
            Opcode::Tex(o) => o.name(),
            Opcode::Vtx(o) => o.name(),
        }
    }
}

macro_rules! opcode_from {
    ($($E:ident => $V:ident),*) => {$(
        impl From<$E> for Opcode {
            fn from(o: $E) -> Opcode {
                Opcode::$V(o)
            }
        }
    )*};
}
opcode_from!(CfOp => Cf, AluCfOp => AluCf, ExpOp => Exp, AluOp => Alu, TexOp => Tex, VtxOp => Vtx);

impl std::fmt::Display for Opcode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which table an unknown encoding was looked up in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Cf,
    Export,
    AluOp2,
    AluOp3,
    Tex,
    Vtx,
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Table::Cf => "CF instruction",
            Table::Export => "export/memory instruction",
            Table::AluOp2 => "ALU OP2 opcode",
            Table::AluOp3 => "ALU OP3 opcode",
            Table::Tex => "TEX instruction",
            Table::Vtx => "VTX instruction",
        })
    }
}

/// The kind of clause a [`Gx2Error::ClausePastEnd`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClauseKind {
    Alu,
    Tex,
    Vtx,
}

impl std::fmt::Display for ClauseKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClauseKind::Alu => "ALU",
            ClauseKind::Tex => "TEX",
            ClauseKind::Vtx => "VTX",
        })
    }
}

/// Why a GX2 program could not be decoded or translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Gx2Error {
    /// The GFD or SHARCFB container, or a GX2 shader struct in it, is malformed; `offset` is
    /// from the start of the container (GFD) or of the archive (SHARCFB), `None` when the fault
    /// has no place (a shader index the container does not have).
    #[error("{fault}")]
    Container { offset: Option<u64>, fault: ContainerFault },
    /// The CF stream reaches the end of the program before END_OF_PROGRAM (or, after it, before
    /// the RETURN of a subroutine a CALL targets).
    #[error("{} runs past the end of the {len}-byte program without {}", if *subroutine { "CALL target subroutine" } else { "CF stream" }, if *subroutine { "RETURN" } else { "END_OF_PROGRAM" })]
    NoEnd { offset: u64, len: usize, subroutine: bool },
    /// An encoding no table row has.
    #[error("{}unknown {table} 0x{code:02X}", pc.map(|p| format!("CF {p}: ")).unwrap_or_default())]
    UnknownOpcode { offset: u64, pc: Option<u32>, table: Table, code: u32 },
    /// A clause's slots lie (partly) past the end of the program.
    #[error("{kind} clause at slot {addr} ({count} {}) lies past the end of the program", if *kind == ClauseKind::Alu { "slots" } else { "fetches" })]
    ClausePastEnd { offset: u64, kind: ClauseKind, addr: u32, count: u32 },
    #[error("ALU group runs past the end of its clause (no LAST bit)")]
    GroupPastClause { offset: u64 },
    #[error("ALU group has two instructions for slot {slot}")]
    SlotTaken { offset: u64, slot: char },
    #[error("ALU literals run past the end of the clause")]
    LiteralsPastClause { offset: u64 },
    /// An opcode the table marks rejected ([`crate::formats::opcodes::Status::Rejected`]).
    #[error("unsupported Latte {}instruction {op} (CF {pc:02}): {reason}", if matches!(op, Opcode::Alu(_)) { "ALU " } else { "" })]
    Rejected { pc: u32, op: Opcode, reason: &'static str },
    /// A translated opcode used in a form or place the translation does not cover (the text
    /// names the opcode and the form).
    #[error("unsupported Latte instruction {what} (CF {pc:02})")]
    Unsupported { pc: u32, op: Opcode, what: String },
    /// A program the lowering cannot give one meaning: unbalanced stack or loops, jumps whose
    /// effect depends on other lanes, limits (the text says which).
    #[error("{what}")]
    Structure { pc: Option<u32>, what: String },
    /// The copy program of a geometry shader.
    #[error("GS copy program: {0}")]
    CopyProgram(Box<Gx2Error>),
}

impl Gx2Error {
    /// The byte offset in the program, when the error has one.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Gx2Error::Container { offset, .. } => *offset,
            Gx2Error::NoEnd { offset, .. }
            | Gx2Error::UnknownOpcode { offset, .. }
            | Gx2Error::ClausePastEnd { offset, .. }
            | Gx2Error::GroupPastClause { offset }
            | Gx2Error::SlotTaken { offset, .. }
            | Gx2Error::LiteralsPastClause { offset } => Some(*offset),
            Gx2Error::Rejected { .. } | Gx2Error::Unsupported { .. } | Gx2Error::Structure { .. } | Gx2Error::CopyProgram(_) => None,
        }
    }
}

/// A container error at `offset` (from the container's start).
pub(crate) fn container(offset: u64, fault: ContainerFault) -> ShaderError {
    Gx2Error::Container { offset: Some(offset), fault }.into()
}

/// A shader index the container does not have.
pub(crate) fn no_such_shader(what: String) -> ShaderError {
    Gx2Error::Container { offset: None, fault: ContainerFault::NoSuchShader(what) }.into()
}

/// An error found inside a part of the container (a block, a SHARCFB binary) whose parser
/// knew only that part: a container error is placed at `offset` and its text prefixed with the
/// part (`prefix: …`), its kind kept; any other error is returned as it is.
pub(crate) fn within(err: ShaderError, offset: u64, prefix: impl std::fmt::Display) -> ShaderError {
    match err {
        ShaderError::Gx2(Gx2Error::Container { fault, .. }) => container(offset, fault.prefixed(prefix)),
        other => other,
    }
}
