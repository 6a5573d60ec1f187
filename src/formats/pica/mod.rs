//! 3DS PICA200 shaders in SHBIN (DVLB) files (translation comes with its issue).

use super::{ShaderEntry, ShaderError};

pub fn entries(_bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    Err(ShaderError::new("dvlb parsing is not written yet"))
}
