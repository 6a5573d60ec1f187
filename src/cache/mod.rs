//! The embeddable cache (`.cpp` / `.rs` writers) and the incremental on-disk cache.
//!
//! (Writers being written.)

use crate::formats::{Family, Stage};

/// One compiled shader as the build hands it to the writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheEntry {
    /// Runtime lookup key (see README, "Keys").
    pub key: u64,
    pub family: Family,
    pub stage: Stage,
    /// DXIL container with its hash filled, when the DXIL target was built.
    pub dxil: Option<Vec<u8>>,
    /// Raw SPIR-V (little-endian words), when the SPIR-V target was built. The writers encode it
    /// (SMOL-V or raw) themselves.
    pub spirv: Option<Vec<u8>>,
    /// XenosRecomp's specialization-constant mask (0 for families without spec constants).
    pub spec_constants_mask: u32,
    /// Family-specific metadata words (AGAL: per sampler slot `slot, word_lo, word_hi`).
    pub meta: Vec<u32>,
}

/// How SPIR-V is stored in the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SpirvEncoding {
    /// SMOL-V with debug info stripped, as XenosRecomp (UnleashedRecomp decodes it).
    #[default]
    Smolv,
    /// Plain SPIR-V words.
    Raw,
}
