//! The error type every front end returns. Front ends with typed errors (GX2 microcode, PICA200, AGAL, Xenos) wrap
//! them in a variant, so callers and tests can match the cause; the others still give a
//! sentence ([`ShaderError::Other`]).

use super::agal::error::AgalError;
use super::gx2::error::Gx2Error;
use super::pica::error::PicaError;
use super::xenos::error::XenosError;

/// Why one shader could not be parsed or translated. [`offset`](ShaderError::offset) is
/// relative to the start of the container (GX2 microcode errors: to the start of the program);
/// the report adds the file path and the container's offset in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShaderError {
    /// GX2 (Latte) microcode decoding or lowering.
    #[error(transparent)]
    Gx2(#[from] Gx2Error),
    /// AGAL decoding (Flash's validation rules) or lowering.
    #[error(transparent)]
    Agal(#[from] AgalError),
    /// PICA200 decoding or lowering.
    #[error(transparent)]
    Pica(#[from] PicaError),
    /// Xenos container parsing, microcode decoding or lowering.
    #[error(transparent)]
    Xenos(#[from] XenosError),
    /// The IR validator refused the module: a resource cap, or a front-end bug named by its rule.
    #[error(transparent)]
    Ir(#[from] crate::ir::ValidationError),
    /// Any other reason (containers, the front ends without typed errors yet).
    #[error("{reason}")]
    Other { offset: Option<u64>, reason: String },
}

impl ShaderError {
    pub fn new(reason: impl Into<String>) -> Self {
        ShaderError::Other { offset: None, reason: reason.into() }
    }
    pub fn at(offset: u64, reason: impl Into<String>) -> Self {
        ShaderError::Other { offset: Some(offset), reason: reason.into() }
    }
    /// Byte offset of the cause, when known.
    pub fn offset(&self) -> Option<u64> {
        match self {
            ShaderError::Gx2(e) => e.offset(),
            ShaderError::Agal(e) => Some(e.offset()),
            ShaderError::Xenos(e) => e.container_offset(),
            ShaderError::Pica(_) | ShaderError::Ir(_) => None,
            ShaderError::Other { offset, .. } => *offset,
        }
    }
    /// The reason as one sentence (what the report prints).
    pub fn reason(&self) -> String {
        self.to_string()
    }
}
