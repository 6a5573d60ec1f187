//! Xbox 360 Xenos shaders (container parsing for detection; translation comes with its issue).

use super::{ShaderEntry, ShaderError};

pub fn entries(_bytes: &[u8]) -> Result<Vec<ShaderEntry>, ShaderError> {
    Err(ShaderError::new("xenos container parsing is not written yet"))
}
