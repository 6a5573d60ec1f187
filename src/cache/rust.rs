//! The `.rs` writer: a dependency-free Rust module plus its compressed blobs.
//!
//! [`write()`]`("…/shader_cache.rs")` produces:
//! - `shader_cache.dxil.zst` and `shader_cache.spirv.zst` ([`blob_paths`]): one zstd frame each
//!   (content size and checksum included), or an empty file for a backend without blobs;
//! - `shader_cache.rs`: `pub struct Entry`, `pub static ENTRIES: [Entry; N]` sorted by key,
//!   `pub fn lookup(key) -> Option<&'static Entry>`, `DXIL_COMPRESSED` / `SPIRV_COMPRESSED`
//!   (`include_bytes!` of the sibling files), their compressed and decompressed sizes,
//!   `SPIRV_ENCODING`, and the family / stage id constants.
//!
//! The module has no dependencies and no inner attributes, so it works both with
//! `include!(".../shader_cache.rs")` inside a `mod` and as `#[path = "..."] mod shader_cache;`.
//! `include_bytes!` resolves relative to the `.rs` file, so the three files must stay together.
//!
//! Crash safety: the three files are written and synced under temporary names, then renamed
//! blobs first, `.rs` last; a failed rename puts back the files renamed before it
//! (`atomic::Batch::commit`). The `.rs` pins each blob's exact length in the type of its
//! `include_bytes!` and checks the blob's last four bytes (the zstd checksum) in a `const`
//! assertion, so a `.rs` next to blobs from another run (a crash between renames, a partial
//! copy) fails to compile instead of decoding the wrong bytes.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::atomic::Batch;
use super::layout::{self, Layout};
use super::{CacheEntry, CacheLayout, CacheSizes, CacheWriteError, WriteOptions};
use crate::formats::{Family, Stage};

/// `(<stem>.dxil.zst, <stem>.spirv.zst)` next to `out`.
pub fn blob_paths(out: &Path) -> (PathBuf, PathBuf) {
    (out.with_extension("dxil.zst"), out.with_extension("spirv.zst"))
}

/// Writes the module `out` and its two blob files. Returns the blob sizes. On error no file
/// was replaced and no temporary file is left.
pub fn write(out: &Path, entries: &[CacheEntry], opts: &WriteOptions) -> Result<CacheSizes, CacheWriteError> {
    write_prepacked(out, entries, opts, None)
}

/// [`write()`], with the single layout's frames already compressed by a
/// [`SinglePacker`](layout::SinglePacker) during the build (used only if they match `entries`).
pub fn write_prepacked(
    out: &Path,
    entries: &[CacheEntry],
    opts: &WriteOptions,
    packed: Option<super::Packed>,
) -> Result<CacheSizes, CacheWriteError> {
    let (dxil_path, spirv_path) = blob_paths(out);
    let name_of = |p: &Path| -> Result<String, CacheWriteError> {
        p.file_name().and_then(|n| n.to_str()).filter(|n| !n.contains(['"', '\\', '\n', '\r'])).map(str::to_owned).ok_or_else(|| {
            CacheWriteError::BadPath { path: out.to_path_buf(), reason: "the output needs a file name usable in include_bytes!(\"...\")" }
        })
    };
    let dxil_name = name_of(&dxil_path)?;
    let spirv_name = name_of(&spirv_path)?;
    if dxil_path == out || spirv_path == out {
        return Err(CacheWriteError::BadPath { path: out.to_path_buf(), reason: "the module path collides with its blob file names" });
    }

    let layout = layout::build_prepacked(out, entries, opts, packed)?;
    let module_name = name_of(out)?;
    let text = render(&layout, &module_name, &dxil_name, &spirv_name);
    let io_err = |(path, source): (PathBuf, io::Error)| CacheWriteError::Io { path, source };
    let mut batch = Batch::new();
    batch.stage_with(&dxil_path, |w| w.write_all(&layout.dxil.compressed)).map_err(io_err)?;
    batch.stage_with(&spirv_path, |w| w.write_all(&layout.spirv.compressed)).map_err(io_err)?;
    batch.stage_with(out, |w| w.write_all(text.as_bytes())).map_err(io_err)?;
    batch.commit().map_err(io_err)?;
    Ok(layout.sizes())
}

