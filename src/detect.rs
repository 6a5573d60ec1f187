//! Finds shader containers in a byte buffer by magic number and structural checks.
//!
//! Two independent passes:
//!
//! * **Xenos** follows XenosRecomp's scanner exactly (docs/isa/xenos.md §3) so that the same
//!   containers are found and hashed: see [`scan_xenos`].
//! * **Everything else** (GFD, SHARCFB, DVLB, AGAL) is found by searching for the magic bytes at
//!   any offset (memchr / memmem, no per-byte loop) and validating the structure behind them. A
//!   candidate that starts inside an already accepted non-Xenos container is dropped: the outer
//!   (earlier) container wins. Xenos candidates neither drop nor get dropped by the others.
//!
//! Every probe is bounds-checked and bounded by the buffer, so `detect` never panics and always
//! terminates, whatever the input.

use crate::formats::xenos::container::{self as xenos, ContainerHeader};
use crate::formats::{agal, gx2, pica};
use memchr::memmem;

pub use crate::formats::ContainerKind;

/// A container found at `offset`, `len` bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub kind: ContainerKind,
    pub offset: usize,
    pub len: usize,
}

/// All containers in `buf`, sorted by offset (Xenos before others at an equal offset).
pub fn detect(buf: &[u8]) -> Vec<Candidate> {
    let mut others = Vec::new();
    // GFD: probes share what they learn about block chains (linear in the buffer; see
    // `gfd::probe_at`).
    let mut chains = gx2::gfd::ChainEnds::default();
    for offset in memmem::find_iter(buf, gx2::gfd::FILE_MAGIC) {
        if let Some(len) = gx2::gfd::probe_at(buf, offset, &mut chains) {
            others.push(Candidate { kind: ContainerKind::Gfd, offset, len });
        }
    }
    scan_magic(buf, b"BAHS", ContainerKind::Sharcfb, gx2::sharc::probe, &mut others);
    scan_magic(buf, b"SHAB", ContainerKind::Sharcfb, gx2::sharc::probe, &mut others);
    scan_magic(buf, b"DVLB", ContainerKind::Dvlb, pica::dvlb::probe, &mut others);
    scan_agal(buf, &mut others);

    // Outer container wins: sort by offset (longer first at a tie) and drop every candidate that
    // starts inside an accepted one.
    others.sort_by(|a, b| a.offset.cmp(&b.offset).then(b.len.cmp(&a.len)));
    let mut out = scan_xenos(buf);
    let mut end = 0usize;
    for c in others {
        if c.offset < end {
            continue;
        }
        end = c.offset + c.len;
        out.push(c);
    }
    out.sort_by_key(|c| (c.offset, c.kind));
    out
}

/// A container that starts at `buf[0]` by its magic but that [`detect`] did not accept, with
/// the offset (from `buf[0]`) and the reason: a truncated or damaged `.gsh` or Xenos shader
/// file. Only the start of a file (or of an archive member) is looked at: the magic there says
/// the whole file is meant to be that container, so the damage is worth an error, whereas a
/// magic met inside other data is as likely a coincidence (and XenosRecomp's scan, which shrec
/// follows, skips such candidates silently).
///
/// - GFD: `Gfx2` at 0 and a block chain that does not reach its end-of-file block (the first
///   fault of [`gx2::gfd::walk`]).
/// - Xenos: XenosRecomp's magic at 0 with its two zero fields, and a container that
///   [`xenos::check`] refuses (most often: declared size past the end of the file).
pub fn damaged_at_start(buf: &[u8]) -> Option<(ContainerKind, Option<u64>, String)> {
    if buf.starts_with(gx2::gfd::FILE_MAGIC) {
        if let Err(e) = gx2::gfd::walk(buf) {
            return Some((ContainerKind::Gfd, e.offset(), format!("damaged GFD container, no shader read from it: {}", e.reason())));
        }
    }
    let h = ContainerHeader::read(buf)?;
    if h.has_magic() && h.field_1c == 0 && h.field_20 == 0 {
        if let Err(e) = xenos::check(buf) {
            return Some((ContainerKind::Xenos, e.container_offset(), format!("damaged Xenos container, no shader read from it: {e}")));
        }
    }
    None
}

/// Every occurrence of `magic` whose structure `probe` accepts; `probe` gets the buffer from the
/// magic on and returns the container length.
fn scan_magic(buf: &[u8], magic: &[u8], kind: ContainerKind, probe: fn(&[u8]) -> Option<usize>, out: &mut Vec<Candidate>) {
    for offset in memmem::find_iter(buf, magic) {
        if let Some(len) = probe(&buf[offset..]) {
            out.push(Candidate { kind, offset, len });
        }
    }
}

