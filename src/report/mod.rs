//! Per-shader outcomes, the summary table, the JSON report and CI annotations.
//!
//! The build fills a [`Report`] with one [`Outcome`] per shader found (compiled or failed),
//! the per-file problems of the scan ([`ScanError`]) and fatal errors; this module only formats.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Map, Value};

use crate::formats::{ContainerKind, Family, Stage};
use crate::scan::{FoundShader, ScanResult};

mod kind;
pub use kind::FailureKind;

/// Version of the JSON documents `shrec scan --json` and `shrec build --report` write; both share
/// one schema (docs/report-json.md). 3: the scan's document got a version, both name a shader
/// and an error with the same fields. 4: a failed shader's `error_kind` is its [`FailureKind`]
/// (it was the phase, which `phase` still is).
pub const SCHEMA_VERSION: u32 = 4;

/// Pipeline step at which a shader failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Container or microcode could not be decoded.
    Parse,
    /// Lowering to IR or HLSL failed.
    Translate,
    /// DXC rejected the HLSL for DXIL.
    DxcDxil,
    /// DXC rejected the HLSL for SPIR-V.
    DxcSpirv,
    /// SMOL-V encoding or another packing step failed.
    Pack,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Parse => "parse",
            Phase::Translate => "translate",
            Phase::DxcDxil => "dxc-dxil",
            Phase::DxcSpirv => "dxc-spirv",
            Phase::Pack => "pack",
        }
    }

    /// Whether a failure in this phase still counts the shader as translated (to HLSL).
    pub fn after_translation(self) -> bool {
        !matches!(self, Phase::Parse | Phase::Translate)
    }
}

/// What happened to one shader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// In the cache; `cached` when its artifacts came from the incremental cache.
    Compiled { cached: bool },
    Failed {
        phase: Phase,
        /// What kind of failure (the report's `error_kind`).
        kind: FailureKind,
        reason: String,
        /// Offset inside the container that the reason is about.
        detail_offset: Option<u64>,
    },
    /// Found, but its family has no translator in this version of shrec. Reported as a
    /// warning, not a failure (see README, "Formats supported today").
    Skipped { reason: String },
}

/// One shader found in the inputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Input file, followed by `!member` per archive level (as [`crate::scan::label`]).
    pub path: PathBuf,
    /// The file on disk.
    pub file: PathBuf,
    /// Member chain inside `file` (empty: the file itself).
    pub member: Vec<String>,
    /// Container format holding the shader.
    pub container: ContainerKind,
    /// The program's name, when its container records one.
    pub name: Option<String>,
    /// Offset of the container in the file (in the member's decompressed bytes inside an archive).
    pub offset: u64,
    pub family: Family,
    pub stage: Stage,
    /// Cache key.
    pub key: u64,
    /// Position of the shader inside its container.
    pub index: u32,
    pub status: Status,
    /// The `--override-dir` file compiled instead of the translation, if any.
    pub hlsl_override: Option<PathBuf>,
    /// Why its `--hlsl-dir` file could not be written (full disk, ...). The shader is still
    /// built and in the cache: the file is a copy for reading, the cache is the product.
    /// Counts as an error for [`exit_code`].
    pub hlsl_dump_error: Option<String>,
    /// Its SPIR-V was compiled without DXC's optimizer (`-O0`): its HLSL is larger than
    /// `--spirv-unoptimized-above` ([`crate::limits::SPIRV_UNOPTIMIZED_HLSL_BYTES`]).
    pub spirv_unoptimized: bool,
}

/// A problem with an input that is not tied to one shader (unreadable file, container whose
/// shaders could not even be listed). Counts as a failure for [`exit_code`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanError {
    /// The file, followed by `!member` per archive level when the error is inside one.
    pub path: PathBuf,
    /// Offset of the container in the file (`None` for a file-level error).
    pub offset: Option<u64>,
    /// Container kind (`None` for a file-level error).
    pub container: Option<ContainerKind>,
    /// Where in the file the problem was found, when known (container offset + the parser's
    /// offset inside the container).
    pub at: Option<u64>,
    pub reason: String,
}

impl ScanError {
    pub fn family(&self) -> Option<Family> {
        self.container.map(ContainerKind::family)
    }
}

impl From<crate::scan::ScanError> for ScanError {
    fn from(e: crate::scan::ScanError) -> Self {
        ScanError { path: e.path, offset: e.offset, container: e.kind, at: e.at, reason: e.reason }
    }
}

/// A shader found under a key that was already queued: not built again (the runtime looks
/// shaders up by key, so one entry serves both).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// This copy, as the scan found it.
    pub shader: FoundShader,
}

/// Everything one run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub outcomes: Vec<Outcome>,
    pub scan_errors: Vec<ScanError>,
    /// Errors that stopped the build or made its output unusable (cannot write the cache, DXC
    /// missing, …). Any of these gives exit code 1.
    pub fatal: Vec<String>,
    /// DXC invocations actually run (cache hits excluded).
    pub dxc_compilations: usize,
    /// Shaders whose artifacts came from the incremental cache.
    pub cache_hits: usize,
    /// Shaders found again under a key already built (the first occurrence is built).
    pub duplicates: Vec<Duplicate>,
    /// Set when the input held no shader and `--allow-empty` was not given: why that is an
    /// error (an archive format shrec cannot open looks exactly like this). Exit code 2.
    pub empty_input: Option<String>,
    /// `--allow-failures`: failed shaders and scan errors are reported but exit with 0 (the
    /// cache holds every shader that built). Fatal errors and an empty input still fail.
    pub failures_allowed: bool,
    /// Incremental-cache entries found damaged (corrupt, truncated, unreadable) and rebuilt:
    /// `cache entry <path> corrupt (checksum mismatch), rebuilding`. Warnings, not failures.
    pub cache_repairs: Vec<String>,
    pub wall_time: Duration,
}

