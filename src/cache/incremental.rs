//! The incremental on-disk cache: compiled artifacts of one shader, keyed by everything that
//! determines them, reused across runs.
//!
//! The caller derives an [`ArtifactKey`] from the shader key, the shrec version, the DXC identity,
//! the DXC arguments and the options ([`ArtifactKey::derive`]). Each artifact is one file,
//! `dir/<first 2 hex digits>/<32 hex digits>.bin`:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 8 | [`MAGIC`] |
//! | 8 | 4 | format version, u32 LE ([`FORMAT_VERSION`]) |
//! | 12 | 4 | reserved, 0 |
//! | 16 | 8 | payload length, u64 LE |
//! | 24 | 8 | XXH3-64 of the payload, u64 LE |
//! | 32 | … | payload |
//!
//! Payload (all LE): the artifact key (u128, guards against a file under the wrong name), flags
//! u32 (bit 0 DXIL present, bit 1 SPIR-V present), spec-constants mask u32, HLSL length u32,
//! meta word count u32, DXIL length u64, SPIR-V length u64, the meta words, the DXIL bytes, the
//! SPIR-V bytes.
//!
//! A missing, unreadable, truncated, corrupt, wrong-version or otherwise malformed file is a miss,
//! never an error and never a panic: [`Store::lookup`] says why ([`MissReason`]), [`Store::get`]
//! records the non-trivial reasons for [`Store::take_problems`] and counts them in
//! [`Store::stats`]. Writes go through [`super::atomic`] (temp file + fsync + rename), so
//! concurrent [`Store::put`]s from many threads or processes are safe: each reader sees a
//! complete file or none.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use xxhash_rust::xxh3::{xxh3_64, Xxh3};

use super::atomic;

/// First 8 bytes of every artifact file.
pub const MAGIC: [u8; 8] = *b"SHRECART";
/// Version of the artifact file layout; files with another version are misses.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes before the payload.
pub const HEADER_LEN: usize = 32;
/// Fixed part of the payload before the variable-length data.
const PAYLOAD_FIXED_LEN: usize = 16 + 4 * 4 + 8 * 2;

/// Identity of one set of artifacts: XXH3-128 over everything that determines them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArtifactKey(pub u128);

impl ArtifactKey {
    /// XXH3-128 of the parts, each preceded by its length as u64 LE, so `["ab", "c"]` and
    /// `["a", "bc"]` differ.
    pub fn derive(parts: &[&[u8]]) -> ArtifactKey {
        let mut h = Xxh3::new();
        h.update(&(parts.len() as u64).to_le_bytes());
        for p in parts {
            h.update(&(p.len() as u64).to_le_bytes());
            h.update(p);
        }
        ArtifactKey(h.digest128())
    }

    /// 32 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        format!("{:032x}", self.0)
    }
}

impl fmt::Display for ArtifactKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// What one shader's compilation produced.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Artifacts {
    pub dxil: Option<Vec<u8>>,
    /// Raw SPIR-V (before SMOL-V).
    pub spirv: Option<Vec<u8>>,
    pub meta: Vec<u32>,
    pub spec_constants_mask: u32,
    /// Length of the HLSL the artifacts were compiled from (for statistics).
    pub hlsl_len: u32,
}

/// Why [`Store::lookup`] missed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MissReason {
    /// No file for this key (the normal miss).
    Absent,
    /// The file exists but could not be read.
    Unreadable(String),
    /// Shorter than its header says (or than a header).
    Truncated { expected: u64, actual: u64 },
    /// Longer than its header says.
    TrailingBytes { expected: u64, actual: u64 },
    /// Not an artifact file.
    BadMagic,
    /// Written by another layout version.
    WrongVersion { found: u32 },
    /// The payload's XXH3-64 does not match the header.
    ChecksumMismatch,
    /// Checksum fine but the payload does not parse (or belongs to another key).
    Malformed(&'static str),
}

impl MissReason {
    /// Whether this miss means a damaged or foreign entry (anything but [`MissReason::Absent`]).
    pub fn is_problem(&self) -> bool {
        !matches!(self, MissReason::Absent)
    }
}

