//! The scan index: per file, what the last scan found, so that a rebuild reads only the files
//! that changed. A game directory is mostly gigabytes of audio, video and archives; reading all
//! of it again would dominate a rebuild in which no shader changed.
//!
//! A file's record is reused while its [`FileStamp`] — size, modification and status-change
//! times (nanoseconds) and inode — is unchanged. Writing a file's content always updates its
//! status-change time, which ordinary tools cannot set back, so a changed file is always read
//! again (this is make's and cargo's rule, with the change time added). Files that could not be
//! read are not recorded (they are retried), and the index is tied to shrec's version, since
//! detection rules and keys may change between versions. A missing, unreadable or foreign index
//! is ignored: everything is scanned.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::detect::ContainerKind;
use crate::formats::Stage;
use crate::scan::{FileScan, FoundShader, OpenedContainer, ScanError};

/// The member chain of a label made by [`crate::scan::label`] from `path`. A name holding `!`
/// is split in two, but joining the parts again (on reuse) gives the same label, which is all
/// errors and container listings keep (shaders record their real chain).
fn chain_of(path: &Path, label: &Path) -> Vec<String> {
    let (p, l) = (path.as_os_str().to_string_lossy(), label.as_os_str().to_string_lossy());
    match l.strip_prefix(&*p).and_then(|rest| rest.strip_prefix('!')) {
        Some(rest) if l.len() > p.len() => rest.split('!').map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// What identifies one version of a file's content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileStamp {
    len: u64,
    modified_ns: i128,
    changed_ns: i128,
    inode: u64,
    device: u64,
}

impl FileStamp {
    /// The file's size in bytes.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub fn of(m: &std::fs::Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let ns = |s: i64, n: i64| s as i128 * 1_000_000_000 + n as i128;
            FileStamp {
                len: m.len(),
                modified_ns: ns(m.mtime(), m.mtime_nsec()),
                changed_ns: ns(m.ctime(), m.ctime_nsec()),
                inode: m.ino(),
                device: m.dev(),
            }
        }
        #[cfg(not(unix))]
        {
            let ns = |t: std::io::Result<std::time::SystemTime>| {
                t.ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(-1, |d| d.as_nanos() as i128)
            };
            FileStamp { len: m.len(), modified_ns: ns(m.modified()), changed_ns: ns(m.created()), inode: 0, device: 0 }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ShaderRecord {
    /// Member chain inside the file (containers); empty for the file itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    member: Vec<String>,
    container: ContainerKind,
    offset: u64,
    length: u64,
    index: u32,
    stage: Stage,
    key: u64,
    name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ErrorRecord {
    /// Member chain of the error inside the file (containers).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    member: Vec<String>,
    offset: Option<u64>,
    kind: Option<ContainerKind>,
    at: Option<u64>,
    reason: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct FileRecord {
    path: PathBuf,
    stamp: FileStamp,
    bytes: u64,
    shaders: Vec<ShaderRecord>,
    errors: Vec<ErrorRecord>,
    /// Containers opened: (member chain, format, members, decompressed bytes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    containers: Vec<(Vec<String>, String, usize, u64)>,
    /// Containers recognised but not opened: (member chain, what).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unopened: Vec<(Vec<String>, String)>,
}

/// Bumped when the record format changes.
// 3: member names escape backslashes and non-UTF-8 bytes, and repeated names are numbered.
const FORMAT: &str = "shrec-scan-index-3";

#[derive(Serialize, Deserialize)]
struct IndexFile {
    format: String,
    shrec: String,
    files: Vec<FileRecord>,
}

/// Records by path.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ScanIndex {
    files: HashMap<PathBuf, FileRecord>,
}

impl ScanIndex {
    /// The index at `path`, or an empty one (missing, unreadable, other format or version).
    pub fn load(path: &Path) -> ScanIndex {
        let parsed = std::fs::read(path).ok().and_then(|b| serde_json::from_slice::<IndexFile>(&b).ok());
        match parsed {
            Some(f) if f.format == FORMAT && f.shrec == env!("CARGO_PKG_VERSION") => {
                ScanIndex { files: f.files.into_iter().map(|r| (r.path.clone(), r)).collect() }
            }
            _ => ScanIndex::default(),
        }
    }

    /// Writes the index atomically.
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        // JSON strings are UTF-8: a file whose name is not is left out of the index (rescanned
        // every time) instead of making the whole index unwritable (one such
        // name turned a 0.7 ms warm scan into a 1.28 s cold one).
        let mut files: Vec<&FileRecord> = self.files.values().filter(|r| r.path.to_str().is_some()).collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let file = IndexFile { format: FORMAT.into(), shrec: env!("CARGO_PKG_VERSION").into(), files: files.into_iter().cloned().collect() };
        let text = serde_json::to_vec(&file).map_err(std::io::Error::other)?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        crate::cache::atomic::write(path, &text)
    }

    /// The recorded scan of `path` when the file is unchanged since: its `stamp` now (taken by
    /// the directory walk, so an unchanged file costs that one `stat`) equals the recorded one.
    pub(crate) fn reuse(&self, path: &Path, stamp: &FileStamp) -> Option<FileScan> {
        let r = self.files.get(path)?;
        if *stamp != r.stamp {
            return None;
        }
        let shaders = r
            .shaders
            .iter()
            .map(|s| FoundShader {
                path: path.to_path_buf(),
                member: s.member.clone(),
                container: s.container,
                family: s.container.family(),
                offset: s.offset,
                length: s.length,
                index: s.index,
                stage: s.stage,
                key: s.key,
                name: s.name.clone(),
            })
            .collect();
        let errors = r
            .errors
            .iter()
            .map(|e| ScanError { path: crate::scan::label(path, &e.member), offset: e.offset, kind: e.kind, at: e.at, reason: e.reason.clone() })
            .collect();
        let containers = r
            .containers
            .iter()
            .filter_map(|(chain, format, members, bytes)| {
                let format = crate::scan::containers::Format::from_name(format)?.name();
                Some(OpenedContainer { path: crate::scan::label(path, chain), format, members: *members, bytes: *bytes })
            })
            .collect();
        let unopened = r.unopened.iter().map(|(chain, what)| (crate::scan::label(path, chain), what.clone())).collect();
        Some(FileScan { shaders, errors, bytes: r.bytes, stamp: Some(*stamp), containers, unopened })
    }

    /// The index of a scan: every file that was read completely.
    pub(crate) fn record<'a>(scans: impl Iterator<Item = (&'a PathBuf, &'a FileScan)>) -> ScanIndex {
        let files = scans
            .filter_map(|(path, f)| {
                let stamp = f.stamp?;
                let record = FileRecord {
                    path: path.clone(),
                    stamp,
                    bytes: f.bytes,
                    shaders: f
                        .shaders
                        .iter()
                        .map(|s| ShaderRecord {
                            member: s.member.clone(),
                            container: s.container,
                            offset: s.offset,
                            length: s.length,
                            index: s.index,
                            stage: s.stage,
                            key: s.key,
                            name: s.name.clone(),
                        })
                        .collect(),
                    errors: f
                        .errors
                        .iter()
                        .map(|e| ErrorRecord { member: chain_of(path, &e.path), offset: e.offset, kind: e.kind, at: e.at, reason: e.reason.clone() })
                        .collect(),
                    containers: f.containers.iter().map(|c| (chain_of(path, &c.path), c.format.to_string(), c.members, c.bytes)).collect(),
                    unopened: f.unopened.iter().map(|(p, what)| (chain_of(path, p), what.clone())).collect(),
                };
                Some((path.clone(), record))
            })
            .collect();
        ScanIndex { files }
    }
}
