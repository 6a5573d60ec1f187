//! Compressed Flash SWFs (`CWS` zlib, `ZWS` LZMA): Stage3D programs ship as AGAL bytecode in
//! DefineBinaryData tags (what `[Embed(mimeType="application/octet-stream")]` compiles to).
//!
//! A small tag walker instead of the `swf` crate (Ruffle's): that crate parses every tag into
//! its own types, and only the tag headers are needed here. Layout (SWF File Format
//! Specification v19, "The SWF header", "Tag format", "DefineBinaryData"; Ruffle's
//! `swf/src/read.rs` agrees): `CWS`, u8 version, u32 LE length of the uncompressed file
//! (header included), then a zlib stream of the rest: a RECT (5-bit field width n, four n-bit
//! fields, padded to a byte), u16 frame rate, u16 frame count, then tags: u16 LE `code << 6 |
//! length` (length 0x3F: a u32 LE length follows). DefineBinaryData is code 87: u16 character
//! id, u32 reserved, data. Members are named `DefineBinaryData#<id>`.

use super::{check_members, Budget, ContainerError, Member};

const DEFINE_BINARY_DATA: u64 = 87;
const END: u64 = 0;

pub(super) fn members(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let declared = super::be_or_le::<4>(b, 4, false, "SWF length")?.saturating_sub(8);
    let compressed = b.len().saturating_sub(8) as u64;
    budget.check_declared(declared, compressed)?;
    let body = budget.read(flate2::read::ZlibDecoder::new(&b[8..]), compressed)?;
    tags(&body, wants)
}

/// `ZWS`: `ZWS`, u8 version, u32 LE uncompressed length (header included), u32 LE compressed
/// length, 5 bytes of LZMA properties, then raw LZMA data without a size field (Flash Player 11
/// and the SWF specification's "SWF compression" note).
pub(super) fn members_zws(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let declared = super::be_or_le::<4>(b, 4, false, "SWF length")?.saturating_sub(8);
    let compressed = b.len().saturating_sub(12) as u64;
    budget.check_declared(declared, compressed)?;
    let body = super::lzma::decompress_raw(&b[12..], declared, budget)?;
    tags(&body, wants)
}

/// The DefineBinaryData tags of a decompressed SWF body (everything after the 8-byte header).
fn tags(body: &[u8], wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    // Offsets in errors are in the decompressed body (after the 8-byte header).
    let rect_bits = 5 + 4 * (*body.first().ok_or_else(|| ContainerError::at(8, "truncated SWF: empty body"))? >> 3) as usize;
    let mut pos = rect_bits.div_ceil(8) + 4;
    let mut out = Vec::new();
    while pos < body.len() {
        let tag_at = pos;
        let head = super::be_or_le::<2>(body, pos, false, "SWF tag header")?;
        pos += 2;
        let (code, mut len) = (head >> 6, head & 0x3F);
        if len == 0x3F {
            len = super::be_or_le::<4>(body, pos, false, "SWF long tag length")?;
            pos += 4;
        }
        let end = pos
            .checked_add(len as usize)
            .filter(|&e| e <= body.len())
            .ok_or_else(|| ContainerError::at(tag_at as u64, format!("truncated SWF: tag {code} of {len} bytes runs past the end")))?;
        if code == END {
            break;
        }
        if code == DEFINE_BINARY_DATA {
            let id = super::be_or_le::<2>(body, pos, false, "DefineBinaryData id")?;
            let name = format!("DefineBinaryData#{id}");
            if wants(&name) {
                let data = body.get(pos + 6..end).map(<[u8]>::to_vec).ok_or_else(|| {
                    ContainerError::at(tag_at as u64, format!("corrupt SWF: DefineBinaryData of {len} bytes has no room for its 6-byte header"))
                });
                out.push(Member { name, data });
                check_members(out.len())?;
            }
        }
        pos = end;
    }
    Ok(out)
}
