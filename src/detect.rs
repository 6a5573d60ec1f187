//! Finds shader containers in a byte buffer by magic number and structural checks.
//!
//! (Being written: see the detection issue.)

use crate::formats::Family;
use serde::Serialize;

/// The five container kinds shrec recognises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContainerKind {
    /// Xbox 360 shader container (`0x102A11xx`).
    Xenos,
    /// Wii U GFD file (`Gfx2`) holding GX2 shaders.
    Gfd,
    /// Wii U AGL shader archive (`SHARCFB`).
    Sharcfb,
    /// 3DS shader binary (`DVLB`).
    Dvlb,
    /// Flash Stage3D AGAL bytecode.
    Agal,
}

impl ContainerKind {
    pub fn family(self) -> Family {
        match self {
            ContainerKind::Xenos => Family::Xenos,
            ContainerKind::Gfd | ContainerKind::Sharcfb => Family::Gx2,
            ContainerKind::Dvlb => Family::Pica,
            ContainerKind::Agal => Family::Agal,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            ContainerKind::Xenos => "xenos",
            ContainerKind::Gfd => "gfd",
            ContainerKind::Sharcfb => "sharcfb",
            ContainerKind::Dvlb => "dvlb",
            ContainerKind::Agal => "agal",
        }
    }
}

/// A container found at `offset`, `len` bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub kind: ContainerKind,
    pub offset: usize,
    pub len: usize,
}

/// All containers in `buf`, sorted by offset.
pub fn detect(buf: &[u8]) -> Vec<Candidate> {
    // Temporary: AGAL at offset 0 only, until the full detector lands.
    crate::formats::agal::probe(buf).map(|len| Candidate { kind: ContainerKind::Agal, offset: 0, len }).into_iter().collect()
}
