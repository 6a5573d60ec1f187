//! The error type every front end returns (it depends only on the IR, so `formats`, `limits` and
//! the back ends can all use it without importing each other).

/// Why one shader could not be parsed or translated. `offset` is relative to the start of the
/// container; the report adds the file path and the container's offset in the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct ShaderError {
    pub offset: Option<u64>,
    pub reason: String,
}

impl ShaderError {
    pub fn new(reason: impl Into<String>) -> Self {
        ShaderError { offset: None, reason: reason.into() }
    }
    pub fn at(offset: u64, reason: impl Into<String>) -> Self {
        ShaderError { offset: Some(offset), reason: reason.into() }
    }
}

/// A module the IR validator refused: a resource cap, or a front-end bug named by its rule.
impl From<crate::ir::ValidationError> for ShaderError {
    fn from(e: crate::ir::ValidationError) -> Self {
        ShaderError::new(e.to_string())
    }
}
