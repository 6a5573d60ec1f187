// Example consumer of a shrec cache (either layout): looks up every key, decompresses each
// shader's DXIL and SPIR-V and checks their headers.
//
//   shader_cache_example [DUMP_DIR]   also writes <KEY>.dxil and <KEY>.spv into DUMP_DIR
//
// A game computes the key from the pointer it hands the graphics API (Xenos: XXH3-64 of the
// container, UnleashedRecomp's XXH3_64bits(function, function[1] + function[2]); AGAL: XXH3-64
// of the bytes given to Program3D.upload; see the README, "Keys") and calls shrecFindEntry(key).

#include "shader_cache.h"
#include <zstd.h>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

void fail(uint64_t key, const char* what)
{
    std::printf("FAIL %016" PRIX64 ": %s\n", key, what);
    g_failures++;
}

uint32_t u32At(const std::vector<uint8_t>& b, size_t off)
{
    uint32_t v;
    std::memcpy(&v, b.data() + off, 4);
    return v;
}

// One backend: the whole blob decompressed once (single frame), or one frame per shader.
struct Backend
{
    const uint8_t* compressed;
    size_t compressedSize;
    size_t decompressedSize;
    std::vector<uint8_t> whole; // single-frame layout
    ZSTD_DDict* ddict = nullptr;

    bool init(const char* name, const uint8_t* dict, size_t dictSize, bool perShader)
    {
        if (perShader) {
            if (dictSize > 0) ddict = ZSTD_createDDict(dict, dictSize);
            return true;
        }
        whole.resize(decompressedSize);
        if (compressedSize == 0) return decompressedSize == 0;
        size_t n = ZSTD_decompress(whole.data(), whole.size(), compressed, compressedSize);
        if (ZSTD_isError(n) || n != decompressedSize) {
            std::printf("FAIL %s blob: %s\n", name, ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size");
            return false;
        }
        return true;
    }

    // The shader at [offset, offset + size) of the decompressed concatenation; per-shader:
    // decompresses only its frame [frameOffset, frameOffset + frameSize).
    bool get(uint32_t offset, uint32_t size, uint32_t frameOffset, uint32_t frameSize, std::vector<uint8_t>& out) const
    {
        out.assign(size, 0);
        if (size == 0) return false;
        if (whole.empty() && decompressedSize != 0) {
            if (size_t(frameOffset) + frameSize > compressedSize) return false;
            ZSTD_DCtx* dctx = ZSTD_createDCtx();
            size_t n = ddict
                ? ZSTD_decompress_usingDDict(dctx, out.data(), size, compressed + frameOffset, frameSize, ddict)
                : ZSTD_decompressDCtx(dctx, out.data(), size, compressed + frameOffset, frameSize);
            ZSTD_freeDCtx(dctx);
            return !ZSTD_isError(n) && n == size;
        }
        if (size_t(offset) + size > whole.size()) return false;
        std::memcpy(out.data(), whole.data() + offset, size);
        return true;
    }
};

void dump(const char* dir, uint64_t key, const char* ext, const std::vector<uint8_t>& bytes)
{
    if (!dir) return;
    char name[64];
    std::snprintf(name, sizeof name, "/%016" PRIX64 ".%s", key, ext);
    std::string path = std::string(dir) + name;
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) std::printf("FAIL writing %s\n", path.c_str());
    if (f) std::fclose(f);
}

} // namespace

int main(int argc, char** argv)
{
    const char* dumpDir = argc > 1 ? argv[1] : nullptr;
#ifdef SHREC_CACHE_PER_SHADER_FRAMES
    const bool perShader = true;
    const uint8_t* dxilDict = g_shrecDxilDict;
    const size_t dxilDictSize = g_shrecDxilDictSize;
    const uint8_t* spirvDict = g_shrecSpirvDict;
    const size_t spirvDictSize = g_shrecSpirvDictSize;
#else
    const bool perShader = false;
    const uint8_t* dxilDict = nullptr;
    const size_t dxilDictSize = 0;
    const uint8_t* spirvDict = nullptr;
    const size_t spirvDictSize = 0;
#endif
    if (g_shrecSpirvEncoding != SHREC_SPIRV_RAW) {
        std::printf("FAIL this example reads raw SPIR-V (shrec build --spirv-encoding raw); decode SMOL-V with smolv::Decode otherwise\n");
        return 1;
    }
    Backend dxil{g_compressedDxilCache, g_dxilCacheCompressedSize, g_dxilCacheDecompressedSize};
    Backend spirv{g_compressedSpirvCache, g_spirvCacheCompressedSize, g_spirvCacheDecompressedSize};
    if (!dxil.init("DXIL", dxilDict, dxilDictSize, perShader) || !spirv.init("SPIR-V", spirvDict, spirvDictSize, perShader)) return 1;

    std::vector<uint8_t> d, s;
    for (size_t i = 0; i < g_shaderCacheEntryCount; i++) {
        const uint64_t key = g_shaderCacheEntries[i].hash;
        ShaderCacheEntry* e = shrecFindEntry(key);
        if (e != &g_shaderCacheEntries[i]) { fail(key, "lookup"); continue; }
        uint32_t df[2] = {0, 0}, sf[2] = {0, 0};
#ifdef SHREC_CACHE_PER_SHADER_FRAMES
        const ShrecEntryFrames* fr = shrecEntryFrames(e);
        df[0] = fr->dxilFrameOffset; df[1] = fr->dxilFrameSize;
        sf[0] = fr->spirvFrameOffset; sf[1] = fr->spirvFrameSize;
#endif
        if (!dxil.get(e->dxilOffset, e->dxilSize, df[0], df[1], d)) { fail(key, "DXIL missing or undecodable"); continue; }
        if (!spirv.get(e->spirvOffset, e->spirvSize, sf[0], sf[1], s)) { fail(key, "SPIR-V missing or undecodable"); continue; }
        // DXIL container: "DXBC", 16-byte hash, version 1.0, total size, part count.
        if (d.size() < 32 || std::memcmp(d.data(), "DXBC", 4) != 0) { fail(key, "DXIL magic"); continue; }
        if (u32At(d, 24) != d.size()) { fail(key, "DXIL container size field"); continue; }
        static const uint8_t zeroHash[16] = {};
        if (std::memcmp(d.data() + 4, zeroHash, 16) == 0) { fail(key, "DXIL hash not filled"); continue; }
        // SPIR-V: magic, version 1.x.
        if (s.size() < 20 || s.size() % 4 != 0 || u32At(s, 0) != 0x07230203u) { fail(key, "SPIR-V magic"); continue; }
        const uint32_t version = u32At(s, 4);
        if ((version >> 16) != 1 || (version & 0xFF0000FFu) != 0) { fail(key, "SPIR-V version"); continue; }
        const ShrecEntryInfo* info = shrecEntryInfo(e);
        std::printf("%016" PRIX64 " family %u stage %u dxil %zu spirv %zu version 0x%08X\n", key, info->family, info->stage, d.size(), s.size(), version);
        dump(dumpDir, key, "dxil", d);
        dump(dumpDir, key, "spv", s);
    }
    std::printf("checked %zu shaders, %d failed, layout %s\n", g_shaderCacheEntryCount, g_failures, perShader ? "per-shader" : "single");
    return g_failures == 0 ? 0 : 1;
}
