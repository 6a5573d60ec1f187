//! `shrec scan`: every shader in every file under a directory, with its family, stage and key.
//!
//! Files are walked with walkdir (symlinks are followed; walkdir detects loops and reports them as
//! errors instead of looping), memory-mapped, and processed in parallel with rayon:
//! [`crate::detect::detect`] finds the containers, [`crate::formats::entries`] lists the shaders
//! of each. Results are sorted by (path, offset, index), so the output does not depend on
//! scheduling.

use crate::detect::{detect, ContainerKind};
use crate::formats::{self, Family, Stage};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One shader found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundShader {
    pub path: PathBuf,
    pub container: ContainerKind,
    pub family: Family,
    /// Offset of the container in the file.
    pub offset: u64,
    /// Length of the container.
    pub length: u64,
    /// Position of the shader inside its container.
    pub index: u32,
    pub stage: Stage,
    /// Cache key (see the per-family `entries` docs).
    pub key: u64,
    pub name: Option<String>,
}

/// A file that could not be read, or a container whose shaders could not be listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    pub path: PathBuf,
    /// Offset of the container in the file (`None` for a file-level error).
    pub offset: Option<u64>,
    /// Container kind (`None` for a file-level error).
    pub kind: Option<ContainerKind>,
    /// Where in the file the problem was found, when known (container offset + the parser's
    /// offset inside the container).
    pub at: Option<u64>,
    pub reason: String,
}

impl std::fmt::Display for ScanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.path.display())?;
        if let Some(o) = self.offset {
            write!(f, " @0x{o:X}")?;
        }
        if let Some(k) = self.kind {
            write!(f, " [{}]", k.name())?;
        }
        if let Some(a) = self.at {
            write!(f, " (at 0x{a:X})")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// Everything [`scan_dir`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ScanResult {
    /// Sorted by (path, offset, index).
    pub shaders: Vec<FoundShader>,
    /// Sorted by (path, offset).
    pub errors: Vec<ScanError>,
    /// Regular files visited (including empty and unreadable ones).
    pub files: u64,
    /// Bytes scanned.
    pub bytes: u64,
}

impl ScanResult {
    /// Number of shaders per (family, stage), in family then stage order.
    pub fn counts(&self) -> BTreeMap<(Family, Stage), usize> {
        let mut m = BTreeMap::new();
        for s in &self.shaders {
            *m.entry((s.family, s.stage)).or_insert(0) += 1;
        }
        m
    }
}

/// Detects and lists the shaders of one buffer; `path_label` names it in the results.
pub fn scan_bytes(path_label: &Path, bytes: &[u8]) -> (Vec<FoundShader>, Vec<ScanError>) {
    let mut shaders = Vec::new();
    let mut errors = Vec::new();
    if let Some(e) = formats::pica::dvlb::dvoj_error(bytes) {
        let kind = Some(ContainerKind::Dvlb);
        errors.push(ScanError { path: path_label.to_path_buf(), offset: Some(0), kind, at: e.offset, reason: e.reason });
    }
    for c in detect(bytes) {
        let container = &bytes[c.offset..c.offset + c.len];
        match formats::entries(c.kind, container) {
            Ok(entries) => shaders.extend(entries.into_iter().map(|e| FoundShader {
                path: path_label.to_path_buf(),
                container: c.kind,
                family: c.kind.family(),
                offset: c.offset as u64,
                length: c.len as u64,
                index: e.index,
                stage: e.stage,
                key: e.key,
                name: e.name,
            })),
            Err(e) => errors.push(ScanError {
                path: path_label.to_path_buf(),
                offset: Some(c.offset as u64),
                kind: Some(c.kind),
                at: e.offset.map(|o| c.offset as u64 + o),
                reason: e.reason,
            }),
        }
    }
    (shaders, errors)
}

fn file_error(path: &Path, reason: impl std::fmt::Display) -> ScanError {
    ScanError { path: path.to_path_buf(), offset: None, kind: None, at: None, reason: reason.to_string() }
}

/// What one file held.
#[derive(Clone, Debug, Default)]
pub(crate) struct FileScan {
    pub shaders: Vec<FoundShader>,
    pub errors: Vec<ScanError>,
    pub bytes: u64,
    /// The file's identity when it was read (None when it could not be read: not reusable).
    pub stamp: Option<crate::cache::scan_index::FileStamp>,
}