impl fmt::Display for MissReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MissReason::Absent => write!(f, "absent"),
            MissReason::Unreadable(e) => write!(f, "unreadable ({e})"),
            MissReason::Truncated { expected, actual } => {
                write!(f, "corrupt (truncated: {actual} of {expected} bytes)")
            }
            MissReason::TrailingBytes { expected, actual } => {
                write!(f, "corrupt ({actual} bytes, expected {expected})")
            }
            MissReason::BadMagic => write!(f, "corrupt (bad magic)"),
            MissReason::WrongVersion { found } => {
                write!(f, "from another format version ({found}, expected {FORMAT_VERSION})")
            }
            MissReason::ChecksumMismatch => write!(f, "corrupt (checksum mismatch)"),
            MissReason::Malformed(what) => write!(f, "corrupt ({what})"),
        }
    }
}

/// A miss worth telling the user about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub key: ArtifactKey,
    pub path: PathBuf,
    pub reason: MissReason,
}

impl fmt::Display for Problem {
    /// `cache entry <path> corrupt (checksum mismatch), rebuilding`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cache entry {} {}, rebuilding", self.path.display(), self.reason)
    }
}

/// Result of [`Store::lookup`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    Hit(Artifacts),
    Miss(MissReason),
}

/// Counters since [`Store::open`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreStats {
    pub hits: usize,
    /// All misses, including problems.
    pub misses: usize,
    /// Misses other than [`MissReason::Absent`].
    pub problems: usize,
    pub writes: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: cannot create the cache directory: {source}", path = .path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error("{path}: cannot write cache entry: {source}", path = .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("{path}: artifact too large for the cache format", path = .path.display())]
    TooLarge { path: PathBuf },
}

/// The on-disk artifact store. Shareable across threads (`&Store` is enough for every method).
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    hits: AtomicUsize,
    misses: AtomicUsize,
    problem_count: AtomicUsize,
    writes: AtomicUsize,
    problems: Mutex<Vec<Problem>>,
    /// Test hook: fail writes after this many bytes (u64::MAX = never).
    fail_after: AtomicU64,
}

