//! Nintendo LZ10 / LZ11 ("LZ77" of the GBA / DS BIOS and its 3DS successor), one compressed
//! stream per file.
//!
//! Hand-written: the one crate for it, `nintendo-lz` (0.1.3, 2019), is unmaintained, reads
//! through `io::Read` into an output it sizes from the header (no cap), and brings a CLI's
//! dependencies; the decoder is 60 lines.
//!
//! Layout. GBATEK "BIOS Decompression Functions", LZ77UnCompReadNormalWrite8bit (SWI 11h):
//! u32 header, bits 4-7 the type (1: LZ77, so byte 0 is `0x10`), bits 8-31 the decompressed
//! size (24-bit little endian); then groups of one flag byte (most significant bit first) and
//! eight blocks: flag 0 = one literal byte; flag 1 = two bytes `NR RR`, copy `N + 3` bytes from
//! `0xRRR + 1` bytes back. GBATEK also asks for the compressed data to be padded with zeros to
//! a multiple of 4 bytes. LZ11 (type byte `0x11`) is not in the BIOS; DSDecmp
//! (Barubary/dsdecmp, `CSharp/DSDecmp/Formats/Nitro/LZ11.cs`, the reference every later tool
//! follows) gives its blocks by the high nibble `I` of the first byte:
//!
//! - `I >= 2`: two bytes `IR RR`, length `I + 1`, distance `0xRRR + 1`;
//! - `I == 0`: three bytes `0L LR RR`, length `0xLL + 0x11`;
//! - `I == 1`: four bytes `1L LL LR RR`, length `0xLLLL + 0x111`.
//!
//! DSDecmp (`LZ10.cs` and `LZ11.cs` alike) reads a 24-bit size of 0 as "the next 4 bytes are
//! the size" (u32 little endian, data from offset 8), and accepts input left after the stream
//! only up to the next 4-byte boundary plus 4 bytes (its "the input may be 4-byte aligned"
//! check); both rules are followed here.
//!
//! Detection is conservative, because one type byte is no magic number (`0x10` is also the
//! first byte of every Xenos shader container): a buffer is taken for an LZ10 / LZ11 stream
//! only when its first block is a literal (there is nothing to refer back to), the whole stream
//! decodes with every back reference inside the output, the declared size is reached where the
//! input ends (up to the padding above), and the output holds something shrec finds: a shader
//! container or an archive. A stream that fails (truncated, bad reference, wrong size) or hits a
//! cap is reported as an error only when what it decoded so far holds such a thing; anything
//! else is plain bytes, scanned raw as before. An LZ stream holding neither shaders nor archives
//! is therefore not listed as opened (it would hold nothing for shrec anyway).

use super::{Budget, ContainerError, Format};

/// How much of a stream that is over a cap is decoded to decide whether it is an LZ stream at
/// all (and so whether the cap is worth an error line).
const EVIDENCE_PREFIX: u64 = 1 << 20;

/// The type byte `bytes` start with, when it is LZ10's or LZ11's.
fn kind(bytes: &[u8]) -> Option<Format> {
    match bytes.first()? {
        0x10 => Some(Format::Lz10),
        0x11 => Some(Format::Lz11),
        _ => None,
    }
}

/// Probes `bytes` as an LZ10 / LZ11 stream (see the module notes): `None` when it is not one,
/// else the decompressed bytes or the error (with its offset) that stopped them. Reads the caps
/// from `budget` without charging it.
pub(super) fn probe(bytes: &[u8], budget: &Budget) -> Option<(Format, Result<Vec<u8>, ContainerError>)> {
    let format = kind(bytes)?;
    let name = if format == Format::Lz10 { "LZ10" } else { "LZ11" };
    let short = u32::from_le_bytes([*bytes.get(1)?, *bytes.get(2)?, *bytes.get(3)?, 0]);
    let (size, start) = match short {
        0 => (u32::from_le_bytes(bytes.get(4..8)?.try_into().ok()?) as u64, 8),
        n => (n as u64, 4),
    };
    // An empty stream holds nothing; a first block that is a back reference cannot decode.
    if size == 0 || bytes.get(start)? & 0x80 != 0 {
        return None;
    }
    let evidence = |out: &[u8]| super::sniff(out).is_some() || !crate::detect::detect(out).is_empty();
    let compressed = bytes.len() as u64;
    if let Err(cap) = budget.check_declared(size, compressed) {
        // Over a cap: decode a prefix only, to tell an LZ stream from a coincidence (the cap is
        // the error to report, even when the prefix itself stops early).
        let d = decode(bytes, start, format, size.min(EVIDENCE_PREFIX) as usize, name, size);
        return evidence(&d.out).then_some((format, Err(cap)));
    }
    let d = decode(bytes, start, format, size as usize, name, size);
    if let Some(e) = d.error {
        return evidence(&d.out).then_some((format, Err(e)));
    }
    // DSDecmp's rule: what follows the stream is padding to a 4-byte boundary, at most.
    let allowed = (d.end & !3) + 4;
    if bytes.len() > allowed {
        let extra = bytes.len() - d.end;
        let e = ContainerError::at(
            d.end as u64,
            format!(
                "corrupt {name} stream: the declared {size} bytes end here, {extra} bytes before the end of the file (wrong size in the header?)"
            ),
        );
        return evidence(&d.out).then_some((format, Err(e)));
    }
    evidence(&d.out).then_some((format, Ok(d.out)))
}

/// What [`decode`] produced: the output, the input position after the last block read, and the
/// error that stopped it early, if any.
struct Decoded {
    out: Vec<u8>,
    end: usize,
    error: Option<ContainerError>,
}

