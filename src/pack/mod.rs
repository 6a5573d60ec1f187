//! Packing: SMOL-V, zstd, the DXIL container hash, SPIR-V as words.
//!
//! The SMOL-V codec lives in the `shrec-runtime` crate (the runtime side needs its decoder) and
//! is re-exported here unchanged.

pub mod dxil_hash;
pub(crate) mod spirv_words;
pub use shrec_runtime::smolv;
