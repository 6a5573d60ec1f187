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
    /// `ENTRY_*` bits ([`super::entry_flags`]).
    pub flags: u32,
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
            spirv: BackendSize { raw: self.spirv.raw_len, compressed: self.spirv.compressed.len() as u64 },
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
    let unique = merge_sorted(path, entries)?;
    let encoding = opts.spirv_encoding;
    let spirv: Vec<Option<Cow<[u8]>>> = unique
        .par_iter()
        .map(|e| -> Result<Option<Cow<[u8]>>, CacheWriteError> {
            match (&e.spirv, encoding) {
                (None, _) => Ok(None),
                (Some(s), SpirvEncoding::Raw) => Ok(Some(Cow::Borrowed(s.as_slice()))),
                (Some(s), enc) => encode_spirv(s, enc).map(|v| Some(Cow::Owned(v))).map_err(|reason| CacheWriteError::SpirvEncoding {
                    path: path.to_path_buf(),
                    key: e.key,
                    reason,
                }),
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(Encoded { unique, spirv })
}

/// Entries sorted by key, identical duplicates merged (different duplicates are an error).
fn merge_sorted<'a>(path: &Path, entries: &'a [CacheEntry]) -> Result<Vec<&'a CacheEntry>, CacheWriteError> {
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
    Ok(unique)
}