/// Counts for one family (or the total) in the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    /// Shaders found.
    pub found: usize,
    /// Translated to HLSL (compiled, or failed in DXC / packing).
    pub translated: usize,
    /// In the cache.
    pub compiled: usize,
    pub failed: usize,
    /// Compiled from the incremental cache.
    pub cached: usize,
    /// Found, but the family has no translator yet.
    pub skipped: usize,
}

impl Counts {
    fn add(&mut self, status: &Status) {
        self.found += 1;
        match status {
            Status::Compiled { cached } => {
                self.translated += 1;
                self.compiled += 1;
                self.cached += *cached as usize;
            }
            Status::Failed { phase, .. } => {
                self.translated += phase.after_translation() as usize;
                self.failed += 1;
            }
            Status::Skipped { .. } => self.skipped += 1,
        }
    }
}

impl Report {
    /// Counts per family that has at least one outcome, in [`Family::ALL`] order.
    pub fn counts_by_family(&self) -> BTreeMap<Family, Counts> {
        let mut m = BTreeMap::new();
        for o in &self.outcomes {
            m.entry(o.family).or_insert_with(Counts::default).add(&o.status);
        }
        m
    }

    pub fn totals(&self) -> Counts {
        let mut c = Counts::default();
        for o in &self.outcomes {
            c.add(&o.status);
        }
        c
    }
}

/// `<path>+0x<offset> [<family> <stage> #<index> 0x<key>]`: how every line names a shader
/// (`#<index>`: its position in a container holding several, as `shrec hlsl --index` takes it).
fn shader_label(o: &Outcome) -> String {
    format!("{}+0x{:x} [{} {} #{} 0x{:016X}]", path_text(&o.path), o.offset, o.family, o.stage.name_in(o.family), o.index, o.key)
}

/// The command that shows what failed: the disassembly when the shader could not be decoded
/// or lowered, the generated HLSL when DXC or packing refused it.
pub fn show_command(o: &Outcome) -> Option<String> {
    let Status::Failed { phase, .. } = &o.status else { return None };
    let verb = if phase.after_translation() { "hlsl" } else { "disasm" };
    Some(format!("shrec {verb} {} --offset 0x{:x} --index {}", shell_quote_path(&o.path), o.offset, o.index))
}

/// A path as text for reports (see [`crate::text::path_text`]: bytes that are not UTF-8 as
/// `\xNN`).
pub fn path_text(p: &Path) -> String {
    crate::text::path_text(p)
}

/// A path as one POSIX shell word, also when its name is not UTF-8: then
/// `"$(printf '…')"` with the other bytes as octal escapes (POSIX printf), the only portable
/// way to type them.
#[cfg(unix)]
pub fn shell_quote_path(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    if let Some(s) = p.to_str() {
        return shell_quote(s);
    }
    let mut fmt = String::new();
    for &b in p.as_os_str().as_bytes() {
        match b {
            b'%' => fmt.push_str("%%"),
            b'\\' => fmt.push_str("\\\\"),
            b'\'' => fmt.push_str("'\\''"),
            0x20..=0x7E => fmt.push(b as char),
            _ => fmt.push_str(&format!("\\{b:03o}")),
        }
    }
    format!("\"$(printf '{fmt}')\"")
}

/// [`shell_quote_path`] on Windows: one word for both cmd and PowerShell ([`windows_quote`]).
#[cfg(windows)]
pub fn shell_quote_path(p: &Path) -> String {
    windows_quote(&path_text(p))
}

/// `s` as one argument typed into cmd or PowerShell: unchanged when made of characters neither
/// treats specially, else in double quotes, which both take literally for everything a Windows
/// file name can hold except `%` (cmd), `$` and `` ` `` (PowerShell) and the typographic double
/// quotes PowerShell also ends a string with. A name with one of those is written for
/// PowerShell, the default shell, in single quotes, where nothing is special but the quote
/// itself (`'` and its typographic forms, doubled). Windows names cannot contain `"`.
pub fn windows_quote(s: &str) -> String {
    const SINGLE_QUOTES: [char; 4] = ['\'', '\u{2018}', '\u{2019}', '\u{201B}'];
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-.\\/:".contains(c));
    if plain {
        s.to_string()
    } else if s.contains(['%', '$', '`', '\u{201C}', '\u{201D}', '\u{201E}']) {
        let mut q = String::from("'");
        for c in s.chars() {
            q.push(c);
            if SINGLE_QUOTES.contains(&c) {
                q.push(c);
            }
        }
        q.push('\'');
        q
    } else {
        format!("\"{s}\"")
    }
}

/// Elsewhere off Unix and Windows: a POSIX shell word of the lossy text.
#[cfg(not(any(unix, windows)))]
pub fn shell_quote_path(p: &Path) -> String {
    shell_quote(&p.to_string_lossy())
}

/// `s` as one POSIX shell word: unchanged when it is made of characters no shell treats
/// specially, else in single quotes (`'` written as `'\''`; `!` is literal inside them).
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "_-./+=:,@%".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn failure_message(o: &Outcome) -> Option<String> {
    let Status::Failed { reason, detail_offset, .. } = &o.status else { return None };
    let show = show_command(o).map(|c| format!(" (see: {c})")).unwrap_or_default();
    Some(match detail_offset {
        Some(off) => format!("{}: at +0x{off:x}: {reason}{show}", shader_label(o)),
        None => format!("{}: {reason}{show}", shader_label(o)),
    })
}

