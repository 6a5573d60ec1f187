//! The container layer between the directory walk and shader detection.
//!
//! Games ship shaders inside archives and compressed files. A buffer whose first bytes name a
//! format below is *opened*: each member is scanned like a file, recursively, and the buffer
//! itself is not searched for shaders (its bytes are compressed or duplicate its members). A
//! buffer that is no container, or whose container cannot be opened at all, is searched as raw
//! bytes, as before.
//!
//! A member's place is its *member chain*: one name per archive level (`Common/shader.szs` →
//! `shaders/mat.sharcfb`, displayed `Common/shader.szs!shaders/mat.sharcfb`). Compressed
//! streams (Yaz0, gzip, zstd) are transparent when what they hold is itself an archive (the usual
//! `.szs` = Yaz0 of a SARC); otherwise they add one empty name (`file.gsh.gz!+0x0`: offset 0 of
//! the decompressed stream). Members are scanned from the decompressed bytes, so a shader's key
//! is the key of the extracted file.
//!
//! Every size comes from the input, so every allocation is capped first (see
//! [`crate::limits`]): a cap or a corrupt member is one error naming the container, the member
//! and the reason, and the other members are still scanned.

mod darc;
mod gzip;
mod lz;
mod lzma;
mod sarc;
mod swf;
mod xex;
mod yaz0;
mod zip;
mod zstd;

use crate::limits::{MAX_ARCHIVE_BYTES, MAX_CONTAINER_DEPTH, MAX_MEMBERS, MAX_MEMBER_BYTES, MAX_RATIO, RATIO_FLOOR};
use std::io::Read;

/// A container format shrec recognises by its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// Nintendo Yaz0 (`Yaz0`): one LZ77-compressed stream (`.szs`).
    Yaz0,
    /// Nintendo SARC archive (`SARC`, either byte order).
    Sarc,
    /// PKWARE zip (`PK\x03\x04`).
    Zip,
    /// gzip stream(s) (`1F 8B 08`).
    Gzip,
    /// zstd frame(s) (`28 B5 2F FD`).
    Zstd,
    /// zlib-compressed Flash SWF (`CWS`); members are its DefineBinaryData tags.
    SwfCws,
    /// LZMA-compressed Flash SWF (`ZWS`); members are its DefineBinaryData tags.
    SwfZws,
    /// xz stream (`FD 37 7A 58 5A 00`).
    Xz,
    /// Xbox 360 executable (`XEX2`); the member is its base file.
    Xex2,
    /// 3DS DARC archive (`darc`, little endian).
    Darc,
    /// Nintendo LZ10 (type byte `0x10`): one stream; recognised by decoding (see `lz.rs`).
    Lz10,
    /// Nintendo LZ11 (type byte `0x11`): one stream; recognised by decoding (see `lz.rs`).
    Lz11,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Yaz0 => "yaz0",
            Format::Sarc => "sarc",
            Format::Zip => "zip",
            Format::Gzip => "gzip",
            Format::Zstd => "zstd",
            Format::SwfCws => "swf-cws",
            Format::SwfZws => "swf-zws",
            Format::Xz => "xz",
            Format::Xex2 => "xex2",
            Format::Darc => "darc",
            Format::Lz10 => "lz10",
            Format::Lz11 => "lz11",
        }
    }

    /// The format [`Format::name`] names.
    pub fn from_name(name: &str) -> Option<Format> {
        [
            Format::Yaz0,
            Format::Sarc,
            Format::Zip,
            Format::Gzip,
            Format::Zstd,
            Format::SwfCws,
            Format::SwfZws,
            Format::Xz,
            Format::Xex2,
            Format::Darc,
            Format::Lz10,
            Format::Lz11,
        ]
        .into_iter()
        .find(|f| f.name() == name)
    }

    /// A single compressed stream (no member names of its own).
    fn is_stream(self) -> bool {
        matches!(self, Format::Yaz0 | Format::Gzip | Format::Zstd | Format::Xz | Format::Lz10 | Format::Lz11)
    }
}

