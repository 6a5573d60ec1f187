//! (being written)

use crate::formats::{ShaderEntry, ShaderError};

pub fn entries(_bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    Err(ShaderError::new("not written yet"))
}
