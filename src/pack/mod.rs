//! Packing: SMOL-V, zstd, the DXIL container hash.
//!
//! The SMOL-V codec lives in the `shrec-runtime` crate (the runtime side needs its decoder) and
//! is re-exported here unchanged.

pub mod dxil_hash;
pub use shrec_runtime::smolv;
