//! Typed errors of the PICA200 decoder and lowering. `pc` is the instruction index in the
//! program's code (its byte offset in the DVLP code blob is `4 × pc`). Container errors (DVLB)
//! carry their offset from the start of the DVLB.

use super::decode::Op;
use crate::formats::container_fault::ContainerFault;
use crate::formats::ShaderError;

/// Why a PICA program could not be decoded or translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PicaError {
    /// The DVLB is malformed; `offset` is from its start, `None` when the fault has no place
    /// (a DVLE index the DVLB does not have).
    #[error("{fault}")]
    Container { offset: Option<u64>, fault: ContainerFault },
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

impl PicaError {
    /// The byte offset in the DVLB, for container errors.
    pub fn offset(&self) -> Option<u64> {
        match self {
            PicaError::Container { offset, .. } => *offset,
            PicaError::UnusedOpcode { .. } | PicaError::DescriptorPastTable { .. } | PicaError::Unsupported { .. } => None,
        }
    }
}

/// A container error at `offset` (from the DVLB's start).
pub(crate) fn container(offset: u64, fault: ContainerFault) -> ShaderError {
    PicaError::Container { offset: Some(offset), fault }.into()
}

/// A DVLE index the DVLB does not have.
pub(crate) fn no_such_shader(what: String) -> ShaderError {
    PicaError::Container { offset: None, fault: ContainerFault::NoSuchShader(what) }.into()
}
