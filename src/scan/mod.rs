//! `shrec scan`: every shader in every file under a directory, with its family, stage and key.
//!
//! Files are walked with walkdir (symlinks are followed inside the tree; walkdir detects loops and
//! reports them as errors instead of looping), read into memory (never mapped: see
//! `read_for_scan`), and processed in parallel with rayon:
//! [`crate::detect::detect`] finds the containers, [`crate::formats::entries`] lists the shaders
//! of each. A file that is an archive or a compressed stream is opened by [`containers`] and
//! each member is scanned like a file (`dir/a.szs!shaders/b.sharcfb`). Results are sorted by
//! (path, member, offset, index), so the output does not depend on scheduling.

pub mod containers;
pub mod index;

use crate::detect::{detect, ContainerKind};
use crate::formats::{self, Family, Stage};
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// One shader found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundShader {
    /// The file on disk.
    pub path: PathBuf,
    /// Member chain inside that file (empty: the file itself); see [`containers`]. `offset`
    /// and `length` are in the member's decompressed bytes.
    pub member: Vec<String>,
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

impl FoundShader {
    /// The path as every report shows it: the file, then `!member` per container level.
    pub fn label(&self) -> PathBuf {
        label(&self.path, &self.member)
    }
}

/// `path` followed by `!name` per member of `chain`.
pub fn label(path: &Path, chain: &[String]) -> PathBuf {
    if chain.is_empty() {
        return path.to_path_buf();
    }
    let mut s: OsString = path.as_os_str().to_owned();
    s.push(containers::chain_suffix(chain));
    PathBuf::from(s)
}

/// A file that could not be read, or a container whose shaders could not be listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    /// The file, followed by its member chain when the error is inside a container (see
    /// [`label`]).
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
        write!(f, "{}", crate::text::path_text(&self.path))?;
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

impl ScanError {
    /// The error as one log line's text: names from the input escaped ([`crate::text`]).
    pub fn printable(&self) -> String {
        crate::text::printable(&self.to_string())
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
    /// Containers opened, by label (`scan --list-containers`).
    pub containers: Vec<OpenedContainer>,
    /// Containers recognised but not opened: (label, what).
    pub unopened: Vec<(PathBuf, String)>,
    /// Symbolic links inside the tree, and further hard links to a file already scanned, that
    /// were skipped (their files are scanned under their own path).
    pub links_skipped: u64,
}

/// One container that was opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenedContainer {
    /// The container's own label (file path and member chain).
    pub path: PathBuf,
    pub format: &'static str,
    pub members: usize,
    /// Decompressed bytes of its members.
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

/// Detects and lists the shaders of one buffer as raw bytes (no container is opened);
/// `path_label` names it in the results.
pub fn scan_bytes(path_label: &Path, bytes: &[u8]) -> (Vec<FoundShader>, Vec<ScanError>) {
    let mut shaders = Vec::new();
    let mut errors = Vec::new();
    if let Some(e) = formats::pica::dvlb::dvoj_error(bytes) {
        let kind = Some(ContainerKind::Dvlb);
        errors.push(ScanError { path: path_label.to_path_buf(), offset: Some(0), kind, at: e.offset(), reason: e.reason() });
    }
    let found = detect(bytes);
    if found.first().is_none_or(|c| c.offset != 0) {
        if let Some((kind, at, reason)) = crate::detect::damaged_at_start(bytes) {
            errors.push(ScanError { path: path_label.to_path_buf(), offset: Some(0), kind: Some(kind), at, reason });
        }
    }
    for c in found {
        let container = &bytes[c.offset..c.offset + c.len];
        match formats::entries(c.kind, container) {
            Ok(entries) => shaders.extend(entries.into_iter().map(|e| FoundShader {
                path: path_label.to_path_buf(),
                member: Vec::new(),
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
                at: e.offset().map(|o| c.offset as u64 + o),
                reason: e.reason(),
            }),
        }
    }
    (shaders, errors)
}

/// Collects what a container walk reports for one file.
struct Collect<'a> {
    path: &'a Path,
    scan: FileScan,
}

impl containers::Visitor for Collect<'_> {
    fn leaf(&mut self, chain: &[String], bytes: &[u8]) {
        let (shaders, errors) = scan_bytes(&label(self.path, chain), bytes);
        self.scan.shaders.extend(shaders.into_iter().map(|s| FoundShader { path: self.path.to_path_buf(), member: chain.to_vec(), ..s }));
        self.scan.errors.extend(errors);
    }
    fn opened(&mut self, info: containers::Opened) {
        self.scan.containers.push(OpenedContainer {
            path: label(self.path, &info.chain),
            format: info.format.name(),
            members: info.members,
            bytes: info.bytes,
        });
    }
    fn error(&mut self, chain: &[String], format: containers::Format, member: Option<&str>, e: containers::ContainerError) {
        let mut chain = chain.to_vec();
        chain.extend(member.map(str::to_string));
        let reason = match member {
            Some(_) => format!("{} member: {}", format.name(), e.reason),
            None => format!("{}: {}", format.name(), e.reason),
        };
        self.scan.errors.push(ScanError { path: label(self.path, &chain), offset: None, kind: None, at: e.offset, reason });
    }
    fn unopened(&mut self, chain: &[String], what: &'static str) {
        self.scan.unopened.push((label(self.path, chain), what.to_string()));
    }
}

