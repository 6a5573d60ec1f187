//! The layout both writers emit: rows sorted by key, per-backend concatenations, one zstd frame
//! per backend.

use std::borrow::Cow;
use std::path::Path;

use rayon::prelude::*;

use super::{encode_spirv, CacheEntry, CacheLayout, CacheWriteError, SpirvEncoding, WriteOptions};

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
    /// `compressed` is the sum of the frames in the per-shader layout (dictionary not included).
    pub dxil: BackendSize,
    pub spirv: BackendSize,
    pub layout: CacheLayout,
    /// Bytes of the embedded zstd dictionaries (0 without `--zstd-dict`).
    pub dxil_dict: u64,
    pub spirv_dict: u64,
}

impl std::fmt::Display for CacheSizes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cache: {} entries", self.entries)?;
        if self.layout != CacheLayout::Single {
            write!(f, ", layout {}", self.layout.name())?;
        }
        writeln!(f)?;
        for (name, b, dict) in [("dxil", self.dxil, self.dxil_dict), ("spirv", self.spirv, self.spirv_dict)] {
            let ratio = if b.raw > 0 { b.compressed as f64 / b.raw as f64 * 100.0 } else { 0.0 };
            write!(f, "  {name:<5} {:>10} bytes raw, {:>10} bytes zstd ({ratio:.1}%)", b.raw, b.compressed)?;
            if dict > 0 {
                write!(f, " + {dict} bytes dictionary")?;
            }
            writeln!(f)?;
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
    /// Per-shader layout: (offset, size) of this shader's frame in the compressed blob.
    pub dxil_frame: (u32, u32),
    pub spirv_frame: (u32, u32),
}

pub(crate) struct Blob {
    pub raw_len: u64,
    /// One zstd frame (with content size and checksum), or, per-shader, the concatenated frames
    /// (content size, no checksum); empty when `raw_len == 0`.
    pub compressed: Vec<u8>,
    /// The dictionary every frame was compressed with (per-shader layout with `zstd_dict`).
    pub dict: Vec<u8>,
}

pub(crate) struct Layout {
    pub rows: Vec<Row>,
    pub meta: Vec<u32>,
    pub dxil: Blob,
    pub spirv: Blob,
    pub spirv_encoding: SpirvEncoding,
    pub layout: CacheLayout,
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
            layout: self.layout,
            dxil_dict: self.dxil.dict.len() as u64,
            spirv_dict: self.spirv.dict.len() as u64,
        }
    }
}

/// Entries sorted and merged, SPIR-V encoded: what every layout is computed from.
struct Encoded<'a> {
    unique: Vec<&'a CacheEntry>,
    spirv: Vec<Option<Cow<'a, [u8]>>>,
}

impl Encoded<'_> {
    fn dxil_blobs(&self) -> Vec<&[u8]> {
        self.unique.iter().filter_map(|e| e.dxil.as_deref()).collect()
    }

    fn spirv_blobs(&self) -> Vec<&[u8]> {
        self.spirv.iter().flatten().map(|s| &**s).collect()
    }
}

/// Sorts, merges identical duplicates (different duplicates are an error), encodes SPIR-V.
fn encode<'a>(path: &Path, entries: &'a [CacheEntry], opts: &WriteOptions) -> Result<Encoded<'a>, CacheWriteError> {
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
    Ok(Encoded { unique, spirv })
}

