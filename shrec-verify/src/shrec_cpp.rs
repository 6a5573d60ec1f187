//! Reading back shrec's own `.cpp` cache (single-frame layout): the rows of
//! `g_shaderCacheEntries[]` from the `.cpp` and the DXIL blob from its `.msvc.inc` (the same
//! bytes as decimal items; the `.cpp` holds them as a string literal), decompressed. Test
//! tooling: the Windows CI step (`scripts/windows-wine-check.sh`) lists the keys of a Linux and
//! a Windows build and checks the DXIL container hashes that Microsoft's validator wrote.

use std::path::Path;

/// One row of `g_shaderCacheEntries[]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub key: u64,
    pub dxil_offset: usize,
    pub dxil_size: usize,
}

/// A shrec `.cpp` cache read back: its rows and the decompressed DXIL stream.
#[derive(Clone, Debug)]
pub struct ShrecCpp {
    pub rows: Vec<Row>,
    pub dxil: Vec<u8>,
}

/// What [`ShrecCpp::check_dxil_hashes`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HashCheck {
    /// DXIL containers in the cache.
    pub containers: usize,
    /// Of those, with a non-zero hash.
    pub signed: usize,
    /// Of those, whose hash `shrec::pack::dxil_hash` recomputes exactly.
    pub recomputed: usize,
    /// One line per container that is unsigned or whose hash differs.
    pub problems: Vec<String>,
}

fn number(s: &str) -> Result<u64, String> {
    let s = s.trim();
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("bad number {s:?}: {e}"))
}

/// The value of `const size_t <name> = <value>;`.
fn size_constant(text: &str, name: &str) -> Result<usize, String> {
    let marker = format!("const size_t {name} = ");
    let at = text.find(&marker).ok_or_else(|| format!("no {name}"))? + marker.len();
    let end = text[at..].find(';').ok_or_else(|| format!("{name}: no ';'"))? + at;
    Ok(number(&text[at..end])? as usize)
}

/// The decimal byte items of `const uint8_t <symbol>[] = { ... };` in `text`.
fn byte_items(text: &str, symbol: &str) -> Result<Vec<u8>, String> {
    let marker = format!("const uint8_t {symbol}[] = {{");
    let at = text.find(&marker).ok_or_else(|| format!("no {symbol}"))? + marker.len();
    let end = text[at..].find('}').ok_or_else(|| format!("{symbol}: no '}}'"))? + at;
    text[at..end]
        .split(',')
        .map(str::trim)
        .filter(|b| !b.is_empty())
        .map(|b| b.parse::<u8>().map_err(|e| format!("{symbol}: byte {b:?}: {e}")))
        .collect()
}

impl ShrecCpp {
    /// Reads `cpp` and the `.msvc.inc` beside it.
    pub fn read(cpp: &Path) -> Result<ShrecCpp, String> {
        let text = std::fs::read_to_string(cpp).map_err(|e| format!("{}: {e}", cpp.display()))?;
        let inc_path = shrec::cache::cpp::msvc_path(cpp);
        let inc = std::fs::read_to_string(&inc_path).map_err(|e| format!("{}: {e}", inc_path.display()))?;
        ShrecCpp::parse(&text, &inc)
    }

    /// Parses the `.cpp` text and its `.msvc.inc` text.
    pub fn parse(cpp: &str, msvc_inc: &str) -> Result<ShrecCpp, String> {
        if cpp.contains("g_shrecEntryFrames[]") {
            return Err("per-shader layout: only the single-frame layout is read here".into());
        }
        let start = cpp.find("ShaderCacheEntry g_shaderCacheEntries[] = {\n").ok_or("no g_shaderCacheEntries")?;
        let table = &cpp[start..];
        let table = &table[..table.find("\n};").ok_or("unterminated g_shaderCacheEntries")?];
        let mut rows = Vec::new();
        for line in table.lines().skip(1).filter(|l| !l.contains("placeholder")) {
            let fields: Vec<&str> = line.trim().trim_start_matches('{').trim_end_matches("},").split(',').map(str::trim).collect();
            if fields.len() != 7 || fields[6] != "nullptr" {
                return Err(format!("row {line:?}: expected {{ key, dxilOffset, dxilSize, spirvOffset, spirvSize, mask, nullptr }}"));
            }
            rows.push(Row { key: number(fields[0])?, dxil_offset: number(fields[1])? as usize, dxil_size: number(fields[2])? as usize });
        }
        let count = size_constant(cpp, "g_shaderCacheEntryCount")?;
        if count != rows.len() {
            return Err(format!("g_shaderCacheEntryCount = {count}, but {} rows", rows.len()));
        }
        let raw_len = size_constant(cpp, "g_dxilCacheDecompressedSize")?;
        let dxil = if raw_len == 0 {
            Vec::new()
        } else {
            let compressed = byte_items(msvc_inc, "g_compressedDxilCache")?;
            if compressed.len() != size_constant(cpp, "g_dxilCacheCompressedSize")? {
                return Err("g_compressedDxilCache in the .msvc.inc is not the size the .cpp says".into());
            }
            zstd::bulk::decompress(&compressed, raw_len).map_err(|e| format!("DXIL blob: zstd: {e}"))?
        };
        if dxil.len() != raw_len {
            return Err(format!("DXIL blob decompressed to {} bytes, the .cpp says {raw_len}", dxil.len()));
        }
        for r in &rows {
            if r.dxil_offset.checked_add(r.dxil_size).is_none_or(|end| end > dxil.len()) {
                return Err(format!("0x{:016X}: DXIL {}+{} outside the {}-byte blob", r.key, r.dxil_offset, r.dxil_size, dxil.len()));
            }
        }
        Ok(ShrecCpp { rows, dxil })
    }

