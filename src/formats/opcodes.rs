//! Opcode tables as data: each family declares its opcodes once, as an enum whose rows carry the
//! mnemonic, the encoding, the operand shape and the translation status
//! ([`op_enum!`](crate::op_enum)). The decoder maps encodings to the enum (an unknown encoding is
//! a typed error), the disassembler prints the enum's names, the lowering `match`es on the enum
//! without a catch-all arm (a new opcode does not compile until it is handled), and the opcode
//! pages `docs/opcodes/<family>.md` plus the README's one-line summaries are generated from the
//! same rows ([`markdown`], [`summary`]; `tests/integration/opcode_docs.rs` fails when the committed files
//! differ). The pattern is yuzu's `shader_recompiler` opcode tables (one data row per opcode).

use std::fmt::Write;

/// What the lowering does with an opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Translated wherever it can occur.
    Translated,
    /// Translated, with the limits named (e.g. "pixel shaders only"); outside them the
    /// lowering refuses it with a typed error.
    Limited(&'static str),
    /// Always refused by the lowering, for the reason given (the error carries this text).
    Rejected(&'static str),
}

impl Status {
    pub fn is_rejected(self) -> bool {
        matches!(self, Status::Rejected(_))
    }
    /// The reason of a rejected opcode (`None` when it is translated).
    pub fn reason(self) -> Option<&'static str> {
        match self {
            Status::Rejected(r) => Some(r),
            Status::Translated | Status::Limited(_) => None,
        }
    }
}

/// One row of a generated opcode table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The opcode class (GX2: CF, ALU CF, EXP, OP2, OP3, TEX, VTX; PICA: format; AGAL: "op").
    pub class: &'static str,
    pub name: &'static str,
    /// The encoding value as the docs write it (e.g. `0x1A`).
    pub encoding: String,
    /// Operand shape: source count and family-specific notes (GX2 unit, PICA format, ...).
    pub operands: String,
    pub status: Status,
}

/// Declares an opcode enum and its data rows.
///
/// `op_enum! { /// doc
/// pub enum Name: Info { VARIANT => info_expr, Other("mnemonic") => info_expr, ... } }` defines
/// `enum Name` (variants spelled as the mnemonics unless a name is given), `Name::ALL` (every variant in table order), `Name::name()` (the mnemonic)
/// and `Name::info()` returning the row's `Info` (a family-specific `Copy` struct built by a
/// `const fn`).
#[macro_export]
macro_rules! op_enum {
    ($(#[$meta:meta])* $vis:vis enum $E:ident : $Info:ty { $($V:ident $(($n:literal))? => $info:expr,)* }) => {
        $(#[$meta])*
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $E { $($V,)* }
        impl $E {
            /// Every opcode, in table order.
            pub const ALL: &'static [$E] = &[$($E::$V,)*];
            /// The row of this opcode.
            pub const fn info(self) -> $Info {
                match self { $($E::$V => $info,)* }
            }
            /// The mnemonic.
            pub const fn name(self) -> &'static str {
                match self { $($E::$V => $crate::op_enum!(@name $V $($n)?),)* }
            }
        }
        impl std::fmt::Display for $E {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
    (@name $V:ident $n:literal) => { $n };
    (@name $V:ident) => { stringify!($V) };
}

fn family_title(family: &str) -> &'static str {
    match family {
        "gx2" => "GX2 (Wii U Latte)",
        "pica" => "PICA200 (3DS)",
        "agal" => "AGAL (Flash Stage3D)",
        "xenos" => "Xenos (Xbox 360)",
        _ => "?",
    }
}

/// `(translated, rejected)` counts of a table (limited counts as translated).
pub fn counts(rows: &[Row]) -> (usize, usize) {
    let rejected = rows.iter().filter(|r| r.status.is_rejected()).count();
    (rows.len() - rejected, rejected)
}

/// The README's line for a family.
pub fn summary(family: &str, rows: &[Row]) -> String {
    let (t, r) = counts(rows);
    format!("- {}: {} opcodes, {t} translated, {r} rejected ([docs/opcodes/{family}.md](docs/opcodes/{family}.md))", family_title(family), rows.len())
}

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The generated page `docs/opcodes/<family>.md`.
pub fn markdown(family: &str, rows: &[Row]) -> String {
    let (t, r) = counts(rows);
    let mut s = String::new();
    let _ = writeln!(s, "# {} opcodes", family_title(family));
    s.push('\n');
    let _ = writeln!(
        s,
        "_Generated from the opcode table in the source (`op_enum!` rows); do not edit. To update: \
         `SHREC_BLESS=1 cargo test --release -p shrec --test integration opcode_docs::`._"
    );
    s.push('\n');
    let _ = writeln!(s, "{} opcodes: {t} translated (some with limits), {r} rejected.", rows.len());
    s.push('\n');
    s.push_str("| class | name | encoding | operands | status |\n|---|---|---|---|---|\n");
    for row in rows {
        let status = match row.status {
            Status::Translated => "translated".to_string(),
            Status::Limited(l) => format!("translated: {l}"),
            Status::Rejected(why) => format!("**rejected**: {why}"),
        };
        let _ = writeln!(s, "| {} | `{}` | {} | {} | {} |", row.class, row.name, row.encoding, cell(&row.operands), cell(&status));
    }
    s
}