/// Scans one file: memory-maps it (empty files are skipped) and runs [`scan_bytes`].
fn scan_file(path: &Path) -> FileScan {
    let failed = |e: ScanError| FileScan { errors: vec![e], ..FileScan::default() };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return failed(file_error(path, format_args!("cannot open: {e}"))),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return failed(file_error(path, format_args!("cannot stat: {e}"))),
    };
    let stamp = Some(crate::cache::scan_index::FileStamp::of(&meta));
    if meta.len() == 0 {
        return FileScan { stamp, ..FileScan::default() };
    }
    // SAFETY: the map is read-only and dropped before returning. If another process truncates
    // the file meanwhile, reads may fault; that is the usual, accepted memmap risk for a batch
    // tool reading its own inputs.
    let map = match unsafe { memmap2::Mmap::map(&file) } {
        Ok(m) => m,
        Err(e) => return failed(file_error(path, format_args!("cannot map: {e}"))),
    };
    let (shaders, errors) = scan_bytes(path, &map);
    FileScan { shaders, errors, bytes: map.len() as u64, stamp }
}

/// Scans every regular file under `root` (or `root` itself if it is a file).
pub fn scan_dir(root: &Path) -> ScanResult {
    scan_dir_with(root, None, &|_| {}).0
}

/// [`scan_dir`], reusing what the scan index file `index` recorded for every file whose size,
/// times and inode are unchanged, and updating that file (see [`crate::cache::scan_index`]).
/// Also returns how many files were actually read.
pub fn scan_dir_incremental(root: &Path, index: &Path) -> (ScanResult, u64) {
    scan_dir_with(root, Some(index), &|_| {})
}

/// [`scan_dir`] (or [`scan_dir_incremental`] with an `index`) that also hands the shaders of
/// each file to `on_file` while the scan runs: in path order, each file once it and every file
/// before it are scanned, its shaders sorted by (offset, index). A consumer thus sees the
/// shaders in the final order and can start on them before the scan ends (`shrec build`
/// compiles while it scans).
pub fn scan_dir_streaming(root: &Path, index: Option<&Path>, on_file: &(dyn Fn(&[FoundShader]) + Sync)) -> (ScanResult, u64) {
    scan_dir_with(root, index, on_file)
}

fn scan_dir_with(root: &Path, index: Option<&Path>, on_file: &(dyn Fn(&[FoundShader]) + Sync)) -> (ScanResult, u64) {
    use crate::cache::scan_index::ScanIndex;
    let mut result = ScanResult::default();
    let mut paths = Vec::new();
    for entry in walkdir::WalkDir::new(root).follow_links(true).sort_by_file_name() {
        match entry {
            Ok(e) if e.file_type().is_file() => paths.push(e.into_path()),
            Ok(_) => {}
            Err(e) => {
                let p = e.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
                result.errors.push(file_error(&p, e));
            }
        }
    }
    result.files = paths.len() as u64;
    let previous = index.map(ScanIndex::load).unwrap_or_default();
    // Files finish in any order; `release` passes them on in path order.
    let release = Mutex::new((0usize, BTreeMap::<usize, Vec<FoundShader>>::new()));
    let per_file: Vec<(FileScan, bool)> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let scanned = match previous.reuse(p) {
                Some(hit) => (hit, false),
                None => (scan_file(p), true),
            };
            let mut shaders = scanned.0.shaders.clone();
            shaders.sort_by_key(|s| (s.offset, s.index));
            let mut guard = release.lock().unwrap_or_else(|e| e.into_inner());
            let (next, waiting) = &mut *guard;
            waiting.insert(i, shaders);
            while let Some(ready) = waiting.remove(next) {
                on_file(&ready);
                *next += 1;
            }
            scanned
        })
        .collect();
    let read = per_file.iter().filter(|(_, read)| *read).count() as u64;
    if let Some(index) = index {
        let current = ScanIndex::record(paths.iter().zip(per_file.iter().map(|(f, _)| f)));
        if current != previous {
            // Best effort: without an index the next build scans everything again.
            let _ = current.save(index);
        }
    }
    for (f, _) in per_file {
        result.shaders.extend(f.shaders);
        result.errors.extend(f.errors);
        result.bytes += f.bytes;
    }
    result.shaders.sort_by(|a, b| (&a.path, a.offset, a.index).cmp(&(&b.path, b.offset, b.index)));
    result.errors.sort_by(|a, b| (&a.path, a.offset).cmp(&(&b.path, b.offset)));
    (result, read)
}