fn dump_error_message(o: &Outcome) -> Option<String> {
    let e = o.hlsl_dump_error.as_deref()?;
    Some(format!("{}: --hlsl-dir: {e} (the shader is built and in the cache; only this copy of its HLSL is missing)", shader_label(o)))
}

/// `error: <path>+0x<offset> [...]: --hlsl-dir: <reason> (...)` when the shader's `--hlsl-dir`
/// file could not be written.
pub fn dump_error_line(o: &Outcome) -> Option<String> {
    dump_error_message(o).map(|m| format!("error: {}", printable(&m)))
}

/// `warning: <path>+0x<offset> [<family> <stage> 0x<key>]: <reason>` for a skipped shader.
pub fn warning_line(o: &Outcome) -> Option<String> {
    let Status::Skipped { reason } = &o.status else { return None };
    Some(format!("warning: {}", printable(&format!("{}: {reason}", shader_label(o)))))
}

/// `error: <path>+0x<offset> [<family> <stage> 0x<key>]: <reason>` for a failed shader, with
/// `at +0x<off>: ` before the reason when it points inside the container. `None` when compiled.
///
/// DXC's diagnostics keep their line breaks: the reason's first line (and the command) is the
/// `error:` line, each further line follows indented by four spaces ([`detail_line`]). Other
/// reasons stay on one line (their line breaks escaped: they can hold names from the input).
pub fn error_line(o: &Outcome) -> Option<String> {
    let Status::Failed { phase, reason, detail_offset, .. } = &o.status else { return None };
    if !matches!(phase, Phase::DxcDxil | Phase::DxcSpirv) || !reason.contains('\n') {
        return failure_message(o).map(|m| format!("error: {}", printable(&m)));
    }
    let (first, details) = reason.split_once('\n').expect("checked above");
    let show = show_command(o).map(|c| format!(" (see: {c})")).unwrap_or_default();
    let at = detail_offset.map(|off| format!("at +0x{off:x}: ")).unwrap_or_default();
    let mut s = format!("error: {}", printable(&format!("{}: {at}{first}{show}", shader_label(o))));
    for line in details.lines() {
        s.push('\n');
        s.push_str(&detail_line(line));
    }
    Some(s)
}

/// One line of DXC's diagnostics under its `error:` line: indented, control characters escaped
/// as in [`printable`], and a line that would read as a workflow command once a CI runner trims
/// it (`::` first) gets its first colon escaped too. DXC quotes the HLSL it rejects, which is
/// generated from input files.
pub fn detail_line(line: &str) -> String {
    let p = printable(line.trim_end_matches('\r'));
    if p.trim_start().starts_with("::") {
        let at = p.find("::").expect("checked");
        format!("    {}\\u{{3a}}{}", &p[..at], &p[at + 1..])
    } else {
        format!("    {p}")
    }
}

/// A name or message from an input file made safe for one log line: every control character
/// (line breaks, ESC, DEL, C1 codes) becomes a `\u{..}` escape. File names, archive members
/// and program names inside shaders reach stderr through this, so none can start a new line —
/// a line beginning with `::` is a workflow command to a CI runner, which reads stderr too — or
/// drive the terminal.
pub fn printable(s: &str) -> String {
    crate::text::printable(s)
}

fn escape_controls(s: &str, keep_line_breaks: bool) -> String {
    crate::text::escape(s, keep_line_breaks)
}

fn scan_error_message(e: &ScanError) -> String {
    let mut s = path_text(&e.path);
    if let Some(off) = e.at.or(e.offset) {
        write!(s, "+0x{off:x}").unwrap();
    }
    if let Some(f) = e.family() {
        write!(s, " [{f}]").unwrap();
    }
    match e.container {
        Some(k) => write!(s, ": {} container: {}", k.name(), e.reason).unwrap(),
        None => write!(s, ": {}", e.reason).unwrap(),
    }
    s
}

/// `error: <path>[+0x<offset>] [<family>]: <reason>` for a scan error.
pub fn scan_error_line(e: &ScanError) -> String {
    format!("error: {}", printable(&scan_error_message(e)))
}

/// The end-of-run table: one row per family with outcomes, a total row, then one line with
/// DXC compilations, cache hits and wall time.
pub fn summary_table(r: &Report) -> String {
    let header = ["family", "found", "translated", "compiled", "failed", "cached", "skipped"];
    let mut rows: Vec<(String, Counts)> = r.counts_by_family().into_iter().map(|(f, c)| (f.name().to_owned(), c)).collect();
    rows.push(("total".to_owned(), r.totals()));
    let cells = |c: &Counts| [c.found, c.translated, c.compiled, c.failed, c.cached, c.skipped].map(|n| n.to_string());
    let mut widths = header.map(str::len);
    for (name, c) in &rows {
        widths[0] = widths[0].max(name.len());
        for (i, cell) in cells(c).iter().enumerate() {
            widths[i + 1] = widths[i + 1].max(cell.len());
        }
    }
    let mut s = String::new();
    let mut line = |first: &str, rest: &[String]| {
        let mut l = format!("{first:<w$}", w = widths[0]);
        for (i, cell) in rest.iter().enumerate() {
            write!(l, "  {cell:>w$}", w = widths[i + 1]).unwrap();
        }
        s.push_str(l.trim_end());
        s.push('\n');
    };
    line(header[0], &header[1..].iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for (name, c) in &rows {
        line(name, &cells(c));
    }
    writeln!(
        s,
        "{} DXC compilations, {} cache hits, {} duplicates, {} scan errors, {:.2} s",
        r.dxc_compilations,
        r.cache_hits,
        r.duplicates.len(),
        r.scan_errors.len(),
        r.wall_time.as_secs_f64()
    )
    .unwrap();
    s
}

fn counts_json(c: &Counts) -> Value {
    serde_json::to_value(c).expect("counts serialize")
}

/// The fields that name one shader, the same in every JSON document: the scan's `shaders` and
/// `duplicates`, the build's `outcomes` and `duplicates` (docs/report-json.md).
struct ShaderRef<'a> {
    file: &'a Path,
    member: &'a [String],
    container: ContainerKind,
    family: Family,
    stage: Stage,
    offset: u64,
    index: u32,
    key: u64,
    name: Option<&'a str>,
}

