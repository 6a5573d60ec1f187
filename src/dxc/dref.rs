//! Depth compares at an explicit LOD, with a bias or with gradients on the SPIR-V target.
//!
//! HLSL has them as `SampleCmpLevel` (shader model 6.7), `SampleCmpBias` and `SampleCmpGrad`
//! (6.8), and DXC 1.8 compiles them to DXIL, but its SPIR-V back end answers "intrinsic
//! 'SampleCmpLevel' method unimplemented" (the provisioned compushady-lrtu 0.18 build; the
//! SPIR-V instructions exist since SPIR-V 1.0: `OpImageSampleDrefExplicitLod` with a `Lod` or
//! `Grad` operand, `OpImageSampleDrefImplicitLod` with `Bias`). So for SPIR-V the HLSL writer
//! calls a placeholder instead (`[[vk::ext_instruction(N, "NonSemantic.shrec.compare")]]`, which
//! DXC emits as `OpExtInst %float %set N %image %sampler %coord %dref operands…`; see
//! [`crate::hlsl`]'s `SampleCmpMode`), DXC compiles with its own SPIR-V validation off (the
//! placeholder's result feeds ordinary instructions, which the validator refuses for a
//! non-semantic instruction), and [`rewrite`] turns every placeholder into
//! `OpSampledImage` + the `OpImageSampleDref*` instruction, declaring the sampled-image type
//! when the module lacks it, and drops the import. The result is what a DXC with the
//! intrinsics would emit for them (tests/integration checks it with `spirv-val`; shrec-verify
//! runs it on lavapipe).

use rspirv::spirv::{ImageOperands, Op};

// The placeholder's names and numbers are the HLSL writer's, which emits it (the writer cannot
// depend on this module: `dxc` depends on `hlsl`).
pub use crate::hlsl::compare_placeholder::{BIAS, GRAD, LEVEL, PLACEHOLDER_SET, WITH_OFFSET};

// The word values of the opcodes and image operands this pass reads and writes, from rspirv's
// SPIR-V grammar (the module is walked as words: the rewrite must keep every other word as DXC
// wrote it).
const OP_EXT_INST_IMPORT: u32 = Op::ExtInstImport as u32;
const OP_EXT_INST: u32 = Op::ExtInst as u32;
const OP_TYPE_IMAGE: u32 = Op::TypeImage as u32;
const OP_TYPE_SAMPLED_IMAGE: u32 = Op::TypeSampledImage as u32;
const OP_LOAD: u32 = Op::Load as u32;
const OP_SAMPLED_IMAGE: u32 = Op::SampledImage as u32;
const OP_IMAGE_SAMPLE_DREF_IMPLICIT_LOD: u32 = Op::ImageSampleDrefImplicitLod as u32;
const OP_IMAGE_SAMPLE_DREF_EXPLICIT_LOD: u32 = Op::ImageSampleDrefExplicitLod as u32;
const IMAGE_OPERANDS_BIAS: u32 = ImageOperands::BIAS.bits();
const IMAGE_OPERANDS_LOD: u32 = ImageOperands::LOD.bits();
const IMAGE_OPERANDS_GRAD: u32 = ImageOperands::GRAD.bits();
const IMAGE_OPERANDS_CONST_OFFSET: u32 = ImageOperands::CONST_OFFSET.bits();

/// Why a module cannot be rewritten (a DXC output shrec does not expect).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum RewriteError {
    #[error("SPIR-V module from DXC is truncated or has an instruction of length 0 at word {0}")]
    Malformed(usize),
    #[error("depth-compare placeholder at word {word}: {why}")]
    Placeholder { word: usize, why: &'static str },
}