/// The recognised container `bytes` start with (by magic number; LZ10 / LZ11, which have none,
/// are recognised by decoding them in [`walk`]).
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    let starts = |m: &[u8]| bytes.starts_with(m);
    if starts(b"Yaz0") && bytes.len() >= 16 {
        Some(Format::Yaz0)
    } else if starts(b"SARC") && bytes.len() >= 0x14 {
        Some(Format::Sarc)
    } else if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") && bytes.len() == 22 {
        Some(Format::Zip)
    } else if starts(&[0x1F, 0x8B, 0x08]) {
        Some(Format::Gzip)
    } else if starts(&[0x28, 0xB5, 0x2F, 0xFD]) {
        Some(Format::Zstd)
    } else if starts(b"CWS") && bytes.len() >= 8 {
        Some(Format::SwfCws)
    } else if starts(b"ZWS") && bytes.len() >= 17 {
        Some(Format::SwfZws)
    } else if starts(&[0xFD, b'7', b'z', b'X', b'Z', 0]) {
        Some(Format::Xz)
    } else if starts(b"XEX2") && bytes.len() >= 0x18 {
        Some(Format::Xex2)
    } else if starts(b"darc") && bytes.len() >= 0x1C {
        Some(Format::Darc)
    } else {
        None
    }
}

/// Containers recognised by their magic that shrec cannot open (yet): named in
/// `--list-containers` and in the "no shader found" warning.
pub fn sniff_unopened(bytes: &[u8]) -> Option<&'static str> {
    let starts = |m: &[u8]| bytes.starts_with(m);
    if starts(b"Yaz1") {
        Some("yaz1 (not opened yet)")
    } else {
        None
    }
}

/// Why a container or one of its members could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerError {
    /// Offset in the container's bytes, when known.
    pub offset: Option<u64>,
    pub reason: String,
}

impl ContainerError {
    pub fn new(reason: impl Into<String>) -> Self {
        ContainerError { offset: None, reason: reason.into() }
    }
    pub fn at(offset: u64, reason: impl Into<String>) -> Self {
        ContainerError { offset: Some(offset), reason: reason.into() }
    }
}

/// One member as a format lists it, before it is read.
pub(crate) struct Member {
    pub name: String,
    pub data: Result<Vec<u8>, ContainerError>,
}

/// Decompressed bytes still allowed for the outermost file (shared by every level).
pub struct Budget {
    left: u64,
    /// The file's whole allowance (`left` at the start), named in the error.
    limit: u64,
}

impl Default for Budget {
    /// The allowance of a file too large for the ratio to matter: [`MAX_ARCHIVE_BYTES`].
    fn default() -> Self {
        Budget::for_file(u64::MAX)
    }
}

impl Budget {
    /// The allowance of a file of `len` bytes: [`MAX_RATIO`] times its size (at least
    /// [`RATIO_FLOOR`], at most [`MAX_ARCHIVE_BYTES`]) for every member at every level together.
    /// Uncompressed members may overlap (a DARC or zip entry can point at the archive's own
    /// bytes), so a small file nesting such archives lists more bytes at each level without any
    /// compression; the per-member ratio cannot see that, the file's ratio does (a 241-byte
    /// DARC found by `archive_darc` made the scan walk gigabytes of overlapping members).
    pub fn for_file(len: u64) -> Self {
        let limit = len.saturating_mul(MAX_RATIO).max(RATIO_FLOOR).min(MAX_ARCHIVE_BYTES);
        Budget { left: limit, limit }
    }

    /// The most bytes the next member may decompress to before a cap is hit.
    fn member_limit(&self) -> u64 {
        MAX_MEMBER_BYTES.min(self.left)
    }

