//! Packing: SMOL-V, zstd, the DXIL container hash.

pub mod dxil_hash;
pub mod smolv;
