//! The D3D9-for-Xenon shader container (notes/xenos.md §4): the 36-byte header, the scanner's
//! acceptance rule (XenosRecomp `main.cpp`, notes §3) and the structural sanity checks shrec adds
//! on top of it (notes §18).
//!
//! This module only reads what detection and listing need (header, the shader header's microcode
//! range, the cache key). Full parsing (constant table, definition table, vertex elements,
//! interpolators) is a later issue and belongs next to [`ContainerHeader`]: every offset it reads is
//! relative to the container start, like the ones here.

use crate::formats::ShaderError;

/// Size of the container header (`ShaderContainer` in XenosRecomp `shader.h`).
pub const HEADER_SIZE: usize = 36;
/// `flags & FLAGS_MASK == FLAGS_MAGIC` is XenosRecomp's magic test.
pub const FLAGS_MASK: u32 = 0xFFFF_FF00;
pub const FLAGS_MAGIC: u32 = 0x102A_1100;
/// Size of the shader header at `shaderOffset` that this module reads (physicalOffset, size,
/// program control, context misc, field10, interpolatorInfo).
pub const SHADER_HEADER_SIZE: usize = 0x18;

/// Big-endian u32 at `off`, or `None` past the end.
#[inline]
pub(crate) fn be32(buf: &[u8], off: usize) -> Option<u32> {
    let b = buf.get(off..off.checked_add(4)?)?;
    Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// The container header, all fields big-endian in the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerHeader {
    /// `0x102A11xx`; bit 0: 1 vertex, 0 pixel.
    pub flags: u32,
    /// Size of the CPU-side metadata part = offset of the physical part.
    pub virtual_size: u32,
    /// Size of the GPU part (microcode + literal constants).
    pub physical_size: u32,
    /// 0 or the offset of an fxc `/XZi` debug block.
    pub field_0c: u32,
    pub constant_table_offset: u32,
    pub definition_table_offset: u32,
    pub shader_offset: u32,
    pub field_1c: u32,
    pub field_20: u32,
}

impl ContainerHeader {
    /// Reads the header at the start of `buf` (no validation besides length).
    pub fn read(buf: &[u8]) -> Option<ContainerHeader> {
        if buf.len() < HEADER_SIZE {
            return None;
        }
        let w = |i: usize| be32(buf, i * 4).unwrap_or(0);
        Some(ContainerHeader {
            flags: w(0),
            virtual_size: w(1),
            physical_size: w(2),
            field_0c: w(3),
            constant_table_offset: w(4),
            definition_table_offset: w(5),
            shader_offset: w(6),
            field_1c: w(7),
            field_20: w(8),
        })
    }

    pub fn has_magic(&self) -> bool {
        self.flags & FLAGS_MASK == FLAGS_MAGIC
    }

    pub fn is_vertex(&self) -> bool {
        self.flags & 1 == 1
    }

    /// `virtualSize + physicalSize` computed the way XenosRecomp (and UnleashedRecomp's run-time
    /// lookup, `function[1] + function[2]`) compute it: a 32-bit sum that wraps. The scanner uses
    /// this value to accept and to advance so that it visits exactly the offsets XR visits.
    pub fn xr_data_size(&self) -> u32 {
        self.virtual_size.wrapping_add(self.physical_size)
    }

    /// The true (non-wrapping) container size.
    pub fn data_size(&self) -> u64 {
        self.virtual_size as u64 + self.physical_size as u64
    }

    /// XenosRecomp's acceptance test for a header at a position with `remaining` bytes left in
    /// the file: magic, `virtualSize + physicalSize <= remaining` (32-bit sum), and the words at
    /// 0x1C and 0x20 zero.
    pub fn xr_accepts(&self, remaining: usize) -> bool {
        self.has_magic()
            && (self.xr_data_size() as u64) <= remaining as u64
            && self.field_1c == 0
            && self.field_20 == 0
    }
}

/// What [`check`] found about one container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContainerInfo {
    pub header: ContainerHeader,
    /// Container size in bytes (`virtualSize + physicalSize`).
    pub size: usize,
    /// Microcode range, relative to the container start.
    pub microcode_offset: usize,
    pub microcode_size: usize,
}

