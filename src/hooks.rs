//! Project hooks: how a project changes shrec's output without forking it.
//!
//! - `--prelude FILE`: HLSL pasted right after `#include "shader_common.h"` in every shader
//!   (helpers, or macros the translation's `#ifdef`s read);
//! - `-D NAME[=VALUE]`: `#define NAME VALUE` before the include, so the prelude sees it too;
//! - `--override-dir DIR`: `DIR/<KEY>.hlsl` (KEY as 16 upper-case hex digits) is compiled instead
//!   of the translation of the shader with that key, and the report says so;
//! - `--dxc-arg ARG`: appended to shrec's DXC arguments.
//!
//! The prelude and defines become part of the HLSL text, and extra DXC arguments part of the
//! argument fingerprint, so the incremental cache keys cover them: changing a hook rebuilds
//! exactly what it changes.

use std::path::{Path, PathBuf};

/// The hooks of one build (all empty by default).
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    /// Text of `--prelude`.
    pub prelude: Option<String>,
    /// `-D` definitions, in command-line order.
    pub defines: Vec<(String, String)>,
    pub override_dir: Option<PathBuf>,
    pub dxc_args: Vec<String>,
}

/// A hook the build cannot use (a fatal error: the build does not start).
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    #[error("--prelude {path}: {reason}")]
    Prelude { path: PathBuf, reason: String },
    #[error("-D {0:?}: the name must be an identifier (letters, digits, _; not starting with a digit)")]
    DefineName(String),
    #[error("-D {0:?}: the value must be on one line")]
    DefineValue(String),
    #[error("--override-dir {0}: not a directory")]
    OverrideDir(PathBuf),
}