impl<'a> From<&'a FoundShader> for ShaderRef<'a> {
    fn from(s: &'a FoundShader) -> Self {
        ShaderRef {
            file: &s.path,
            member: &s.member,
            container: s.container,
            family: s.family,
            stage: s.stage,
            offset: s.offset,
            index: s.index,
            key: s.key,
            name: s.name.as_deref(),
        }
    }
}

impl<'a> From<&'a Outcome> for ShaderRef<'a> {
    fn from(o: &'a Outcome) -> Self {
        ShaderRef {
            file: &o.file,
            member: &o.member,
            container: o.container,
            family: o.family,
            stage: o.stage,
            offset: o.offset,
            index: o.index,
            key: o.key,
            name: o.name.as_deref(),
        }
    }
}

/// `path` (the file and its member chain, the label `shrec hlsl` / `disasm` take), `file`,
/// `member`, `container`, `family`, `stage`, `offset`, `index`, `key`, `name`. Every string that
/// comes from an input (names, members) goes through serde_json, which escapes it.
fn shader_json(s: ShaderRef) -> Map<String, Value> {
    let v = json!({
        "path": path_text(&crate::scan::label(s.file, s.member)),
        "file": path_text(s.file),
        "member": s.member,
        "container": s.container.name(),
        "family": s.family.name(),
        "stage": s.stage.name_in(s.family),
        "offset": s.offset,
        "index": s.index,
        "key": crate::scan::key_hex(s.key),
        "name": s.name,
    });
    let Value::Object(m) = v else { unreachable!("json! of an object literal") };
    m
}

/// One scan error, in both documents' `scan_errors`: `error_kind` is `file` (the file could not
/// be read or walked) or `container` (a container whose shaders could not be listed).
fn scan_error_json(e: &ScanError) -> Value {
    json!({
        "path": path_text(&e.path),
        "offset": e.offset,
        "container": e.container.map(ContainerKind::name),
        "family": e.family().map(Family::name),
        "at": e.at,
        "error_kind": if e.container.is_some() { "container" } else { "file" },
        "reason": e.reason,
        "message": scan_error_message(e),
    })
}

fn duplicates_json(d: &[Duplicate]) -> Vec<Value> {
    d.iter().map(|d| Value::Object(shader_json((&d.shader).into()))).collect()
}

/// The `--report out.json` document (schema: docs/report-json.md).
pub fn to_json(r: &Report) -> Value {
    let outcomes: Vec<Value> = r
        .outcomes
        .iter()
        .map(|o| {
            let mut m = shader_json(o.into());
            m.insert("hlsl_override".into(), o.hlsl_override.as_deref().map(path_text).into());
            m.insert("hlsl_dump_error".into(), o.hlsl_dump_error.clone().into());
            m.insert("spirv_unoptimized".into(), o.spirv_unoptimized.into());
            match &o.status {
                Status::Compiled { cached } => {
                    m.insert("status".into(), "compiled".into());
                    m.insert("cached".into(), (*cached).into());
                }
                Status::Failed { phase, kind, reason, detail_offset } => {
                    m.insert("status".into(), "failed".into());
                    m.insert("error_kind".into(), kind.name().into());
                    m.insert("phase".into(), phase.name().into());
                    m.insert("reason".into(), reason.clone().into());
                    m.insert("detail_offset".into(), (*detail_offset).into());
                    m.insert("at".into(), detail_offset.and_then(|d| o.offset.checked_add(d)).into());
                    m.insert("message".into(), failure_message(o).into());
                    m.insert("command".into(), show_command(o).into());
                }
                Status::Skipped { reason } => {
                    m.insert("status".into(), "skipped".into());
                    m.insert("reason".into(), reason.clone().into());
                }
            }
            Value::Object(m)
        })
        .collect();
    let per_family: Map<String, Value> = r.counts_by_family().iter().map(|(f, c)| (f.name().to_owned(), counts_json(c))).collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        // the name before schema_version 3, kept for readers of version 2
        "version": SCHEMA_VERSION,
        "command": "build",
        "exit_code": exit_code(r),
        "fatal": r.fatal,
        "outcomes": outcomes,
        "scan_errors": r.scan_errors.iter().map(scan_error_json).collect::<Vec<_>>(),
        "duplicates": duplicates_json(&r.duplicates),
        "totals": counts_json(&r.totals()),
        "per_family": per_family,
        "dxc_compilations": r.dxc_compilations,
        "cache_hits": r.cache_hits,
        "empty_input": r.empty_input,
        "failures_allowed": r.failures_allowed,
        "cache_repairs": r.cache_repairs,
        "wall_time_s": r.wall_time.as_secs_f64(),
    })
}