/// The bytes of a cache entry: regular files only, and at most [`MAX_ENTRY_BYTES`] of them. A
/// FIFO planted at an entry's path would block the build forever and a link to /dev/zero would
/// be read until memory runs out; both are damaged entries, rebuilt.
fn read_entry(path: &Path) -> io::Result<Vec<u8>> {
    use std::io::Read;
    // symlink_metadata: the entry itself, never what a planted link points to.
    let meta = std::fs::symlink_metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(MAX_ENTRY_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_ENTRY_BYTES {
        return Err(io::Error::other(format!("larger than the {MAX_ENTRY_BYTES}-byte limit of an entry")));
    }
    Ok(bytes)
}

/// The largest cache entry read back: far above any shader's DXIL + SPIR-V (each at most a few
/// MB for HLSL under `MAX_HLSL_BYTES`).
const MAX_ENTRY_BYTES: u64 = 256 << 20;

impl Store {
    /// Opens (creating if needed) the store rooted at `dir`. Also drops a `CACHEDIR.TAG` there
    /// (best effort) so backup tools skip it.
    pub fn open(dir: impl AsRef<Path>) -> Result<Store, StoreError> {
        let dir = dir.as_ref().to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| StoreError::Open { path: dir.clone(), source })?;
        let tag = dir.join("CACHEDIR.TAG");
        if !tag.exists() {
            let _ = atomic::write(&tag, b"Signature: 8a477f597d28d172789f06886806bc55\n# This directory is shrec's incremental shader cache.\n");
        }
        Ok(Store {
            dir,
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
            problem_count: AtomicUsize::new(0),
            writes: AtomicUsize::new(0),
            problems: Mutex::new(Vec::new()),
            fail_after: AtomicU64::new(u64::MAX),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the artifacts of `key` live: `dir/ab/abcdef….bin`.
    pub fn path_of(&self, key: &ArtifactKey) -> PathBuf {
        let hex = key.to_hex();
        self.dir.join(&hex[..2]).join(format!("{hex}.bin"))
    }

    /// The artifacts of `key`, or `None` on any miss. Damaged entries are recorded (see
    /// [`Store::take_problems`]) and will be overwritten by the next [`Store::put`].
    pub fn get(&self, key: &ArtifactKey) -> Option<Artifacts> {
        match self.lookup(key) {
            Lookup::Hit(a) => Some(a),
            Lookup::Miss(reason) => {
                if reason.is_problem() {
                    let p = Problem { key: *key, path: self.path_of(key), reason };
                    self.problems.lock().unwrap_or_else(|e| e.into_inner()).push(p);
                }
                None
            }
        }
    }

    /// Like [`Store::get`] but returns the reason of a miss instead of recording it (counters
    /// are still updated).
    pub fn lookup(&self, key: &ArtifactKey) -> Lookup {
        let path = self.path_of(key);
        let result = match read_entry(&path) {
            Ok(bytes) => decode(key, &bytes),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(MissReason::Absent),
            Err(e) => Err(MissReason::Unreadable(e.to_string())),
        };
        match result {
            Ok(a) => {
                self.hits.fetch_add(1, Ordering::Relaxed);
                Lookup::Hit(a)
            }
            Err(reason) => {
                self.misses.fetch_add(1, Ordering::Relaxed);
                if reason.is_problem() {
                    self.problem_count.fetch_add(1, Ordering::Relaxed);
                }
                Lookup::Miss(reason)
            }
        }
    }

    /// Stores the artifacts of `key`, atomically replacing any previous file.
    ///
    /// (A damaged entry that is not a regular file — a FIFO, a link to a device — is replaced
    /// like any other: the rename replaces the directory entry, not what it pointed to.)
    pub fn put(&self, key: &ArtifactKey, artifacts: &Artifacts) -> Result<(), StoreError> {
        let path = self.path_of(key);
        let bytes = encode(key, artifacts).ok_or_else(|| StoreError::TooLarge { path: path.clone() })?;
        let write_err = |source| StoreError::Write { path: path.clone(), source };
        let shard = path.parent().expect("artifact path has a parent");
        std::fs::create_dir_all(shard).map_err(write_err)?;
        let fail_after = self.fail_after.load(Ordering::Relaxed);
        // Checksummed, so no fsync (see `write_unsynced_with`).
        atomic::write_unsynced_with(&path, |w| {
            if (bytes.len() as u64) > fail_after {
                w.write_all(&bytes[..fail_after as usize])?;
                return Err(io::Error::other("injected write failure"));
            }
            w.write_all(&bytes)
        })
        .map_err(write_err)?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    pub fn stats(&self) -> StoreStats {
        StoreStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            problems: self.problem_count.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
        }
    }

    /// Damaged entries met by [`Store::get`] since the last call, for the build to print
    /// (`cache entry … corrupt (checksum mismatch), rebuilding`).
    pub fn take_problems(&self) -> Vec<Problem> {
        std::mem::take(&mut *self.problems.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Test hook: makes every later [`Store::put`] fail after writing `bytes` bytes of its
    /// temporary file (simulates a crash or full disk mid-write). `None` restores normal writes.
    #[doc(hidden)]
    pub fn inject_write_failure(&self, bytes: Option<u64>) {
        self.fail_after.store(bytes.unwrap_or(u64::MAX), Ordering::Relaxed);
    }
}

/// The whole file for `key`, or `None` when a length does not fit the format.
fn encode(key: &ArtifactKey, a: &Artifacts) -> Option<Vec<u8>> {
    let dxil = a.dxil.as_deref().unwrap_or(&[]);
    let spirv = a.spirv.as_deref().unwrap_or(&[]);
    let meta_count = u32::try_from(a.meta.len()).ok()?;
    let payload_len = PAYLOAD_FIXED_LEN + a.meta.len() * 4 + dxil.len() + spirv.len();
    let mut out = Vec::with_capacity(HEADER_LEN + payload_len);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(payload_len as u64).to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes()); // checksum, patched below

    let flags = a.dxil.is_some() as u32 | (a.spirv.is_some() as u32) << 1;
    out.extend_from_slice(&key.0.to_le_bytes());
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&a.spec_constants_mask.to_le_bytes());
    out.extend_from_slice(&a.hlsl_len.to_le_bytes());
    out.extend_from_slice(&meta_count.to_le_bytes());
    out.extend_from_slice(&(dxil.len() as u64).to_le_bytes());
    out.extend_from_slice(&(spirv.len() as u64).to_le_bytes());
    for w in &a.meta {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out.extend_from_slice(dxil);
    out.extend_from_slice(spirv);
    debug_assert_eq!(out.len(), HEADER_LEN + payload_len);
    let sum = xxh3_64(&out[HEADER_LEN..]);
    out[24..32].copy_from_slice(&sum.to_le_bytes());
    Some(out)
}

/// Parses the bytes of an artifact file stored under `key` (what [`Store::lookup`] does after
/// reading the file); public for the fuzz target.
pub fn decode_entry(key: &ArtifactKey, bytes: &[u8]) -> Result<Artifacts, MissReason> {
    decode(key, bytes)
}

fn decode(key: &ArtifactKey, b: &[u8]) -> Result<Artifacts, MissReason> {
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    if b.len() < HEADER_LEN {
        // Too short to tell anything but the magic: report a foreign file as such.
        if b.len() >= 8 && b[..8] != MAGIC {
            return Err(MissReason::BadMagic);
        }
        return Err(MissReason::Truncated { expected: HEADER_LEN as u64, actual: b.len() as u64 });
    }
    if b[..8] != MAGIC {
        return Err(MissReason::BadMagic);
    }
    let version = u32_at(8);
    if version != FORMAT_VERSION {
        return Err(MissReason::WrongVersion { found: version });
    }
    let payload_len = u64_at(16);
    let expected = (HEADER_LEN as u64).saturating_add(payload_len);
    let actual = b.len() as u64;
    if actual < expected {
        return Err(MissReason::Truncated { expected, actual });
    }
    if actual > expected {
        return Err(MissReason::TrailingBytes { expected, actual });
    }
    let p = &b[HEADER_LEN..];
    if xxh3_64(p) != u64_at(24) {
        return Err(MissReason::ChecksumMismatch);
    }
    if p.len() < PAYLOAD_FIXED_LEN {
        return Err(MissReason::Malformed("payload too short"));
    }
    let pu32 = |o: usize| u32::from_le_bytes(p[o..o + 4].try_into().unwrap());
    let pu64 = |o: usize| u64::from_le_bytes(p[o..o + 8].try_into().unwrap());
    if u128::from_le_bytes(p[..16].try_into().unwrap()) != key.0 {
        return Err(MissReason::Malformed("entry belongs to another key"));
    }
    let flags = pu32(16);
    if flags & !3 != 0 {
        return Err(MissReason::Malformed("unknown flags"));
    }
    let spec_constants_mask = pu32(20);
    let hlsl_len = pu32(24);
    let meta_count = pu32(28) as u64;
    let dxil_len = pu64(32);
    let spirv_len = pu64(40);
    let needed = (PAYLOAD_FIXED_LEN as u64).checked_add(meta_count * 4).and_then(|n| n.checked_add(dxil_len)).and_then(|n| n.checked_add(spirv_len));
    if needed != Some(p.len() as u64) {
        return Err(MissReason::Malformed("section lengths do not add up"));
    }
    if (flags & 1 == 0 && dxil_len != 0) || (flags & 2 == 0 && spirv_len != 0) {
        return Err(MissReason::Malformed("data for an absent backend"));
    }
    let mut o = PAYLOAD_FIXED_LEN;
    let meta = (0..meta_count as usize).map(|i| pu32(o + 4 * i)).collect();
    o += meta_count as usize * 4;
    let dxil = &p[o..o + dxil_len as usize];
    o += dxil_len as usize;
    let spirv = &p[o..o + spirv_len as usize];
    Ok(Artifacts {
        dxil: (flags & 1 != 0).then(|| dxil.to_vec()),
        spirv: (flags & 2 != 0).then(|| spirv.to_vec()),
        meta,
        spec_constants_mask,
        hlsl_len,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derive_is_length_prefixed() {
        assert_ne!(ArtifactKey::derive(&[b"ab", b"c"]), ArtifactKey::derive(&[b"a", b"bc"]));
        assert_ne!(ArtifactKey::derive(&[b"abc"]), ArtifactKey::derive(&[b"abc", b""]));
        assert_eq!(ArtifactKey::derive(&[b"x", b"y"]), ArtifactKey::derive(&[b"x", b"y"]));
        assert_eq!(ArtifactKey(0xab).to_hex().len(), 32);
    }

    #[test]
    fn every_truncation_is_a_miss() {
        let key = ArtifactKey(42);
        let a = Artifacts { dxil: Some(vec![1, 2, 3]), spirv: None, meta: vec![7, 8], spec_constants_mask: 5, hlsl_len: 99 };
        let bytes = encode(&key, &a).unwrap();
        assert_eq!(decode(&key, &bytes), Ok(a));
        for n in 0..bytes.len() {
            assert!(decode(&key, &bytes[..n]).is_err(), "prefix of {n} bytes accepted");
        }
        assert_eq!(decode(&ArtifactKey(43), &bytes), Err(MissReason::Malformed("entry belongs to another key")));
    }
}