/// Scans one file's bytes: opens it when it is a container (recursively), else detects
/// shaders in its raw bytes.
pub fn scan_buffer(path: &Path, bytes: &[u8]) -> FileScan {
    let mut c = Collect { path, scan: FileScan::default() };
    containers::walk(&mut Vec::new(), bytes, 0, &mut containers::Budget::for_file(bytes.len() as u64), &mut c);
    c.scan
}

fn file_error(path: &Path, reason: impl std::fmt::Display) -> ScanError {
    ScanError { path: path.to_path_buf(), offset: None, kind: None, at: None, reason: reason.to_string() }
}

/// What one file held.
#[derive(Clone, Debug, Default)]
pub struct FileScan {
    pub shaders: Vec<FoundShader>,
    pub errors: Vec<ScanError>,
    pub bytes: u64,
    pub containers: Vec<OpenedContainer>,
    pub unopened: Vec<(PathBuf, String)>,
    /// The file's identity when it was read (None when it could not be read: not reusable).
    pub stamp: Option<crate::scan::index::FileStamp>,
}

/// Bytes of scanned files held in memory at once, all scan threads together (see
/// `read_for_scan`). A larger file waits until it can be read alone.
pub const SCAN_BYTES_IN_FLIGHT: u64 = 1 << 30;

/// Admits files into memory in arrival order while their sizes fit in [`SCAN_BYTES_IN_FLIGHT`]
/// (first come, first served, so a large file is not starved by a stream of small ones).
struct MemoryBudget {
    state: Mutex<(u64, u64, u64)>, // (next ticket, ticket being served, bytes in flight)
    turn: std::sync::Condvar,
}

static BUDGET: MemoryBudget = MemoryBudget { state: Mutex::new((0, 0, 0)), turn: std::sync::Condvar::new() };

/// Bytes admitted by [`MemoryBudget::admit`]; handed back when dropped.
struct Admitted(u64);

