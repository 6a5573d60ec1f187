//! Typed errors of the PICA200 decoder and lowering. `pc` is the instruction index in the
//! program's code (its byte offset in the DVLP code blob is `4 × pc`).

use super::decode::Op;

/// Why a PICA program could not be decoded or translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PicaError {
    /// A 6-bit opcode no table row has (0x10, 0x11, 0x14-0x17, 0x1C-0x1F).
    #[error("instruction {pc} (word 0x{word:08X}): unused opcode 0x{opcode:02X}")]
    UnusedOpcode { pc: u32, word: u32, opcode: u32 },
    /// An operand-descriptor index past the DVLP's descriptor table.
    #[error("instruction {pc} ({op}): operand descriptor {idx} past the table ({len} entries)")]
    DescriptorPastTable { pc: u32, op: Op, idx: u32, len: usize },
    /// An instruction the lowering refuses where it stands (the text says why).
    #[error("instruction {pc} ({op}): {what}")]
    Unsupported { pc: u32, op: Op, what: String },
}