/// Sorts, merges identical duplicates (different duplicates are an error), encodes SPIR-V,
/// concatenates and compresses. `path` is only used to name errors.
pub(crate) fn build(
    path: &Path,
    entries: &[CacheEntry],
    opts: &WriteOptions,
) -> Result<Layout, CacheWriteError> {
    let Encoded { unique, spirv } = encode(path, entries, opts)?;
    let encoding = opts.spirv_encoding;

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
            dxil_frame: (0, 0),
            spirv_frame: (0, 0),
        });
    }

    let compress_err = |backend: &'static str| {
        move |source| CacheWriteError::Compress { path: path.to_path_buf(), backend, source }
    };
    let (dxil, spirv_blob) = match opts.layout {
        CacheLayout::Single => {
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
            (
                Blob { raw_len: dxil_total, compressed: dxil_c.map_err(compress_err("DXIL"))?, dict: Vec::new() },
                Blob { raw_len: spirv_total, compressed: spirv_c.map_err(compress_err("SPIR-V"))?, dict: Vec::new() },
            )
        }
        CacheLayout::PerShader => {
            let dxil_blobs: Vec<Option<&[u8]>> = unique.iter().map(|e| e.dxil.as_deref()).collect();
            let spirv_blobs: Vec<Option<&[u8]>> = spirv.iter().map(|s| s.as_deref()).collect();
            let (d, s) = rayon::join(
                || per_shader_frames(&dxil_blobs, opts.zstd_level, opts.zstd_dict),
                || per_shader_frames(&spirv_blobs, opts.zstd_level, opts.zstd_dict),
            );
            let d = d.map_err(compress_err("DXIL"))?;
            let s = s.map_err(compress_err("SPIR-V"))?;
            for (row, (df, sf)) in rows.iter_mut().zip(d.frames.iter().zip(&s.frames)) {
                row.dxil_frame = *df;
                row.spirv_frame = *sf;
            }
            for (backend, f) in [("DXIL", &d), ("SPIR-V", &s)] {
                if f.compressed.len() as u64 > u32::MAX as u64 {
                    return Err(CacheWriteError::TooLarge { path: path.to_path_buf(), backend, size: f.compressed.len() as u64 });
                }
            }
            (
                Blob { raw_len: dxil_total, compressed: d.compressed, dict: d.dict },
                Blob { raw_len: spirv_total, compressed: s.compressed, dict: s.dict },
            )
        }
    };

    Ok(Layout { rows, meta, dxil, spirv: spirv_blob, spirv_encoding: encoding, layout: opts.layout })
}

/// One backend in the per-shader layout.
pub(crate) struct Frames {
    /// Concatenated frames.
    pub compressed: Vec<u8>,
    /// (offset, size) of each input's frame; (0, 0) for `None`.
    pub frames: Vec<(u32, u32)>,
    pub dict: Vec<u8>,
}

/// Trains a dictionary of at most `max_size` bytes from `samples`. None when zstd cannot train
/// one (too few or too small samples): the frames are then compressed without.
fn train_dict(samples: &[&[u8]], max_size: usize) -> Option<Vec<u8>> {
    if samples.len() < 8 || max_size == 0 {
        return None;
    }
    zstd::dict::from_samples(samples, max_size).ok().filter(|d| !d.is_empty())
}

/// Compresses each blob as its own frame (content size, no checksum), with a trained dictionary
/// when `dict_size` is given. Deterministic: single-threaded zstd per frame.
pub(crate) fn per_shader_frames(blobs: &[Option<&[u8]>], level: i32, dict_size: Option<usize>) -> std::io::Result<Frames> {
    let samples: Vec<&[u8]> = blobs.iter().flatten().copied().collect();
    let dict = dict_size.and_then(|n| train_dict(&samples, n)).unwrap_or_default();
    let prepared = (!dict.is_empty()).then(|| zstd::dict::EncoderDictionary::copy(&dict, level));
    let compressed: Vec<Option<Vec<u8>>> = blobs
        .par_iter()
        .map(|b| -> std::io::Result<Option<Vec<u8>>> {
            let Some(b) = b else { return Ok(None) };
            let mut c = match &prepared {
                Some(p) => zstd::bulk::Compressor::with_prepared_dictionary(p)?,
                None => zstd::bulk::Compressor::new(level)?,
            };
            c.include_contentsize(true)?;
            c.include_checksum(false)?;
            c.compress(b).map(Some)
        })
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(compressed.iter().flatten().map(Vec::len).sum());
    let mut frames = Vec::with_capacity(blobs.len());
    for c in compressed {
        match c {
            Some(c) => {
                frames.push((out.len() as u32, c.len() as u32));
                out.extend_from_slice(&c);
            }
            None => frames.push((0, 0)),
        }
    }
    Ok(Frames { compressed: out, frames, dict })
}

