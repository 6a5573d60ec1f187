//! The error type every front end returns. Each family's typed error (containers, microcode,
//! lowering) is one variant, so callers and tests can match the cause.

use super::agal::error::AgalError;
use super::gx2::error::Gx2Error;
use super::pica::error::PicaError;
use super::xenos::error::XenosError;

/// Why one shader could not be parsed or translated. [`offset`](ShaderError::offset) is
/// relative to the start of the container (GX2 microcode errors: to the start of the program);
/// the report adds the file path and the container's offset in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShaderError {
    /// GX2: the GFD / SHARCFB container, Latte microcode decoding or lowering.
    #[error(transparent)]
    Gx2(#[from] Gx2Error),
    /// AGAL decoding (Flash's validation rules) or lowering.
    #[error(transparent)]
    Agal(#[from] AgalError),
    /// PICA200: the DVLB container, decoding or lowering.
    #[error(transparent)]
    Pica(#[from] PicaError),
    /// Xenos container parsing, microcode decoding or lowering.
    #[error(transparent)]
    Xenos(#[from] XenosError),
    /// The IR validator refused the module: a resource cap, or a front-end bug named by its rule.
    #[error(transparent)]
    Ir(#[from] crate::ir::ValidationError),
    /// The shader's microcode is larger than [`crate::limits::MAX_MICROCODE_BYTES`]; `offset`
    /// is the microcode's place in the container, when known.
    #[error("resource cap: {bytes} bytes of microcode exceed the {limit}-byte limit per shader")]
    MicrocodeCap { offset: Option<u64>, bytes: usize, limit: usize },
}

impl ShaderError {
    /// Byte offset of the cause, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ShaderError::Gx2(e) => e.offset(),
            ShaderError::Agal(e) => Some(e.offset()),
            ShaderError::Xenos(e) => e.container_offset(),
            ShaderError::Pica(e) => e.offset(),
            ShaderError::Ir(_) => None,
            ShaderError::MicrocodeCap { offset, .. } => *offset,
        }
    }
    /// The reason as one sentence (what the report prints).
    pub fn reason(&self) -> String {
        self.to_string()
    }
}
