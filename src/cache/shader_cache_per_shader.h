
// ---- shrec per-shader frames (`--layout per-shader`) ----------------------------------------

// Defined only in the header of a cache written with `--layout per-shader`: each shader is its
// own zstd frame, so a runtime decompresses only the shaders it uses.
//
// g_compressedDxilCache / g_compressedSpirvCache are the concatenation of one frame per shader
// (key order; content size in each frame, no checksum). The ShaderCacheEntry offsets and sizes
// keep their meaning (the decompressed concatenation), so without a dictionary
// ZSTD_decompress of the whole blob still gives exactly what the single-frame layout gives.
// With `--zstd-dict`, every frame of a backend was compressed with g_shrec<Backend>Dict
// (ZSTD_decompress_usingDict / ZSTD_createDDict); the size is 0 when there is no dictionary.
#define SHREC_CACHE_PER_SHADER_FRAMES 1

// Parallel to g_shaderCacheEntries (same index): each shader's frame in the compressed blob.
// A size of 0 means the shader has no such backend.
struct ShrecEntryFrames
{
    uint32_t dxilFrameOffset;
    uint32_t dxilFrameSize;
    uint32_t spirvFrameOffset;
    uint32_t spirvFrameSize;
};

extern const uint32_t g_shrecCacheLayout; // 1: per-shader frames
extern const ShrecEntryFrames g_shrecEntryFrames[];
extern const uint8_t g_shrecDxilDict[];
extern const size_t g_shrecDxilDictSize;
extern const uint8_t g_shrecSpirvDict[];
extern const size_t g_shrecSpirvDictSize;

// The frames of an entry of g_shaderCacheEntries.
inline const ShrecEntryFrames* shrecEntryFrames(const ShaderCacheEntry* entry)
{
    return &g_shrecEntryFrames[entry - g_shaderCacheEntries];
}