    /// Checks a member's size (declared or read) against the caps and charges it.
    fn charge(&mut self, size: u64, compressed: u64) -> Result<(), ContainerError> {
        if size > MAX_MEMBER_BYTES {
            return Err(ContainerError::new(format!("resource cap: member decompresses to more than {MAX_MEMBER_BYTES} bytes (limit per member)")));
        }
        // The member's own ratio first: for a single stream it is the more specific cause.
        if size >= RATIO_FLOOR && size > compressed.max(1).saturating_mul(MAX_RATIO) {
            return Err(ContainerError::new(format!(
                "resource cap: member decompresses {size} bytes from {compressed} (ratio over the limit of {MAX_RATIO})"
            )));
        }
        if size > self.left {
            return Err(ContainerError::new(format!(
                "resource cap: the file's members decompress to more than {} bytes in all (limit per archive: {MAX_RATIO} times the file's size, at least {RATIO_FLOOR}, at most {MAX_ARCHIVE_BYTES})",
                self.limit
            )));
        }
        self.left -= size;
        Ok(())
    }

    /// Checks a size a header declares, before reading, without charging it.
    fn check_declared(&self, size: u64, compressed: u64) -> Result<(), ContainerError> {
        Budget { left: self.left, limit: self.limit }.charge(size, compressed)
    }

    /// Reads a decompressing `reader` (of `compressed` input bytes) under the caps: reads at
    /// most one byte past the lowest cap, so a bomb costs no more than the cap.
    fn read(&mut self, reader: impl Read, compressed: u64) -> Result<Vec<u8>, ContainerError> {
        let ratio_limit = compressed.max(1).saturating_mul(MAX_RATIO).max(RATIO_FLOOR);
        let cap = self.member_limit().min(ratio_limit);
        let mut out = Vec::new();
        reader.take(cap.saturating_add(1)).read_to_end(&mut out).map_err(|e| {
            if e.kind() == std::io::ErrorKind::OutOfMemory {
                ContainerError::new(format!("resource cap: {e}"))
            } else {
                ContainerError::new(format!("corrupt stream: {e}"))
            }
        })?;
        // Past a cap, `charge` names it.
        self.charge(out.len() as u64, compressed)?;
        Ok(out)
    }
}

/// What one opened container held (`scan --list-containers`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    pub format: Format,
    /// Member chain of the container itself (empty: the file).
    pub chain: Vec<String>,
    pub members: usize,
    /// Decompressed bytes of its members.
    pub bytes: u64,
}

