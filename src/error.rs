//! The error type every front end returns (a leaf module: depends on nothing in the crate, so
//! `formats`, `limits` and the back ends can all use it without importing each other).

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
