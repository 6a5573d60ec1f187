//! DXIL container hash (placeholder until the implementation lands: it reports every container
//! as unhashed and refuses to fill, so nothing unsigned is ever passed off as signed).

#[derive(Debug, thiserror::Error)]
pub enum DxilHashError {
    #[error("DXIL container hashing is not available in this build")]
    Unavailable,
}

pub fn container_hash(_container: &[u8]) -> Result<[u8; 16], DxilHashError> {
    Err(DxilHashError::Unavailable)
}
pub fn fill_hash(_container: &mut [u8]) -> Result<(), DxilHashError> {
    Err(DxilHashError::Unavailable)
}
pub fn hash_is_valid(_container: &[u8]) -> bool {
    false
}
