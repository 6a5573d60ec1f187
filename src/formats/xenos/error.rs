//! Typed errors of the Xenos front end: the container parser (offsets relative to the start of
//! the container), the microcode decoder (CF index and instruction slot; the byte offset in the
//! microcode is [`XenosError::microcode_offset`]) and the lowering (where, and why).

use super::ucode::CfOp;

/// What is wrong in a container (the `XenosError::Container` offset says where).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ContainerError {
    #[error("xenos container header needs {need} bytes, {available} available")]
    HeaderTruncated { need: usize, available: usize },
    #[error("xenos flags 0x{flags:08X} lack the 0x102A11xx magic")]
    BadMagic { flags: u32 },
    #[error("virtualSize 0x{virtual_size:X} + physicalSize 0x{physical_size:X} overflows 32 bits")]
    SizeOverflow { virtual_size: u32, physical_size: u32 },
    #[error("container size {size} is smaller than its {header}-byte header")]
    SmallerThanHeader { size: u64, header: usize },
    #[error("container size {size} exceeds the {available} bytes available")]
    Truncated { size: u64, available: usize },
    #[error("virtualSize 0x{virtual_size:X} is smaller than the header")]
    VirtualSizeBelowHeader { virtual_size: u32 },
    /// `constantTableOffset` or `definitionTableOffset` (named by `field`) past `virtualSize`.
    #[error("{field} 0x{value:X} lies outside virtualSize 0x{virtual_size:X}")]
    TableOutsideVirtual { field: &'static str, value: u32, virtual_size: u32 },
    #[error("shaderOffset 0x{shader_offset:X} does not leave a shader header inside virtualSize 0x{virtual_size:X}")]
    ShaderHeaderOutside { shader_offset: u32, virtual_size: u32 },
    #[error("microcode [0x{start:X}, +0x{size:X}) exceeds physicalSize 0x{physical_size:X}")]
    MicrocodeOutside { start: u32, size: u32, physical_size: u32 },
    /// A field (named by `what`) read at `offset` past the container's end.
    #[error("{what} at 0x{offset:X} lies outside the container")]
    FieldOutside { what: &'static str, offset: u64 },
    #[error("{what} string at 0x{offset:X} lies outside the container")]
    StringOutside { what: &'static str, offset: u64 },
    #[error("{what} string at 0x{offset:X} is not terminated")]
    StringUnterminated { what: &'static str, offset: u64 },
    #[error("constant table claims {count} constants")]
    TooManyConstants { count: u32 },
    #[error("pixel float definition register {register} is below 256")]
    PixelFloatDefinitionBelow256 { register: u32 },
    #[error("int definition register 0x{register:X} is below 0x2320")]
    IntDefinitionBelow2320 { register: u32 },
    #[error("implausible vertex header (field18 {field18}, {elements} elements)")]
    ImplausibleVertexHeader { field18: u64, elements: u64 },
    #[error("microcode size {size} is not a multiple of 12")]
    MicrocodeSize { size: usize },
}

/// Why a Xenos shader could not be parsed, decoded or translated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum XenosError {
    /// The container is malformed; `offset` (from the container's start) is the wrong field.
    #[error("{reason}")]
    Container { offset: u64, reason: ContainerError },
    /// Less than one 96-bit instruction slot of microcode.
    #[error("empty microcode")]
    EmptyMicrocode { dwords: usize, microcode_base: u64 },
    /// An exec instruction's clause runs past the microcode.
    #[error("CF {cf} ({op}) addresses slot {slot}, past the {slots} slots of the microcode")]
    ExecPastEnd { cf: usize, op: CfOp, slot: u32, slots: u32, microcode_base: u64 },
    /// An ALU instruction whose vector (30, 31) or scalar (51-63) opcode field is not an opcode.
    #[error(
        "CF {cf} slot {slot}: ALU opcode vector {vector} / scalar {scalar} does not exist (the ALU has {} vector and {} scalar ops)",
        super::ucode::VectorOp::ALL.len(),
        super::ucode::ScalarOp::ALL.len()
    )]
    UnknownAluOpcode { cf: usize, slot: u32, vector: u32, scalar: u32, microcode_base: u64 },
    /// Some path through the CF program opens more loops than the loop stack holds.
    #[error("CF {cf} (loop): nesting deeper than {max}")]
    LoopTooDeep { cf: usize, max: u32 },
    /// Some path through the CF program reaches this `endloop` with no loop open.
    #[error("CF {cf} (endloop) without a loop")]
    EndloopWithoutLoop { cf: usize },
    /// The lowering refuses an instruction where it stands. `at` names it ("CF 3 slot 7
    /// (tfetch)", "CF 10 (jmp)"); `what` says why.
    #[error("{at}: {what}")]
    Unsupported { at: String, what: String },
    /// An opcode the table rejects (getBCF, scalar 41), with the table's reason.
    #[error("{at}: {op} is not supported: {reason}")]
    Rejected { at: String, op: &'static str, reason: &'static str },
    /// The lowering refuses the shader as a whole (no single instruction is at fault).
    #[error("{what}")]
    Shader { what: String },
}

impl XenosError {
    /// Byte offset of the cause from the start of the container: container errors, and decoder
    /// errors of microcode decoded through [`super::translate`] / [`super::disasm()`] (which set
    /// `microcode_base` with [`XenosError::in_container`]; [`super::ucode::decode`] alone
    /// leaves it 0, so the offset is then from the start of the microcode).
    pub fn container_offset(&self) -> Option<u64> {
        match self {
            XenosError::Container { offset, .. } => Some(*offset),
            XenosError::EmptyMicrocode { microcode_base, .. }
            | XenosError::ExecPastEnd { microcode_base, .. }
            | XenosError::UnknownAluOpcode { microcode_base, .. } => self.microcode_offset().map(|o| microcode_base + o),
            XenosError::LoopTooDeep { .. }
            | XenosError::EndloopWithoutLoop { .. }
            | XenosError::Unsupported { .. }
            | XenosError::Rejected { .. }
            | XenosError::Shader { .. } => None,
        }
    }
    /// Byte offset of the cause from the start of the microcode (decoder errors): the CF
    /// instruction's 48-bit word (two per 12-byte triple), or the ALU instruction's slot.
    pub fn microcode_offset(&self) -> Option<u64> {
        match self {
            XenosError::EmptyMicrocode { .. } => Some(0),
            // CF a of a 12-byte pair is dword 0 and the low half of dword 1 (bytes 0-3, 6-7 of
            // the big-endian words); CF b the high half of dword 1 and dword 2 (bytes 4-5, 8-11)
            XenosError::ExecPastEnd { cf, .. } => Some((cf / 2 * 12 + cf % 2 * 4) as u64),
            XenosError::UnknownAluOpcode { slot, .. } => Some(u64::from(*slot) * 12),
            XenosError::Container { .. }
            | XenosError::LoopTooDeep { .. }
            | XenosError::EndloopWithoutLoop { .. }
            | XenosError::Unsupported { .. }
            | XenosError::Rejected { .. }
            | XenosError::Shader { .. } => None,
        }
    }

    /// A decoder error of microcode that starts `base` bytes into its container.
    pub fn in_container(mut self, base: u64) -> XenosError {
        if let XenosError::EmptyMicrocode { microcode_base, .. }
        | XenosError::ExecPastEnd { microcode_base, .. }
        | XenosError::UnknownAluOpcode { microcode_base, .. } = &mut self
        {
            *microcode_base = base;
        }
        self
    }
}

pub(crate) fn container(offset: u64, reason: ContainerError) -> XenosError {
    XenosError::Container { offset, reason }
}