    /// The keys, sorted.
    pub fn sorted_keys(&self) -> Vec<u64> {
        let mut k: Vec<u64> = self.rows.iter().map(|r| r.key).collect();
        k.sort_unstable();
        k
    }

    /// Every DXIL container: is its hash non-zero (signed), and does `shrec::pack::dxil_hash`
    /// compute exactly that hash from the same bytes?
    pub fn check_dxil_hashes(&self) -> HashCheck {
        use shrec::pack::dxil_hash::{container_hash, HASHED_FROM, HASH_OFFSET};
        let mut c = HashCheck::default();
        for r in self.rows.iter().filter(|r| r.dxil_size > 0) {
            c.containers += 1;
            let bytes = &self.dxil[r.dxil_offset..r.dxil_offset + r.dxil_size];
            let stored = bytes.get(HASH_OFFSET..HASHED_FROM).unwrap_or(&[]);
            if stored.len() != 16 || stored.iter().all(|&b| b == 0) {
                c.problems.push(format!("0x{:016X}: DXIL container hash is zero (not signed)", r.key));
                continue;
            }
            c.signed += 1;
            match container_hash(bytes) {
                Ok(h) if h[..] == *stored => c.recomputed += 1,
                Ok(h) => c.problems.push(format!("0x{:016X}: stored hash {stored:02x?}, dxil_hash computes {h:02x?}", r.key)),
                Err(e) => c.problems.push(format!("0x{:016X}: {e}", r.key)),
            }
        }
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shrec::cache::{CacheEntry, WriteOptions};
    use shrec::formats::{Family, Stage};

    /// A minimal container: header, one empty part, hash filled or not.
    fn container(tag: u8, signed: bool) -> Vec<u8> {
        let mut c = vec![0u8; 44];
        c[..4].copy_from_slice(b"DXBC");
        c[20..24].copy_from_slice(&[1, 0, 0, 0]);
        c[24..28].copy_from_slice(&44u32.to_le_bytes());
        c[28..32].copy_from_slice(&1u32.to_le_bytes());
        c[32..36].copy_from_slice(&36u32.to_le_bytes());
        c[36..40].copy_from_slice(&[b'D', b'X', b'I', tag]);
        if signed {
            shrec::pack::dxil_hash::fill_hash(&mut c).unwrap();
        }
        c
    }

    #[test]
    fn reads_back_what_the_cpp_writer_wrote_and_checks_each_hash() {
        let dir = std::env::temp_dir().join(format!("shrec-cpp-read-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let entry = |key, dxil: Option<Vec<u8>>| CacheEntry {
            key,
            family: Family::Pica,
            stage: Stage::Vertex,
            dxil,
            spirv: None,
            spec_constants_mask: 0,
            meta: Vec::new(),
        };
        let mut forged = container(3, true);
        forged[40] ^= 1; // a hashed byte changed after signing
        let entries =
            vec![entry(0x30, Some(container(1, true))), entry(0x10, Some(container(2, false))), entry(0x20, None), entry(0x40, Some(forged))];
        let out = dir.join("all.cpp");
        shrec::cache::cpp::write(&out, &entries, &WriteOptions::default()).unwrap();
        let cache = ShrecCpp::read(&out).unwrap();
        assert_eq!(cache.sorted_keys(), vec![0x10, 0x20, 0x30, 0x40]);
        let check = cache.check_dxil_hashes();
        assert_eq!((check.containers, check.signed, check.recomputed), (3, 2, 1), "{check:?}");
        assert!(check.problems[0].starts_with("0x0000000000000010: DXIL container hash is zero"), "{check:?}");
        assert!(check.problems[1].starts_with("0x0000000000000040: stored hash"), "{check:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
