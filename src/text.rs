//! Text from input files made safe for one log line. File names, archive members and program
//! names inside shaders are chosen by whoever made the input: printed raw, a line break could
//! start a `::warning::` workflow command (a CI runner reads stdout and stderr), an ESC sequence
//! could drive the terminal, and Unicode's line separators and bidirectional overrides could make
//! a line read differently from what it holds. Every such name goes through [`printable`] (and
//! a path through [`printable_path`]) before it is printed; JSON output escapes through serde.

use std::fmt::Write as _;
use std::path::Path;

/// Whether `c` is shown as an escape: control characters (C0, DEL, C1: line breaks, ESC), the
/// Unicode line and paragraph separators (U+2028, U+2029), and the invisible marks that change
/// the direction of text (U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069; Unicode
/// Standard Annex #9, "Explicit Directional Formatting Characters").
pub fn must_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character of [`must_escape`] as a `\u{..}` escape.
pub fn printable(s: &str) -> String {
    escape(s, false)
}

/// [`printable`], keeping `\n` and `\r` (for text that is escaped again afterwards, as workflow
/// command messages are).
pub fn escape(s: &str, keep_line_breaks: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if must_escape(c) && !(keep_line_breaks && (c == '\n' || c == '\r')) {
            write!(out, "\\u{{{:x}}}", c as u32).expect("writing to a String");
        } else {
            out.push(c);
        }
    }
    out
}

/// A path as text for reports: UTF-8 as itself, and each byte of a name that is not valid UTF-8
/// as `\xNN`, so that such a name is still told apart from others and can be found (`display()`
/// would turn every such byte into U+FFFD).
#[cfg(unix)]
pub fn path_text(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in p.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            write!(out, "\\x{b:02X}").expect("writing to a String");
        }
    }
    out
}

/// [`path_text`] on Windows, where a path is UTF-16 that need not be valid: each unpaired
/// surrogate is written `\u{D800}` (`to_string_lossy` would turn every one into U+FFFD, and two
/// such names could not be told apart).
#[cfg(windows)]
pub fn path_text(p: &Path) -> String {
    use std::os::windows::ffi::OsStrExt;
    utf16_text(&p.as_os_str().encode_wide().collect::<Vec<u16>>())
}

/// UTF-16 as text, an unpaired surrogate as `\u{XXXX}` (see [`path_text`]).
pub fn utf16_text(units: &[u16]) -> String {
    char::decode_utf16(units.iter().copied())
        .map(|c| match c {
            Ok(c) => c.to_string(),
            Err(e) => format!("\\u{{{:X}}}", e.unpaired_surrogate()),
        })
        .collect()
}

/// Elsewhere off Unix and Windows: the lossy text.
#[cfg(not(any(unix, windows)))]
pub fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// A path for one log line: [`path_text`], then [`printable`].
pub fn printable_path(p: &Path) -> String {
    printable(&path_text(p))
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_breaks_escapes_and_direction_marks_are_escaped() {
        let s = "a\n::warning::x\u{1b}[31m\u{2028}\u{202E}txt.exe\u{7f}\u{85}é";
        let p = super::printable(s);
        assert_eq!(p, "a\\u{a}::warning::x\\u{1b}[31m\\u{2028}\\u{202e}txt.exe\\u{7f}\\u{85}é");
        assert_eq!(super::escape("a\nb\u{202e}", true), "a\nb\\u{202e}");
    }
}
