//! The layout both writers emit: rows sorted by key, per-backend concatenations, one zstd frame
//! per backend.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;

use super::{encode_spirv, CacheEntry, CacheWriteError, SpirvEncoding, WriteOptions};

/// Sizes of one backend's blob.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct BackendSize {
    /// Bytes of the decompressed concatenation (SPIR-V: after SMOL-V encoding when enabled).
    pub raw: u64,
    /// Bytes of the zstd frame embedded in the output (0 when the backend is empty).
    pub compressed: u64,
}

/// What a writer reports for the build summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CacheSizes {
    /// Rows in the table (after merging identical duplicate entries).
    pub entries: usize,
    pub dxil: BackendSize,
    pub spirv: BackendSize,
}

impl std::fmt::Display for CacheSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "cache: {} entries", self.entries)?;
        for (name, b) in [("dxil", self.dxil), ("spirv", self.spirv)] {
            let ratio = if b.raw > 0 { b.compressed as f64 / b.raw as f64 * 100.0 } else { 0.0 };
            writeln!(f, "  {name:<5} {:>10} bytes raw, {:>10} bytes zstd ({ratio:.1}%)", b.raw, b.compressed)?;
        }
        Ok(())
    }
}

/// One table row, all offsets final.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Row {
    pub key: u64,
    pub family: u32,
    pub stage: u32,
    pub dxil_offset: u32,
    pub dxil_size: u32,
    pub spirv_offset: u32,
    pub spirv_size: u32,
    pub spec_constants_mask: u32,
    pub meta_offset: u32,
    pub meta_count: u32,
}

pub(crate) struct Blob {
    pub raw_len: u64,
    /// One zstd frame (with content size and checksum), or empty when `raw_len == 0`.
    pub compressed: Vec<u8>,
}

pub(crate) struct Layout {
    pub rows: Vec<Row>,
    pub meta: Vec<u32>,
    pub dxil: Blob,
    pub spirv: Blob,
    pub spirv_encoding: SpirvEncoding,
}

impl Layout {
    pub fn sizes(&self) -> CacheSizes {
        CacheSizes {
            entries: self.rows.len(),
            dxil: BackendSize { raw: self.dxil.raw_len, compressed: self.dxil.compressed.len() as u64 },
            spirv: BackendSize {
                raw: self.spirv.raw_len,
                compressed: self.spirv.compressed.len() as u64,
            },
        }
    }
}