/// Sorts, merges identical duplicates (different duplicates are an error), encodes SPIR-V,
/// concatenates and compresses (`path` only names errors). The single layout's frames come from
/// `packed` when a [`SinglePacker`] made them during the build from exactly these entries
/// (checked; otherwise they are compressed here, with the same code, so the bytes are the same
/// either way).
pub(crate) fn build_prepacked(path: &Path, entries: &[CacheEntry], opts: &WriteOptions, packed: Option<Packed>) -> Result<Layout, CacheWriteError> {
    let packed = packed.filter(|p| opts.layout == CacheLayout::Single && p.encoding == opts.spirv_encoding && p.level == opts.zstd_level);
    if let Some(p) = packed {
        let unique = merge_sorted(path, entries)?;
        if p.fingerprint == fingerprint_of(unique.iter().copied()) {
            for (backend, size) in [("DXIL", p.dxil.raw_len), ("SPIR-V", p.spirv.raw_len)] {
                if size > u32::MAX as u64 {
                    return Err(CacheWriteError::TooLarge { path: path.to_path_buf(), backend, size });
                }
            }
            return Ok(from_packed(unique, p));
        }
        debug_assert!(false, "prepacked frames were made from other entries");
    }
    let Encoded { unique, spirv } = encode(path, entries, opts)?;
    let encoding = opts.spirv_encoding;

    let dxil_total: u64 = unique.iter().filter_map(|e| e.dxil.as_ref()).map(|d| d.len() as u64).sum();
    let spirv_total: u64 = spirv.iter().flatten().map(|s| s.len() as u64).sum();
    for (backend, size) in [("DXIL", dxil_total), ("SPIR-V", spirv_total)] {
        if size > u32::MAX as u64 {
            return Err(CacheWriteError::TooLarge { path: path.to_path_buf(), backend, size });
        }
    }

    let spirv_sizes: Vec<Option<u32>> = spirv.iter().map(|s| s.as_ref().map(|s| s.len() as u32)).collect();
    let (mut rows, meta) = rows_and_meta(&unique, &spirv_sizes);

    let compress_err = |backend: &'static str| move |source| CacheWriteError::Compress { path: path.to_path_buf(), backend, source };
    let (dxil, spirv_blob) = match opts.layout {
        CacheLayout::Single => {
            let dxil_blobs: Vec<&[u8]> = unique.iter().filter_map(|e| e.dxil.as_deref()).collect();
            let spirv_blobs: Vec<&[u8]> = spirv.iter().flatten().map(|s| &**s).collect();
            let (dxil_c, spirv_c) = rayon::join(|| frame_of(&dxil_blobs, opts.zstd_level), || frame_of(&spirv_blobs, opts.zstd_level));
            (dxil_c.map_err(compress_err("DXIL"))?, spirv_c.map_err(compress_err("SPIR-V"))?)
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
    let single = |blobs: &[&[u8]]| frame_of(blobs, opts.zstd_level).map(|b| b.compressed.len() as u64);
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

/// Table rows and the metadata array, offsets assigned in order.
fn rows_and_meta(unique: &[&CacheEntry], spirv_sizes: &[Option<u32>]) -> (Vec<Row>, Vec<u32>) {
    let (mut dxil_next, mut spirv_next) = (0u32, 0u32);
    let mut meta = Vec::new();
    let mut rows = Vec::with_capacity(unique.len());
    for (e, s) in unique.iter().zip(spirv_sizes) {
        let (dxil_offset, dxil_size) = match &e.dxil {
            Some(d) => {
                dxil_next += d.len() as u32;
                (dxil_next - d.len() as u32, d.len() as u32)
            }
            None => (0, 0),
        };
        let (spirv_offset, spirv_size) = match *s {
            Some(n) => {
                spirv_next += n;
                (spirv_next - n, n)
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
            flags: super::entry_flags(e),
            dxil_frame: (0, 0),
            spirv_frame: (0, 0),
        });
    }
    (rows, meta)
}

fn from_packed(unique: Vec<&CacheEntry>, p: Packed) -> Layout {
    let (rows, meta) = rows_and_meta(&unique, &p.spirv_sizes);
    Layout { rows, meta, dxil: p.dxil, spirv: p.spirv, spirv_encoding: p.encoding, layout: CacheLayout::Single }
}

/// Running fingerprint of the entries a frame pair was made from: keys and content hashes.
#[derive(Default)]
struct Fingerprint(xxhash_rust::xxh3::Xxh3);

impl Fingerprint {
    fn add(&mut self, e: &CacheEntry) {
        let h = |b: &Option<Vec<u8>>| b.as_deref().map_or(u64::MAX, xxhash_rust::xxh3::xxh3_64);
        for word in [e.key, h(&e.dxil), h(&e.spirv)] {
            self.0.update(&word.to_le_bytes());
        }
    }
}

fn fingerprint_of<'a>(entries: impl Iterator<Item = &'a CacheEntry>) -> u64 {
    let mut f = Fingerprint::default();
    entries.for_each(|e| f.add(e));
    f.0.digest()
}

/// One backend's single-layout frame, fed blob by blob in key order.
///
/// zstd's single-threaded streaming encoder collects its input into whole blocks before it
/// compresses anything, so the frame depends on the bytes alone and not on how they were fed
/// (`frame_does_not_depend_on_how_it_is_fed` checks it): a build can compress each shader as soon
/// as DXC has produced it and every shader before it, and gets the file it would get by
/// compressing at the end. (The multithreaded encoder cuts jobs where its queue happens to be
/// full, so it is not used.) The content size, unknown when the frame starts, is written into
/// its header at the end.
///
/// Levels 20 to 22 are not streamed: zstd sizes their tables for a 128 MiB window when the input
/// size is unknown, about 1.4 GB of memory whatever the cache holds (a 100 KB
/// cache took 1.46 GB at level 22). Their data is kept and compressed in one call at the end,
/// with its size known, so zstd scales the tables to it.
pub(crate) struct FrameWriter {
    level: i32,
    encoder: Option<zstd::stream::write::Encoder<'static, Vec<u8>>>,
    /// Levels from [`ULTRA_LEVEL`]: the data, compressed by `finish`.
    held: Option<Vec<u8>>,
    raw_len: u64,
}

/// zstd's "ultra" levels (20-22), whose default tables need about a gigabyte.
const ULTRA_LEVEL: i32 = 20;

impl FrameWriter {
    pub fn new(level: i32) -> Self {
        FrameWriter { level, encoder: None, held: (level >= ULTRA_LEVEL).then(Vec::new), raw_len: 0 }
    }

    pub fn push(&mut self, data: &[u8]) -> std::io::Result<()> {
        use std::io::Write;
        if data.is_empty() {
            return Ok(());
        }
        if let Some(held) = &mut self.held {
            held.extend_from_slice(data);
            self.raw_len += data.len() as u64;
            return Ok(());
        }
        let encoder = match &mut self.encoder {
            Some(e) => e,
            None => {
                let mut e = zstd::stream::write::Encoder::new(Vec::new(), self.level)?;
                e.include_checksum(true)?;
                // The stream's size is unknown when it starts, so zstd picks the level's window
                // for large inputs: 8 MiB or less below level 20. A cache stream is thousands of
                // similar shaders; a window over all of it finds the repeats of early shaders
                // (level 12: 4.4% less DXIL for the same CPU on the benchmark). Runtimes decode the
                // blob in one shot (ZSTD_decompress accepts windows up to 2^27 by default).
                if self.level < 20 {
                    e.set_parameter(zstd::stream::raw::CParameter::WindowLog(WINDOW_LOG))?;
                }
                self.encoder.insert(e)
            }
        };
        encoder.write_all(data)?;
        self.raw_len += data.len() as u64;
        Ok(())
    }

    /// The finished frame (empty when nothing was pushed: the backend is absent).
    pub fn finish(self) -> std::io::Result<Blob> {
        if let Some(held) = self.held {
            let compressed = if held.is_empty() {
                Vec::new()
            } else {
                let mut c = zstd::bulk::Compressor::new(self.level)?;
                c.set_parameter(zstd::stream::raw::CParameter::ChecksumFlag(true))?;
                c.set_parameter(zstd::stream::raw::CParameter::ContentSizeFlag(true))?;
                c.compress(&held)?
            };
            return Ok(Blob { raw_len: self.raw_len, compressed, dict: Vec::new() });
        }
        let compressed = match self.encoder {
            Some(e) => {
                let mut frame = e.finish()?;
                set_content_size(&mut frame, self.raw_len);
                frame
            }
            None => Vec::new(),
        };
        Ok(Blob { raw_len: self.raw_len, compressed, dict: Vec::new() })
    }
}

/// log2 of the streamed frames' window below level 20 (16 MiB; levels 20–22 have 32–128 MiB).
const WINDOW_LOG: u32 = 24;

/// One frame of `blobs`, concatenated.
fn frame_of(blobs: &[&[u8]], level: i32) -> std::io::Result<Blob> {
    let mut w = FrameWriter::new(level);
    for b in blobs {
        w.push(b)?;
    }
    w.finish()
}

/// Both backends' frames for the single layout, fed entry by entry in key order while the build
/// is still compiling (see `FrameWriter`); `build_prepacked` uses the result when it was
/// made from exactly the final entries.
pub struct SinglePacker {
    encoding: SpirvEncoding,
    level: i32,
    dxil: FrameWriter,
    spirv: FrameWriter,
    spirv_sizes: Vec<Option<u32>>,
    fingerprint: Fingerprint,
    last_key: Option<u64>,
    broken: bool,
}

/// What a [`SinglePacker`] made.
pub struct Packed {
    encoding: SpirvEncoding,
    level: i32,
    dxil: Blob,
    spirv: Blob,
    spirv_sizes: Vec<Option<u32>>,
    fingerprint: u64,
}

impl Packed {
    /// Whether these frames were made from exactly `entries` (sorted by key, no duplicates).
    pub fn made_from(&self, entries: &[CacheEntry]) -> bool {
        self.fingerprint == fingerprint_of(entries.iter())
    }
}

impl SinglePacker {
    pub fn new(opts: &WriteOptions) -> Self {
        SinglePacker {
            encoding: opts.spirv_encoding,
            level: opts.zstd_level,
            dxil: FrameWriter::new(opts.zstd_level),
            spirv: FrameWriter::new(opts.zstd_level),
            spirv_sizes: Vec::new(),
            fingerprint: Fingerprint::default(),
            last_key: None,
            broken: false,
        }
    }

    /// The next entry; keys must increase. A failure (an entry out of order, a SPIR-V module
    /// SMOL-V cannot encode, a zstd error) abandons packing: the writer then compresses from
    /// scratch and reports the error itself.
    pub fn push(&mut self, e: &CacheEntry) {
        if self.broken {
            return;
        }
        let ok = self.last_key.is_none_or(|k| k < e.key) && self.try_push(e).is_ok();
        self.last_key = Some(e.key);
        self.broken = !ok;
    }

    fn try_push(&mut self, e: &CacheEntry) -> Result<(), String> {
        if let Some(d) = &e.dxil {
            self.dxil.push(d).map_err(|e| e.to_string())?;
        }
        let spirv_size = match &e.spirv {
            Some(s) => {
                let encoded = encode_spirv(s, self.encoding)?;
                self.spirv.push(&encoded).map_err(|e| e.to_string())?;
                Some(u32::try_from(encoded.len()).map_err(|e| e.to_string())?)
            }
            None => None,
        };
        self.spirv_sizes.push(spirv_size);
        self.fingerprint.add(e);
        Ok(())
    }

    pub fn finish(self) -> Option<Packed> {
        if self.broken {
            return None;
        }
        Some(Packed {
            encoding: self.encoding,
            level: self.level,
            dxil: self.dxil.finish().ok()?,
            spirv: self.spirv.finish().ok()?,
            spirv_sizes: self.spirv_sizes,
            fingerprint: self.fingerprint.0.digest(),
        })
    }
}

/// Adds the Frame_Content_Size field to the header of a frame written without one (streaming
/// with an unknown size: no single-segment flag, a window descriptor, no dictionary). The blocks
/// and the checksum do not depend on it. Consumers that size their buffer with
/// `ZSTD_getFrameContentSize` then work as with a one-shot frame.
fn set_content_size(frame: &mut Vec<u8>, size: u64) {
    const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
    assert_eq!(frame[..4], MAGIC, "a zstd frame");
    let descriptor = frame[4];
    assert_eq!(descriptor & 0b1110_0011, 0, "streamed frame header: no content size, single segment or dictionary yet");
    // Field size flag 2 = 4 bytes, 3 = 8 bytes (little-endian), after the window descriptor.
    let (flag, field) = match u32::try_from(size) {
        Ok(s) => (2u8, s.to_le_bytes().to_vec()),
        Err(_) => (3u8, size.to_le_bytes().to_vec()),
    };
    frame[4] = descriptor | (flag << 6);
    frame.splice(6..6, field);
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
    fn frame_does_not_depend_on_how_it_is_fed() {
        for (level, n) in [(1, 3 << 20), (19, 700 << 10), (22, 300 << 10)] {
            let d = data(n);
            let whole = frame_of(&[&d], level).unwrap();
            assert_eq!(zstd::decode_all(&whole.compressed[..]).unwrap(), d, "level {level}: round trip");
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&whole.compressed).ok(), Some(Some(n as u64)));
            for piece in [1usize, 7, 4096, 100_003] {
                let pieces: Vec<&[u8]> = d.chunks(piece).collect();
                let fed = frame_of(&pieces, level).unwrap();
                assert!(fed.compressed == whole.compressed, "level {level}: fed in pieces of {piece}, the frame differs");
            }
        }
        assert!(frame_of(&[], 19).unwrap().compressed.is_empty());
    }

    #[test]
    fn content_size_is_patched_for_large_sizes_too() {
        let mut w = FrameWriter::new(3);
        w.push(b"hello").unwrap();
        let mut frame = w.encoder.take().unwrap().finish().unwrap();
        set_content_size(&mut frame, 5);
        assert_eq!(zstd::decode_all(&frame[..]).unwrap(), b"hello");
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(5)));
        let mut w = FrameWriter::new(3);
        w.push(b"x").unwrap();
        let mut frame = w.encoder.take().unwrap().finish().unwrap();
        set_content_size(&mut frame, 1 << 33);
        assert_eq!(zstd::zstd_safe::get_frame_content_size(&frame).ok(), Some(Some(1 << 33)));
    }
}
