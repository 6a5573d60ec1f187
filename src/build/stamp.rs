//! The output stamp: what the last build wrote to an output, so that a build with nothing new
//! leaves the output files (and their modification times) alone.

use crate::cache::{self, CacheEntry, CacheLayout, CacheSizes, WriteOptions};
use std::path::{Path, PathBuf};

/// Everything the output files depend on.
pub(super) fn output_digest(entries: &[CacheEntry], opts: &WriteOptions, is_rust: bool) -> u128 {
    use xxhash_rust::xxh3::{xxh3_128, xxh3_64};
    let mut text = format!("shrec-output-1 {} {} {:?} {} {:?}\n", env!("CARGO_PKG_VERSION"), is_rust, opts.spirv_encoding, opts.zstd_level, opts.abi);
    if opts.layout != CacheLayout::Single {
        text.push_str(&format!("layout {:?} {:?}\n", opts.layout, opts.zstd_dict));
    }
    for e in entries {
        let h = |b: &Option<Vec<u8>>| b.as_deref().map_or(0, xxh3_64);
        text.push_str(&format!(
            "{:016x} {} {} {} {:?} {:016x} {:016x}\n",
            e.key,
            e.family.abi_id(),
            e.stage.abi_id(),
            e.spec_constants_mask,
            e.meta,
            h(&e.dxil),
            h(&e.spirv)
        ));
    }
    xxh3_128(text.as_bytes())
}

/// What the last build wrote to an output, kept in the incremental cache dir so that a build
/// with nothing new does not rewrite (or re-timestamp) the output files.
pub(super) struct OutputStamp {
    pub(super) digest: u128,
    pub(super) sizes: CacheSizes,
    files: Vec<(PathBuf, u64)>,
}

impl OutputStamp {
    pub(super) fn path_for(cache_dir: &Path, output: &Path) -> PathBuf {
        let abs = std::path::absolute(output).unwrap_or_else(|_| output.to_path_buf());
        let h = xxhash_rust::xxh3::xxh3_64(abs.to_string_lossy().as_bytes());
        cache_dir.join("outputs").join(format!("{h:016x}.stamp"))
    }

    fn file_hash(p: &Path) -> Option<u64> {
        std::fs::read(p).ok().map(|b| xxhash_rust::xxh3::xxh3_64(&b))
    }

    pub(super) fn files_unchanged(&self) -> bool {
        self.files.iter().all(|(p, h)| Self::file_hash(p) == Some(*h))
    }

    pub(super) fn read(p: &Path) -> Option<OutputStamp> {
        let text = std::fs::read_to_string(p).ok()?;
        let mut lines = text.lines();
        let digest = u128::from_str_radix(lines.next()?, 16).ok()?;
        let n: Vec<u64> = lines.next()?.split(' ').map(|x| x.parse().ok()).collect::<Option<_>>()?;
        let (&[entries, dr, dc, sr, sc], rest) = n.split_at_checked(5)? else { return None };
        let (layout, dd, sd) = match rest {
            [] => (CacheLayout::Single, 0, 0),
            [1, dd, sd] => (CacheLayout::PerShader, *dd, *sd),
            _ => return None,
        };
        let sizes = CacheSizes {
            entries: entries as usize,
            dxil: cache::BackendSize { raw: dr, compressed: dc },
            spirv: cache::BackendSize { raw: sr, compressed: sc },
            layout,
            dxil_dict: dd,
            spirv_dict: sd,
        };
        let files = lines
            .map(|l| {
                let (h, path) = l.split_once(' ')?;
                Some((PathBuf::from(path), u64::from_str_radix(h, 16).ok()?))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(OutputStamp { digest, sizes, files })
    }

    /// Best effort: without a stamp the next build just writes again.
    pub(super) fn write(p: &Path, digest: u128, s: CacheSizes, files: &[PathBuf]) {
        let mut text = format!("{digest:032x}\n{} {} {} {} {}", s.entries, s.dxil.raw, s.dxil.compressed, s.spirv.raw, s.spirv.compressed);
        if s.layout != CacheLayout::Single {
            text.push_str(&format!(" {} {} {}", s.layout.abi_id(), s.dxil_dict, s.spirv_dict));
        }
        text.push('\n');
        for f in files {
            let Some(h) = Self::file_hash(f) else { return };
            let abs = std::path::absolute(f).unwrap_or_else(|_| f.clone());
            text.push_str(&format!("{h:016x} {}\n", abs.display()));
        }
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = cache::atomic::write(p, text.as_bytes());
    }
}