/// AGAL: find `0xA0` with memchr, check the rest of the 7-byte header
/// (`A0 <u32 LE version 1..=4> A1 <type 0|1>`), then let `agal::probe` measure the program.
/// After an accepted program the search resumes behind it (AGAL programs do not nest).
fn scan_agal(buf: &[u8], out: &mut Vec<Candidate>) {
    let mut pos = 0;
    while let Some(rel) = memchr::memchr(0xA0, &buf[pos..]) {
        let offset = pos + rel;
        pos = offset + 1;
        let Some(h) = buf.get(offset..offset + 7) else { break };
        let version = u32::from_le_bytes([h[1], h[2], h[3], h[4]]);
        if !(1..=4).contains(&version) || h[5] != 0xA1 || h[6] > 1 {
            continue;
        }
        if let Some(len) = agal::probe(&buf[offset..]) {
            if len >= 7 && len <= buf.len() - offset {
                out.push(Candidate { kind: ContainerKind::Agal, offset, len });
                pos = offset + len;
            }
        }
    }
}

/// XenosRecomp's scan (XenosRecomp `main.cpp:75-114`), relative to the start of `buf`:
///
/// ```text
/// for (i = 0; fileSize > 36 && i < fileSize - 36 - 1;)
///     if ((flags & 0xFFFFFF00) == 0x102A1100 && virtualSize + physicalSize <= fileSize - i
///         && field1C == 0 && field20 == 0)   { hash; i += virtualSize + physicalSize; }
///     else i += 4;
/// ```
///
/// Differences and decisions, all chosen so that the set of containers found equals XR's:
///
/// * **Same probe positions.** Probes start at offset 0 and step by 4; a hit advances by its
///   size (`virtualSize + physicalSize`, the 32-bit wrapping sum XR computes). XR does not
///   re-align after a hit, so a size that is **not a multiple of 4 shifts every later probe off
///   4-byte alignment**; we keep that drift on purpose, since re-aligning would find (or miss)
///   containers XR misses (or finds) and change the key set. The loop bound is XR's too: a probe
///   needs at least 38 bytes left.
/// * **Termination.** XR loops forever on a matching header with size 0; any hit whose size is
///   below the 36-byte header (0 included) is treated as a miss and the scan steps by 4, so
///   the scan always moves forward.
/// * **Sanity.** A hit is emitted only if [`xenos::check`] accepts it (size ≥ 36 without 32-bit
///   overflow, `constantTableOffset` / `definitionTableOffset` / the shader header inside
///   `virtualSize`, the microcode range inside `physicalSize`). A hit that fails these checks
///   is not reported, but the scan still advances past it by its size exactly as XR would, so
///   the sanity check can only remove garbage, never change which real containers are found.
///   Every container of the corpus passes (tests/integration/scan_corpus.rs).
///
/// The search for the magic uses memmem for the bytes `10 2A 11` and keeps only positions on
/// the current probe phase, which visits exactly the positions XR's 4-byte stride visits.
pub fn scan_xenos(buf: &[u8]) -> Vec<Candidate> {
    let mut out = Vec::new();
    let len = buf.len();
    if len <= xenos::HEADER_SIZE {
        return out;
    }
    // XR: probe offset i while i < fileSize - 37.
    let limit = len - xenos::HEADER_SIZE - 1;
    let finder = memmem::Finder::new(&[0x10, 0x2A, 0x11]);
    let mut i = 0usize; // current probe position (XR's `i`)
    while i < limit {
        // Next position ≥ i with the magic prefix, on the phase of i.
        let mut from = i;
        let hit = loop {
            // the magic must start before `limit` to be probed
            let Some(rel) = finder.find(&buf[from..limit.min(len - 3) + 3]) else { break None };
            let p = from + rel;
            if p >= limit {
                break None;
            }
            if (p - i).is_multiple_of(4) {
                break Some(p);
            }
            from = p + 1;
        };
        let Some(p) = hit else { break };
        i = p;
        let h = match ContainerHeader::read(&buf[i..]) {
            Some(h) => h,
            None => break,
        };
        if h.xr_accepts(len - i) && h.xr_data_size() as usize >= xenos::HEADER_SIZE {
            let size = h.xr_data_size() as usize;
            if let Ok(info) = xenos::check(&buf[i..]) {
                out.push(Candidate { kind: ContainerKind::Xenos, offset: i, len: info.size });
            }
            i += size;
        } else {
            i += 4;
        }
    }
    out
}