/// The `shrec scan DIR --json` document (schema: docs/report-json.md): every shader found
/// (duplicates included, and listed again in `duplicates`: each shader whose key an earlier one
/// in path order already had — the ones `build` does not build again), counts, scan errors, the
/// containers opened and those recognised but not opened.
pub fn scan_to_json(r: &ScanResult) -> Value {
    let shaders: Vec<Value> = r
        .shaders
        .iter()
        .map(|x| {
            let mut m = shader_json(x.into());
            m.insert("length".into(), x.length.into());
            Value::Object(m)
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let duplicates: Vec<Duplicate> = r.shaders.iter().filter(|s| !seen.insert(s.key)).map(|s| Duplicate { shader: s.clone() }).collect();
    let counts: Vec<Value> = r.counts().into_iter().map(|((f, st), n)| json!({ "family": f.name(), "stage": st.name_in(f), "count": n })).collect();
    let scan_errors: Vec<ScanError> = r.errors.iter().cloned().map(ScanError::from).collect();
    // Schema 2's name and shape of the scan errors, kept for existing readers.
    let errors: Vec<Value> = r
        .errors
        .iter()
        .map(|e| json!({ "path": path_text(&e.path), "offset": e.offset, "kind": e.kind.map(|k| k.name()), "at": e.at, "reason": e.reason }))
        .collect();
    let containers: Vec<Value> =
        r.containers.iter().map(|c| json!({ "path": path_text(&c.path), "format": c.format, "members": c.members, "bytes": c.bytes })).collect();
    let unopened: Vec<Value> = r.unopened.iter().map(|(p, w)| json!({ "path": path_text(p), "format": w })).collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "command": "scan",
        "exit_code": if r.errors.is_empty() { 0 } else { 2 },
        "fatal": Vec::<String>::new(),
        "files": r.files,
        "bytes": r.bytes,
        "shaders": shaders,
        "counts": counts,
        "scan_errors": scan_errors.iter().map(scan_error_json).collect::<Vec<_>>(),
        "duplicates": duplicates_json(&duplicates),
        "containers": containers,
        "unopened": unopened,
        "errors": errors,
    })
}

/// The `scan --json` document of a scan that could not run (no such directory): `fatal` and
/// `exit_code` 1, every list empty, so that a reader needs no second format.
pub fn scan_fatal_json(message: &str) -> Value {
    let mut v = scan_to_json(&ScanResult::default());
    v["fatal"] = json!([message]);
    v["exit_code"] = 1.into();
    v
}

