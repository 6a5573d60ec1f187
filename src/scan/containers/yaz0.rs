//! Yaz0, Nintendo's LZ77 variant (`.szs`; Wii U archives are usually Yaz0 of a SARC).
//!
//! Hand-written: the crates that decode it are GPL (`roead`, whose Yaz0 also builds C++ through
//! `cxx`) or unmaintained; the format is 40 lines. Layout (Cemu `Common/.../yaz0`, oead
//! `src/yaz0.cpp`, and the Wii U / Switch modding wikis' "Yaz0" page agree): `Yaz0`, u32 BE
//! decompressed size, 8 reserved bytes, then groups of one flag byte (most significant bit
//! first) and eight items: bit 1 = one literal byte; bit 0 = a back reference of two bytes
//! `NR RR` (distance `0xRRR + 1`, length `N + 2`) or, when `N` is 0, three bytes `0R RR NN`
//! (length `NN + 0x12`).

use super::{Budget, ContainerError};

const HEADER: usize = 16;

pub(super) fn decompress(input: &[u8], budget: &mut Budget) -> Result<Vec<u8>, ContainerError> {
    let size = super::be_or_le::<4>(input, 4, true, "Yaz0 size")?;
    // Checked before allocating: the size is the input's claim.
    budget.charge(size, input.len() as u64)?;
    let size = size as usize;
    // Written in place (`o` bytes decoded so far): a back reference that does not overlap its
    // own output is one `copy_within`, and a group of eight literals (flag byte 0xFF, all of
    // an incompressible stretch) one 8-byte copy. Byte-by-byte pushes made the scan of a Yaz0
    // SARC 20% slower than decoding it with the `yaz0` crate (benches/archives.rs).
    let mut out = vec![0u8; size];
    let mut o = 0;
    let mut pos = HEADER;
    let truncated = |pos: usize, o: usize| ContainerError::at(pos as u64, format!("truncated Yaz0 stream: {o} of {size} bytes decoded"));
    while o < size {
        let flags = *input.get(pos).ok_or_else(|| truncated(pos, o))?;
        pos += 1;
        if flags == 0xFF && size - o >= 8 {
            if let Some(literals) = input.get(pos..pos + 8) {
                out[o..o + 8].copy_from_slice(literals);
                o += 8;
                pos += 8;
                continue;
            }
        }
        for bit in (0..8).rev() {
            if o >= size {
                break;
            }
            if flags >> bit & 1 == 1 {
                out[o] = *input.get(pos).ok_or_else(|| truncated(pos, o))?;
                o += 1;
                pos += 1;
                continue;
            }
            let b = input.get(pos..pos + 2).ok_or_else(|| truncated(pos, o))?;
            let distance = (((b[0] & 0x0F) as usize) << 8 | b[1] as usize) + 1;
            let length = match b[0] >> 4 {
                0 => {
                    let n = *input.get(pos + 2).ok_or_else(|| truncated(pos, o))?;
                    pos += 3;
                    n as usize + 0x12
                }
                n => {
                    pos += 2;
                    n as usize + 2
                }
            };
            let Some(start) = o.checked_sub(distance) else {
                return Err(ContainerError::at(
                    pos as u64,
                    format!("corrupt Yaz0 stream: back reference {distance} bytes before output position {o}"),
                ));
            };
            let length = length.min(size - o);
            if distance >= length {
                out.copy_within(start..start + length, o);
            } else {
                // The source overlaps what is being written (a run): byte by byte.
                for i in 0..length {
                    out[o + i] = out[start + i];
                }
            }
            o += length;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_runs_and_long_runs() {
        // "ab" then a run of 4 copying distance 2, then a long run (N = 0) of 0x12 + 1.
        let mut s = b"Yaz0".to_vec();
        s.extend_from_slice(&(2u32 + 4 + 0x13).to_be_bytes());
        s.extend_from_slice(&[0; 8]);
        s.extend_from_slice(&[0b1100_0000, b'a', b'b', 0x20, 0x01, 0x00, 0x00, 0x01]);
        let out = decompress(&s, &mut Budget::default()).unwrap();
        assert_eq!(&out[..6], b"ababab");
        assert!(out[6..].iter().all(|&b| b == b'b'), "{out:?}");
        assert_eq!(out.len(), 25);
    }

    #[test]
    fn reference_before_start_and_truncation_are_errors() {
        let mut s = b"Yaz0".to_vec();
        s.extend_from_slice(&8u32.to_be_bytes());
        s.extend_from_slice(&[0; 8]);
        let e = decompress(&[&s[..], &[0x00, 0x20, 0x05]].concat(), &mut Budget::default()).unwrap_err();
        assert!(e.reason.contains("back reference"), "{}", e.reason);
        let e = decompress(&[&s[..], &[0xFF, 1, 2]].concat(), &mut Budget::default()).unwrap_err();
        assert!(e.reason.contains("truncated"), "{}", e.reason);
    }

    fn stream(size: u32, body: &[u8]) -> Vec<u8> {
        let mut s = b"Yaz0".to_vec();
        s.extend_from_slice(&size.to_be_bytes());
        s.extend_from_slice(&[0; 8]);
        s.extend_from_slice(body);
        s
    }

    #[test]
    fn literal_groups_copies_and_runs_decode_in_place() {
        let mut body = vec![0xFF];
        body.extend_from_slice(b"ABCDEFGH"); // eight literals: one group copy
                                             // A copy 8 back of length 5 (no overlap), a run 1 back of length 0x14 (overlaps
                                             // itself), then six literals.
        body.extend_from_slice(&[0b0011_1111, 0x30, 0x07, 0x00, 0x00, 0x02]);
        body.extend_from_slice(b"123456");
        // A literal group of which only three bytes fit in the declared size.
        body.push(0xFF);
        body.extend_from_slice(b"xyzXXXXX");
        let out = decompress(&stream(42, &body), &mut Budget::default()).unwrap();
        assert_eq!(out, [&b"ABCDEFGHABCDE"[..], &[b'E'; 20], b"123456xyz"].concat());
    }

    #[test]
    fn a_copy_is_clipped_to_the_declared_size() {
        let out = decompress(&stream(10, &[0b1000_0000, b'a', 0x00, 0x00, 0xFF]), &mut Budget::default()).unwrap();
        assert_eq!(out, [b'a'; 10]);
    }

    #[test]
    fn a_truncated_literal_group_names_where_it_stops() {
        let e = decompress(&stream(16, &[0xFF, b'a', b'b', b'c']), &mut Budget::default()).unwrap_err();
        assert_eq!(e.offset, Some(20));
        assert_eq!(e.reason, "truncated Yaz0 stream: 3 of 16 bytes decoded");
    }
}