/// The literal string of an OpExtInstImport (its operand words after the result id).
fn import_name(inst: &[u32]) -> String {
    let bytes: Vec<u8> = inst[2..].iter().flat_map(|w| w.to_le_bytes()).take_while(|&b| b != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Rewrites the depth-compare placeholders of a SPIR-V module (little-endian words, as DXC
/// returns them); a module without the placeholder import is returned unchanged.
pub fn rewrite(bytes: &[u8]) -> Result<Vec<u8>, RewriteError> {
    let words = crate::pack::spirv_words::words(bytes).ok_or(RewriteError::Malformed(0))?;
    let insts = crate::pack::spirv_words::instructions(&words).map_err(RewriteError::Malformed)?;
    let Some(set) = insts.iter().find(|(_, i)| i[0] & 0xFFFF == OP_EXT_INST_IMPORT && import_name(i) == PLACEHOLDER_SET).map(|(_, i)| i[1]) else {
        return Ok(bytes.to_vec());
    };
    let mut bound = words[3];
    let mut fresh = || {
        bound += 1;
        bound - 1
    };
    // the sampled-image type of each image type, existing or to be declared after the image type
    let mut sampled_type: Vec<(u32, u32)> = insts.iter().filter(|(_, i)| i[0] & 0xFFFF == OP_TYPE_SAMPLED_IMAGE).map(|(_, i)| (i[2], i[1])).collect();
    let mut declare: Vec<(u32, u32)> = Vec::new();
    let load_type: std::collections::HashMap<u32, u32> =
        insts.iter().filter(|(_, i)| i[0] & 0xFFFF == OP_LOAD && i.len() >= 4).map(|(_, i)| (i[2], i[1])).collect();
    let image_types: Vec<u32> = insts.iter().filter(|(_, i)| i[0] & 0xFFFF == OP_TYPE_IMAGE).map(|(_, i)| i[1]).collect();
    let mut out: Vec<u32> = words[..5].to_vec();
    for &(at, inst) in &insts {
        let op = inst[0] & 0xFFFF;
        if op == OP_EXT_INST_IMPORT && inst[1] == set {
            continue;
        }
        if op != OP_EXT_INST || inst.get(3) != Some(&set) {
            out.extend_from_slice(inst);
            continue;
        }
        let bad = |why| RewriteError::Placeholder { word: at, why };
        // OpExtInst %type %result %set N %image %sampler %coord %dref operands…
        let (ty, result, number) = (inst[1], inst[2], inst[4]);
        let args = &inst[5..];
        if args.len() < 4 {
            return Err(bad("fewer than image, sampler, coordinate and reference"));
        }
        let (image, sampler, coord, dref) = (args[0], args[1], args[2], args[3]);
        let image_type = *load_type.get(&image).ok_or(bad("the image operand is not a loaded image"))?;
        if !image_types.contains(&image_type) {
            return Err(bad("the image operand is not an image"));
        }
        let si_type = match sampled_type.iter().find(|(img, _)| *img == image_type) {
            Some(&(_, t)) => t,
            None => {
                let t = fresh();
                sampled_type.push((image_type, t));
                declare.push((image_type, t));
                t
            }
        };
        let (kind, offset) = (number & !WITH_OFFSET, number & WITH_OFFSET != 0);
        let rest = &args[4..];
        let (level_ops, offset_id) = match (offset, rest.split_last()) {
            (true, Some((o, r))) => (r, Some(*o)),
            (true, None) => return Err(bad("no offset operand")),
            (false, _) => (rest, None),
        };
        let (opcode, mut mask, level_ops) = match (kind, level_ops.len()) {
            (LEVEL, 1) => (OP_IMAGE_SAMPLE_DREF_EXPLICIT_LOD, IMAGE_OPERANDS_LOD, level_ops),
            (BIAS, 1) => (OP_IMAGE_SAMPLE_DREF_IMPLICIT_LOD, IMAGE_OPERANDS_BIAS, level_ops),
            (GRAD, 2) => (OP_IMAGE_SAMPLE_DREF_EXPLICIT_LOD, IMAGE_OPERANDS_GRAD, level_ops),
            _ => return Err(bad("unknown placeholder number or operand count")),
        };
        if offset_id.is_some() {
            mask |= IMAGE_OPERANDS_CONST_OFFSET;
        }
        let si = fresh();
        out.extend_from_slice(&[(5 << 16) | OP_SAMPLED_IMAGE, si_type, si, image, sampler]);
        let mut sample = vec![0, ty, result, si, coord, dref, mask];
        sample.extend_from_slice(level_ops);
        sample.extend(offset_id);
        sample[0] = ((sample.len() as u32) << 16) | opcode;
        out.extend_from_slice(&sample);
    }
    // each new OpTypeSampledImage right after its image type (types precede their uses)
    for (image_type, t) in declare {
        let at = {
            let mut k = 5;
            loop {
                let len = (out[k] >> 16) as usize;
                if out[k] & 0xFFFF == OP_TYPE_IMAGE && out[k + 1] == image_type {
                    break k + len;
                }
                k += len;
            }
        };
        out.splice(at..at, [(3 << 16) | OP_TYPE_SAMPLED_IMAGE, t, image_type]);
    }
    out[3] = bound;
    Ok(out.iter().flat_map(|w| w.to_le_bytes()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(body: &[&[u32]]) -> Vec<u8> {
        let mut w = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
        for i in body {
            w.extend_from_slice(i);
        }
        w.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn words(b: &[u8]) -> Vec<u32> {
        b.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    fn import(id: u32) -> Vec<u32> {
        let mut name: Vec<u8> = PLACEHOLDER_SET.bytes().collect();
        name.resize((name.len() / 4 + 1) * 4, 0);
        let mut w = vec![0, id];
        w.extend(name.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        w[0] = ((w.len() as u32) << 16) | OP_EXT_INST_IMPORT;
        w
    }

    #[test]
    fn a_level_placeholder_becomes_a_sampled_image_and_an_explicit_lod_dref() {
        let imp = import(1);
        let body: [&[u32]; 4] = [
            &imp,
            &[(9 << 16) | OP_TYPE_IMAGE, 10, 11, 1, 2, 0, 0, 1, 0],
            &[(4 << 16) | OP_LOAD, 10, 20, 30],
            &[(10 << 16) | OP_EXT_INST, 11, 40, 1, LEVEL, 20, 21, 22, 23, 24],
        ];
        let out = words(&rewrite(&module(&body)).unwrap());
        assert_eq!(out[3], 102, "two new ids: the sampled-image type and value");
        let want: Vec<u32> = [
            &[(9 << 16) | OP_TYPE_IMAGE, 10, 11, 1, 2, 0, 0, 1, 0][..],
            &[(3 << 16) | OP_TYPE_SAMPLED_IMAGE, 100, 10],
            &[(4 << 16) | OP_LOAD, 10, 20, 30],
            &[(5 << 16) | OP_SAMPLED_IMAGE, 100, 101, 20, 21],
            &[(8 << 16) | OP_IMAGE_SAMPLE_DREF_EXPLICIT_LOD, 11, 40, 101, 22, 23, IMAGE_OPERANDS_LOD, 24],
        ]
        .concat();
        assert_eq!(&out[5..], &want[..]);
    }

    #[test]
    fn gradients_with_an_offset_and_bias_and_bad_placeholders() {
        let imp = import(1);
        let grad = [(12 << 16) | OP_EXT_INST, 11, 40, 1, GRAD | WITH_OFFSET, 20, 21, 22, 23, 24, 25, 26];
        let body: [&[u32]; 5] = [
            &imp,
            &[(9 << 16) | OP_TYPE_IMAGE, 10, 11, 1, 2, 0, 0, 1, 0],
            &[(3 << 16) | OP_TYPE_SAMPLED_IMAGE, 12, 10],
            &[(4 << 16) | OP_LOAD, 10, 20, 30],
            &grad,
        ];
        let out = words(&rewrite(&module(&body)).unwrap());
        assert_eq!(out[3], 101, "the existing sampled-image type is used");
        let tail = &out[out.len() - 10..];
        assert_eq!(
            tail,
            &[(10 << 16) | OP_IMAGE_SAMPLE_DREF_EXPLICIT_LOD, 11, 40, 100, 22, 23, IMAGE_OPERANDS_GRAD | IMAGE_OPERANDS_CONST_OFFSET, 24, 25, 26]
        );
        let bias = [(10 << 16) | OP_EXT_INST, 11, 40, 1, BIAS, 20, 21, 22, 23, 24];
        let body: [&[u32]; 4] = [&imp, &[(9 << 16) | OP_TYPE_IMAGE, 10, 11, 1, 2, 0, 0, 1, 0], &[(4 << 16) | OP_LOAD, 10, 20, 30], &bias];
        let out = words(&rewrite(&module(&body)).unwrap());
        assert_eq!(out[out.len() - 8], (8 << 16) | OP_IMAGE_SAMPLE_DREF_IMPLICIT_LOD);
        // a placeholder whose image is not a loaded image, or of an unknown kind, is an error
        let stray = [(10 << 16) | OP_EXT_INST, 11, 40, 1, LEVEL, 99, 21, 22, 23, 24];
        let body: [&[u32]; 2] = [&imp, &stray];
        assert!(matches!(rewrite(&module(&body)), Err(RewriteError::Placeholder { .. })));
        let odd = [(10 << 16) | OP_EXT_INST, 11, 40, 1, 7, 20, 21, 22, 23, 24];
        let body: [&[u32]; 4] = [&imp, &[(9 << 16) | OP_TYPE_IMAGE, 10, 11, 1, 2, 0, 0, 1, 0], &[(4 << 16) | OP_LOAD, 10, 20, 30], &odd];
        assert!(matches!(rewrite(&module(&body)), Err(RewriteError::Placeholder { .. })));
        // truncated input
        assert_eq!(rewrite(&module(&[&[(9 << 16) | OP_TYPE_IMAGE, 10]])), Err(RewriteError::Malformed(5)));
        // no placeholder import: unchanged
        let plain = module(&[&[(4 << 16) | OP_LOAD, 10, 20, 30]]);
        assert_eq!(rewrite(&plain).unwrap(), plain);
    }
}
