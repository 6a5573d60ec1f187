//! Latte → IR (placeholder, filled in below).
use super::shader_struct::Gx2Shader;
use crate::formats::ShaderError;
pub fn lower(_s: &Gx2Shader) -> Result<crate::ir::Module, ShaderError> {
    Err(ShaderError::new("not yet"))
}
pub fn meta(_s: &Gx2Shader) -> Vec<u32> {
    Vec::new()
}
