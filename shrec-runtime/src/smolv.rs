//! SMOL-V codec: a compact, lossless re-encoding of SPIR-V modules.
//!
//! Byte-compatible with the reference implementation (aras-p/smol-v, `source/smolv.cpp`,
//! encoding version 1, SPIR-V 1.0 through 1.6). Encoded output is identical to what the
//! reference encoder produces, so caches written by either side can be read by the other.
//!
//! # Format summary
//!
//! Header, six little-endian words: `"SMOL"` magic, SPIR-V version in the low 24 bits with the
//! SMOL-V encoding version in the top 8 bits, generator, ID bound, schema, and the byte size of
//! the decoded SPIR-V module. Then one record per instruction:
//!
//! * length and opcode packed into one varint (frequent opcodes remapped below 16, lengths biased
//!   by each opcode's minimum, so that the common case takes a single byte);
//! * the result type as a varint, the result ID as a zigzag varint delta from the previous result;
//! * per-opcode, a number of operand IDs as zigzag varint deltas *back* from the current result;
//! * the remaining operands either as varints or as raw 4-byte words, per opcode;
//! * special cases: `OpVectorShuffle` with up to 4 components each in `0..4` becomes a pseudo-op
//!   with a one-byte swizzle, runs of `OpMemberDecorate` on one struct are grouped with delta
//!   coded member indices and `Offset` values, `OpDecorate` targets are deltas from the previous
//!   decoration target.
//!
//! Encoding rejects exactly what the reference encoder rejects (it needs just enough of each
//! instruction to apply its per-opcode scheme; it does not validate SPIR-V otherwise). Decoding
//! treats its input as untrusted: every read is bounds-checked and output never grows past the
//! size declared in the header.

use std::fmt;

/// Why a SPIR-V module could not be encoded, or a SMOL-V buffer could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SmolvError {
    SizeNotMultipleOf4(usize),
    TooLarge(usize),
    BadSpirvHeader(&'static str),
    ZeroLength { word: usize, op: OpName },
    PastEnd { word: usize, op: OpName, len: usize, total: usize },
    TooShort { word: usize, op: OpName, len: usize, min: usize },
    MemberDecorateLength { word: usize, decoration: u32, len: usize, expected: usize },
    BadHeader(&'static str),
    Truncated(usize),
    VarintTooLong(usize),
    Malformed { pos: usize, op: OpName, reason: String },
    OutputOverflow(usize),
    SizeMismatch { actual: usize, declared: usize },
}

impl fmt::Display for SmolvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SmolvError::*;
        match self {
            SizeNotMultipleOf4(n) => write!(f, "input size {n} not a multiple of 4"),
            TooLarge(n) => write!(f, "input size {n} too large for SMOL-V (its size field is 32 bits)"),
            BadSpirvHeader(s) => write!(f, "bad SPIR-V header: {s}"),
            ZeroLength { word, op } => write!(f, "instruction at word {word} ({op}) has length 0"),
            PastEnd { word, op, len, total } => {
                write!(f, "instruction at word {word} ({op}) has length {len}, running past the end of the module ({total} words)")
            }
            TooShort { word, op, len, min } => {
                write!(f, "instruction at word {word} ({op}) has length {len}, below its minimum {min}")
            }
            MemberDecorateLength { word, decoration, len, expected } => {
                write!(f, "instruction at word {word} (OpMemberDecorate, decoration {decoration}) has length {len}, expected {expected}")
            }
            BadHeader(s) => write!(f, "bad SMOL-V header: {s}"),
            Truncated(n) => write!(f, "truncated at byte {n}"),
            VarintTooLong(n) => write!(f, "varint at byte {n} is longer than 5 bytes"),
            Malformed { pos, op, reason } => write!(f, "instruction at byte {pos} ({op}): {reason}"),
            OutputOverflow(n) => write!(f, "decoded data exceeds the size {n} declared in the header"),
            SizeMismatch { actual, declared } => write!(f, "decoded {actual} bytes but the header declares {declared}"),
        }
    }
}

impl std::error::Error for SmolvError {}

/// An opcode, displayed with its SPIR-V name when known (`OpTypeArray`, else `op #1234`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpName(pub u32);