/// Hex key as printed everywhere: `0x` + 16 upper-case hex digits.
pub fn key_hex(key: u64) -> String {
    format!("0x{key:016X}")
}

/// A plain-text table: one row per shader, then counts per family × stage, then error lines.
pub fn render_table(r: &ScanResult) -> String {
    let mut s = String::new();
    let pw = r.shaders.iter().map(|x| x.path.display().to_string().len()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        s,
        "{:<pw$}  {:>10}  {:>8}  {:<7}  {:<5}  {:<8}  {:>3}  {:<18}  name",
        "path", "offset", "length", "family", "cont", "stage", "idx", "key"
    );
    for x in &r.shaders {
        let _ = writeln!(
            s,
            "{:<pw$}  {:>10}  {:>8}  {:<7}  {:<5}  {:<8}  {:>3}  {:<18}  {}",
            x.path.display(),
            format!("0x{:X}", x.offset),
            x.length,
            x.family.name(),
            short_kind(x.container),
            x.stage.name_in(x.family),
            x.index,
            key_hex(x.key),
            x.name.as_deref().unwrap_or("-"),
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "{} shaders in {} files ({} bytes scanned)", r.shaders.len(), r.files, r.bytes);
    for ((f, st), n) in r.counts() {
        let _ = writeln!(s, "  {:<6} {:<9} {n}", f.name(), st.name_in(f));
    }
    if !r.errors.is_empty() {
        let _ = writeln!(s, "{} errors:", r.errors.len());
        for e in &r.errors {
            let _ = writeln!(s, "  error: {e}");
        }
    }
    s
}

fn short_kind(k: ContainerKind) -> &'static str {
    match k {
        ContainerKind::Sharcfb => "sharc",
        k => k.name(),
    }
}

/// The same data as [`render_table`] as JSON: keys as `"0x%016X"` strings, offsets and
/// lengths as numbers.
pub fn to_json(r: &ScanResult) -> Value {
    let shaders: Vec<Value> = r
        .shaders
        .iter()
        .map(|x| {
            json!({
                "path": x.path.display().to_string(),
                "container": x.container.name(),
                "family": x.family.name(),
                "offset": x.offset,
                "length": x.length,
                "index": x.index,
                "stage": x.stage.name_in(x.family),
                "key": key_hex(x.key),
                "name": x.name,
            })
        })
        .collect();
    let counts: Vec<Value> = r
        .counts()
        .into_iter()
        .map(|((f, st), n)| json!({ "family": f.name(), "stage": st.name_in(f), "count": n }))
        .collect();
    let errors: Vec<Value> = r
        .errors
        .iter()
        .map(|e| {
            json!({
                "path": e.path.display().to_string(),
                "offset": e.offset,
                "kind": e.kind.map(|k| k.name()),
                "at": e.at,
                "reason": e.reason,
            })
        })
        .collect();
    json!({ "files": r.files, "bytes": r.bytes, "shaders": shaders, "counts": counts, "errors": errors })
}

/// Reads the bytes of the container a shader was found in (the build re-reads containers
/// instead of keeping every mapped file alive between scanning and translating).
pub fn read_container(s: &FoundShader) -> Result<Vec<u8>, String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(&s.path).map_err(|e| format!("cannot open: {e}"))?;
    f.seek(SeekFrom::Start(s.offset)).map_err(|e| format!("cannot seek to 0x{:X}: {e}", s.offset))?;
    let mut buf = Vec::with_capacity(s.length as usize);
    f.take(s.length).read_to_end(&mut buf).map_err(|e| format!("cannot read: {e}"))?;
    if buf.len() as u64 != s.length {
        return Err(format!("file changed while building: expected {} bytes at 0x{:X}, read {}", s.length, s.offset, buf.len()));
    }
    Ok(buf)
}
