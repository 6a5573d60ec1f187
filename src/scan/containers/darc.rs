//! DARC, the 3DS archive (`darc`; layouts, fonts and shader bundles of 3DS titles, often LZ11).
//!
//! Hand-written from 3dbrew's "DARC" page (3dstool's `darc.h` entry union and the AttackFridayMonsters
//! `Docs/DARC.md` agree): a 0x1C-byte header (`darc`, u16 byte-order mark
//! `FF FE` = little endian, u16 header size, u32 version, u32 file size, u32 file-table offset,
//! u32 file-table size (entries and names), u32 data offset), then 12-byte entries (u32 name
//! offset into the name table, bit 24 set = directory; u32 data offset from the start of the
//! archive, or the parent index for a directory; u32 size, or for a directory the index one past
//! its last descendant). Entry 0 is the root directory; its end index is the entry count. The
//! name table follows the entries: NUL-terminated UTF-16 names in the archive's byte order.

use super::{check_members, Budget, ContainerError, Member};

const ENTRY: usize = 12;

pub(super) fn members(b: &[u8], budget: &mut Budget, wants: &dyn Fn(&str) -> bool) -> Result<Vec<Member>, ContainerError> {
    let big = match b.get(4..6) {
        Some([0xFE, 0xFF]) => true,
        Some([0xFF, 0xFE]) => false,
        _ => return Err(ContainerError::at(4, "corrupt DARC: no byte-order mark")),
    };
    let u32_at = |at: usize, what: &str| super::be_or_le::<4>(b, at, big, what).map(|v| v as usize);
    let table = u32_at(0x10, "file-table offset")?;
    let count = u32_at(table + 8, "root entry size (entry count)")?;
    check_members(count)?;
    let names = count
        .checked_mul(ENTRY)
        .and_then(|n| n.checked_add(table))
        .filter(|&n| n <= b.len())
        .ok_or_else(|| ContainerError::at(table as u64, format!("corrupt DARC: {count} entries run past the end")))?;
    let name_of = |i: usize, at: usize| -> Result<String, ContainerError> {
        let mut units = Vec::new();
        let mut p = names.checked_add(at).ok_or_else(|| ContainerError::at(at as u64, "corrupt DARC: name offset overflows"))?;
        loop {
            let u = super::be_or_le::<2>(b, p, big, "entry name")
                .map_err(|_| ContainerError::at(p as u64, format!("corrupt DARC: name of entry {i} not terminated")))? as u16;
            if u == 0 {
                break;
            }
            units.push(u);
            p += 2;
        }
        Ok(super::clean_name_utf16(&units))
    };
    // Open directories: (path prefix, index one past their last descendant).
    let mut dirs: Vec<(String, usize)> = vec![(String::new(), count)];
    let mut out = Vec::new();
    for i in 1..count {
        let e = table + ENTRY * i;
        let name_word = u32_at(e, "entry name offset")?;
        let offset = u32_at(e + 4, "entry data offset")?;
        let size = u32_at(e + 8, "entry size")?;
        while dirs.len() > 1 && dirs.last().is_some_and(|d| i >= d.1) {
            dirs.pop();
        }
        let name = name_of(i, name_word & 0xFF_FFFF)?;
        let prefix = dirs.last().map(|d| d.0.clone()).unwrap_or_default();
        // "." (the usual first directory) and "" add no path level.
        let path = if name.is_empty() || name == "." { prefix.clone() } else { format!("{prefix}{name}") };
        if name_word >> 24 & 1 == 1 {
            if size <= i || size > count {
                return Err(ContainerError::at(e as u64, format!("corrupt DARC: directory entry {i} ends at entry {size} (of {count})")));
            }
            let prefix = if path.is_empty() || path.ends_with('/') { path } else { format!("{path}/") };
            dirs.push((prefix, size));
            continue;
        }
        if !wants(&path) {
            continue;
        }
        let data = match offset.checked_add(size).and_then(|end| b.get(offset..end)) {
            Some(d) => budget.charge(d.len() as u64, d.len() as u64).map(|()| d.to_vec()),
            None => Err(ContainerError::at(e as u64, format!("corrupt DARC: data 0x{offset:X}+0x{size:X} outside the archive"))),
        };
        out.push(Member { name: path, data });
    }
    Ok(out)
}
