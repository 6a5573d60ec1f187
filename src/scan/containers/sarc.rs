//! SARC, Nintendo's archive (Wii U / 3DS / Switch `.sarc`, `.pack`, inside `.szs`).
//!
//! Hand-written (see yaz0.rs for why not `roead`). Layout (oead `src/sarc.cpp`, Cemu's SARC
//! reader and the "SARC" page of the Nintendo modding wikis agree): a 0x14-byte header
//! (`SARC`, u16 header size, u16 byte-order mark `FE FF` = big endian / `FF FE` = little, u32
//! file size, u32 data offset, u16 version, u16 reserved); `SFAT` (u16 header size, u16 node
//! count, u32 hash key) and its 16-byte nodes (u32 name hash, u32 attributes: `0x01xxxxxx` = has
//! a name at SFNT offset `xxxxxx * 4`, u32 data start and end relative to the data offset);
//! then `SFNT` (8-byte header) with NUL-terminated names.

use super::{check_members, Budget, ContainerError, Member};

pub(super) fn members(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let big = match b.get(6..8) {
        Some([0xFE, 0xFF]) => true,
        Some([0xFF, 0xFE]) => false,
        _ => return Err(ContainerError::at(6, "corrupt SARC: no byte-order mark")),
    };
    let u16_at = |at: usize, what: &str| super::be_or_le::<2>(b, at, big, what).map(|v| v as usize);
    let u32_at = |at: usize, what: &str| super::be_or_le::<4>(b, at, big, what).map(|v| v as usize);
    let header = u16_at(4, "header size")?;
    let data_offset = u32_at(0x0C, "data offset")?;
    let sfat = header;
    if b.get(sfat..sfat + 4) != Some(b"SFAT") {
        return Err(ContainerError::at(sfat as u64, "corrupt SARC: no SFAT block after the header"));
    }
    let count = u16_at(sfat + 6, "SFAT node count")?;
    check_members(count)?;
    let nodes = sfat + u16_at(sfat + 4, "SFAT header size")?;
    let sfnt = nodes + 16 * count;
    if b.get(sfnt..sfnt + 4) != Some(b"SFNT") {
        return Err(ContainerError::at(sfnt as u64, "corrupt SARC: no SFNT block after the node table"));
    }
    let names = sfnt + u16_at(sfnt + 4, "SFNT header size")?;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let node = nodes + 16 * i;
        let hash = u32_at(node, "node name hash")?;
        let attributes = u32_at(node + 4, "node attributes")?;
        let start = u32_at(node + 8, "node data start")?;
        let end = u32_at(node + 12, "node data end")?;
        let name = if attributes >> 24 == 1 {
            let at = names + (attributes & 0xFF_FFFF) * 4;
            let tail = b.get(at..).ok_or_else(|| ContainerError::at(node as u64, format!("corrupt SARC: name of node {i} past the end")))?;
            let len =
                memchr::memchr(0, tail).ok_or_else(|| ContainerError::at(at as u64, format!("corrupt SARC: name of node {i} not terminated")))?;
            super::clean_name_bytes(&tail[..len])
        } else {
            format!("0x{hash:08X}")
        };
        if !wants(&name) {
            continue;
        }
        let range = data_offset.checked_add(start).zip(data_offset.checked_add(end));
        let data = match range.and_then(|(s, e)| b.get(s..e)) {
            Some(d) => budget.charge(d.len() as u64, d.len() as u64).map(|()| d.to_vec()),
            None => Err(ContainerError::at(node as u64, format!("corrupt SARC: data 0x{start:X}..0x{end:X} outside the archive"))),
        };
        out.push(Member { name, data });
    }
    Ok(out)
}