impl fmt::Display for OpName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match OP_TABLE.get(self.0 as usize).map(|row| row.0) {
            Some(name) if !name.is_empty() => write!(f, "Op{name}"),
            _ => write!(f, "op #{}", self.0),
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Constants

const SPIRV_MAGIC: u32 = 0x0723_0203;
const SMOLV_MAGIC: u32 = 0x534D_4F4C; // "SMOL" as a number; the little-endian bytes read "LOMS".
/// Encoding version written by [`encode`]; [`decode`] also reads version 0 files.
const SMOLV_VERSION: u32 = 1;
/// SPIR-V versions the reference accepts, in the header's `0x00MMmm00` layout.
const MIN_SPIRV_VERSION: u32 = 0x0001_0000;
const MAX_SPIRV_VERSION: u32 = 0x0001_0600;
const SPIRV_HEADER_WORDS: usize = 5;
const SMOLV_HEADER_BYTES: usize = 24;

// Opcodes the codec treats specially.
const OP_SOURCE_CONTINUED: u32 = 2;
const OP_SOURCE: u32 = 3;
const OP_SOURCE_EXTENSION: u32 = 4;
const OP_NAME: u32 = 5;
const OP_MEMBER_NAME: u32 = 6;
const OP_STRING: u32 = 7;
const OP_LINE: u32 = 8;
/// Not a SPIR-V opcode: SMOL-V's compact form of `OpVectorShuffle`, in an unused slot.
const OP_VECTOR_SHUFFLE_COMPACT: u32 = 13;
const OP_LOAD: u32 = 61;
const OP_ACCESS_CHAIN: u32 = 65;
const OP_DECORATE: u32 = 71;
const OP_MEMBER_DECORATE: u32 = 72;
const OP_VECTOR_SHUFFLE: u32 = 79;
const OP_NO_LINE: u32 = 317;
const OP_MODULE_PROCESSED: u32 = 330;

const DECORATION_OFFSET: u32 = 35;

/// Instructions dropped when stripping debug info (the reference's `kEncodeFlagStripDebugInfo`).
const DEBUG_OPS: [u32; 9] =
    [OP_SOURCE_CONTINUED, OP_SOURCE, OP_SOURCE_EXTENSION, OP_NAME, OP_MEMBER_NAME, OP_STRING, OP_LINE, OP_NO_LINE, OP_MODULE_PROCESSED];

/// Frequent opcodes swapped with rare ones below 16, so the packed length+opcode varint of a
/// common instruction fits in one byte. The mapping is its own inverse. Name (5), MemberName (6),
/// ExtInst (12) and the compact shuffle pseudo-op (13) are frequent already and stay in place.
const OP_REMAP: [(u32, u32); 12] = [
    (OP_DECORATE, 0),          // Nop
    (OP_LOAD, 1),              // Undef
    (62, OP_SOURCE_CONTINUED), // Store
    (OP_ACCESS_CHAIN, OP_SOURCE),
    (OP_VECTOR_SHUFFLE, OP_SOURCE_EXTENSION),
    (OP_MEMBER_DECORATE, OP_STRING),
    (248, OP_LINE), // Label
    (59, 9),        // Variable, unused slot 9
    (133, 10),      // FMul, Extension
    (129, 11),      // FAdd, ExtInstImport
    (32, 14),       // TypePointer, MemoryModel
    (127, 15),      // FNegate, EntryPoint
];

/// Minimum length (minus one) of some frequent instructions, subtracted before encoding the
/// length so that it usually fits in 3 bits.
const LEN_BIAS: [(u32, u32); 5] = [(OP_VECTOR_SHUFFLE, 4), (OP_VECTOR_SHUFFLE_COMPACT, 4), (OP_DECORATE, 2), (OP_LOAD, 3), (OP_ACCESS_CHAIN, 3)];

// ------------------------------------------------------------------------------------------------
// Opcode table
//
// One row per opcode, `(name, has_result, has_type, delta_ids, varint_rest)`:
// * `has_result` / `has_type`: the instruction has a result ID / result type ID;
// * `delta_ids`: how many operands after those to encode as zigzag deltas from the result ID
//   (IDs referenced by the instruction are usually recent results);
// * `varint_rest`: the remaining operands are small numbers, so encode them as varints rather
//   than raw words.
// These values define the wire format, including their quirks (unassigned opcodes count as having
// a type and a result; a few rows differ from the SPIR-V grammar). They must match the reference
// table exactly. An empty name marks an opcode SPIR-V leaves unassigned.

type OpRow = (&'static str, u8, u8, u8, u8);

#[rustfmt::skip]
const OP_TABLE: [OpRow; 367] = [
    ("Nop", 0, 0, 0, 0),
    ("Undef", 1, 1, 0, 0),
    ("SourceContinued", 0, 0, 0, 0),
    ("Source", 0, 0, 0, 1),
    ("SourceExtension", 0, 0, 0, 0),
    ("Name", 0, 0, 0, 0),
    ("MemberName", 0, 0, 0, 0),
    ("String", 0, 0, 0, 0),
    ("Line", 0, 0, 0, 1),
    ("", 1, 1, 0, 0), // 9
    ("Extension", 0, 0, 0, 0),
    ("ExtInstImport", 1, 0, 0, 0),
    ("ExtInst", 1, 1, 0, 1),
    ("VectorShuffleCompact", 1, 1, 2, 1), // 13: SMOL-V only
    ("MemoryModel", 0, 0, 0, 1),
    ("EntryPoint", 0, 0, 0, 1),
    ("ExecutionMode", 0, 0, 0, 1),
    ("Capability", 0, 0, 0, 1),
    ("", 1, 1, 0, 0), // 18
    ("TypeVoid", 1, 0, 0, 1),
    ("TypeBool", 1, 0, 0, 1),
    ("TypeInt", 1, 0, 0, 1),
    ("TypeFloat", 1, 0, 0, 1),
    ("TypeVector", 1, 0, 0, 1),
    ("TypeMatrix", 1, 0, 0, 1),
    ("TypeImage", 1, 0, 0, 1),
    ("TypeSampler", 1, 0, 0, 1),
    ("TypeSampledImage", 1, 0, 0, 1),
    ("TypeArray", 1, 0, 0, 1),
    ("TypeRuntimeArray", 1, 0, 0, 1),
    ("TypeStruct", 1, 0, 0, 1),
    ("TypeOpaque", 1, 0, 0, 1),
    ("TypePointer", 1, 0, 0, 1),
    ("TypeFunction", 1, 0, 0, 1),
    ("TypeEvent", 1, 0, 0, 1),
    ("TypeDeviceEvent", 1, 0, 0, 1),
    ("TypeReserveId", 1, 0, 0, 1),
    ("TypeQueue", 1, 0, 0, 1),
    ("TypePipe", 1, 0, 0, 1),
    ("TypeForwardPointer", 0, 0, 0, 1),
    ("", 1, 1, 0, 0), // 40
    ("ConstantTrue", 1, 1, 0, 0),
    ("ConstantFalse", 1, 1, 0, 0),
    ("Constant", 1, 1, 0, 0),
    ("ConstantComposite", 1, 1, 9, 0),
    ("ConstantSampler", 1, 1, 0, 1),
    ("ConstantNull", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 47
    ("SpecConstantTrue", 1, 1, 0, 0),
    ("SpecConstantFalse", 1, 1, 0, 0),
    ("SpecConstant", 1, 1, 0, 0),
    ("SpecConstantComposite", 1, 1, 9, 0),
    ("SpecConstantOp", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 53
    ("Function", 1, 1, 0, 1),
    ("FunctionParameter", 1, 1, 0, 0),
    ("FunctionEnd", 0, 0, 0, 0),
    ("FunctionCall", 1, 1, 9, 0),
    ("", 1, 1, 0, 0), // 58
    ("Variable", 1, 1, 0, 1),
    ("ImageTexelPointer", 1, 1, 0, 0),
    ("Load", 1, 1, 1, 1),
    ("Store", 0, 0, 2, 1),
    ("CopyMemory", 0, 0, 0, 0),
    ("CopyMemorySized", 0, 0, 0, 0),
    ("AccessChain", 1, 1, 0, 1),
    ("InBoundsAccessChain", 1, 1, 0, 0),
    ("PtrAccessChain", 1, 1, 0, 0),
    ("ArrayLength", 1, 1, 0, 0),
    ("GenericPtrMemSemantics", 1, 1, 0, 0),
    ("InBoundsPtrAccessChain", 1, 1, 0, 0),
    ("Decorate", 0, 0, 0, 1),
    ("MemberDecorate", 0, 0, 0, 1),
    ("DecorationGroup", 1, 0, 0, 0),
    ("GroupDecorate", 0, 0, 0, 0),
    ("GroupMemberDecorate", 0, 0, 0, 0),
    ("", 1, 1, 0, 0), // 76
    ("VectorExtractDynamic", 1, 1, 1, 1),
    ("VectorInsertDynamic", 1, 1, 2, 1),
    ("VectorShuffle", 1, 1, 2, 1),
    ("CompositeConstruct", 1, 1, 9, 0),
    ("CompositeExtract", 1, 1, 1, 1),
    ("CompositeInsert", 1, 1, 2, 1),
    ("CopyObject", 1, 1, 1, 0),
    ("Transpose", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 85
    ("SampledImage", 1, 1, 0, 0),
    ("ImageSampleImplicitLod", 1, 1, 2, 1),
    ("ImageSampleExplicitLod", 1, 1, 2, 1),
    ("ImageSampleDrefImplicitLod", 1, 1, 3, 1),
    ("ImageSampleDrefExplicitLod", 1, 1, 3, 1),
    ("ImageSampleProjImplicitLod", 1, 1, 2, 1),
    ("ImageSampleProjExplicitLod", 1, 1, 2, 1),
    ("ImageSampleProjDrefImplicitLod", 1, 1, 3, 1),
    ("ImageSampleProjDrefExplicitLod", 1, 1, 3, 1),
    ("ImageFetch", 1, 1, 2, 1),
    ("ImageGather", 1, 1, 3, 1),
    ("ImageDrefGather", 1, 1, 3, 1),
    ("ImageRead", 1, 1, 2, 1),
    ("ImageWrite", 0, 0, 3, 1),
    ("Image", 1, 1, 1, 0),
    ("ImageQueryFormat", 1, 1, 1, 0),
    ("ImageQueryOrder", 1, 1, 1, 0),
    ("ImageQuerySizeLod", 1, 1, 2, 0),
    ("ImageQuerySize", 1, 1, 1, 0),
    ("ImageQueryLod", 1, 1, 2, 0),
    ("ImageQueryLevels", 1, 1, 1, 0),
    ("ImageQuerySamples", 1, 1, 1, 0),
    ("", 1, 1, 0, 0), // 108
    ("ConvertFToU", 1, 1, 1, 0),
    ("ConvertFToS", 1, 1, 1, 0),
    ("ConvertSToF", 1, 1, 1, 0),
    ("ConvertUToF", 1, 1, 1, 0),
    ("UConvert", 1, 1, 1, 0),
    ("SConvert", 1, 1, 1, 0),
    ("FConvert", 1, 1, 1, 0),
    ("QuantizeToF16", 1, 1, 1, 0),
    ("ConvertPtrToU", 1, 1, 1, 0),
    ("SatConvertSToU", 1, 1, 1, 0),
    ("SatConvertUToS", 1, 1, 1, 0),
    ("ConvertUToPtr", 1, 1, 1, 0),
    ("PtrCastToGeneric", 1, 1, 1, 0),
    ("GenericCastToPtr", 1, 1, 1, 0),
    ("GenericCastToPtrExplicit", 1, 1, 1, 1),
    ("Bitcast", 1, 1, 1, 0),
    ("", 1, 1, 0, 0), // 125
    ("SNegate", 1, 1, 1, 0),
    ("FNegate", 1, 1, 1, 0),
    ("IAdd", 1, 1, 2, 0),
    ("FAdd", 1, 1, 2, 0),
    ("ISub", 1, 1, 2, 0),
    ("FSub", 1, 1, 2, 0),
    ("IMul", 1, 1, 2, 0),
    ("FMul", 1, 1, 2, 0),
    ("UDiv", 1, 1, 2, 0),
    ("SDiv", 1, 1, 2, 0),
    ("FDiv", 1, 1, 2, 0),
    ("UMod", 1, 1, 2, 0),
    ("SRem", 1, 1, 2, 0),
    ("SMod", 1, 1, 2, 0),
    ("FRem", 1, 1, 2, 0),
    ("FMod", 1, 1, 2, 0),
    ("VectorTimesScalar", 1, 1, 2, 0),
    ("MatrixTimesScalar", 1, 1, 2, 0),
    ("VectorTimesMatrix", 1, 1, 2, 0),
    ("MatrixTimesVector", 1, 1, 2, 0),
    ("MatrixTimesMatrix", 1, 1, 2, 0),
    ("OuterProduct", 1, 1, 2, 0),
    ("Dot", 1, 1, 2, 0),
    ("IAddCarry", 1, 1, 2, 0),
    ("ISubBorrow", 1, 1, 2, 0),
    ("UMulExtended", 1, 1, 2, 0),
    ("SMulExtended", 1, 1, 2, 0),
    ("", 1, 1, 0, 0), // 153
    ("Any", 1, 1, 1, 0),
    ("All", 1, 1, 1, 0),
    ("IsNan", 1, 1, 1, 0),
    ("IsInf", 1, 1, 1, 0),
    ("IsFinite", 1, 1, 1, 0),
    ("IsNormal", 1, 1, 1, 0),
    ("SignBitSet", 1, 1, 1, 0),
    ("LessOrGreater", 1, 1, 2, 0),
    ("Ordered", 1, 1, 2, 0),
    ("Unordered", 1, 1, 2, 0),
    ("LogicalEqual", 1, 1, 2, 0),
    ("LogicalNotEqual", 1, 1, 2, 0),
    ("LogicalOr", 1, 1, 2, 0),
    ("LogicalAnd", 1, 1, 2, 0),
    ("LogicalNot", 1, 1, 1, 0),
    ("Select", 1, 1, 3, 0),
    ("IEqual", 1, 1, 2, 0),
    ("INotEqual", 1, 1, 2, 0),
    ("UGreaterThan", 1, 1, 2, 0),
    ("SGreaterThan", 1, 1, 2, 0),
    ("UGreaterThanEqual", 1, 1, 2, 0),
    ("SGreaterThanEqual", 1, 1, 2, 0),
    ("ULessThan", 1, 1, 2, 0),
    ("SLessThan", 1, 1, 2, 0),
    ("ULessThanEqual", 1, 1, 2, 0),
    ("SLessThanEqual", 1, 1, 2, 0),
    ("FOrdEqual", 1, 1, 2, 0),
    ("FUnordEqual", 1, 1, 2, 0),
    ("FOrdNotEqual", 1, 1, 2, 0),
    ("FUnordNotEqual", 1, 1, 2, 0),
    ("FOrdLessThan", 1, 1, 2, 0),
    ("FUnordLessThan", 1, 1, 2, 0),
    ("FOrdGreaterThan", 1, 1, 2, 0),
    ("FUnordGreaterThan", 1, 1, 2, 0),
    ("FOrdLessThanEqual", 1, 1, 2, 0),
    ("FUnordLessThanEqual", 1, 1, 2, 0),
    ("FOrdGreaterThanEqual", 1, 1, 2, 0),
    ("FUnordGreaterThanEqual", 1, 1, 2, 0),
    ("", 1, 1, 0, 0), // 192
    ("", 1, 1, 0, 0), // 193
    ("ShiftRightLogical", 1, 1, 2, 0),
    ("ShiftRightArithmetic", 1, 1, 2, 0),
    ("ShiftLeftLogical", 1, 1, 2, 0),
    ("BitwiseOr", 1, 1, 2, 0),
    ("BitwiseXor", 1, 1, 2, 0),
    ("BitwiseAnd", 1, 1, 2, 0),
    ("Not", 1, 1, 1, 0),
    ("BitFieldInsert", 1, 1, 4, 0),
    ("BitFieldSExtract", 1, 1, 3, 0),
    ("BitFieldUExtract", 1, 1, 3, 0),
    ("BitReverse", 1, 1, 1, 0),
    ("BitCount", 1, 1, 1, 0),
    ("", 1, 1, 0, 0), // 206
    ("DPdx", 1, 1, 0, 0),
    ("DPdy", 1, 1, 0, 0),
    ("Fwidth", 1, 1, 0, 0),
    ("DPdxFine", 1, 1, 0, 0),
    ("DPdyFine", 1, 1, 0, 0),
    ("FwidthFine", 1, 1, 0, 0),
    ("DPdxCoarse", 1, 1, 0, 0),
    ("DPdyCoarse", 1, 1, 0, 0),
    ("FwidthCoarse", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 216
    ("", 1, 1, 0, 0), // 217
    ("EmitVertex", 0, 0, 0, 0),
    ("EndPrimitive", 0, 0, 0, 0),
    ("EmitStreamVertex", 0, 0, 0, 0),
    ("EndStreamPrimitive", 0, 0, 0, 0),
    ("", 1, 1, 0, 0), // 222
    ("", 1, 1, 0, 0), // 223
    ("ControlBarrier", 0, 0, 3, 0),
    ("MemoryBarrier", 0, 0, 2, 0),
    ("", 1, 1, 0, 0), // 226
    ("AtomicLoad", 1, 1, 0, 0),
    ("AtomicStore", 0, 0, 0, 0),
    ("AtomicExchange", 1, 1, 0, 0),
    ("AtomicCompareExchange", 1, 1, 0, 0),
    ("AtomicCompareExchangeWeak", 1, 1, 0, 0),
    ("AtomicIIncrement", 1, 1, 0, 0),
    ("AtomicIDecrement", 1, 1, 0, 0),
    ("AtomicIAdd", 1, 1, 0, 0),
    ("AtomicISub", 1, 1, 0, 0),
    ("AtomicSMin", 1, 1, 0, 0),
    ("AtomicUMin", 1, 1, 0, 0),
    ("AtomicSMax", 1, 1, 0, 0),
    ("AtomicUMax", 1, 1, 0, 0),
    ("AtomicAnd", 1, 1, 0, 0),
    ("AtomicOr", 1, 1, 0, 0),
    ("AtomicXor", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 243
    ("", 1, 1, 0, 0), // 244
    ("Phi", 1, 1, 0, 0),
    ("LoopMerge", 0, 0, 2, 1),
    ("SelectionMerge", 0, 0, 1, 1),
    ("Label", 1, 0, 0, 0),
    ("Branch", 0, 0, 1, 0),
    ("BranchConditional", 0, 0, 3, 1),
    ("Switch", 0, 0, 0, 0),
    ("Kill", 0, 0, 0, 0),
    ("Return", 0, 0, 0, 0),
    ("ReturnValue", 0, 0, 0, 0),
    ("Unreachable", 0, 0, 0, 0),
    ("LifetimeStart", 0, 0, 0, 0),
    ("LifetimeStop", 0, 0, 0, 0),
    ("", 1, 1, 0, 0), // 258
    ("GroupAsyncCopy", 1, 1, 0, 0),
    ("GroupWaitEvents", 0, 0, 0, 0),
    ("GroupAll", 1, 1, 0, 0),
    ("GroupAny", 1, 1, 0, 0),
    ("GroupBroadcast", 1, 1, 0, 0),
    ("GroupIAdd", 1, 1, 0, 0),
    ("GroupFAdd", 1, 1, 0, 0),
    ("GroupFMin", 1, 1, 0, 0),
    ("GroupUMin", 1, 1, 0, 0),
    ("GroupSMin", 1, 1, 0, 0),
    ("GroupFMax", 1, 1, 0, 0),
    ("GroupUMax", 1, 1, 0, 0),
    ("GroupSMax", 1, 1, 0, 0),
    ("", 1, 1, 0, 0), // 272
    ("", 1, 1, 0, 0), // 273
    ("ReadPipe", 1, 1, 0, 0),
    ("WritePipe", 1, 1, 0, 0),
    ("ReservedReadPipe", 1, 1, 0, 0),
    ("ReservedWritePipe", 1, 1, 0, 0),
    ("ReserveReadPipePackets", 1, 1, 0, 0),
    ("ReserveWritePipePackets", 1, 1, 0, 0),
    ("CommitReadPipe", 0, 0, 0, 0),
    ("CommitWritePipe", 0, 0, 0, 0),
    ("IsValidReserveId", 1, 1, 0, 0),
    ("GetNumPipePackets", 1, 1, 0, 0),
    ("GetMaxPipePackets", 1, 1, 0, 0),
    ("GroupReserveReadPipePackets", 1, 1, 0, 0),
    ("GroupReserveWritePipePackets", 1, 1, 0, 0),
    ("GroupCommitReadPipe", 0, 0, 0, 0),
    ("GroupCommitWritePipe", 0, 0, 0, 0),
    ("", 1, 1, 0, 0), // 289
    ("", 1, 1, 0, 0), // 290
    ("EnqueueMarker", 1, 1, 0, 0),
    ("EnqueueKernel", 1, 1, 0, 0),
    ("GetKernelNDrangeSubGroupCount", 1, 1, 0, 0),
    ("GetKernelNDrangeMaxSubGroupSize", 1, 1, 0, 0),
    ("GetKernelWorkGroupSize", 1, 1, 0, 0),
    ("GetKernelPreferredWorkGroupSizeMultiple", 1, 1, 0, 0),
    ("RetainEvent", 0, 0, 0, 0),
    ("ReleaseEvent", 0, 0, 0, 0),
    ("CreateUserEvent", 1, 1, 0, 0),
    ("IsValidEvent", 1, 1, 0, 0),
    ("SetUserEventStatus", 0, 0, 0, 0),
    ("CaptureEventProfilingInfo", 0, 0, 0, 0),
    ("GetDefaultQueue", 1, 1, 0, 0),
    ("BuildNDRange", 1, 1, 0, 0),
    ("ImageSparseSampleImplicitLod", 1, 1, 2, 1),
    ("ImageSparseSampleExplicitLod", 1, 1, 2, 1),
    ("ImageSparseSampleDrefImplicitLod", 1, 1, 3, 1),
    ("ImageSparseSampleDrefExplicitLod", 1, 1, 3, 1),
    ("ImageSparseSampleProjImplicitLod", 1, 1, 2, 1),
    ("ImageSparseSampleProjExplicitLod", 1, 1, 2, 1),
    ("ImageSparseSampleProjDrefImplicitLod", 1, 1, 3, 1),
    ("ImageSparseSampleProjDrefExplicitLod", 1, 1, 3, 1),
    ("ImageSparseFetch", 1, 1, 2, 1),
    ("ImageSparseGather", 1, 1, 3, 1),
    ("ImageSparseDrefGather", 1, 1, 3, 1),
    ("ImageSparseTexelsResident", 1, 1, 1, 0),
    ("NoLine", 0, 0, 0, 0),
    ("AtomicFlagTestAndSet", 1, 1, 0, 0),
    ("AtomicFlagClear", 0, 0, 0, 0),
    ("ImageSparseRead", 1, 1, 0, 0),
    ("SizeOf", 1, 1, 0, 0),
    ("TypePipeStorage", 1, 1, 0, 0),
    ("ConstantPipeStorage", 1, 1, 0, 0),
    ("CreatePipeFromPipeStorage", 1, 1, 0, 0),
    ("GetKernelLocalSizeForSubgroupCount", 1, 1, 0, 0),
    ("GetKernelMaxNumSubgroups", 1, 1, 0, 0),
    ("TypeNamedBarrier", 1, 1, 0, 0),
    ("NamedBarrierInitialize", 1, 1, 0, 1),
    ("MemoryNamedBarrier", 0, 0, 2, 1),
    ("ModuleProcessed", 1, 1, 0, 0),
    // Encoding version 1 (2020) added the rows from here on.
    ("ExecutionModeId", 0, 0, 0, 1),
    ("DecorateId", 0, 0, 0, 1),
    ("GroupNonUniformElect", 1, 1, 1, 1),
    ("GroupNonUniformAll", 1, 1, 1, 1),
    ("GroupNonUniformAny", 1, 1, 1, 1),
    ("GroupNonUniformAllEqual", 1, 1, 1, 1),
    ("GroupNonUniformBroadcast", 1, 1, 1, 1),
    ("GroupNonUniformBroadcastFirst", 1, 1, 1, 1),
    ("GroupNonUniformBallot", 1, 1, 1, 1),
    ("GroupNonUniformInverseBallot", 1, 1, 1, 1),
    ("GroupNonUniformBallotBitExtract", 1, 1, 1, 1),
    ("GroupNonUniformBallotBitCount", 1, 1, 1, 1),
    ("GroupNonUniformBallotFindLSB", 1, 1, 1, 1),
    ("GroupNonUniformBallotFindMSB", 1, 1, 1, 1),
    ("GroupNonUniformShuffle", 1, 1, 1, 1),
    ("GroupNonUniformShuffleXor", 1, 1, 1, 1),
    ("GroupNonUniformShuffleUp", 1, 1, 1, 1),
    ("GroupNonUniformShuffleDown", 1, 1, 1, 1),
    ("GroupNonUniformIAdd", 1, 1, 1, 1),
    ("GroupNonUniformFAdd", 1, 1, 1, 1),
    ("GroupNonUniformIMul", 1, 1, 1, 1),
    ("GroupNonUniformFMul", 1, 1, 1, 1),
    ("GroupNonUniformSMin", 1, 1, 1, 1),
    ("GroupNonUniformUMin", 1, 1, 1, 1),
    ("GroupNonUniformFMin", 1, 1, 1, 1),
    ("GroupNonUniformSMax", 1, 1, 1, 1),
    ("GroupNonUniformUMax", 1, 1, 1, 1),
    ("GroupNonUniformFMax", 1, 1, 1, 1),
    ("GroupNonUniformBitwiseAnd", 1, 1, 1, 1),
    ("GroupNonUniformBitwiseOr", 1, 1, 1, 1),
    ("GroupNonUniformBitwiseXor", 1, 1, 1, 1),
    ("GroupNonUniformLogicalAnd", 1, 1, 1, 1),
    ("GroupNonUniformLogicalOr", 1, 1, 1, 1),
    ("GroupNonUniformLogicalXor", 1, 1, 1, 1),
    ("GroupNonUniformQuadBroadcast", 1, 1, 1, 1),
    ("GroupNonUniformQuadSwap", 1, 1, 1, 1),
];

/// How an opcode is encoded under one encoding version. Opcodes past the version's table (or
/// past 16 bits) get the neutral default: no type, no result, raw words.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct OpInfo {
    has_result: bool,
    has_type: bool,
    delta_ids: usize,
    varint_rest: bool,
}

/// Number of table rows an encoding version knows; the table only ever grows at the end.
fn known_ops(version: u32) -> usize {
    match version {
        0 => OP_MODULE_PROCESSED as usize + 1,
        _ => OP_TABLE.len(),
    }
}

fn op_info(op: u32, known: usize) -> OpInfo {
    match OP_TABLE.get(op as usize) {
        Some(&(_, result, ty, delta, rest)) if (op as usize) < known => {
            OpInfo { has_result: result != 0, has_type: ty != 0, delta_ids: usize::from(delta), varint_rest: rest != 0 }
        }
        _ => OpInfo::default(),
    }
}

fn remap_op(op: u32) -> u32 {
    for &(a, b) in &OP_REMAP {
        if op == a {
            return b;
        }
        if op == b {
            return a;
        }
    }
    op
}

fn len_bias(op: u32) -> u32 {
    LEN_BIAS.iter().find(|&&(o, _)| o == op).map_or(0, |&(_, bias)| bias)
}

/// Extra operand words of a member decoration, when fixed: `None` means "unknown, encode the
/// length explicitly".
fn decoration_extra_words(decoration: u32) -> Option<usize> {
    match decoration {
        0 | 2..=5 => Some(0), // RelaxedPrecision, Block, BufferBlock, RowMajor, ColMajor
        29..=37 => Some(1),   // Stream, Location, Component, Index, Binding, DescriptorSet, Offset, XfbBuffer, XfbStride
        _ => None,
    }
}

fn is_debug_op(op: u32) -> bool {
    DEBUG_OPS.contains(&op)
}

/// The shortest instruction the encoder can represent for `op`: one word for the opcode, plus the
/// words it reads unconditionally (type, result, decoration target), and the length bias.
fn min_encodable_len(op: u32, info: OpInfo) -> usize {
    let fixed = 1 + usize::from(info.has_type) + usize::from(info.has_result) + usize::from(op == OP_DECORATE || op == OP_MEMBER_DECORATE);
    fixed.max(len_bias(op) as usize + 1)
}

fn zig_encode(v: i32) -> u32 {
    ((v as u32) << 1) ^ ((v >> 31) as u32)
}

fn zig_decode(u: u32) -> u32 {
    (u >> 1) ^ (u & 1).wrapping_neg()
}

// ------------------------------------------------------------------------------------------------
// Encoding

fn put4(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_varint(out: &mut Vec<u8>, mut v: u32) {
    while v > 127 {
        out.push((v & 127) as u8 | 128);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Packs length and opcode as `0xLLLOOOLO` (L = length bits, O = opcode bits) so that an
/// opcode below 16 with an adjusted length below 8 takes one varint byte.
fn put_length_op(out: &mut Vec<u8>, len: u32, op: u32) -> bool {
    // Lengths below the bias wrap around; SPIR-V lengths are 16 bits, so that is caught here.
    let len = len.wrapping_sub(1).wrapping_sub(len_bias(op));
    if len > 0xFFFF {
        return false;
    }
    let op = remap_op(op);
    put_varint(out, ((len >> 4) << 20) | ((op >> 4) << 8) | ((len & 0xF) << 4) | (op & 0xF));
    true
}

/// Validates the instruction starting at `pos` and returns its word count and opcode.
fn instruction_at(words: &[u32], pos: usize) -> Result<(usize, u32), SmolvError> {
    let len = (words[pos] >> 16) as usize;
    let op = words[pos] & 0xFFFF;
    if len == 0 {
        return Err(SmolvError::ZeroLength { word: pos, op: OpName(op) });
    }
    if len > words.len() - pos {
        return Err(SmolvError::PastEnd { word: pos, op: OpName(op), len, total: words.len() });
    }
    Ok((len, op))
}

fn check_spirv_header(words: &[u32]) -> Result<(), SmolvError> {
    if words.len() < SPIRV_HEADER_WORDS {
        return Err(SmolvError::BadSpirvHeader("shorter than the 5-word header"));
    }
    if words[0] != SPIRV_MAGIC {
        // A byte-swapped magic means a big-endian module; the reference does not support those.
        return Err(SmolvError::BadSpirvHeader("wrong magic (not little-endian SPIR-V)"));
    }
    if !(MIN_SPIRV_VERSION..=MAX_SPIRV_VERSION).contains(&words[1]) {
        return Err(SmolvError::BadSpirvHeader("unsupported version (only 1.0 through 1.6)"));
    }
    Ok(())
}

/// Encodes a little-endian SPIR-V module as SMOL-V. With `strip_debug`, debug instructions
/// (names, strings, source, line info, module-processed notes) are dropped, as the reference's
/// `kEncodeFlagStripDebugInfo` does.
pub fn encode(spirv: &[u8], strip_debug: bool) -> Result<Vec<u8>, SmolvError> {
    if spirv.len() % 4 != 0 {
        return Err(SmolvError::SizeNotMultipleOf4(spirv.len()));
    }
    let byte_size = u32::try_from(spirv.len()).map_err(|_| SmolvError::TooLarge(spirv.len()))?;
    let words: Vec<u32> = spirv.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    check_spirv_header(&words)?;

    // Typical output is about 30% of the input.
    let mut out = Vec::with_capacity(spirv.len() / 2 + SMOLV_HEADER_BYTES);
    put4(&mut out, SMOLV_MAGIC);
    put4(&mut out, (words[1] & 0x00FF_FFFF) | (SMOLV_VERSION << 24));
    for &w in &words[2..SPIRV_HEADER_WORDS] {
        put4(&mut out, w); // generator, bound, schema
    }
    let size_field = out.len();
    put4(&mut out, byte_size); // patched below if stripping removed anything

    let known = known_ops(SMOLV_VERSION);
    let mut kept_words = words.len();
    let mut prev_result = 0u32;
    let mut prev_decorate = 0u32;
    let mut pos = SPIRV_HEADER_WORDS;

    while pos < words.len() {
        let (len, spirv_op) = instruction_at(&words, pos)?;
        if strip_debug && is_debug_op(spirv_op) {
            kept_words -= len;
            pos += len;
            continue;
        }
        let insn = &words[pos..pos + len];

        // A shuffle of up to 4 components, each from the first 4 of its inputs, packs its
        // components into one byte (2 bits each) under a pseudo-opcode.
        let mut op = spirv_op;
        let mut swizzle = 0u32;
        if op == OP_VECTOR_SHUFFLE && len <= 9 {
            let comp = |i: usize| insn.get(i).copied().unwrap_or(0);
            let (s0, s1, s2, s3) = (comp(5), comp(6), comp(7), comp(8));
            if s0 < 4 && s1 < 4 && s2 < 4 && s3 < 4 {
                op = OP_VECTOR_SHUFFLE_COMPACT;
                swizzle = (s0 << 6) | (s1 << 4) | (s2 << 2) | s3;
            }
        }

        let info = op_info(op, known);
        let too_short = || SmolvError::TooShort { word: pos, op: OpName(spirv_op), len, min: min_encodable_len(op, info) };
        if !put_length_op(&mut out, len as u32, op) {
            return Err(too_short());
        }

        let mut i = 1;
        if info.has_type {
            let ty = *insn.get(i).ok_or_else(too_short)?;
            put_varint(&mut out, ty);
            i += 1;
        }
        if info.has_result {
            let result = *insn.get(i).ok_or_else(too_short)?;
            // Results mostly increase, but not always (e.g. after spirv-remap): zigzag.
            put_varint(&mut out, zig_encode(result.wrapping_sub(prev_result) as i32));
            prev_result = result;
            i += 1;
        }
        if op == OP_DECORATE || op == OP_MEMBER_DECORATE {
            let target = *insn.get(i).ok_or_else(too_short)?;
            put_varint(&mut out, zig_encode(target.wrapping_sub(prev_decorate) as i32));
            prev_decorate = target;
            i += 1;
        }

        if op == OP_MEMBER_DECORATE {
            pos = encode_member_decorations(&words, pos, &mut out)?;
            continue;
        }

        for &id in insn.iter().skip(i).take(info.delta_ids) {
            // Operands usually refer to recent results; branches may point forward: zigzag.
            put_varint(&mut out, zig_encode(prev_result.wrapping_sub(id) as i32));
        }
        i = (i + info.delta_ids).min(len);

        if op == OP_VECTOR_SHUFFLE_COMPACT {
            out.push(swizzle as u8);
        } else if info.varint_rest {
            for &w in &insn[i..] {
                put_varint(&mut out, w);
            }
        } else {
            for &w in &insn[i..] {
                put4(&mut out, w);
            }
        }
        pos += len;
    }

    if kept_words != words.len() {
        let size = (kept_words * 4) as u32; // at most the original size, which fits
        out[size_field..size_field + 4].copy_from_slice(&size.to_le_bytes());
    }
    Ok(out)
}

/// Encodes the run of `OpMemberDecorate` instructions on one struct type starting at `start`
/// (up to 255 of them) as a count byte and compact member records, after the first
/// instruction's length, opcode and target have been written. Returns the word position after
/// the run.
fn encode_member_decorations(words: &[u32], start: usize, out: &mut Vec<u8>) -> Result<usize, SmolvError> {
    let struct_type = words[start + 1];
    let count_at = out.len();
    out.push(0);
    let mut count = 0u8;
    let mut prev_index = 0u32;
    let mut prev_offset = 0u32;
    let mut pos = start;
    while pos < words.len() && count < u8::MAX {
        let (len, op) = instruction_at(words, pos)?;
        if op != OP_MEMBER_DECORATE {
            break;
        }
        if len < 4 {
            return Err(SmolvError::TooShort { word: pos, op: OpName(op), len, min: 4 });
        }
        if words[pos + 1] != struct_type {
            break;
        }
        let insn = &words[pos..pos + len];
        let (index, decoration) = (insn[2], insn[3]);
        put_varint(out, index.wrapping_sub(prev_index));
        prev_index = index;
        put_varint(out, decoration);
        match decoration_extra_words(decoration) {
            None => put_varint(out, (len - 4) as u32),
            Some(extra) if extra + 4 != len => {
                return Err(SmolvError::MemberDecorateLength { word: pos, decoration, len, expected: extra + 4 });
            }
            Some(_) => {}
        }
        if decoration == DECORATION_OFFSET {
            // Member offsets mostly increase along the struct.
            put_varint(out, insn[4].wrapping_sub(prev_offset));
            prev_offset = insn[4];
        } else {
            for &w in &insn[4..] {
                put_varint(out, w);
            }
        }
        pos += len;
        count += 1;
    }
    out[count_at] = count;
    Ok(pos)
}

// ------------------------------------------------------------------------------------------------
// Decoding

struct Header {
    version: u32,
    spirv_version: u32,
    generator: u32,
    bound: u32,
    schema: u32,
    decoded_size: u32,
}

fn read_header(smolv: &[u8]) -> Result<Header, SmolvError> {
    if smolv.len() < SMOLV_HEADER_BYTES {
        return Err(SmolvError::BadHeader("shorter than the 24-byte header"));
    }
    let word = |i: usize| u32::from_le_bytes([smolv[4 * i], smolv[4 * i + 1], smolv[4 * i + 2], smolv[4 * i + 3]]);
    if word(0) != SMOLV_MAGIC {
        return Err(SmolvError::BadHeader("wrong magic"));
    }
    let spirv_version = word(1) & 0x00FF_FFFF;
    if !(MIN_SPIRV_VERSION..=MAX_SPIRV_VERSION).contains(&spirv_version) {
        return Err(SmolvError::BadHeader("unsupported SPIR-V version (only 1.0 through 1.6)"));
    }
    let version = word(1) >> 24;
    if version > SMOLV_VERSION {
        return Err(SmolvError::BadHeader("unknown SMOL-V encoding version"));
    }
    Ok(Header { version, spirv_version, generator: word(2), bound: word(3), schema: word(4), decoded_size: word(5) })
}

/// The size in bytes of the SPIR-V module a SMOL-V buffer decodes to, as stored in its header
/// (the reference's `GetDecodedBufferSize`, with an error instead of 0 for a bad header).
pub fn decoded_size(smolv: &[u8]) -> Result<usize, SmolvError> {
    Ok(read_header(smolv)?.decoded_size as usize)
}

/// Bounds-checked cursor over untrusted SMOL-V bytes.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn at_end(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn byte(&mut self) -> Result<u8, SmolvError> {
        let b = *self.data.get(self.pos).ok_or(SmolvError::Truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn word(&mut self) -> Result<u32, SmolvError> {
        let bytes = self.data.get(self.pos..self.pos + 4).ok_or(SmolvError::Truncated(self.data.len()))?;
        self.pos += 4;
        Ok(u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]))
    }

    /// 7 bits per byte, low bits first, high bit set on all but the last byte. The encoder
    /// writes at most 5 bytes for a 32-bit value; bits past 32 are dropped.
    fn varint(&mut self) -> Result<u32, SmolvError> {
        // Most values are small: take the one-byte case without the loop.
        if let Some(&b) = self.data.get(self.pos) {
            if b < 128 {
                self.pos += 1;
                return Ok(u32::from(b));
            }
        }
        let start = self.pos;
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 127) << shift;
            if b & 128 == 0 {
                return Ok(v as u32);
            }
        }
        Err(SmolvError::VarintTooLong(start))
    }
}

/// Output buffer that refuses to grow past the size declared in the header.
struct Output {
    buf: Vec<u8>,
    limit: usize,
}

impl Output {
    fn put(&mut self, v: u32) -> Result<(), SmolvError> {
        if self.buf.len() + 4 > self.limit {
            return Err(SmolvError::OutputOverflow(self.limit));
        }
        self.buf.extend_from_slice(&v.to_le_bytes());
        Ok(())
    }
}

/// Decodes SMOL-V back into SPIR-V. The input is untrusted: malformed data yields an error,
/// never a panic, and the output never exceeds the size the header declares.
pub fn decode(smolv: &[u8]) -> Result<Vec<u8>, SmolvError> {
    let header = read_header(smolv)?;
    let limit = header.decoded_size as usize;
    if limit < SPIRV_HEADER_WORDS * 4 {
        return Err(SmolvError::BadHeader("declared decoded size is smaller than a SPIR-V header"));
    }
    // One input byte decodes to at most 16 output bytes (a swizzle byte to four words), so a
    // short input cannot make us reserve a huge buffer by claiming a huge size.
    let plausible = smolv.len().saturating_mul(16).saturating_add(64);
    let mut out = Output { buf: Vec::with_capacity(limit.min(plausible)), limit };

    out.put(SPIRV_MAGIC)?;
    out.put(header.spirv_version)?;
    out.put(header.generator)?;
    out.put(header.bound)?;
    out.put(header.schema)?;

    let known = known_ops(header.version);
    let mut r = Reader { data: smolv, pos: SMOLV_HEADER_BYTES };
    let mut prev_result = 0u32;
    let mut prev_decorate = 0u32;

    while !r.at_end() {
        let start = r.pos;
        let packed = r.varint()?;
        let raw_len = ((packed >> 20) << 4) | ((packed >> 4) & 0xF);
        let encoded_op = remap_op(((packed >> 4) & 0xFFF0) | (packed & 0xF));
        let len = raw_len as usize + 1 + len_bias(encoded_op) as usize;
        let was_swizzle = encoded_op == OP_VECTOR_SHUFFLE_COMPACT;
        let op = if was_swizzle { OP_VECTOR_SHUFFLE } else { encoded_op };
        let info = op_info(op, known);
        let malformed = |reason: String| SmolvError::Malformed { pos: start, op: OpName(op), reason };

        if len > 0xFFFF {
            return Err(malformed(format!("length {len} does not fit in 16 bits")));
        }
        let min = min_encodable_len(op, info);
        if len < min {
            return Err(malformed(format!("length {len} is below its minimum {min}")));
        }
        out.put(((len as u32) << 16) | op)?;

        let mut i = 1;
        if info.has_type {
            out.put(r.varint()?)?;
            i += 1;
        }
        if info.has_result {
            let result = prev_result.wrapping_add(zig_decode(r.varint()?));
            out.put(result)?;
            prev_result = result;
            i += 1;
        }
        if op == OP_DECORATE || op == OP_MEMBER_DECORATE {
            let target = prev_decorate.wrapping_add(zig_decode(r.varint()?));
            out.put(target)?;
            prev_decorate = target;
            i += 1;
        }

        if op == OP_MEMBER_DECORATE {
            decode_member_decorations(&mut r, &mut out, len, prev_decorate).map_err(|reason| reason.into_error(start))?;
            continue;
        }

        let deltas = info.delta_ids.min(len - i);
        for _ in 0..deltas {
            out.put(prev_result.wrapping_sub(zig_decode(r.varint()?)))?;
        }
        i += deltas;

        if was_swizzle && len <= 9 {
            let swizzle = u32::from(r.byte()?);
            for k in 0..len - 5 {
                out.put((swizzle >> (6 - 2 * k)) & 3)?;
            }
        } else if info.varint_rest {
            for _ in i..len {
                out.put(r.varint()?)?;
            }
        } else {
            for _ in i..len {
                out.put(r.word()?)?;
            }
        }
    }

    if out.buf.len() != limit {
        return Err(SmolvError::SizeMismatch { actual: out.buf.len(), declared: limit });
    }
    Ok(out.buf)
}

/// A failure inside a member-decoration group: either a plain error, or a structural problem
/// reported against the group's opening instruction.
enum GroupError {
    Plain(SmolvError),
    Structure(String),
}

impl From<SmolvError> for GroupError {
    fn from(e: SmolvError) -> Self {
        GroupError::Plain(e)
    }
}

impl GroupError {
    fn into_error(self, pos: usize) -> SmolvError {
        match self {
            GroupError::Plain(e) => e,
            GroupError::Structure(reason) => SmolvError::Malformed { pos, op: OpName(OP_MEMBER_DECORATE), reason },
        }
    }
}

/// Decodes a member-decoration group whose first instruction's length, opcode and target are
/// already written.
fn decode_member_decorations(r: &mut Reader<'_>, out: &mut Output, first_len: usize, target: u32) -> Result<(), GroupError> {
    let count = r.byte()?;
    if count == 0 {
        // The encoder always puts the opening instruction in its group; without it the
        // instruction already written would be cut short.
        return Err(GroupError::Structure("empty member decoration group".into()));
    }
    let mut prev_index = 0u32;
    let mut prev_offset = 0u32;
    for m in 0..count {
        let index = prev_index.wrapping_add(r.varint()?);
        prev_index = index;
        let decoration = r.varint()?;
        let len = match decoration_extra_words(decoration) {
            Some(extra) => 4 + extra,
            None => (r.varint()? as usize).saturating_add(4),
        };
        if len > 0xFFFF {
            return Err(GroupError::Structure(format!("member decoration length {len} does not fit in 16 bits")));
        }
        if m == 0 {
            if len != first_len {
                return Err(GroupError::Structure(format!("first member decoration has length {len}, but the instruction header says {first_len}")));
            }
        } else {
            out.put(((len as u32) << 16) | OP_MEMBER_DECORATE)?;
            out.put(target)?;
        }
        out.put(index)?;
        out.put(decoration)?;
        if decoration == DECORATION_OFFSET {
            // Offset always has exactly one operand (its length is fixed above).
            let offset = prev_offset.wrapping_add(r.varint()?);
            out.put(offset)?;
            prev_offset = offset;
        } else {
            for _ in 4..len {
                out.put(r.varint()?)?;
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;

    /// Assembles a module from instructions given as (opcode, operands).
    fn module(version: u32, insns: &[(u32, &[u32])]) -> Vec<u8> {
        let mut words = vec![SPIRV_MAGIC, version, 0x000D_000B, 100, 0];
        for &(op, operands) in insns {
            words.push(((operands.len() as u32 + 1) << 16) | op);
            words.extend_from_slice(operands);
        }
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    fn sample() -> Vec<u8> {
        module(
            0x0001_0300,
            &[
                (17, &[1]),                                 // OpCapability Shader
                (14, &[0, 1]),                              // OpMemoryModel
                (5, &[4, u32::from_le_bytes(*b"main"), 0]), // OpName
                (71, &[7, 2]),                              // OpDecorate %7 Block
                (72, &[7, 0, 35, 0]),                       // OpMemberDecorate %7 0 Offset 0
                (72, &[7, 1, 35, 16]),                      // OpMemberDecorate %7 1 Offset 16
                (72, &[7, 1, 5]),                           // OpMemberDecorate %7 1 ColMajor
                (72, &[7, 1, 11, 3]),                       // OpMemberDecorate %7 1 BuiltIn (unknown length)
                (72, &[8, 0, 30, 1]),                       // different struct: new group
                (19, &[2]),                                 // OpTypeVoid
                (22, &[3, 32]),                             // OpTypeFloat
                (23, &[4, 3, 4]),                           // OpTypeVector
                (79, &[4, 10, 9, 9, 0, 1, 2, 3]),           // OpVectorShuffle, compact
                (79, &[4, 11, 9, 9, 7, 6]),                 // OpVectorShuffle, not compact
                (79, &[4, 12, 9, 9, 0xFFFF_FFFF]),          // undefined component
                (43, &[3, 13, 0x3F80_0000]),                // OpConstant
                (8, &[1, 2, 3]),                            // OpLine
                (250, &[13, 20, 5]),                        // OpBranchConditional, forward targets
                (5000, &[1, 2, 3]),                         // unknown opcode: raw words
            ],
        )
    }

    #[test]
    fn op_table_names_match_spirv() {
        for (i, &(name, ..)) in OP_TABLE.iter().enumerate() {
            if name.is_empty() || i == OP_VECTOR_SHUFFLE_COMPACT as usize {
                continue;
            }
            let op = rspirv::spirv::Op::from_u32(i as u32).unwrap_or_else(|| panic!("row {i} ({name}) is not a SPIR-V opcode"));
            assert_eq!(format!("{op:?}"), name, "row {i}");
        }
    }

    #[test]
    fn remap_is_an_involution() {
        for op in 0..400 {
            assert_eq!(remap_op(remap_op(op)), op);
        }
        for &(a, b) in &OP_REMAP {
            assert!(a.min(b) < 16, "remap pair ({a}, {b}) does not bring an op below 16");
        }
    }

    #[test]
    fn varint_and_zigzag() {
        for v in [0, 1, 127, 128, 300, 0x0FFF_FFFF, 0x1000_0000, u32::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert!(buf.len() <= 5);
            let mut r = Reader { data: &buf, pos: 0 };
            assert_eq!(r.varint().unwrap(), v);
            assert!(r.at_end());
        }
        for v in [0i32, 1, -1, 63, -64, i32::MAX, i32::MIN] {
            assert_eq!(zig_decode(zig_encode(v)) as i32, v);
        }
        assert_eq!(zig_encode(-1), 1);
        assert_eq!(zig_encode(1), 2);
        let mut r = Reader { data: &[0x80; 6], pos: 0 };
        assert!(matches!(r.varint(), Err(SmolvError::VarintTooLong(0))));
        let mut r = Reader { data: &[0x80, 0x80], pos: 0 };
        assert!(matches!(r.varint(), Err(SmolvError::Truncated(2))));
    }

    #[test]
    fn header_layout() {
        let spv = sample();
        let smolv = encode(&spv, false).unwrap();
        assert_eq!(&smolv[..4], b"LOMS");
        assert_eq!(&smolv[4..8], &(0x0001_0300u32 | (1 << 24)).to_le_bytes());
        assert_eq!(&smolv[8..20], &spv[8..20]);
        assert_eq!(decoded_size(&smolv).unwrap(), spv.len());
    }

    #[test]
    fn round_trip_and_strip() {
        let spv = sample();
        let smolv = encode(&spv, false).unwrap();
        assert_eq!(decode(&smolv).unwrap(), spv);

        let stripped = encode(&spv, true).unwrap();
        let expected = {
            module(
                0x0001_0300,
                &[
                    (17, &[1]),
                    (14, &[0, 1]),
                    (71, &[7, 2]),
                    (72, &[7, 0, 35, 0]),
                    (72, &[7, 1, 35, 16]),
                    (72, &[7, 1, 5]),
                    (72, &[7, 1, 11, 3]),
                    (72, &[8, 0, 30, 1]),
                    (19, &[2]),
                    (22, &[3, 32]),
                    (23, &[4, 3, 4]),
                    (79, &[4, 10, 9, 9, 0, 1, 2, 3]),
                    (79, &[4, 11, 9, 9, 7, 6]),
                    (79, &[4, 12, 9, 9, 0xFFFF_FFFF]),
                    (43, &[3, 13, 0x3F80_0000]),
                    (250, &[13, 20, 5]),
                    (5000, &[1, 2, 3]),
                ],
            )
        };
        assert_eq!(decoded_size(&stripped).unwrap(), expected.len());
        assert_eq!(decode(&stripped).unwrap(), expected);
    }

    #[test]
    fn long_member_decoration_runs_split_at_255() {
        let insns: Vec<(u32, Vec<u32>)> = (0..600u32).map(|i| (72, vec![7, i, 35, i * 4])).collect();
        let refs: Vec<(u32, &[u32])> = insns.iter().map(|(op, v)| (*op, v.as_slice())).collect();
        let spv = module(0x0001_0000, &refs);
        assert_eq!(decode(&encode(&spv, false).unwrap()).unwrap(), spv);
    }

    #[test]
    fn encode_rejects_malformed_modules() {
        assert!(matches!(encode(&[0; 22], false), Err(SmolvError::SizeNotMultipleOf4(22))));
        assert!(matches!(encode(&[0; 16], false), Err(SmolvError::BadSpirvHeader(_))));
        let mut spv = sample();
        spv[4..8].copy_from_slice(&0x0001_0700u32.to_le_bytes());
        assert!(matches!(encode(&spv, false), Err(SmolvError::BadSpirvHeader(_))));

        let short_array = module(0x0001_0000, &[(28, &[])]);
        let err = encode(&short_array, false).unwrap_err();
        assert_eq!(err.to_string(), "instruction at word 5 (OpTypeArray) has length 1, below its minimum 2");

        let short_shuffle = module(0x0001_0000, &[(79, &[1, 2, 3])]);
        assert!(matches!(encode(&short_shuffle, false), Err(SmolvError::TooShort { min: 5, .. })));

        let short_member = module(0x0001_0000, &[(72, &[1, 2])]);
        assert!(matches!(encode(&short_member, false), Err(SmolvError::TooShort { min: 4, .. })));

        let bad_offset = module(0x0001_0000, &[(72, &[1, 2, 35])]);
        assert!(matches!(encode(&bad_offset, false), Err(SmolvError::MemberDecorateLength { .. })));

        let mut past_end = module(0x0001_0000, &[(17, &[1])]);
        past_end[20..24].copy_from_slice(&((9u32 << 16) | 17).to_le_bytes());
        assert!(matches!(encode(&past_end, false), Err(SmolvError::PastEnd { .. })));

        let mut zero = module(0x0001_0000, &[(17, &[1])]);
        zero[20..24].copy_from_slice(&17u32.to_le_bytes());
        assert!(matches!(encode(&zero, false), Err(SmolvError::ZeroLength { .. })));
    }

    #[test]
    fn decode_rejects_bad_headers() {
        let smolv = encode(&sample(), false).unwrap();
        assert!(matches!(decode(&smolv[..23]), Err(SmolvError::BadHeader(_))));
        let mut bad = smolv.clone();
        bad[0] ^= 1;
        assert!(matches!(decode(&bad), Err(SmolvError::BadHeader(_))));
        let mut bad = smolv.clone();
        bad[7] = 2; // encoding version 2
        assert!(matches!(decode(&bad), Err(SmolvError::BadHeader(_))));
        let mut bad = smolv.clone();
        bad[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&bad).is_err());
        let mut bad = smolv;
        bad[20..24].copy_from_slice(&4u32.to_le_bytes());
        assert!(decode(&bad).is_err());
    }

    #[test]
    fn decode_survives_corruption() {
        let smolv = encode(&sample(), false).unwrap();
        for cut in 0..smolv.len() {
            assert!(decode(&smolv[..cut]).is_err(), "truncated to {cut} bytes decoded");
        }
        for byte in 0..smolv.len() {
            for bit in 0..8 {
                let mut bad = smolv.clone();
                bad[byte] ^= 1 << bit;
                let _ = decode(&bad);
            }
        }
        // Random garbage behind a valid header.
        let mut state = 0x1234_5678u32;
        for _ in 0..2000 {
            let mut buf = smolv[..24].to_vec();
            let n = (state % 64) as usize;
            for _ in 0..n {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                buf.push(state as u8);
            }
            let _ = decode(&buf);
        }
    }

    #[test]
    fn decodes_version_0_tables() {
        // Version 0 files predate the GroupNonUniform rows: those opcodes were raw words.
        let spv = module(0x0001_0300, &[(349, &[1, 2, 3, 4, 5])]);
        let mut smolv = Vec::new();
        put4(&mut smolv, SMOLV_MAGIC);
        put4(&mut smolv, 0x0001_0300);
        for &w in &[0x000D_000Bu32, 100, 0, spv.len() as u32] {
            put4(&mut smolv, w);
        }
        assert!(put_length_op(&mut smolv, 6, 349));
        for w in 1..=5 {
            put4(&mut smolv, w);
        }
        assert_eq!(decode(&smolv).unwrap(), spv);
    }
}
