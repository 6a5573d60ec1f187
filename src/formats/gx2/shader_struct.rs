//! What GFD and SHARCFB share: the GX2 shader structs (notes/gx2.md §2), read in either byte
//! order, and the GX2 cache key.
//!
//! For scanning only the program size / pointer fields are read. Full decoding of the structs
//! (registers, uniform blocks and vars, samplers, attribs) extends [`ShaderKind`] and the readers
//! here; both containers call into this module so there is one decoder, generic over [`Endian`].

use crate::formats::{ShaderError, Stage};

/// Byte order of a container's structs (GFD: always big; SHARCFB: from its magic / endian field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Big,
    Little,
}

impl Endian {
    /// u32 at `off`, or `None` if it does not fit. Unaligned offsets are fine.
    #[inline]
    pub fn u32_at(self, buf: &[u8], off: usize) -> Option<u32> {
        let b: [u8; 4] = buf.get(off..off.checked_add(4)?)?.try_into().ok()?;
        Some(match self {
            Endian::Big => u32::from_be_bytes(b),
            Endian::Little => u32::from_le_bytes(b),
        })
    }

    /// As [`Endian::u32_at`] but an out-of-bounds read is a [`ShaderError`] naming `what`.
    pub fn read_u32(self, buf: &[u8], off: usize, what: &str) -> Result<u32, ShaderError> {
        self.u32_at(buf, off).ok_or_else(|| {
            ShaderError::at(off as u64, format!("{what}: 4 bytes at 0x{off:X} lie past the end (0x{:X})", buf.len()))
        })
    }
}

/// Which GX2 shader struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShaderKind {
    Vertex,
    Pixel,
    Geometry,
}

impl ShaderKind {
    pub fn stage(self) -> Stage {
        match self {
            ShaderKind::Vertex => Stage::Vertex,
            ShaderKind::Pixel => Stage::Pixel,
            ShaderKind::Geometry => Stage::Geometry,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShaderKind::Vertex => "vertex",
            ShaderKind::Pixel => "pixel",
            ShaderKind::Geometry => "geometry",
        }
    }

    /// Size of the struct: GX2VertexShader 0x134, GX2PixelShader 0xE8, GX2GeometryShader 0xC0
    /// (decaf / Cemu / the GFD reader; wut's 0xB0 omits the second GX2RBuffer).
    pub fn struct_size(self) -> usize {
        match self {
            ShaderKind::Vertex => 0x134,
            ShaderKind::Pixel => 0xE8,
            ShaderKind::Geometry => 0xC0,
        }
    }

    /// Smallest struct size a container may carry: GFD block major 0 pixel headers are 0xD8
    /// (no GX2RBuffer); the program fields come before that.
    pub fn min_struct_size(self) -> usize {
        match self {
            ShaderKind::Pixel => 0xD8,
            k => k.struct_size(),
        }
    }

    /// Offsets of the program `size` and program pointer fields.
    pub fn program_fields(self) -> (usize, usize) {
        match self {
            ShaderKind::Vertex => (0xD0, 0xD4),
            ShaderKind::Pixel => (0xA4, 0xA8),
            ShaderKind::Geometry => (0x4C, 0x50),
        }
    }
}

/// The program fields of one GX2 shader struct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProgramRef {
    /// Program (microcode) size in bytes.
    pub size: u32,
    /// Program pointer as stored: 0 in GFD (the program is a separate block), a plain offset from
    /// the struct start in SHARCFB.
    pub ptr: u32,
}

/// Reads the program size and pointer of the `kind` struct at `buf[base..]`, checking that the
/// struct (at least [`ShaderKind::min_struct_size`] bytes) fits.
pub fn read_program_ref(buf: &[u8], base: usize, kind: ShaderKind, e: Endian) -> Result<ProgramRef, ShaderError> {
    let need = kind.min_struct_size();
    if base.checked_add(need).map_or(true, |end| end > buf.len()) {
        return Err(ShaderError::at(
            base as u64,
            format!(
                "GX2 {} shader struct at 0x{base:X} needs 0x{need:X} bytes, only 0x{:X} available",
                kind.name(),
                buf.len().saturating_sub(base)
            ),
        ));
    }
    let (so, po) = kind.program_fields();
    Ok(ProgramRef {
        size: e.read_u32(buf, base + so, "GX2 program size")?,
        ptr: e.read_u32(buf, base + po, "GX2 program pointer")?,
    })
}

/// The GX2 cache key, the same for GFD and SHARCFB: XXH3-64 (seed 0) of the shader's program
/// (microcode) bytes, i.e. what the GX2 struct's program pointer and size designate (for a
/// geometry shader: the GS program, not its copy program). A shader stored in both containers
/// therefore has one key. The struct's registers are not part of the key.
pub fn key(program: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(program)
}