/// Escapes a workflow-command message: GitHub's `%`, `\r`, `\n` escapes, and every other
/// control character as in [`printable`].
pub fn escape_annotation_data(s: &str) -> String {
    escape_controls(s, true).replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

/// Escapes a workflow-command property value (the data escapes plus `:` and `,`).
pub fn escape_annotation_property(s: &str) -> String {
    escape_annotation_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions workflow commands: `::error` per failed shader, scan error and fatal error,
/// `::warning` per repaired incremental-cache entry. The caller prints them when
/// `GITHUB_ACTIONS=true`.
///
/// A failed shader's annotation has a `title=` (family, stage, phase) and a `file=` GitHub can
/// link: the file on disk (an archive, not `archive!member`, which the message names), relative
/// to `$GITHUB_WORKSPACE` when it lies inside it.
pub fn github_annotations(r: &Report) -> Vec<String> {
    github_annotations_in(r, std::env::var_os("GITHUB_WORKSPACE").map(PathBuf::from).as_deref())
}

/// `file` relative to `workspace` when inside it (GitHub links annotations by repository path).
fn workspace_relative(file: &Path, workspace: Option<&Path>) -> String {
    let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
    match workspace.and_then(|w| abs.strip_prefix(w).ok()) {
        Some(rel) => path_text(rel),
        None => path_text(file),
    }
}

/// [`github_annotations`] with the workspace given.
pub fn github_annotations_in(r: &Report, workspace: Option<&Path>) -> Vec<String> {
    let mut out = Vec::new();
    for o in &r.outcomes {
        if let (Some(m), Status::Failed { phase, .. }) = (failure_message(o), &o.status) {
            let title = format!("shrec: {} {} shader failed ({})", o.family, o.stage.name_in(o.family), phase.name());
            out.push(format!(
                "::error file={},title={}::{}",
                escape_annotation_property(&workspace_relative(&o.file, workspace)),
                escape_annotation_property(&title),
                escape_annotation_data(&m)
            ));
        }
    }
    for o in &r.outcomes {
        if let Some(m) = dump_error_message(o) {
            out.push(format!("::error file={}::{}", escape_annotation_property(&path_text(&o.path)), escape_annotation_data(&m)));
        }
    }
    for e in &r.scan_errors {
        out.push(format!("::error file={}::{}", escape_annotation_property(&path_text(&e.path)), escape_annotation_data(&scan_error_message(e))));
    }
    for f in r.fatal.iter().chain(&r.empty_input) {
        out.push(format!("::error::{}", escape_annotation_data(f)));
    }
    for w in &r.cache_repairs {
        out.push(format!("::warning::{}", escape_annotation_data(&format!("incremental cache: {w}"))));
    }
    out
}

/// Text from an input file for one Markdown table cell: control characters escaped as in
/// [`printable`], HTML's `& < >` as entities, and every Markdown punctuation character that
/// could end the cell or start markup backslash-escaped.
fn markdown_cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in printable(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '|' | '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '!' | '~' | '(' | ')' | '{' | '}' | '+' | '-' | '.' | ':' | '@' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// The GitHub Actions job summary (`$GITHUB_STEP_SUMMARY`, Markdown): the counts per family,
/// then one row per failed shader (where, key, phase, the first line of the reason).
pub fn step_summary(r: &Report) -> String {
    let mut s = String::from("### shrec build\n\n| family | found | compiled | failed | cached | skipped |\n|---|---:|---:|---:|---:|---:|\n");
    let mut rows: Vec<(String, Counts)> = r.counts_by_family().into_iter().map(|(f, c)| (f.name().to_owned(), c)).collect();
    rows.push(("**total**".to_owned(), r.totals()));
    for (name, c) in rows {
        writeln!(s, "| {name} | {} | {} | {} | {} | {} |", c.found, c.compiled, c.failed, c.cached, c.skipped).unwrap();
    }
    let failed: Vec<&Outcome> = r.outcomes.iter().filter(|o| matches!(o.status, Status::Failed { .. })).collect();
    if !failed.is_empty() {
        s.push_str("\n| failed shader | key | phase | reason |\n|---|---|---|---|\n");
        for o in failed {
            let Status::Failed { phase, reason, .. } = &o.status else { unreachable!("filtered") };
            let first = reason.lines().next().unwrap_or_default();
            writeln!(
                s,
                "| {}\\+0x{:x} | 0x{:016X} | {} | {} |",
                markdown_cell(&path_text(&o.path)),
                o.offset,
                o.key,
                phase.name(),
                markdown_cell(first)
            )
            .unwrap();
        }
    }
    for e in &r.scan_errors {
        writeln!(s, "\nscan error: {}", markdown_cell(&scan_error_message(e))).unwrap();
    }
    if let Some(line) = closing_line(r) {
        writeln!(s, "\n{}", markdown_cell(&line)).unwrap();
    }
    s
}

/// The last line of a build with failed shaders, printed with `-q` too: how many failed and
/// how to build the cache without them (or that `--allow-failures` did). `None` when none failed.
pub fn closing_line(r: &Report) -> Option<String> {
    let failed = r.outcomes.iter().filter(|o| matches!(o.status, Status::Failed { .. })).count();
    if failed == 0 {
        return None;
    }
    let total = r.outcomes.len();
    Some(if r.failures_allowed {
        format!("shrec: {failed} of {total} shaders failed; the cache holds the others (--allow-failures / ALLOW_FAILURES: exit code 0)")
    } else {
        format!(
            "shrec: {failed} of {total} shaders failed; to build the cache without them, pass --allow-failures (CMake: ALLOW_FAILURES; build scripts: BuildOptions::allow_failures)"
        )
    })
}

/// 1 when a fatal error happened, else 2 when the input held no shader (without
/// `--allow-empty`), when an `--hlsl-dir` file could not be written, or, unless failures are
/// allowed, when any shader failed or an input had a scan error, else 0. (`--allow-failures`
/// is about shaders that do not build; an output that could not be written is not one.)
pub fn exit_code(r: &Report) -> i32 {
    if !r.fatal.is_empty() {
        1
    } else if r.empty_input.is_some()
        || r.outcomes.iter().any(|o| o.hlsl_dump_error.is_some())
        || (!r.failures_allowed && (!r.scan_errors.is_empty() || r.outcomes.iter().any(|o| matches!(o.status, Status::Failed { .. }))))
    {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(family: Family, stage: Stage, key: u64, status: Status) -> Outcome {
        Outcome {
            path: PathBuf::from("data/shaders.ar"),
            file: PathBuf::from("data/shaders.ar"),
            member: Vec::new(),
            container: match family {
                Family::Agal => ContainerKind::Agal,
                _ => ContainerKind::Xenos,
            },
            name: None,
            offset: 0x1f40,
            family,
            stage,
            key,
            index: 0,
            status,
            hlsl_override: None,
            hlsl_dump_error: None,
            spirv_unoptimized: false,
        }
    }

    fn failed(phase: Phase, reason: &str, off: Option<u64>) -> Status {
        let kind = match phase {
            Phase::Parse => FailureKind::Microcode(Family::Agal),
            Phase::Translate => FailureKind::Unsupported(Family::Xenos),
            Phase::DxcDxil | Phase::DxcSpirv | Phase::Pack => FailureKind::DxcCompile,
        };
        Status::Failed { phase, kind, reason: reason.into(), detail_offset: off }
    }

    fn sample() -> Report {
        Report {
            outcomes: vec![
                outcome(Family::Xenos, Stage::Pixel, 0x5873A0E094914DE6, Status::Compiled { cached: false }),
                outcome(Family::Xenos, Stage::Vertex, 0xB84214E6C36FC587, Status::Compiled { cached: true }),
                outcome(Family::Xenos, Stage::Pixel, 0x1, failed(Phase::DxcSpirv, "use of undeclared identifier", None)),
                outcome(Family::Agal, Stage::Pixel, 0xABC, failed(Phase::Parse, "bad opcode 0x55", Some(0x3c))),
            ],
            scan_errors: vec![],
            fatal: vec![],
            dxc_compilations: 3,
            cache_hits: 1,
            duplicates: Vec::new(),
            empty_input: None,
            failures_allowed: false,
            cache_repairs: vec!["cache entry /c/ab/x.bin corrupt (checksum mismatch), rebuilding".into()],
            wall_time: Duration::from_millis(1500),
        }
    }

    #[test]
    fn show_commands_are_one_shell_word_per_path() {
        assert_eq!(shell_quote("data/a.gsh"), "data/a.gsh");
        assert_eq!(shell_quote("game.szs!shaders.sarc!x.gsh"), "'game.szs!shaders.sarc!x.gsh'");
        assert_eq!(shell_quote("it's here"), "'it'\\''s here'");
        assert_eq!(shell_quote(""), "''");
        // A name with a line break stays one word; `printable` then escapes the break itself.
        assert_eq!(printable(&shell_quote("a\nb")), "'a\\u{a}b'");
    }

    /// Windows: paths with drive letters and backslashes stay one word for cmd and
    /// PowerShell; names with characters either shell expands are quoted for PowerShell; an
    /// unpaired surrogate of a UTF-16 name is escaped, not lost.
    #[test]
    fn windows_paths_are_quoted_for_cmd_and_powershell() {
        use super::windows_quote as q;
        assert_eq!(q(r"C:\Games\ss\shaders.ar"), r"C:\Games\ss\shaders.ar");
        assert_eq!(q(r"C:\Program Files (x86)\Game\a&b.gsh"), r#""C:\Program Files (x86)\Game\a&b.gsh""#);
        assert_eq!(q(r"D:\it's\x.fxc"), r#""D:\it's\x.fxc""#);
        assert_eq!(q(r"D:\100%\$env:x\it's.bin"), r"'D:\100%\$env:x\it''s.bin'");
        assert_eq!(q("D:\\\u{201C}q\u{201D}\u{2019}"), "'D:\\\u{201C}q\u{201D}\u{2019}\u{2019}'");
        assert_eq!(q(""), r#""""#);
        let units: Vec<u16> = "C:\\a".encode_utf16().chain([0xD800, b'b' as u16, 0xDC01]).collect();
        assert_eq!(crate::text::utf16_text(&units), r"C:\a\u{D800}b\u{DC01}");
    }

    #[test]
    fn error_line_format() {
        let r = sample();
        assert_eq!(error_line(&r.outcomes[0]), None);
        assert_eq!(
            error_line(&r.outcomes[2]).unwrap(),
            "error: data/shaders.ar+0x1f40 [xenos pixel #0 0x0000000000000001]: use of undeclared identifier \
             (see: shrec hlsl data/shaders.ar --offset 0x1f40 --index 0)"
        );
        assert_eq!(
            error_line(&r.outcomes[3]).unwrap(),
            "error: data/shaders.ar+0x1f40 [agal fragment #0 0x0000000000000ABC]: at +0x3c: bad opcode 0x55 \
             (see: shrec disasm data/shaders.ar --offset 0x1f40 --index 0)"
        );
    }

    #[test]
    fn summary_counts() {
        let t = summary_table(&sample());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "family  found  translated  compiled  failed  cached  skipped");
        assert_eq!(lines[1], "xenos       3           3         2       1       1        0");
        assert_eq!(lines[2], "agal        1           0         0       1       0        0");
        assert_eq!(lines[3], "total       4           3         2       2       1        0");
        assert_eq!(lines[4], "3 DXC compilations, 1 cache hits, 0 duplicates, 0 scan errors, 1.50 s");
    }

    #[test]
    fn json_has_every_field() {
        let v = to_json(&sample());
        assert_eq!(v["outcomes"].as_array().unwrap().len(), 4);
        let o = &v["outcomes"][3];
        assert_eq!(o["family"], "agal");
        assert_eq!(o["stage"], "fragment");
        assert_eq!(o["key"], "0x0000000000000ABC");
        assert_eq!(o["offset"], 0x1f40);
        assert_eq!(o["index"], 0);
        assert_eq!(o["status"], "failed");
        assert_eq!(o["phase"], "parse");
        assert_eq!(o["error_kind"], "agal.microcode");
        assert_eq!(o["detail_offset"], 0x3c);
        assert_eq!(v["outcomes"][1]["cached"], true);
        assert_eq!(v["totals"]["failed"], 2);
        assert_eq!(v["per_family"]["xenos"]["compiled"], 2);
        assert_eq!(v["exit_code"], 2);
        assert_eq!(v["dxc_compilations"], 3);
        assert_eq!(v["wall_time_s"], 1.5);
    }

    #[test]
    fn annotations_escape() {
        let mut r = sample();
        r.outcomes[2].path = PathBuf::from("C:\\a,b%c.ar");
        r.outcomes[2].file = PathBuf::from("C:\\a,b%c.ar");
        r.outcomes[2].status = failed(Phase::DxcDxil, "line1\nline2\r 100%", None);
        let a = github_annotations_in(&r, None);
        assert_eq!(a.len(), 3);
        assert_eq!(a[2], "::warning::incremental cache: cache entry /c/ab/x.bin corrupt (checksum mismatch), rebuilding");
        assert_eq!(a[0], "::error file=C%3A\\a%2Cb%25c.ar,title=shrec%3A xenos pixel shader failed (dxc-dxil)::C:\\a,b%25c.ar+0x1f40 [xenos pixel #0 0x0000000000000001]: line1%0Aline2%0D 100%25 (see: shrec hlsl 'C:\\a,b%25c.ar' --offset 0x1f40 --index 0)");
        assert!(
            a[1].starts_with(
                "::error file=data/shaders.ar,title=shrec%3A agal fragment shader failed (parse)::data/shaders.ar+0x1f40 [agal fragment"
            ),
            "{}",
            a[1]
        );
        // An archive member: file= is the archive, relative to the workspace; the message names the member.
        let ws = std::env::temp_dir().join("shrec-ws");
        r.outcomes[3].file = ws.join("game/data.zip");
        r.outcomes[3].path = ws.join("game/data.zip!shaders/a.agal");
        let a = github_annotations_in(&r, Some(&ws));
        assert!(a[1].starts_with("::error file=game/data.zip,title=") && a[1].contains("data.zip!shaders/a.agal+0x1f40"), "{}", a[1]);
    }

    #[test]
    fn step_summary_is_a_table_with_inert_cells() {
        let mut r = sample();
        r.outcomes[3].path = PathBuf::from("a|b<script>`x`\n| evil |.ar");
        let s = step_summary(&r);
        assert!(s.contains("| xenos | 3 | 2 | 1 | 1 | 0 |") && s.contains("| **total** | 4 | 2 | 2 | 1 | 0 |"), "{s}");
        assert!(s.contains(" | 0x0000000000000ABC | parse | bad opcode 0x55 |"), "{s}");
        assert!(s.contains(r"| a\|b&lt;script&gt;\`x\`\\u\{a\}\| evil \|\.ar\+0x1f40 |"), "{s}");
        assert!(s.contains("2 of 4 shaders failed"), "{s}");
        // Every row has its columns' pipes and no more: the name's pipes are escaped.
        let unescaped_pipes = |l: &str| l.match_indices('|').filter(|(i, _)| !l[..*i].ends_with('\\')).count();
        for line in s.lines().filter(|l| l.starts_with('|') && !l.starts_with("|---")) {
            let columns = if line.contains("0x0000") || line.starts_with("| failed") { 4 } else { 6 };
            assert_eq!(unescaped_pipes(line), columns + 1, "{line}");
        }
    }

    /// Issue 23 S1: a file name with a line break and a workflow command, or an ESC sequence,
    /// stays on its line and inert, on stderr and in annotations.
    #[test]
    fn hostile_names_cannot_start_lines_or_drive_the_terminal() {
        let mut r = sample();
        r.outcomes[2].path = PathBuf::from("a\n::warning file=x::pwned\x1b[31m\u{9b}.ar");
        r.outcomes[2].status = failed(Phase::Translate, "program \"p\r\n::error::x\x07\"", None);
        r.scan_errors.push(ScanError {
            path: PathBuf::from("b\n::error::y"),
            offset: Some(4),
            container: None,
            at: None,
            reason: "bad \x1b]0;title\x07".into(),
        });
        // DXC's diagnostics keep their line breaks, each further line indented and inert.
        r.outcomes[1].status = failed(Phase::DxcSpirv, "DXC (spirv) rejected the generated HLSL:\nx.hlsl:1:1: error: e\n  ::error::y\x1b[0m", None);
        let multi = error_line(&r.outcomes[1]).unwrap();
        let multi: Vec<&str> = multi.split('\n').collect();
        assert_eq!(multi.len(), 3, "{multi:?}");
        assert!(
            multi[0].starts_with("error: ")
                && multi[0].ends_with("rejected the generated HLSL: (see: shrec hlsl data/shaders.ar --offset 0x1f40 --index 0)"),
            "{multi:?}"
        );
        assert_eq!(multi[1], "    x.hlsl:1:1: error: e");
        assert_eq!(multi[2], "      \\u{3a}:error::y\\u{1b}[0m");
        let lines: Vec<String> = r
            .outcomes
            .iter()
            .filter_map(error_line)
            .flat_map(|l| l.split('\n').map(String::from).collect::<Vec<_>>())
            .chain(r.scan_errors.iter().map(scan_error_line))
            .chain(github_annotations(&r))
            .collect();
        for l in &lines {
            assert!(!l.chars().any(|c| c.is_control()), "{l:?}");
            assert!(l.starts_with("error: ") || l.starts_with("::") || l.starts_with("    ") && !l.trim_start().starts_with("::"), "{l:?}");
        }
        assert!(lines.iter().any(|l| l.contains("a\\u{a}::warning file=x::pwned\\u{1b}[31m\\u{9b}.ar")), "{lines:?}");
    }

    #[test]
    fn exit_codes() {
        let mut r = Report::default();
        assert_eq!(exit_code(&r), 0);
        r.cache_repairs.push("cache entry x corrupt (checksum mismatch), rebuilding".into());
        assert_eq!(exit_code(&r), 0, "a repaired cache entry is a warning");
        r.outcomes = sample().outcomes[..2].to_vec();
        assert_eq!(exit_code(&r), 0);
        r.scan_errors.push(ScanError { path: "x".into(), offset: None, container: None, at: None, reason: "unreadable".into() });
        assert_eq!(exit_code(&r), 2);
        r.scan_errors.clear();
        r.outcomes = sample().outcomes;
        assert_eq!(exit_code(&r), 2);
        r.failures_allowed = true;
        assert_eq!(exit_code(&r), 0, "--allow-failures");
        r.empty_input = Some("no shader found".into());
        assert_eq!(exit_code(&r), 2, "an empty input is not a shader failure");
        r.empty_input = None;
        r.outcomes[2].hlsl_dump_error = Some("writing /full/x.hlsl: No space left on device".into());
        assert_eq!(exit_code(&r), 2, "an --hlsl-dir file that could not be written, even with --allow-failures");
        assert!(github_annotations(&r).iter().any(|a| a.contains("--hlsl-dir: writing /full/x.hlsl: No space left on device (the shader is built")));
        assert_eq!(
            dump_error_line(&r.outcomes[2]).unwrap(),
            "error: data/shaders.ar+0x1f40 [xenos pixel #0 0x0000000000000001]: --hlsl-dir: writing /full/x.hlsl: No space left on device \
             (the shader is built and in the cache; only this copy of its HLSL is missing)"
        );
        r.outcomes[2].hlsl_dump_error = None;
        r.failures_allowed = false;
        r.fatal.push("cannot write cache".into());
        assert_eq!(exit_code(&r), 1);
        assert_eq!(github_annotations(&r).iter().rev().nth(1).unwrap(), "::error::cannot write cache");
    }
}