/// Decodes blocks from `input[pos..]` until `want` bytes are out (`size` is the declared size,
/// for messages). The caller has checked `want` against the caps.
fn decode(input: &[u8], mut pos: usize, format: Format, want: usize, name: &str, size: u64) -> Decoded {
    let mut out = Vec::with_capacity(want);
    macro_rules! fail {
        ($at:expr, $($msg:tt)*) => {
            return Decoded { error: Some(ContainerError::at($at as u64, format!($($msg)*))), out, end: pos }
        };
    }
    while out.len() < want {
        let Some(&flags) = input.get(pos) else {
            fail!(pos, "truncated {name} stream: {} of {size} bytes decoded", out.len());
        };
        pos += 1;
        for bit in (0..8).rev() {
            if out.len() >= want {
                break;
            }
            if flags >> bit & 1 == 0 {
                let Some(&b) = input.get(pos) else {
                    fail!(pos, "truncated {name} stream: {} of {size} bytes decoded", out.len());
                };
                out.push(b);
                pos += 1;
                continue;
            }
            let at = pos;
            let Some(&b0) = input.get(pos) else {
                fail!(pos, "truncated {name} stream: {} of {size} bytes decoded", out.len());
            };
            // (bytes in the block, length); the distance is in the block's last 12 bits.
            let (n, length) = match (format, b0 >> 4) {
                (Format::Lz10, hi) => (2, hi as usize + 3),
                (_, 0) => (3, 0),
                (_, 1) => (4, 0),
                (_, hi) => (2, hi as usize + 1),
            };
            let Some(block) = input.get(pos..pos + n) else {
                fail!(pos, "truncated {name} stream: {} of {size} bytes decoded", out.len());
            };
            let length = match (format, n) {
                (Format::Lz11, 3) => ((block[0] as usize & 0x0F) << 4 | (block[1] as usize) >> 4) + 0x11,
                (Format::Lz11, 4) => ((block[0] as usize & 0x0F) << 12 | (block[1] as usize) << 4 | (block[2] as usize) >> 4) + 0x111,
                _ => length,
            };
            let distance = ((block[n - 2] as usize & 0x0F) << 8 | block[n - 1] as usize) + 1;
            pos += n;
            let Some(start) = out.len().checked_sub(distance) else {
                fail!(at, "corrupt {name} stream: back reference {distance} bytes before output position {}", out.len());
            };
            // Byte by byte: the source may overlap what is being written (runs). The last
            // block may run past the size; the output stops there, as DSDecmp's does.
            for i in 0..length.min(want - out.len()) {
                let byte = out[start + i];
                out.push(byte);
            }
        }
    }
    Decoded { out, end: pos, error: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(input: &[u8], format: Format, want: usize) -> Decoded {
        decode(input, 4, format, want, "LZ", want as u64)
    }

    #[test]
    fn lz10_literals_and_references() {
        // "abc", then a reference of 3 + 3 bytes from 3 back: "abcabcabc".
        let d = run(&[0x10, 9, 0, 0, 0b0001_0000, b'a', b'b', b'c', 0x30, 0x02], Format::Lz10, 9);
        assert!(d.error.is_none());
        assert_eq!(d.out, b"abcabcabc");
        assert_eq!(d.end, 10);
    }

    #[test]
    fn lz11_block_forms() {
        // "ab"; I=3: 4 bytes from 2 back; I=0: 0x11 + 1 bytes from 1 back; I=1: 0x111 + 1
        // bytes from 1 back.
        let mut s = vec![0x11, 0, 0, 0, 0b0011_1000, b'a', b'b', 0x30, 0x01, 0x00, 0x10, 0x00, 0x10, 0x00, 0x10, 0x00];
        let want = 2 + 4 + 0x12 + 0x112;
        s[1..4].copy_from_slice(&(want as u32).to_le_bytes()[..3]);
        let d = run(&s, Format::Lz11, want);
        assert!(d.error.is_none(), "{:?}", d.error);
        assert_eq!(&d.out[..6], b"ababab");
        assert!(d.out[6..].iter().all(|&b| b == b'b'));
        assert_eq!(d.out.len(), want);
        assert_eq!(d.end, s.len());
    }

    #[test]
    fn errors_name_the_offset_and_reason() {
        // A reference 2 bytes back with 1 byte out.
        let d = run(&[0x10, 8, 0, 0, 0b0100_0000, b'a', 0x00, 0x01], Format::Lz10, 8);
        let e = d.error.unwrap();
        assert_eq!(e.offset, Some(6));
        assert!(e.reason.contains("back reference 2 bytes before output position 1"), "{}", e.reason);
        // Truncated inside a 4-byte LZ11 block.
        let d = run(&[0x11, 0, 1, 0, 0b0100_0000, b'a', 0x10, 0x00], Format::Lz11, 256);
        let e = d.error.unwrap();
        assert_eq!(e.offset, Some(6));
        assert!(e.reason.contains("truncated LZ stream: 1 of 256 bytes decoded"), "{}", e.reason);
    }

    #[test]
    fn non_streams_are_not_probed_as_lz() {
        let b = Budget::default();
        // A first block that is a reference, a zero size, a short buffer, other type bytes.
        for bytes in [&[0x10, 4, 0, 0, 0x80, 0, 0][..], &[0x11, 0, 0, 0, 0, 0, 0, 0, 0, 1], &[0x10, 1], &[0x12, 1, 0, 0, 0, 1]] {
            assert!(probe(bytes, &b).is_none(), "{bytes:?}");
        }
        // A valid stream of bytes that hold no shader or archive: not opened.
        assert!(probe(&[0x10, 3, 0, 0, 0, 1, 2, 3], &b).is_none());
    }
}
