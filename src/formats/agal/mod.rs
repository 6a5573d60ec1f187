//! Flash Stage3D AGAL bytecode.

use super::{ShaderEntry, ShaderError};

pub fn entries(_bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    Err(ShaderError::new("agal not written yet"))
}

/// Length of the AGAL program starting at `buf[0]`, if one does: header valid and at least one
/// token, extended over every following valid token. (Being written.)
pub fn probe(_buf: &[u8]) -> Option<usize> {
    None
}
