// A C++ consumer of include/shrec_runtime.h: for each NAME argument, decodes NAME.smolv and
// compares it with NAME.spv byte for byte; then checks the error codes on damaged input.
// Prints "ok N" and exits 0 when everything agrees.
#include "shrec_runtime.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

static std::vector<uint8_t> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

int main(int argc, char** argv) {
    int checked = 0;
    for (int i = 1; i < argc; i++) {
        std::string name = argv[i];
        std::vector<uint8_t> smolv = slurp(name + ".smolv"), spv = slurp(name + ".spv");
        size_t n = shrec_smolv_decoded_size(smolv.data(), smolv.size());
        if (n != spv.size()) {
            std::printf("FAIL %s: decoded size %zu, expected %zu\n", name.c_str(), n, spv.size());
            return 1;
        }
        std::vector<uint8_t> out(n);
        if (shrec_smolv_decode(smolv.data(), smolv.size(), out.data(), out.size()) != SHREC_OK || out != spv) {
            std::printf("FAIL %s: decode\n", name.c_str());
            return 1;
        }
        if (shrec_smolv_decode(smolv.data(), smolv.size(), out.data(), out.size() - 1) != SHREC_ERROR_OUT_TOO_SMALL) {
            std::printf("FAIL %s: short output buffer not refused\n", name.c_str());
            return 1;
        }
        if (shrec_smolv_decode(smolv.data(), smolv.size() / 2, out.data(), out.size()) != SHREC_ERROR_BAD_SMOLV) {
            std::printf("FAIL %s: truncated input not refused\n", name.c_str());
            return 1;
        }
        checked++;
    }
    const uint8_t junk[24] = {1, 2, 3};
    if (shrec_smolv_decoded_size(junk, sizeof junk) != 0 || shrec_smolv_decode(nullptr, 8, nullptr, 0) != SHREC_ERROR_NULL) {
        std::printf("FAIL junk / null\n");
        return 1;
    }
    std::printf("ok %d\n", checked);
    return 0;
}
