//! Runtime side of a shrec shader cache: turns the tables and blobs of a generated module back
//! into DXIL bytes and SPIR-V words.
//!
//! A cache built with `shrec build -o cache.rs` (or `shrec::build::run` from a build script) is
//! a dependency-free module: `ENTRIES` sorted by key, `lookup(key)`, and one compressed blob per
//! backend (`DXIL_COMPRESSED`, `SPIRV_COMPRESSED`). This crate decodes them:
//!
//! - [`Backend::single_frame`]: the default layout (XenosRecomp's), one zstd frame per backend.
//!   The first access decompresses the whole blob once; every shader is then a slice of it.
//! - [`Backend::per_shader`]: `--layout per-shader`, one zstd frame per shader (optionally with
//!   a trained dictionary, `--zstd-dict`). Each access decompresses only that shader's frame.
//! - [`spirv_words`]: SMOL-V (the default `--spirv-encoding smolv`) or raw SPIR-V → words.
//! - [`check_dxil`], [`check_spirv`]: cheap header checks before handing bytes to an API.
//!
//! The SMOL-V codec ([`smolv`]) is byte-compatible with aras-p/smol-v; shrec's encoder is the
//! same module.
//!
//! ```ignore
//! mod cache { include!(concat!(env!("OUT_DIR"), "/shader_cache.rs")); }
//! let dxil = shrec_runtime::Backend::single_frame(cache::DXIL_COMPRESSED, cache::DXIL_DECOMPRESSED_SIZE);
//! let e = cache::lookup(key).expect("known shader");
//! let bytes = dxil.get(shrec_runtime::Slice::single(e.dxil_offset, e.dxil_size))?;
//! ```

// Decoding only: slices, zstd (through its safe API) and SMOL-V; nothing here needs `unsafe`.
#![forbid(unsafe_code)]

pub mod smolv;

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

/// `SPIRV_ENCODING` / `g_shrecSpirvEncoding`: SMOL-V, debug info stripped.
pub const SPIRV_ENCODING_SMOLV: u32 = 0;
/// `SPIRV_ENCODING` / `g_shrecSpirvEncoding`: plain SPIR-V words.
pub const SPIRV_ENCODING_RAW: u32 = 1;

/// `LAYOUT` / `g_shrecCacheLayout`: one zstd frame per backend (XenosRecomp's layout).
pub const LAYOUT_SINGLE: u32 = 0;
/// `LAYOUT` / `g_shrecCacheLayout`: one zstd frame per shader.
pub const LAYOUT_PER_SHADER: u32 = 1;

/// The SPIR-V magic number (first word of every module).
pub const SPIRV_MAGIC: u32 = 0x0723_0203;

/// Why a shader could not be produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// zstd rejected a frame (or the whole blob).
    Zstd(String),
    /// A table row points outside its blob, or a frame decoded to the wrong size.
    Range(String),
    /// The SMOL-V decoder rejected the stored bytes.
    Smolv(smolv::SmolvError),
    /// The bytes are not what their header says.
    Header(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Zstd(s) => write!(f, "zstd: {s}"),
            Error::Range(s) => write!(f, "cache tables: {s}"),
            Error::Smolv(e) => write!(f, "SMOL-V: {e}"),
            Error::Header(s) => write!(f, "{s}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<smolv::SmolvError> for Error {
    fn from(e: smolv::SmolvError) -> Self {
        Error::Smolv(e)
    }
}

/// Where one shader's bytes are, as a generated table row gives them: `offset`/`size` index the
/// *decompressed* concatenation of the backend (both layouts), `frame_offset`/`frame_size` the
/// shader's own zstd frame in the compressed blob (per-shader layout only; 0 otherwise).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slice {
    pub offset: u32,
    pub size: u32,
    pub frame_offset: u32,
    pub frame_size: u32,
}

impl Slice {
    /// A row of a single-frame cache.
    pub fn single(offset: u32, size: u32) -> Slice {
        Slice { offset, size, frame_offset: 0, frame_size: 0 }
    }

    /// A row of a per-shader cache.
    pub fn per_shader(offset: u32, size: u32, frame_offset: u32, frame_size: u32) -> Slice {
        Slice { offset, size, frame_offset, frame_size }
    }
}

enum Mode<'a> {
    Single,
    PerShader { dict: &'a [u8], ddict: OnceLock<zstd::dict::DecoderDictionary<'static>> },
}

/// One backend's compressed blob (DXIL or SPIR-V) and how to get shaders out of it. Cheap to
/// create; thread-safe; decompresses on first use.
pub struct Backend<'a> {
    compressed: &'a [u8],
    decompressed_size: usize,
    mode: Mode<'a>,
    whole: OnceLock<Result<Vec<u8>, Error>>,
}