impl Hooks {
    /// Reads `--prelude` and checks `-D` definitions (`NAME` or `NAME=VALUE`; VALUE defaults to 1
    /// as with a C compiler's `-D`).
    pub fn new(prelude: Option<&Path>, defines: &[String], override_dir: Option<PathBuf>, dxc_args: Vec<String>) -> Result<Hooks, HookError> {
        let prelude = match prelude {
            None => None,
            Some(p) => Some(read_hook_file(p).map_err(|e| HookError::Prelude { path: p.to_path_buf(), reason: e.to_string() })?),
        };
        let mut parsed = Vec::new();
        for d in defines {
            let (name, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
            let mut chars = name.chars();
            let ident = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ident {
                return Err(HookError::DefineName(d.clone()));
            }
            if value.contains(['\n', '\r']) {
                return Err(HookError::DefineValue(d.clone()));
            }
            parsed.push((name.to_string(), value.to_string()));
        }
        if let Some(dir) = &override_dir {
            if !dir.is_dir() {
                return Err(HookError::OverrideDir(dir.clone()));
            }
        }
        Ok(Hooks { prelude, defines: parsed, override_dir, dxc_args })
    }

    /// Whether any hook acts on the HLSL or on DXC (`--prelude`, `-D`, `--override-dir`,
    /// `--dxc-arg`): the direct SPIR-V back end reads none of them, so a build given one writes
    /// its SPIR-V with DXC unless told otherwise ([`crate::build::SpirvBackend::Auto`]).
    pub fn any(&self) -> bool {
        self.prelude.is_some() || !self.defines.is_empty() || self.override_dir.is_some() || !self.dxc_args.is_empty()
    }

    /// The HLSL after the prelude and defines are applied.
    pub fn apply(&self, hlsl: String) -> String {
        if self.prelude.is_none() && self.defines.is_empty() {
            return hlsl;
        }
        let include = format!("#include \"{}\"\n", crate::hlsl::PRELUDE_NAME);
        let defines: String = self.defines.iter().map(|(n, v)| format!("#define {n} {v}\n")).collect();
        let prelude = self.prelude.as_deref().map(|p| format!("// --prelude\n{}\n// end of --prelude\n", p.trim_end())).unwrap_or_default();
        match hlsl.find(&include) {
            Some(at) => {
                let end = at + include.len();
                format!("{defines}{}{include}{prelude}{}", &hlsl[..at], &hlsl[end..])
            }
            // Every shrec translation includes the prelude; a hand-written override may not.
            None => format!("{defines}{prelude}{hlsl}"),
        }
    }

    /// The override of the shader with this key: its file and text, if one exists.
    pub fn override_for(&self, key: u64) -> std::io::Result<Option<(PathBuf, String)>> {
        let Some(dir) = &self.override_dir else { return Ok(None) };
        let path = dir.join(format!("{key:016X}.hlsl"));
        match read_hook_file(&path) {
            Ok(text) => Ok(Some((path, text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// The most bytes a `--prelude` or `--override-dir` file may have: the cap on a shader's HLSL.
pub const MAX_HOOK_FILE_BYTES: u64 = crate::limits::MAX_HLSL_BYTES as u64;

/// Reads a hook file (`--prelude`, an `--override-dir` file) as UTF-8 text: a regular file of at
/// most [`MAX_HOOK_FILE_BYTES`]. A FIFO blocked the build forever and `/dev/zero` was read until
/// memory ran out. The file is opened without blocking (a FIFO put in its place after the check
/// cannot hold the open) and checked again through the descriptor. A missing file is
/// `ErrorKind::NotFound`, as from `std::fs::read_to_string`.
pub fn read_hook_file(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind, Read};
    let not_regular = || Error::new(ErrorKind::InvalidInput, "not a regular file (a directory, FIFO, socket or device)");
    if !std::fs::metadata(path)?.is_file() {
        return Err(not_regular());
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(not_regular());
    }
    let mut bytes = Vec::new();
    file.take(MAX_HOOK_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_HOOK_FILE_BYTES {
        return Err(Error::new(ErrorKind::InvalidData, format!("resource cap: larger than {MAX_HOOK_FILE_BYTES} bytes (the HLSL cap)")));
    }
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "not UTF-8 text"))
}

/// What is wrong with a file of `--override-dir` that no shader reads, if anything: a name of
/// the right form whose key no shader of the input has, or a name that looks like a key but is
/// not spelled as shrec reads it (`0x`, lower case, fewer digits). Other files are not
/// overrides and get nothing.
pub fn unread_override_problem(file_name: &str, keys: &std::collections::BTreeSet<u64>) -> Option<String> {
    let is_hlsl =
        file_name.len() > 5 && file_name.is_char_boundary(file_name.len() - 5) && file_name[file_name.len() - 5..].eq_ignore_ascii_case(".hlsl");
    if !is_hlsl {
        return None;
    }
    let stem = &file_name[..file_name.len() - 5];
    let exact = stem.len() == 16 && stem.bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) && file_name.ends_with(".hlsl");
    if exact {
        let key = u64::from_str_radix(stem, 16).expect("16 hex digits");
        return (!keys.contains(&key)).then(|| "matches no shader of the input (no shader has this key)".to_string());
    }
    let digits = stem.strip_prefix("0x").or_else(|| stem.strip_prefix("0X")).unwrap_or(stem);
    let key = (!digits.is_empty() && digits.len() <= 16).then(|| u64::from_str_radix(digits, 16).ok()).flatten()?;
    let known = if keys.contains(&key) { "" } else { " (and no shader of the input has this key)" };
    Some(format!("is not read: shrec reads {key:016X}.hlsl (16 upper-case hex digits, no 0x){known}"))
}

impl Hooks {
    /// Warnings for the files of `--override-dir` no shader read (see
    /// [`unread_override_problem`]), given the keys of every shader found.
    pub fn override_warnings(&self, keys: &std::collections::BTreeSet<u64>) -> Vec<String> {
        let Some(dir) = &self.override_dir else { return Vec::new() };
        let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
        let mut names: Vec<std::ffi::OsString> = read.filter_map(Result::ok).map(|e| e.file_name()).collect();
        names.sort();
        names
            .iter()
            .filter_map(|n| {
                let name = n.to_string_lossy();
                let problem = unread_override_problem(&name, keys)?;
                Some(format!("--override-dir file {}: {problem}", dir.join(n).display()))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_go_before_the_include_and_the_prelude_after_it() {
        let h = Hooks {
            prelude: Some("float4 tweak(float4 x) { return x; }\n".into()),
            defines: vec![("REVERSE_Z".into(), "1".into())],
            ..Hooks::default()
        };
        let out = h.apply("// header\n#include \"shader_common.h\"\nfloat4 main() : SV_Target { return 0; }\n".into());
        assert_eq!(
            out,
            "#define REVERSE_Z 1\n// header\n#include \"shader_common.h\"\n// --prelude\nfloat4 tweak(float4 x) { return x; }\n// end of --prelude\nfloat4 main() : SV_Target { return 0; }\n"
        );
        assert_eq!(Hooks::default().apply("x".into()), "x");
    }

    #[test]
    fn bad_definitions_are_refused() {
        assert!(matches!(Hooks::new(None, &["1X=2".into()], None, vec![]), Err(HookError::DefineName(_))));
        assert!(matches!(Hooks::new(None, &["A=1\n#include <x>".into()], None, vec![]), Err(HookError::DefineValue(_))));
        let h = Hooks::new(None, &["A".into(), "B=x y".into()], None, vec![]).unwrap();
        assert_eq!(h.defines, [("A".to_string(), "1".to_string()), ("B".to_string(), "x y".to_string())]);
        assert!(matches!(Hooks::new(None, &[], Some("/nonexistent/dir".into()), vec![]), Err(HookError::OverrideDir(_))));
    }

    #[test]
    fn unread_override_files_are_named() {
        let keys: std::collections::BTreeSet<u64> = [0x0123_4567_89AB_CDEF].into();
        assert_eq!(unread_override_problem("0123456789ABCDEF.hlsl", &keys), None);
        assert!(unread_override_problem("FFFFFFFFFFFFFFFF.hlsl", &keys).unwrap().contains("matches no shader"));
        for wrong in ["0x0123456789ABCDEF.hlsl", "0123456789abcdef.hlsl", "123456789ABCDEF.hlsl", "0123456789ABCDEF.HLSL"] {
            let p = unread_override_problem(wrong, &keys).unwrap_or_else(|| panic!("{wrong}"));
            assert!(p.contains("shrec reads 0123456789ABCDEF.hlsl") && !p.contains("no shader of the input has"), "{wrong}: {p}");
        }
        assert!(unread_override_problem("0xFF.hlsl", &keys).unwrap().contains("00000000000000FF.hlsl (16"));
        assert_eq!(unread_override_problem("README.md", &keys), None);
        assert_eq!(unread_override_problem("notes.hlsl", &keys), None);
        assert_eq!(unread_override_problem("é.hlsl", &keys), None);
    }
}