/// Reports of one walk.
pub trait Visitor {
    /// A buffer to search for shaders (a plain file or a member that is no container).
    fn leaf(&mut self, chain: &[String], bytes: &[u8]);
    /// A container was opened.
    fn opened(&mut self, info: Opened);
    /// A container (or member) failed: `chain` names it, `member` the member when known.
    fn error(&mut self, chain: &[String], format: Format, member: Option<&str>, e: ContainerError);
    /// A container shrec recognises but cannot open.
    fn unopened(&mut self, chain: &[String], what: &'static str);
    /// Whether to descend into member `name` of the container at `chain` (extraction prunes).
    fn wants(&self, _chain: &[String], _name: &str) -> bool {
        true
    }
}

/// Walks `bytes` (the file or member named by `chain`): opens it when it is a container and
/// walks its members, else hands it to `v.leaf`.
pub fn walk(chain: &mut Vec<String>, bytes: &[u8], depth: usize, budget: &mut Budget, v: &mut dyn Visitor) {
    // LZ10 / LZ11 have no magic number: a buffer is one only if it decodes as one (`lz.rs`).
    let mut lz_data = None;
    let format = match sniff(bytes) {
        Some(format) => format,
        None => match lz::probe(bytes, budget) {
            Some((format, data)) => {
                lz_data = Some(data);
                format
            }
            None => {
                if let Some(what) = sniff_unopened(bytes) {
                    v.unopened(chain, what);
                }
                v.leaf(chain, bytes);
                return;
            }
        },
    };
    if depth >= MAX_CONTAINER_DEPTH {
        let e = ContainerError::new(format!(
            "resource cap: containers nest more than {MAX_CONTAINER_DEPTH} deep (limit on nesting depth); searched as raw bytes"
        ));
        v.error(chain, format, None, e);
        v.leaf(chain, bytes);
        return;
    }
    if format.is_stream() {
        let data = match (format, lz_data) {
            (Format::Yaz0, _) => yaz0::decompress(bytes, budget),
            (Format::Gzip, _) => gzip::decompress(bytes, budget),
            (Format::Xz, _) => lzma::decompress_xz(bytes, budget),
            // Decoded under the caps by the probe; charged here.
            (_, Some(lz)) => lz.and_then(|d| budget.charge(d.len() as u64, bytes.len() as u64).map(|()| d)),
            _ => zstd::decompress(bytes, budget),
        };
        match data {
            Ok(data) => {
                v.opened(Opened { format, chain: chain.clone(), members: 1, bytes: data.len() as u64 });
                // Transparent when it holds an archive: `x.szs!member`, not `x.szs!!member`.
                let named = !matches!(sniff(&data), Some(f) if !f.is_stream());
                if named {
                    chain.push(String::new());
                }
                walk(chain, &data, depth + 1, budget, v);
                if named {
                    chain.pop();
                }
            }
            Err(e) => {
                v.error(chain, format, None, e);
                v.leaf(chain, bytes);
            }
        }
        return;
    }
    let listed = match format {
        Format::Sarc => sarc::members(bytes, budget, &|n| v.wants(chain, n)),
        Format::Zip => zip::members(bytes, budget, &|n| v.wants(chain, n)),
        Format::SwfZws => swf::members_zws(bytes, budget, &|n| v.wants(chain, n)),
        Format::Xex2 => xex::members(bytes, budget, &|n| v.wants(chain, n)),
        Format::Darc => darc::members(bytes, budget, &|n| v.wants(chain, n)),
        _ => swf::members(bytes, budget, &|n| v.wants(chain, n)),
    };
    match listed {
        Ok(mut members) => {
            unique_names(&mut members);
            let bytes_total = members.iter().map(|m| m.data.as_ref().map_or(0, |d| d.len() as u64)).sum();
            v.opened(Opened { format, chain: chain.clone(), members: members.len(), bytes: bytes_total });
            for m in members {
                match m.data {
                    Ok(data) => {
                        chain.push(m.name);
                        walk(chain, &data, depth + 1, budget, v);
                        chain.pop();
                    }
                    Err(e) => v.error(chain, format, Some(&m.name), e),
                }
            }
        }
        Err(e) => {
            v.error(chain, format, None, e);
            v.leaf(chain, bytes);
        }
    }
}

/// A member name as shown and matched, one-to-one with the name's characters so that two
/// names never show the same: control characters (a newline in a zip entry name would split a
/// report line) become Rust escapes (`\n`, `\u{1b}`), and a backslash is doubled (a real newline
/// and the two characters `\n` used to show the same, and the build took the first member for
/// the second). The rest is kept.
fn clean_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        push_clean(&mut out, c);
    }
    out
}

fn push_clean(out: &mut String, c: char) {
    if c == '\\' {
        out.push_str("\\\\");
    } else if c.is_control() {
        out.extend(c.escape_debug());
    } else {
        out.push(c);
    }
}