impl<'a> Backend<'a> {
    /// The single-frame layout: `compressed` is one zstd frame of `decompressed_size` bytes (or
    /// empty when the backend was not built).
    pub fn single_frame(compressed: &'a [u8], decompressed_size: usize) -> Self {
        Backend { compressed, decompressed_size, mode: Mode::Single, whole: OnceLock::new() }
    }

    /// The per-shader layout: `compressed` is the concatenation of one zstd frame per shader,
    /// each compressed with `dict` (empty: no dictionary).
    pub fn per_shader(compressed: &'a [u8], decompressed_size: usize, dict: &'a [u8]) -> Self {
        Backend { compressed, decompressed_size, mode: Mode::PerShader { dict, ddict: OnceLock::new() }, whole: OnceLock::new() }
    }

    /// Bytes of the compressed blob.
    pub fn compressed_len(&self) -> usize {
        self.compressed.len()
    }

    /// Whether the whole blob has been decompressed (always false for per-shader lookups).
    pub fn is_fully_decompressed(&self) -> bool {
        self.whole.get().is_some()
    }

    /// The whole decompressed concatenation (both layouts; decompressed once and kept).
    pub fn decompress_all(&self) -> Result<&[u8], Error> {
        let r = self.whole.get_or_init(|| {
            if self.compressed.is_empty() {
                return if self.decompressed_size == 0 {
                    Ok(Vec::new())
                } else {
                    Err(Error::Range(format!("empty blob for {} decompressed bytes", self.decompressed_size)))
                };
            }
            let out = match &self.mode {
                Mode::Single => zstd::bulk::decompress(self.compressed, self.decompressed_size),
                Mode::PerShader { dict, .. } => {
                    // Concatenated frames decode to the concatenation of their contents.
                    let mut d = zstd::stream::read::Decoder::with_dictionary(self.compressed, dict).map_err(|e| Error::Zstd(e.to_string()))?;
                    let mut v = Vec::with_capacity(self.decompressed_size);
                    std::io::Read::read_to_end(&mut d, &mut v).map(|_| v)
                }
            }
            .map_err(|e| Error::Zstd(e.to_string()))?;
            if out.len() != self.decompressed_size {
                return Err(Error::Range(format!("blob decoded to {} bytes, tables say {}", out.len(), self.decompressed_size)));
            }
            Ok(out)
        });
        r.as_deref().map_err(Clone::clone)
    }

    /// One shader's bytes (empty when `slice.size == 0`, i.e. the shader has no such backend).
    /// Single frame: a borrowed slice of the decompressed blob. Per shader: only this shader's
    /// frame is decompressed (unless [`decompress_all`](Self::decompress_all) ran before).
    pub fn get(&self, slice: Slice) -> Result<Cow<'_, [u8]>, Error> {
        if slice.size == 0 {
            return Ok(Cow::Borrowed(&[]));
        }
        let (off, size) = (slice.offset as usize, slice.size as usize);
        if let Some(Ok(whole)) = self.whole.get() {
            return whole
                .get(off..off + size)
                .map(Cow::Borrowed)
                .ok_or_else(|| Error::Range(format!("{off}+{size} outside the {}-byte blob", whole.len())));
        }
        match &self.mode {
            Mode::Single => {
                let whole = self.decompress_all()?;
                whole
                    .get(off..off + size)
                    .map(Cow::Borrowed)
                    .ok_or_else(|| Error::Range(format!("{off}+{size} outside the {}-byte blob", whole.len())))
            }
            Mode::PerShader { dict, ddict } => {
                let (fo, fs) = (slice.frame_offset as usize, slice.frame_size as usize);
                let frame = self
                    .compressed
                    .get(fo..fo + fs)
                    .ok_or_else(|| Error::Range(format!("frame {fo}+{fs} outside the {}-byte blob", self.compressed.len())))?;
                let mut d = if dict.is_empty() {
                    zstd::bulk::Decompressor::new()
                } else {
                    let dd = ddict.get_or_init(|| zstd::dict::DecoderDictionary::copy(dict));
                    zstd::bulk::Decompressor::with_prepared_dictionary(dd)
                }
                .map_err(|e| Error::Zstd(e.to_string()))?;
                let out = d.decompress(frame, size).map_err(|e| Error::Zstd(e.to_string()))?;
                if out.len() != size {
                    return Err(Error::Range(format!("frame decoded to {} bytes, table says {size}", out.len())));
                }
                Ok(Cow::Owned(out))
            }
        }
    }
}

