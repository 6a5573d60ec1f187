//! What a shader is: its family and its pipeline stage. Part of the IR (a leaf: the IR depends on
//! nothing else in the crate); `formats` re-exports both for the front ends.

use serde::{Deserialize, Serialize};

/// The four console/runtime families shrec reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Family {
    Xenos,
    Gx2,
    Pica,
    Agal,
}

impl Family {
    pub const ALL: [Family; 4] = [Family::Xenos, Family::Gx2, Family::Pica, Family::Agal];

    pub fn name(self) -> &'static str {
        match self {
            Family::Xenos => "xenos",
            Family::Gx2 => "gx2",
            Family::Pica => "pica",
            Family::Agal => "agal",
        }
    }

    /// Numeric id stored in cache entries (stable ABI: never renumber).
    pub fn abi_id(self) -> u32 {
        match self {
            Family::Xenos => 0,
            Family::Gx2 => 1,
            Family::Pica => 2,
            Family::Agal => 3,
        }
    }
}

impl std::fmt::Display for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Pipeline stage of one shader. Pixel and fragment are the same stage; the family decides
/// which word is printed (AGAL says "fragment", the consoles say "pixel").
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    Vertex,
    Pixel,
    Geometry,
}

impl Stage {
    /// The word the family's own documentation uses for this stage.
    pub fn name_in(self, family: Family) -> &'static str {
        match (self, family) {
            (Stage::Vertex, _) => "vertex",
            (Stage::Pixel, Family::Agal) => "fragment",
            (Stage::Pixel, _) => "pixel",
            (Stage::Geometry, _) => "geometry",
        }
    }

    /// Numeric id stored in cache entries (stable ABI: never renumber).
    pub fn abi_id(self) -> u32 {
        match self {
            Stage::Vertex => 0,
            Stage::Pixel => 1,
            Stage::Geometry => 2,
        }
    }

    /// DXC target profile prefix ("vs", "ps", "gs").
    pub fn profile_prefix(self) -> &'static str {
        match self {
            Stage::Vertex => "vs",
            Stage::Pixel => "ps",
            Stage::Geometry => "gs",
        }
    }
}