/// Structural checks on a container that starts at `buf[0]` (`buf` may extend past it):
/// magic, size ≥ 36 and inside `buf` without 32-bit wrap-around, `constantTableOffset` (0 is
/// allowed here: XenosRecomp asserts on it, but the container is real and the translator reports
/// it), `definitionTableOffset` and the shader header inside the virtual part, and the microcode
/// range `[physicalOffset, physicalOffset + size)` inside the physical part.
/// Every error carries the offset (relative to the container) of the field that is wrong.
pub fn check(buf: &[u8]) -> Result<ContainerInfo, ShaderError> {
    let h = ContainerHeader::read(buf).ok_or_else(|| {
        ShaderError::at(0, format!("xenos container header needs {HEADER_SIZE} bytes, {} available", buf.len()))
    })?;
    if !h.has_magic() {
        return Err(ShaderError::at(0, format!("xenos flags 0x{:08X} lack the 0x102A11xx magic", h.flags)));
    }
    let size = h.data_size();
    if size != h.xr_data_size() as u64 {
        return Err(ShaderError::at(
            4,
            format!(
                "virtualSize 0x{:X} + physicalSize 0x{:X} overflows 32 bits",
                h.virtual_size, h.physical_size
            ),
        ));
    }
    if size < HEADER_SIZE as u64 {
        return Err(ShaderError::at(4, format!("container size {size} is smaller than its {HEADER_SIZE}-byte header")));
    }
    if size > buf.len() as u64 {
        return Err(ShaderError::at(4, format!("container size {size} exceeds the {} bytes available", buf.len())));
    }
    let vsize = h.virtual_size as u64;
    if (h.virtual_size as usize) < HEADER_SIZE {
        return Err(ShaderError::at(4, format!("virtualSize 0x{:X} is smaller than the header", h.virtual_size)));
    }
    if h.constant_table_offset != 0 && h.constant_table_offset as u64 + 4 > vsize {
        return Err(ShaderError::at(
            0x10,
            format!("constantTableOffset 0x{:X} lies outside virtualSize 0x{:X}", h.constant_table_offset, h.virtual_size),
        ));
    }
    if h.definition_table_offset != 0 && h.definition_table_offset as u64 >= vsize {
        return Err(ShaderError::at(
            0x14,
            format!(
                "definitionTableOffset 0x{:X} lies outside virtualSize 0x{:X}",
                h.definition_table_offset, h.virtual_size
            ),
        ));
    }
    let so = h.shader_offset as u64;
    if so < HEADER_SIZE as u64 || so + SHADER_HEADER_SIZE as u64 > vsize {
        return Err(ShaderError::at(
            0x18,
            format!("shaderOffset 0x{:X} does not leave a shader header inside virtualSize 0x{:X}", h.shader_offset, h.virtual_size),
        ));
    }
    let so = so as usize;
    // Both reads are inside [0, virtualSize) ⊂ buf, checked above.
    let phys_off = be32(buf, so).unwrap_or(0);
    let code_size = be32(buf, so + 4).unwrap_or(0);
    if phys_off as u64 + code_size as u64 > h.physical_size as u64 {
        return Err(ShaderError::at(
            so as u64,
            format!(
                "microcode [0x{phys_off:X}, +0x{code_size:X}) exceeds physicalSize 0x{:X}",
                h.physical_size
            ),
        ));
    }
    Ok(ContainerInfo {
        header: h,
        size: size as usize,
        microcode_offset: (vsize + phys_off as u64) as usize,
        microcode_size: code_size as usize,
    })
}

/// The XenosRecomp cache key: XXH3-64, seed 0, of the container's bytes
/// `[0, virtualSize + physicalSize)` exactly as found in the file (big-endian, unmodified). This is
/// what UnleashedRecomp computes at run time over the pointer the game passes to
/// `CreateVertexShader` / `CreatePixelShader`.
pub fn key(container: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(container)
}