/// [`clean_name`] of a name stored as bytes meant to be UTF-8 (SARC): a byte that is not UTF-8
/// becomes `\xNN` (decoding it as U+FFFD made different names show the same).
fn clean_name_bytes(raw: &[u8]) -> String {
    let mut out = String::new();
    for chunk in raw.utf8_chunks() {
        out.push_str(&clean_name(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// [`clean_name`] of a UTF-16 name (DARC): an unpaired surrogate becomes `\u{d800}` (decoding it
/// as U+FFFD made different names show the same).
fn clean_name_utf16(units: &[u16]) -> String {
    let mut out = String::new();
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok(c) => push_clean(&mut out, c),
            Err(e) => out.push_str(&format!("\\u{{{:x}}}", e.unpaired_surrogate())),
        }
    }
    out
}

/// The names of one container's members, each unique: the second member listed under a name
/// is `name\#2`, the third `name\#3`, … (zip, SARC and DARC allow a name twice). Cleaned names
/// hold a backslash only as the start of an escape (`\\`, `\n`, `\u{..}`, `\xNN`), never
/// followed by `#`, so the suffix cannot be part of a name.
fn unique_names(members: &mut [Member]) {
    let mut seen: std::collections::HashMap<String, u32> = std::collections::HashMap::new();
    for m in members {
        let n = seen.entry(m.name.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            m.name = format!("{}\\#{n}", m.name);
        }
    }
}

/// A member name without the suffix of [`unique_names`]: the name the container stores.
pub(crate) fn stored_name(name: &str) -> &str {
    let mut chars = name.char_indices();
    while let Some((i, c)) = chars.next() {
        // a backslash starts an escape: its next character is part of it (skipped here)
        if c == '\\' && matches!(chars.next(), Some((_, '#'))) {
            return &name[..i];
        }
    }
    name
}

/// Refuses a member count over [`MAX_MEMBERS`].
fn check_members(n: usize) -> Result<(), ContainerError> {
    if n > MAX_MEMBERS {
        return Err(ContainerError::new(format!("resource cap: {n} members exceed the limit of {MAX_MEMBERS} per container")));
    }
    Ok(())
}

/// The display form of a member chain: `!name` per level (appended to the file's path).
pub fn chain_suffix(chain: &[String]) -> String {
    chain.iter().map(|c| format!("!{c}")).collect()
}

/// The bytes of the member at `target` (a chain recorded by a scan) inside the file `bytes`.
pub fn extract(bytes: &[u8], target: &[String]) -> Result<Vec<u8>, String> {
    struct Find<'a> {
        target: &'a [String],
        found: Option<Vec<u8>>,
        error: Option<String>,
    }
    impl Visitor for Find<'_> {
        fn leaf(&mut self, chain: &[String], bytes: &[u8]) {
            if chain == self.target && self.found.is_none() {
                self.found = Some(bytes.to_vec());
            }
        }
        fn opened(&mut self, _: Opened) {}
        fn error(&mut self, chain: &[String], format: Format, member: Option<&str>, e: ContainerError) {
            if self.target.starts_with(chain) && self.error.is_none() {
                let m = member.map(|m| format!(" member '{m}'")).unwrap_or_default();
                self.error = Some(format!("{}{m}: {}", format.name(), e.reason));
            }
        }
        fn unopened(&mut self, _: &[String], _: &'static str) {}
        fn wants(&self, chain: &[String], name: &str) -> bool {
            // every member stored under the name, so that `unique_names` numbers them as the scan did
            self.target.len() > chain.len() && self.target.starts_with(chain) && stored_name(&self.target[chain.len()]) == name
        }
    }
    let mut f = Find { target, found: None, error: None };
    walk(&mut Vec::new(), bytes, 0, &mut Budget::for_file(bytes.len() as u64), &mut f);
    f.found.ok_or_else(|| f.error.unwrap_or_else(|| format!("member {} not found (file changed since the scan?)", chain_suffix(target))))
}

/// Reads a big- or little-endian integer at `at`, or a "truncated" error.
fn be_or_le<const N: usize>(b: &[u8], at: usize, big: bool, what: &str) -> Result<u64, ContainerError> {
    let s = b.get(at..at.saturating_add(N)).ok_or_else(|| ContainerError::at(at as u64, format!("truncated: {what} past the end")))?;
    let mut v = 0u64;
    for i in 0..N {
        let byte = if big { s[i] } else { s[N - 1 - i] };
        v = (v << 8) | byte as u64;
    }
    Ok(v)
}