const PRELUDE: &str = r#"
/// One compiled shader. Offsets and sizes index the *decompressed* blobs.
#[allow(dead_code)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key the runtime computes for the shader (XenosRecomp: XXH3-64 of the container).
    pub key: u64,
    /// `FAMILY_*`.
    pub family: u32,
    /// `STAGE_*`.
    pub stage: u32,
    pub dxil_offset: u32,
    /// 0 when this shader has no DXIL.
    pub dxil_size: u32,
    pub spirv_offset: u32,
    /// 0 when this shader has no SPIR-V.
    pub spirv_size: u32,
    /// XenosRecomp's specialization-constant mask (0 when unused).
    pub spec_constants_mask: u32,
    /// `ENTRY_*` bits (`ENTRY_SPIRV_FLOAT_CONTROLS`).
    pub flags: u32,
    /// Family-specific metadata words (AGAL: per sampler slot `slot, word_lo, word_hi`).
    pub meta: &'static [u32],
}

#[allow(dead_code)]
impl Entry {
    /// This shader's DXIL inside the decompressed DXIL blob.
    pub fn dxil<'a>(&self, decompressed: &'a [u8]) -> Option<&'a [u8]> {
        if self.dxil_size == 0 {
            return None;
        }
        decompressed.get(self.dxil_offset as usize..(self.dxil_offset as usize + self.dxil_size as usize))
    }

    /// This shader's SPIR-V (encoded per `SPIRV_ENCODING`) inside the decompressed SPIR-V blob.
    pub fn spirv<'a>(&self, decompressed: &'a [u8]) -> Option<&'a [u8]> {
        if self.spirv_size == 0 {
            return None;
        }
        decompressed.get(self.spirv_offset as usize..(self.spirv_offset as usize + self.spirv_size as usize))
    }
}

/// The entry whose key is `key` (binary search over the sorted table).
#[allow(dead_code)]
pub fn lookup(key: u64) -> Option<&'static Entry> {
    match ENTRIES.binary_search_by(|e| e.key.cmp(&key)) {
        Ok(i) => Some(&ENTRIES[i]),
        Err(_) => None,
    }
}

/// `SPIRV_ENCODING`: SMOL-V with debug info stripped (XenosRecomp's choice).
#[allow(dead_code)]
pub const SPIRV_ENCODING_SMOLV: u32 = 0;
/// `SPIRV_ENCODING`: plain SPIR-V words.
#[allow(dead_code)]
pub const SPIRV_ENCODING_RAW: u32 = 1;
/// `Entry::flags` bit: the entry's SPIR-V declares SPV_KHR_float_controls'
/// SignedZeroInfNanPreserve (32-bit); create it only where the device reports
/// `shaderSignedZeroInfNanPreserveFloat32` (`shrec build --spirv-float-controls`).
#[allow(dead_code)]
pub const ENTRY_SPIRV_FLOAT_CONTROLS: u32 = 1;
"#;

/// The last field of `Entry`; the per-shader layout adds its frame fields after it.
const ENTRY_LAST_FIELD: &str = "    pub meta: &'static [u32],\n}";

const PER_SHADER_FIELDS: &str = "    pub meta: &'static [u32],
    /// Per-shader layout: this shader's zstd frame in `DXIL_COMPRESSED` (size 0: no DXIL).
    pub dxil_frame_offset: u32,
    pub dxil_frame_size: u32,
    /// Per-shader layout: this shader's zstd frame in `SPIRV_COMPRESSED` (size 0: no SPIR-V).
    pub spirv_frame_offset: u32,
    pub spirv_frame_size: u32,
}";

const PER_SHADER_PRELUDE: &str = r#"
/// `LAYOUT`: one zstd frame per backend.
#[allow(dead_code)]
pub const LAYOUT_SINGLE: u32 = 0;
/// `LAYOUT`: one zstd frame per shader (`dxil_frame_*` / `spirv_frame_*`), each compressed with
/// `DXIL_DICT` / `SPIRV_DICT` when those are not empty.
#[allow(dead_code)]
pub const LAYOUT_PER_SHADER: u32 = 1;
"#;