/// Compressed sizes of one layout, per backend (dictionaries counted separately).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LayoutCost {
    pub dxil: u64,
    pub spirv: u64,
    pub dxil_dict: u64,
    pub spirv_dict: u64,
}

impl LayoutCost {
    /// Everything embedded: frames plus dictionaries.
    pub fn total(&self) -> u64 {
        self.dxil + self.spirv + self.dxil_dict + self.spirv_dict
    }
}

/// The same cache in each layout (`shrec build --summary`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct LayoutComparison {
    pub entries: usize,
    pub dxil_raw: u64,
    pub spirv_raw: u64,
    pub single: LayoutCost,
    pub per_shader: LayoutCost,
    pub per_shader_dict: LayoutCost,
    /// Dictionary size limit used for `per_shader_dict`.
    pub dict_size: usize,
}

impl std::fmt::Display for LayoutComparison {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "layouts ({} shaders; DXIL {} bytes, SPIR-V {} bytes before zstd):", self.entries, self.dxil_raw, self.spirv_raw)?;
        writeln!(f, "  {:<28} {:>10} {:>10} {:>10} {:>10}", "layout", "dxil", "spirv", "dicts", "total")?;
        let dict_label = format!("per-shader + {} KiB dict", self.dict_size / 1024);
        for (name, c) in [("single frame", self.single), ("per-shader", self.per_shader), (dict_label.as_str(), self.per_shader_dict)] {
            writeln!(f, "  {name:<28} {:>10} {:>10} {:>10} {:>10}", c.dxil, c.spirv, c.dxil_dict + c.spirv_dict, c.total())?;
        }
        Ok(())
    }
}

/// Compresses the same encoded blobs in every layout, for the summary. `opts.layout` is
/// ignored; `opts.zstd_dict` (or [`DEFAULT_DICT_SIZE`](super::DEFAULT_DICT_SIZE)) sizes the dictionary.
pub fn compare_layouts(path: &Path, entries: &[CacheEntry], opts: &WriteOptions) -> Result<LayoutComparison, CacheWriteError> {
    let enc = encode(path, entries, opts)?;
    let dxil = enc.dxil_blobs();
    let spirv = enc.spirv_blobs();
    let err = |source| CacheWriteError::Compress { path: path.to_path_buf(), backend: "DXIL+SPIR-V", source };
    let threads = if opts.threads == 0 { std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) } else { opts.threads };
    let single = |blobs: &[&[u8]]| compress(&blobs.concat(), opts.zstd_level, threads).map(|c| c.len() as u64);
    let dict_size = opts.zstd_dict.unwrap_or(super::DEFAULT_DICT_SIZE);
    let per = |blobs: &[&[u8]], dict: Option<usize>| {
        let opt: Vec<Option<&[u8]>> = blobs.iter().map(|b| Some(*b)).collect();
        per_shader_frames(&opt, opts.zstd_level, dict).map(|f| (f.compressed.len() as u64, f.dict.len() as u64))
    };
    let ((sd, ss), ((pd, ps), (qd, qs))) = rayon::join(
        || (single(&dxil), single(&spirv)),
        || rayon::join(|| (per(&dxil, None), per(&spirv, None)), || (per(&dxil, Some(dict_size)), per(&spirv, Some(dict_size)))),
    );
    let (pd, ps, qd, qs) = (pd.map_err(err)?, ps.map_err(err)?, qd.map_err(err)?, qs.map_err(err)?);
    Ok(LayoutComparison {
        entries: enc.unique.len(),
        dxil_raw: dxil.iter().map(|b| b.len() as u64).sum(),
        spirv_raw: spirv.iter().map(|b| b.len() as u64).sum(),
        single: LayoutCost { dxil: sd.map_err(err)?, spirv: ss.map_err(err)?, ..Default::default() },
        per_shader: LayoutCost { dxil: pd.0, spirv: ps.0, ..Default::default() },
        per_shader_dict: LayoutCost { dxil: qd.0, spirv: qs.0, dxil_dict: qd.1, spirv_dict: qs.1 },
        dict_size,
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