/// A stored SPIR-V shader as words: SMOL-V is decoded, raw SPIR-V copied. `encoding` is the
/// module's `SPIRV_ENCODING`. The result starts with [`SPIRV_MAGIC`] (checked).
pub fn spirv_words(stored: &[u8], encoding: u32) -> Result<Vec<u32>, Error> {
    let bytes: Cow<[u8]> = match encoding {
        SPIRV_ENCODING_SMOLV => Cow::Owned(smolv::decode(stored)?),
        SPIRV_ENCODING_RAW => Cow::Borrowed(stored),
        other => return Err(Error::Header(format!("unknown SPIR-V encoding {other}"))),
    };
    check_spirv(&bytes)?;
    Ok(bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Checks a SPIR-V module's header: length a multiple of 4, magic, a 1.x version. Returns the
/// version word.
pub fn check_spirv(bytes: &[u8]) -> Result<u32, Error> {
    if bytes.len() < 20 || bytes.len() % 4 != 0 {
        return Err(Error::Header(format!("SPIR-V module of {} bytes", bytes.len())));
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i * 4], bytes[i * 4 + 1], bytes[i * 4 + 2], bytes[i * 4 + 3]]);
    if word(0) != SPIRV_MAGIC {
        return Err(Error::Header(format!("SPIR-V magic 0x{:08X}", word(0))));
    }
    let version = word(1);
    if version >> 16 != 1 || version & 0xFF00_00FF != 0 {
        return Err(Error::Header(format!("SPIR-V version word 0x{version:08X}")));
    }
    Ok(version)
}

/// Checks a DXIL container's header: `DXBC` magic, the container size field equal to the byte
/// count, version 1.0, part offsets inside the container. (The container hash is checked by
/// D3D12 itself when the shader is created.)
pub fn check_dxil(bytes: &[u8]) -> Result<(), Error> {
    if bytes.len() < 32 || &bytes[..4] != b"DXBC" {
        return Err(Error::Header("not a DXBC container".into()));
    }
    let u32_at = |o: usize| bytes.get(o..o + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let size = u32_at(24).unwrap_or(0) as usize;
    if size != bytes.len() {
        return Err(Error::Header(format!("container size field {size}, {} bytes stored", bytes.len())));
    }
    if bytes[20..24] != [1, 0, 0, 0] {
        return Err(Error::Header("container version is not 1.0".into()));
    }
    let parts = u32_at(28).unwrap_or(0) as usize;
    for i in 0..parts {
        match u32_at(32 + 4 * i) {
            Some(o) if (o as usize) + 8 <= size => {}
            _ => return Err(Error::Header(format!("part {i} offset outside the container"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(data: &[u8], dict: &[u8]) -> Vec<u8> {
        let mut c = zstd::bulk::Compressor::with_dictionary(3, dict).unwrap();
        c.compress(data).unwrap()
    }

    #[test]
    fn single_and_per_shader_give_the_same_bytes() {
        let shaders: Vec<Vec<u8>> = (0..5u8).map(|i| (0..100 + i as usize * 37).map(|j| (j as u8) ^ i).collect()).collect();
        let concat: Vec<u8> = shaders.concat();
        let single = zstd::bulk::compress(&concat, 3).unwrap();
        let mut per = Vec::new();
        let mut slices = Vec::new();
        let mut off = 0u32;
        for s in &shaders {
            let f = frame(s, &[]);
            slices.push(Slice::per_shader(off, s.len() as u32, per.len() as u32, f.len() as u32));
            per.extend_from_slice(&f);
            off += s.len() as u32;
        }
        let a = Backend::single_frame(&single, concat.len());
        let b = Backend::per_shader(&per, concat.len(), &[]);
        for (s, sl) in shaders.iter().zip(&slices) {
            assert_eq!(&*b.get(*sl).unwrap(), &s[..]);
            assert_eq!(&*a.get(Slice::single(sl.offset, sl.size)).unwrap(), &s[..]);
        }
        assert!(!b.is_fully_decompressed());
        assert_eq!(b.decompress_all().unwrap(), &concat[..]);
        let bad = Slice { frame_size: 3, ..slices[1] };
        assert!(Backend::per_shader(&per, concat.len(), &[]).get(bad).is_err());
    }

    #[test]
    fn header_checks() {
        let mut spv = vec![];
        for w in [SPIRV_MAGIC, 0x0001_0000, 0, 1, 0] {
            spv.extend_from_slice(&u32::to_le_bytes(w));
        }
        assert_eq!(check_spirv(&spv), Ok(0x0001_0000));
        assert_eq!(spirv_words(&spv, SPIRV_ENCODING_RAW).unwrap()[0], SPIRV_MAGIC);
        spv[0] = 0;
        assert!(check_spirv(&spv).is_err());
        let mut dxbc = b"DXBC".to_vec();
        dxbc.extend_from_slice(&[0; 16]);
        dxbc.extend_from_slice(&[1, 0, 0, 0]);
        dxbc.extend_from_slice(&32u32.to_le_bytes());
        dxbc.extend_from_slice(&0u32.to_le_bytes());
        assert_eq!(check_dxil(&dxbc), Ok(()));
        dxbc.push(0);
        assert!(check_dxil(&dxbc).is_err());
    }
}