fn render(l: &Layout, module_name: &str, dxil_name: &str, spirv_name: &str) -> String {
    let mut s = String::with_capacity(4096 + l.rows.len() * 200);
    writeln!(s, "// Generated by shrec {}. Do not edit.", env!("CARGO_PKG_VERSION")).unwrap();
    s.push_str("//\n");
    writeln!(s, "// Use inside a module: `mod shader_cache {{ include!(\"{module_name}\"); }}` or").unwrap();
    writeln!(s, "// `#[path = \"{module_name}\"] mod shader_cache;`. No dependencies. The compressed blobs").unwrap();
    writeln!(s, "// are the sibling files `{dxil_name}` and `{spirv_name}` (one zstd frame each, empty when").unwrap();
    s.push_str("// the backend was not built); keep the three files together.\n");
    if l.layout == CacheLayout::PerShader {
        s.push_str(&PRELUDE.replace(ENTRY_LAST_FIELD, PER_SHADER_FIELDS));
        s.push_str(PER_SHADER_PRELUDE);
    } else {
        s.push_str(PRELUDE);
    }
    s.push('\n');

    for f in Family::ALL {
        writeln!(s, "#[allow(dead_code)]\npub const FAMILY_{}: u32 = {};", f.name().to_uppercase(), f.abi_id()).unwrap();
    }
    for st in [Stage::Vertex, Stage::Pixel, Stage::Geometry] {
        let name = format!("{st:?}").to_uppercase();
        writeln!(s, "#[allow(dead_code)]\npub const STAGE_{}: u32 = {};", name, st.abi_id()).unwrap();
    }
    writeln!(s, "\n/// How `SPIRV_COMPRESSED` stores each shader: `SPIRV_ENCODING_SMOLV` or `SPIRV_ENCODING_RAW`.").unwrap();
    writeln!(s, "#[allow(dead_code)]\npub const SPIRV_ENCODING: u32 = {};\n", l.spirv_encoding.abi_id()).unwrap();

    for (upper, name, blob) in [("DXIL", dxil_name, &l.dxil), ("SPIRV", spirv_name, &l.spirv)] {
        let n = blob.compressed.len();
        writeln!(s, "const {upper}_COMPRESSED_BYTES: &[u8; {n}] = include_bytes!(\"{name}\");").unwrap();
        if n >= 4 {
            let t = &blob.compressed[n - 4..];
            writeln!(
                s,
                "const _: () = assert!({upper}_COMPRESSED_BYTES[{}] == {} && {upper}_COMPRESSED_BYTES[{}] == {} && {upper}_COMPRESSED_BYTES[{}] == {} && {upper}_COMPRESSED_BYTES[{}] == {}, \"{name} does not belong to this module\");",
                n - 4, t[0], n - 3, t[1], n - 2, t[2], n - 1, t[3]
            )
            .unwrap();
        }
        writeln!(s, "/// One zstd frame; empty when the backend was not built.").unwrap();
        writeln!(s, "#[allow(dead_code)]\npub static {upper}_COMPRESSED: &[u8] = {upper}_COMPRESSED_BYTES;").unwrap();
        writeln!(s, "#[allow(dead_code)]\npub const {upper}_COMPRESSED_SIZE: usize = {n};").unwrap();
        writeln!(s, "#[allow(dead_code)]\npub const {upper}_DECOMPRESSED_SIZE: usize = {};\n", blob.raw_len).unwrap();
    }

    if l.layout == CacheLayout::PerShader {
        writeln!(s, "/// How the blobs are compressed: `LAYOUT_PER_SHADER`.\n#[allow(dead_code)]\npub const LAYOUT: u32 = {};\n", l.layout.abi_id())
            .unwrap();
        for (upper, dict) in [("DXIL", &l.dxil.dict), ("SPIRV", &l.spirv.dict)] {
            writeln!(s, "/// The zstd dictionary of every {upper} frame; empty without `--zstd-dict`.").unwrap();
            write!(s, "#[allow(dead_code)]\npub static {upper}_DICT: &[u8] = &[").unwrap();
            for (i, b) in dict.iter().enumerate() {
                if i % 32 == 0 {
                    s.push_str("\n    ");
                }
                write!(s, "{b},").unwrap();
            }
            s.push_str("\n];\n");
        }
        s.push('\n');
    }
    writeln!(s, "#[allow(dead_code)]\npub const ENTRY_COUNT: usize = {};\n", l.rows.len()).unwrap();
    writeln!(s, "/// Sorted by key.\n#[allow(dead_code)]\npub static ENTRIES: [Entry; {}] = [", l.rows.len()).unwrap();
    for r in &l.rows {
        let meta = &l.meta[r.meta_offset as usize..(r.meta_offset + r.meta_count) as usize];
        write!(
            s,
            "    Entry {{ key: 0x{:016X}, family: {}, stage: {}, dxil_offset: {}, dxil_size: {}, spirv_offset: {}, spirv_size: {}, spec_constants_mask: {}, flags: {}, meta: &[",
            r.key, r.family, r.stage, r.dxil_offset, r.dxil_size, r.spirv_offset, r.spirv_size, r.spec_constants_mask, r.flags
        )
        .unwrap();
        for (i, w) in meta.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            write!(s, "0x{w:X}").unwrap();
        }
        s.push(']');
        if l.layout == CacheLayout::PerShader {
            write!(
                s,
                ", dxil_frame_offset: {}, dxil_frame_size: {}, spirv_frame_offset: {}, spirv_frame_size: {}",
                r.dxil_frame.0, r.dxil_frame.1, r.spirv_frame.0, r.spirv_frame.1
            )
            .unwrap();
        }
        s.push_str(" },\n");
    }
    s.push_str("];\n");
    s
}