impl MemoryBudget {
    fn admit(&'static self, bytes: u64) -> Admitted {
        let bytes = bytes.min(SCAN_BYTES_IN_FLIGHT);
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = s.0;
        s.0 += 1;
        while s.1 != ticket || s.2 + bytes > SCAN_BYTES_IN_FLIGHT {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.1 += 1;
        s.2 += bytes;
        drop(s);
        self.turn.notify_all();
        Admitted(bytes)
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut s = BUDGET.state.lock().unwrap_or_else(|e| e.into_inner());
        s.2 -= self.0;
        drop(s);
        BUDGET.turn.notify_all();
    }
}

/// Reads the `len` bytes a scan found by `fstat` with read(2), into memory: no file is
/// memory-mapped. A mapped file that another process truncates while it is read
/// kills the reader with SIGBUS at the first page past the new end, and no check before or after
/// mapping closes that window; read(2) of a truncated file just returns fewer bytes. The file's
/// stamp is compared before and after, so a file shortened, extended or rewritten meanwhile is
/// an error naming it, never a mix of two versions.
fn read_for_scan(file: &mut std::fs::File, before: &crate::scan::index::FileStamp, len: u64, on_read: &dyn Fn(u64)) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let size = usize::try_from(len).map_err(|_| format!("{len} bytes do not fit in memory"))?;
    let mut buf = Vec::new();
    buf.try_reserve_exact(size).map_err(|_| format!("cannot allocate {len} bytes to read it"))?;
    // In pieces, each counted for the progress display (a game's archives are hundreds of MiB).
    let mut reader = file.take(len);
    while buf.len() < size {
        let start = buf.len();
        buf.resize(start + (size - start).min(READ_PIECE), 0);
        let got = reader.read(&mut buf[start..]);
        buf.truncate(start + *got.as_ref().unwrap_or(&0));
        match got {
            Ok(0) => break,
            Ok(n) => on_read(n as u64),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read: {e}")),
        }
    }
    let after = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if buf.len() as u64 != len || crate::scan::index::FileStamp::of(&after) != *before {
        return Err(format!("changed while it was being scanned ({len} bytes when opened, {} read, {} now); not scanned", buf.len(), after.len()));
    }
    Ok(buf)
}

/// How much [`read_for_scan`] reads at a time.
const READ_PIECE: usize = 8 << 20;

/// Scans one file: reads it into memory (empty files are skipped; `on_read` gets each piece's
/// size) and runs [`scan_buffer`].
fn scan_file(path: &Path, on_read: &dyn Fn(u64)) -> FileScan {
    let failed = |e: ScanError| FileScan { errors: vec![e], ..FileScan::default() };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return failed(file_error(path, format_args!("cannot open: {e}"))),
    };
    let meta = match file.metadata() {
        Ok(m) => m,
        Err(e) => return failed(file_error(path, format_args!("cannot stat: {e}"))),
    };
    let stamp = crate::scan::index::FileStamp::of(&meta);
    if meta.len() == 0 {
        return FileScan { stamp: Some(stamp), ..FileScan::default() };
    }
    let _admitted = BUDGET.admit(meta.len());
    let bytes = match read_for_scan(&mut file, &stamp, meta.len(), on_read) {
        Ok(b) => b,
        Err(reason) => return failed(file_error(path, reason)),
    };
    FileScan { bytes: bytes.len() as u64, stamp: Some(stamp), ..scan_buffer(path, &bytes) }
}

/// Scans every regular file under `root` (or `root` itself if it is a file).
pub fn scan_dir(root: &Path) -> ScanResult {
    scan_dir_with(root, None, &|_| {}, &ScanProgress::default()).0
}

/// [`scan_dir`], reusing what the scan index file `index` recorded for every file whose size,
/// times and inode are unchanged, and updating that file (see [`crate::scan::index`]).
/// Also returns how many files were actually read.
pub fn scan_dir_incremental(root: &Path, index: &Path) -> (ScanResult, u64) {
    scan_dir_with(root, Some(index), &|_| {}, &ScanProgress::default())
}

/// [`scan_dir`] (or [`scan_dir_incremental`] with an `index`) that also hands the shaders of
/// each file to `on_file` while the scan runs: in path order, each file once it and every file
/// before it are scanned, its shaders sorted by (offset, index). A consumer thus sees the
/// shaders in the final order and can start on them before the scan ends (`shrec build`
/// compiles while it scans).
pub fn scan_dir_streaming(root: &Path, index: Option<&Path>, on_file: &(dyn Fn(&[FoundShader]) + Sync)) -> (ScanResult, u64) {
    scan_dir_with(root, index, on_file, &ScanProgress::default())
}

