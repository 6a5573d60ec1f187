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
    let mut out = Vec::with_capacity(size);
    let mut pos = HEADER;
    let truncated =
        |pos: usize, out: &Vec<u8>| ContainerError::at(pos as u64, format!("truncated Yaz0 stream: {} of {size} bytes decoded", out.len()));
    while out.len() < size {
        let flags = *input.get(pos).ok_or_else(|| truncated(pos, &out))?;
        pos += 1;
        for bit in (0..8).rev() {
            if out.len() >= size {
                break;
            }
            if flags >> bit & 1 == 1 {
                out.push(*input.get(pos).ok_or_else(|| truncated(pos, &out))?);
                pos += 1;
                continue;
            }
            let b = input.get(pos..pos + 2).ok_or_else(|| truncated(pos, &out))?;
            let distance = (((b[0] & 0x0F) as usize) << 8 | b[1] as usize) + 1;
            let length = match b[0] >> 4 {
                0 => {
                    let n = *input.get(pos + 2).ok_or_else(|| truncated(pos, &out))?;
                    pos += 3;
                    n as usize + 0x12
                }
                n => {
                    pos += 2;
                    n as usize + 2
                }
            };
            let Some(start) = out.len().checked_sub(distance) else {
                return Err(ContainerError::at(
                    pos as u64,
                    format!("corrupt Yaz0 stream: back reference {distance} bytes before output position {}", out.len()),
                ));
            };
            // Byte by byte: the source may overlap what is being written (runs).
            for i in 0..length.min(size - out.len()) {
                let byte = out[start + i];
                out.push(byte);
            }
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
}