/// Sorts, merges identical duplicates (different duplicates are an error), encodes SPIR-V,
/// concatenates and compresses. `path` is only used to name errors.
pub(crate) fn build(
    path: &Path,
    entries: &[CacheEntry],
    opts: &WriteOptions,
) -> Result<Layout, CacheWriteError> {
    let mut sorted: Vec<&CacheEntry> = entries.iter().collect();
    sorted.sort_by_key(|e| e.key);
    let mut unique: Vec<&CacheEntry> = Vec::with_capacity(sorted.len());
    for e in sorted {
        if let Some(last) = unique.last() {
            if last.key == e.key {
                if *last == e {
                    continue;
                }
                return Err(CacheWriteError::DuplicateKey { path: path.to_path_buf(), key: e.key });
            }
        }
        unique.push(e);
    }

    let encoding = opts.spirv_encoding;
    let spirv: Vec<Option<Cow<[u8]>>> = unique
        .par_iter()
        .map(|e| -> Result<Option<Cow<[u8]>>, CacheWriteError> {
            match (&e.spirv, encoding) {
                (None, _) => Ok(None),
                (Some(s), SpirvEncoding::Raw) => Ok(Some(Cow::Borrowed(s.as_slice()))),
                (Some(s), enc) => encode_spirv(s, enc).map(|v| Some(Cow::Owned(v))).map_err(|reason| {
                    CacheWriteError::SpirvEncoding { path: path.to_path_buf(), key: e.key, reason }
                }),
            }
        })
        .collect::<Result<_, _>>()?;

    let dxil_total: u64 = unique.iter().filter_map(|e| e.dxil.as_ref()).map(|d| d.len() as u64).sum();
    let spirv_total: u64 = spirv.iter().flatten().map(|s| s.len() as u64).sum();
    for (backend, size) in [("DXIL", dxil_total), ("SPIR-V", spirv_total)] {
        if size > u32::MAX as u64 {
            return Err(CacheWriteError::TooLarge { path: path.to_path_buf(), backend, size });
        }
    }

    let mut dxil_raw = Vec::with_capacity(dxil_total as usize);
    let mut spirv_raw = Vec::with_capacity(spirv_total as usize);
    let mut meta = Vec::new();
    let mut rows = Vec::with_capacity(unique.len());
    for (e, s) in unique.iter().zip(&spirv) {
        let (dxil_offset, dxil_size) = match &e.dxil {
            Some(d) => {
                let off = dxil_raw.len() as u32;
                dxil_raw.extend_from_slice(d);
                (off, d.len() as u32)
            }
            None => (0, 0),
        };
        let (spirv_offset, spirv_size) = match s {
            Some(s) => {
                let off = spirv_raw.len() as u32;
                spirv_raw.extend_from_slice(s);
                (off, s.len() as u32)
            }
            None => (0, 0),
        };
        let meta_offset = meta.len() as u32;
        meta.extend_from_slice(&e.meta);
        rows.push(Row {
            key: e.key,
            family: e.family.abi_id(),
            stage: e.stage.abi_id(),
            dxil_offset,
            dxil_size,
            spirv_offset,
            spirv_size,
            spec_constants_mask: e.spec_constants_mask,
            meta_offset,
            meta_count: e.meta.len() as u32,
        });
    }
    drop(spirv);

    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    } else {
        opts.threads
    };
    let (dxil_c, spirv_c) = rayon::join(
        || compress(&dxil_raw, opts.zstd_level, threads),
        || compress(&spirv_raw, opts.zstd_level, threads),
    );
    let dxil_c = dxil_c.map_err(|source| CacheWriteError::Compress {
        path: path.to_path_buf(),
        backend: "DXIL",
        source,
    })?;
    let spirv_c = spirv_c.map_err(|source| CacheWriteError::Compress {
        path: path.to_path_buf(),
        backend: "SPIR-V",
        source,
    })?;

    Ok(Layout {
        rows,
        meta,
        dxil: Blob { raw_len: dxil_total, compressed: dxil_c },
        spirv: Blob { raw_len: spirv_total, compressed: spirv_c },
        spirv_encoding: encoding,
    })
}

/// Compresses `data` as one zstd frame carrying its content size and a checksum. Empty input
/// gives empty output (the backend is absent). `threads` zstd workers are used; zstd only
/// splits the input into parallel jobs once it exceeds the job size (several
/// window sizes: at level 22, hundreds of MiB), so small caches compress on one thread either
/// way.
pub(crate) fn compress(data: &[u8], level: i32, threads: usize) -> std::io::Result<Vec<u8>> {
    if data.is_empty() {
        return Ok(Vec::new());
    }
    use zstd::zstd_safe::CParameter;
    // One-shot compression of the whole input (ZSTD_compress2): the frame is split into jobs by
    // size alone. (The streaming encoder fed by write_all cut jobs where the worker queue happened
    // to be full, so multithreaded output varied from run to run under load.)
    let mut c = zstd::bulk::Compressor::new(level)?;
    c.set_parameter(CParameter::ChecksumFlag(true))?;
    c.set_parameter(CParameter::ContentSizeFlag(true))?;
    // Always zstd's multithreaded mode (even with one worker): its output depends on the
    // parameters but not on the number of workers, so the cache is byte-identical on machines
    // with different core counts (single-threaded mode would produce a different frame).
    // Fails only when libzstd was built without threads: then compress on the caller's thread.
    let _ = c.set_parameter(CParameter::NbWorkers(threads.clamp(1, 256) as u32));
    c.compress(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(n: usize) -> Vec<u8> {
        let mut x = 0x9E3779B97F4A7C15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b"abcdefgh"[(x % 8) as usize] ^ ((x >> 40) as u8 & 1)
            })
            .collect()
    }

    #[test]
    fn compression_does_not_depend_on_thread_count() {
        for (level, n) in [(1, 24 << 20), (22, 256 << 10)] {
            let d = data(n);
            let outs: Vec<Vec<u8>> = [1, 2, 4, 8].iter().map(|&t| compress(&d, level, t).unwrap()).collect();
            for (i, o) in outs.iter().enumerate() {
                assert!(zstd::decode_all(&o[..]).unwrap() == d, "level {level}: round trip #{i}");
                assert!(o == &outs[0], "level {level}: output with thread setting #{i} differs");
            }
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&outs[0]).ok(), Some(Some(n as u64)));
        }
    }
}