/// [`scan_dir_streaming`] that also counts what it has done in `progress`, for a progress
/// display that reads the counters while the scan runs (`shrec build` draws a bar from them).
pub fn scan_dir_observed(root: &Path, index: Option<&Path>, on_file: &(dyn Fn(&[FoundShader]) + Sync), progress: &ScanProgress) -> (ScanResult, u64) {
    scan_dir_with(root, index, on_file, progress)
}

/// What a running scan has done so far. The walk first lists the regular files (counting
/// `files_found` and their sizes on disk in `bytes_found`), then sets `walk_done`: from then on
/// `bytes_found` is the total, and `bytes_scanned` grows to it as files are read, piece by piece
/// (a file the scan index lets the scan skip counts at once; a file that grew since the walk may
/// take it a little past the total). Archive members count as the bytes of their file on disk.
#[derive(Debug, Default)]
pub struct ScanProgress {
    pub files_found: AtomicU64,
    pub bytes_found: AtomicU64,
    pub walk_done: AtomicBool,
    pub files_scanned: AtomicU64,
    pub bytes_scanned: AtomicU64,
}

fn scan_dir_with(root: &Path, index: Option<&Path>, on_file: &(dyn Fn(&[FoundShader]) + Sync), progress: &ScanProgress) -> (ScanResult, u64) {
    use crate::scan::index::ScanIndex;
    let mut result = ScanResult::default();
    let mut paths = Vec::new();
    // Symbolic links are not followed. One leaving the tree is reported (one to /proc/self or
    // /sys never ends, and a game directory has no business reading outside itself); one staying
    // inside leads to a file or folder the walk reaches under its own path anyway, so it is
    // skipped and counted. Following those multiplied the work: a chain of 22 folders each
    // holding two links to the next one ran for minutes, and 100 links to one 100 MB file read
    // 10 GB. Hard links are the same file too: each (device, inode) is scanned once, under the
    // first path in walk order. Special files (FIFOs, devices, sockets) are not regular files and
    // are skipped.
    let root_real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut seen = std::collections::HashSet::new();
    for entry in walkdir::WalkDir::new(root).follow_links(false).sort_by_file_name() {
        match entry {
            Ok(e) if e.path_is_symlink() && e.depth() > 0 => {
                if e.path().canonicalize().is_ok_and(|t| t.starts_with(&root_real)) {
                    result.links_skipped += 1;
                } else {
                    result.errors.push(file_error(e.path(), "symbolic link to outside the scanned directory (or dangling): not followed"));
                }
            }
            Ok(e) if e.file_type().is_file() => {
                // One stat per file: its stamp decides whether the scan index's record is reused,
                // its size feeds the progress display. A file that cannot be stat'ed here counts
                // as 0 bytes and is read (reading it reports the error).
                let meta = e.metadata().ok();
                if let Some(id) = meta.as_ref().and_then(file_id) {
                    if !seen.insert(id) {
                        result.links_skipped += 1;
                        continue;
                    }
                }
                let stamp = meta.map(|m| crate::scan::index::FileStamp::of(&m));
                let size = stamp.as_ref().map_or(0, |s| s.len());
                progress.files_found.fetch_add(1, Ordering::Relaxed);
                progress.bytes_found.fetch_add(size, Ordering::Relaxed);
                paths.push((e.into_path(), stamp));
            }
            Ok(_) => {}
            Err(e) => {
                let p = e.path().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
                result.errors.push(file_error(&p, e));
            }
        }
    }
    progress.walk_done.store(true, Ordering::Release);
    let (paths, stamps): (Vec<PathBuf>, Vec<Option<crate::scan::index::FileStamp>>) = paths.into_iter().unzip();
    result.files = paths.len() as u64;
    let previous = index.map(ScanIndex::load).unwrap_or_default();
    // Files finish in any order; `release` passes them on in path order.
    let release = Mutex::new((0usize, BTreeMap::<usize, Vec<FoundShader>>::new()));
    let per_file: Vec<(FileScan, bool)> = paths
        .par_iter()
        .enumerate()
        .map(|(i, p)| {
            let read = AtomicU64::new(0);
            let on_read = |n: u64| {
                read.fetch_add(n, Ordering::Relaxed);
                progress.bytes_scanned.fetch_add(n, Ordering::Relaxed);
            };
            let scanned = match stamps[i].as_ref().and_then(|st| previous.reuse(p, st)) {
                Some(hit) => (hit, false),
                None => (scan_file(p, &on_read), true),
            };
            // What was not read (a file the index let us skip, or one that failed) is done too.
            progress.files_scanned.fetch_add(1, Ordering::Relaxed);
            progress
                .bytes_scanned
                .fetch_add(stamps[i].as_ref().map_or(0, |s| s.len()).saturating_sub(read.load(Ordering::Relaxed)), Ordering::Relaxed);
            let mut shaders = scanned.0.shaders.clone();
            shaders.sort_by(|a, b| (&a.member, a.offset, a.index).cmp(&(&b.member, b.offset, b.index)));
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
        result.containers.extend(f.containers);
        result.unopened.extend(f.unopened);
    }
    result.shaders.sort_by(|a, b| (&a.path, &a.member, a.offset, a.index).cmp(&(&b.path, &b.member, b.offset, b.index)));
    result.errors.sort_by(|a, b| (&a.path, a.offset).cmp(&(&b.path, b.offset)));
    (result, read)
}

/// What identifies a file whatever its name: (device, inode) on Unix; elsewhere nothing (every
/// path is scanned).
#[cfg(unix)]
fn file_id(m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &std::fs::Metadata) -> Option<(u64, u64)> {
    None
}

/// The line saying how many links the walk skipped, if any.
pub fn links_skipped_note(r: &ScanResult) -> Option<String> {
    (r.links_skipped > 0).then(|| {
        format!("{} links skipped (symbolic links inside the directory, or more hard links to a file already scanned: each file is scanned once, under its own path)", r.links_skipped)
    })
}

/// Hex key as printed everywhere: `0x` + 16 upper-case hex digits.
pub fn key_hex(key: u64) -> String {
    format!("0x{key:016X}")
}

/// A plain-text table: one row per shader, then counts per family × stage, then error lines.
/// Paths, members and program names come from the input: each is escaped ([`crate::text`]).
pub fn render_table(r: &ScanResult) -> String {
    let mut s = String::new();
    let labels: Vec<String> = r.shaders.iter().map(|x| crate::text::printable_path(&x.label())).collect();
    let pw = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4).max(4);
    let _ = writeln!(
        s,
        "{:<pw$}  {:>10}  {:>8}  {:<7}  {:<5}  {:<8}  {:>3}  {:<18}  name",
        "path", "offset", "length", "family", "cont", "stage", "idx", "key"
    );
    for (x, label) in r.shaders.iter().zip(&labels) {
        let _ = writeln!(
            s,
            "{:<pw$}  {:>10}  {:>8}  {:<7}  {:<5}  {:<8}  {:>3}  {:<18}  {}",
            label,
            format!("0x{:X}", x.offset),
            x.length,
            x.family.name(),
            short_kind(x.container),
            x.stage.name_in(x.family),
            x.index,
            key_hex(x.key),
            x.name.as_deref().map_or_else(|| "-".to_string(), crate::text::printable),
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "{} shaders in {} files ({} bytes scanned)", r.shaders.len(), r.files, r.bytes);
    for ((f, st), n) in r.counts() {
        let _ = writeln!(s, "  {:<6} {:<9} {n}", f.name(), st.name_in(f));
    }
    if let Some(w) = unopened_warning(r) {
        let _ = writeln!(s, "warning: {w}");
    }
    if let Some(n) = links_skipped_note(r) {
        let _ = writeln!(s, "note: {n}");
    }
    if !r.errors.is_empty() {
        let _ = writeln!(s, "{} errors:", r.errors.len());
        for e in &r.errors {
            let _ = writeln!(s, "  error: {}", e.printable());
        }
    }
    s
}

/// When no shader was found but containers shrec cannot open were seen: says so (a directory of
/// unopened archives must not look like a clean "0 shaders").
pub fn unopened_warning(r: &ScanResult) -> Option<String> {
    if !r.shaders.is_empty() || r.unopened.is_empty() {
        return None;
    }
    let (first, what) = &r.unopened[0];
    Some(format!(
        "no shader found, but {} container(s) could not be opened (first: {}: {what}); their shaders, if any, were not scanned",
        r.unopened.len(),
        crate::text::printable_path(first)
    ))
}

/// `scan --list-containers`: every container opened (format, members, decompressed bytes,
/// shaders found inside) and every one recognised but not opened.
pub fn render_containers(r: &ScanResult) -> String {
    let mut s = String::new();
    let inside = |c: &OpenedContainer| {
        let prefix = c.path.as_os_str().to_string_lossy().into_owned();
        r.shaders
            .iter()
            .filter(|x| {
                let l = x.label();
                let l = l.as_os_str().to_string_lossy();
                l.len() > prefix.len() && l.starts_with(&prefix) && l[prefix.len()..].starts_with('!')
            })
            .count()
    };
    let _ = writeln!(s, "{} containers opened:", r.containers.len());
    for c in &r.containers {
        let path = crate::text::printable_path(&c.path);
        let _ = writeln!(s, "  {path}  [{}]  {} members, {} bytes, {} shaders", c.format, c.members, c.bytes, inside(c));
    }
    if !r.unopened.is_empty() {
        let _ = writeln!(s, "{} containers not opened:", r.unopened.len());
        for (p, what) in &r.unopened {
            let _ = writeln!(s, "  {}  [{what}]", crate::text::printable_path(p));
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

/// The containers a build reads from archive members, each archive opened once for all of its
/// shaders. The build registers each shader it will build ([`MemberReader::expect`]) as the
/// scan hands it over; the first read of a shader of an archive opens that archive once and
/// keeps the bytes of every registered shader's container (not whole members: shader
/// containers are kilobytes, members may be megabytes), and the archive's entry is dropped when
/// its last registered shader has been read. (Extracting one member per shader re-read and
/// re-decompressed the whole archive each time: a 1.35 MB `.zip.gz` with 800 shader members
/// took 50 s to build after a 0.2 s scan.)
#[derive(Default)]
pub struct MemberReader {
    files: Mutex<std::collections::HashMap<PathBuf, PendingFile>>,
}

/// Where a shader's container lies: member chain, offset and length in the member.
type ContainerPlace = (Vec<String>, u64, u64);

/// What an archive opened once holds for the build: each registered container's bytes, or why
/// the archive could not be read.
type Extracted = Result<std::collections::HashMap<ContainerPlace, std::sync::Arc<Vec<u8>>>, String>;

struct PendingFile {
    wanted: std::sync::Arc<Vec<ContainerPlace>>,
    /// Registered shaders not read yet.
    left: usize,
    extracted: std::sync::Arc<std::sync::OnceLock<Extracted>>,
}

impl MemberReader {
    /// Registers shaders the build will read (those inside archives; the others are read from
    /// their file directly). All shaders of one file come in one call: the scan hands them over
    /// per file, before any of them can be read.
    pub fn expect(&self, shaders: &[&FoundShader]) {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        for s in shaders.iter().filter(|s| !s.member.is_empty()) {
            let f = files.entry(s.path.clone()).or_insert_with(|| PendingFile { wanted: Default::default(), left: 0, extracted: Default::default() });
            std::sync::Arc::make_mut(&mut f.wanted).push((s.member.clone(), s.offset, s.length));
            f.left += 1;
        }
    }

    /// The bytes of the container of `s` (registered with [`MemberReader::expect`]; one that was
    /// not is extracted on its own).
    fn container_bytes(&self, s: &FoundShader) -> Result<Vec<u8>, String> {
        let pending = {
            let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
            files.get(&s.path).map(|f| (f.wanted.clone(), f.extracted.clone()))
        };
        let Some((wanted, extracted)) = pending else { return extract_container(s) };
        let place = (s.member.clone(), s.offset, s.length);
        let result = match extracted.get_or_init(|| extract_places(&s.path, &wanted)) {
            Ok(found) => found
                .get(&place)
                .map(|b| b.to_vec())
                .ok_or_else(|| format!("file changed since the scan: member has no {} bytes at 0x{:X}", s.length, s.offset)),
            Err(e) => Err(e.clone()),
        };
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(f) = files.get_mut(&s.path) {
            f.left = f.left.saturating_sub(1);
            if f.left == 0 {
                files.remove(&s.path);
            }
        }
        result
    }
}

/// A file read whole for extraction: a regular file of at most [`crate::limits::MAX_ARCHIVE_BYTES`].
fn read_whole_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let meta = file.metadata().map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file any more (file changed since the scan)".into());
    }
    let cap = crate::limits::MAX_ARCHIVE_BYTES;
    let mut bytes = Vec::new();
    file.take(cap + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > cap {
        return Err(format!("resource cap: the file grew past {cap} bytes since the scan"));
    }
    Ok(bytes)
}

/// Opens the archive at `path` once and copies out the containers at `wanted`.
fn extract_places(path: &Path, wanted: &[ContainerPlace]) -> Extracted {
    use std::collections::{HashMap, HashSet};
    struct Collect<'a> {
        /// Member chain → places in that member.
        leaves: HashMap<&'a [String], Vec<(u64, u64)>>,
        /// Every level of every wanted chain as the container stores its name (see
        /// `containers::stored_name`), to descend into those members only.
        levels: HashSet<(&'a [String], &'a str)>,
        found: HashMap<ContainerPlace, std::sync::Arc<Vec<u8>>>,
    }
    impl containers::Visitor for Collect<'_> {
        fn leaf(&mut self, chain: &[String], bytes: &[u8]) {
            for &(offset, length) in self.leaves.get(chain).map_or(&[][..], Vec::as_slice) {
                let range = usize::try_from(offset).ok().zip(usize::try_from(offset + length).ok());
                if let Some(b) = range.and_then(|(a, b)| bytes.get(a..b)) {
                    self.found.entry((chain.to_vec(), offset, length)).or_insert_with(|| std::sync::Arc::new(b.to_vec()));
                }
            }
        }
        fn opened(&mut self, _: containers::Opened) {}
        fn error(&mut self, _: &[String], _: containers::Format, _: Option<&str>, _: containers::ContainerError) {}
        fn unopened(&mut self, _: &[String], _: &'static str) {}
        fn wants(&self, chain: &[String], name: &str) -> bool {
            self.levels.iter().any(|(c, n)| *c == chain && *n == name)
        }
    }
    let file = read_whole_file(path)?;
    let mut c = Collect { leaves: HashMap::new(), levels: HashSet::new(), found: HashMap::new() };
    for (chain, offset, length) in wanted {
        c.leaves.entry(chain.as_slice()).or_default().push((*offset, *length));
        for (i, name) in chain.iter().enumerate() {
            c.levels.insert((&chain[..i], containers::stored_name(name)));
        }
    }
    containers::walk(&mut Vec::new(), &file, 0, &mut containers::Budget::for_file(file.len() as u64), &mut c);
    Ok(c.found)
}

/// The container of `s`, from its archive member extracted on its own.
fn extract_container(s: &FoundShader) -> Result<Vec<u8>, String> {
    let file = read_whole_file(&s.path)?;
    let member = containers::extract(&file, &s.member)?;
    let range = usize::try_from(s.offset).ok().zip(usize::try_from(s.offset + s.length).ok());
    range
        .and_then(|(a, b)| member.get(a..b))
        .map(<[u8]>::to_vec)
        .ok_or_else(|| format!("file changed since the scan: member has no {} bytes at 0x{:X}", s.length, s.offset))
}

/// Reads the bytes a report label names: a plain file, or `file!member!member…` as scans and
/// build reports print members of archives (the longest prefix before a `!` that is a file is
/// the file; the rest is the member chain).
pub fn read_label(label: &Path) -> Result<Vec<u8>, String> {
    if let Ok(meta) = std::fs::metadata(label) {
        // Only regular files: reading /dev/zero never ends and a FIFO blocks.
        if !meta.is_file() {
            return Err(format!("{}: not a regular file (a directory, FIFO, socket or device); shrec reads shaders from files", label.display()));
        }
        if meta.len() > crate::limits::MAX_ARCHIVE_BYTES {
            return Err(format!(
                "{}: resource cap: {} bytes exceed the {}-byte limit per file",
                label.display(),
                meta.len(),
                crate::limits::MAX_ARCHIVE_BYTES
            ));
        }
        return std::fs::read(label).map_err(|e| format!("{}: {e}", label.display()));
    }
    let text = label.to_string_lossy();
    let split = text.match_indices('!').map(|(i, _)| i).rev().find(|&i| Path::new(&text[..i]).is_file());
    let Some(at) = split else {
        return Err(format!("{}: no such file (nor a file!member path whose file exists)", label.display()));
    };
    let chain: Vec<String> = text[at + 1..].split('!').map(str::to_string).collect();
    let file = std::fs::read(&text[..at]).map_err(|e| format!("{}: {e}", &text[..at]))?;
    containers::extract(&file, &chain).map_err(|e| format!("{}: {e}", label.display()))
}

/// Reads the bytes of the container a shader was found in (the build re-reads containers
/// instead of keeping every scanned file in memory between scanning and translating), and checks
/// that they still hold the shader the scan keyed: the key is computed again from the bytes read
/// and must be the scan's. A file rewritten between the scan and the build (same length, other
/// bytes) would otherwise be compiled from its new bytes and cached under its old key;
/// that shader fails instead, naming the change, and the next build scans the file again.
pub fn read_container(s: &FoundShader) -> Result<Vec<u8>, String> {
    read_container_with(s, &MemberReader::default())
}

/// [`read_container`], taking archive members from `members` (a build's: each archive is
/// opened once for all its shaders).
pub fn read_container_with(s: &FoundShader, members: &MemberReader) -> Result<Vec<u8>, String> {
    let bytes = read_container_bytes(s, members)?;
    let entries = formats::entries(s.container, &bytes)
        .map_err(|e| format!("file changed since the scan: the container no longer lists its shaders ({})", e.reason()))?;
    match entries.iter().find(|e| e.index == s.index) {
        Some(e) if e.key == s.key => Ok(bytes),
        Some(e) => Err(format!(
            "file changed since the scan: shader {} now has key {} (the scan found {}); not built",
            s.index,
            key_hex(e.key),
            key_hex(s.key)
        )),
        None => Err(format!("file changed since the scan: the container no longer holds shader {}", s.index)),
    }
}

fn read_container_bytes(s: &FoundShader, members: &MemberReader) -> Result<Vec<u8>, String> {
    use std::io::{Read, Seek, SeekFrom};
    if !s.member.is_empty() {
        return members.container_bytes(s);
    }
    let mut f = std::fs::File::open(&s.path).map_err(|e| format!("cannot open: {e}"))?;
    f.seek(SeekFrom::Start(s.offset)).map_err(|e| format!("cannot seek to 0x{:X}: {e}", s.offset))?;
    let mut buf = Vec::with_capacity(s.length as usize);
    f.take(s.length).read_to_end(&mut buf).map_err(|e| format!("cannot read: {e}"))?;
    if buf.len() as u64 != s.length {
        return Err(format!("file changed since the scan: expected {} bytes at 0x{:X}, read {}", s.length, s.offset, buf.len()));
    }
    Ok(buf)
}
