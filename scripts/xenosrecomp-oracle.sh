#!/usr/bin/env bash
# Builds XenosRecomp (hedge-dev/XenosRecomp, MIT) on Linux as an independent oracle and benchmark
# for shrec's Xenos path (issues 22 item 2 and 24). Nothing of XenosRecomp is vendored in shrec:
# the caller supplies its source tree (XR_SRC) and this script builds a patched copy of it.
#
#   scripts/xenosrecomp-oracle.sh assemble MIRROR_ROOT XR_SRC
#       Writes XR_SRC from git directories of XenosRecomp and its five submodules as the `fetch`
#       tool stores them (MIRROR_ROOT/<owner>+<name>/repo, e.g. /work/.mirror). Each submodule is
#       taken at the commit XenosRecomp pins when the mirror has it, else at the mirror's HEAD
#       (printed). Blobs the mirror does not hold (dxc-bin's prebuilt binaries, one xxHash test
#       vector file) are skipped and listed; the build needs neither.
#
#   scripts/xenosrecomp-oracle.sh build XR_SRC OUT_DIR
#       Builds OUT_DIR/generic/XenosRecomp and OUT_DIR/unleashed/XenosRecomp (UNLEASHED_RECOMP
#       defined for both the C++ and DXC, as UnleashedRecomp's own build does). Each mode's
#       shader_common.h is copied next to its binary.
#
#   scripts/xenosrecomp-oracle.sh run OUT_DIR MODE INPUT OUTPUT.cpp
#       Runs the MODE (generic|unleashed) binary on INPUT (a directory or one container):
#       XenosRecomp INPUT OUTPUT.cpp OUT_DIR/MODE/shader_common.h.
#
#   scripts/xenosrecomp-oracle.sh outputs OUT_DIR INPUT_DIR RESULTS_DIR
#       What shrec-verify's oracle test reads (SHREC_XR_OUT=RESULTS_DIR), for both modes:
#       RESULTS_DIR/MODE.cpp (the directory run: keys, masks, SMOL-V + zstd SPIR-V), MODE.log
#       (its stderr: XR_DXC / XR_SKIP lines and DXC's messages), and hlsl/MODE/<path>.hlsl, the
#       single-file translation of every file under INPUT_DIR that starts with a container
#       (magic 0x102A11xx at offset 0; XenosRecomp's single-file mode reads no other).
#
# Environment:
#   DXC_LIB   libdxcompiler.so to link against (default: the one shrec provisions, see src/dxc.rs:
#             ${XDG_CACHE_HOME:-~/.cache}/shrec/dxc/<dir>/libdxcompiler.so; `shrec build` any
#             input once to provision it).
#   CXX / CC  compilers (default clang++/clang when installed, else g++/gcc).
#   JOBS      parallel build jobs (default 2).
#
# Prerequisites: cmake >= 3.20, a C++17 compiler, and oneTBB headers + library (Debian:
# libtbb-dev). libstdc++ runs std::execution::par_unseq -- XenosRecomp's only parallelism -- on
# TBB; without it the loop silently runs on one thread and every timing would be unfair to
# XenosRecomp, so the script refuses to build without TBB.
#
# Patches applied at build time to the copy in OUT_DIR/src (never to XR_SRC), each checked so a
# change upstream makes the script fail instead of silently building something else:
#   P1 dxc-bin/CMakeLists.txt: the imported DXC library points at DXC_LIB (dxc-bin's own prebuilt
#      libdxcompiler.so is an LFS-size blob the mirror does not hold; only its headers are used).
#   P2 main.cpp: a shader DXC rejects is skipped with a line `XR_SKIP 0x<key> spirv` on stderr
#      instead of the release build dereferencing a null blob (upstream: assert(spirv != nullptr),
#      compiled out under NDEBUG). Its cache entry keeps size 0, as upstream would write it.
#   P3 main.cpp: each shader's DXC time is printed as `XR_DXC 0x<key> <nanoseconds>` on stderr
#      (steady_clock around the SPIR-V compile call only), for the per-shader DXC CPU comparison.
#   P4 link with -ltbb (libstdc++'s parallel algorithms backend).
set -euo pipefail

die() { echo "xenosrecomp-oracle: error: $*" >&2; exit 1; }
note() { echo "xenosrecomp-oracle: $*" >&2; }

# Submodules of XenosRecomp 990d03b: path, mirror dir name, pinned commit.
SUBMODULES=(
  "thirdparty/smol-v aras-p+smol-v 9dd54c379ac29fa148cb1b829bb939ba7381d8f4"
  "thirdparty/zstd facebook+zstd f7a8bb1263448e5028aceeba606a08fe3809550f"
  "thirdparty/xxHash Cyan4973+xxHash 2bf8313b934633b2a5b7e8fd239645b85e10c852"
  "thirdparty/fmt fmtlib+fmt 873670ba3f9e7bc77ec2c1c94b04f1f8bef77e9f"
  "thirdparty/dxc-bin renderbag+dxc-bin 737ac9f51c3d06f0cd1ee7e14dc065bafd52310d"
)

# extract GIT_DIR COMMIT DEST: writes every blob of COMMIT's tree the git dir holds.
extract() {
  local gd=$1 commit=$2 dest=$3 missing=0
  mkdir -p "$dest"
  while IFS=$'\t' read -r meta path; do
    local mode type obj
    read -r mode type obj <<<"$meta"
    [ "$type" = blob ] || continue
    mkdir -p "$dest/$(dirname "$path")"
    if [ "$mode" = 120000 ]; then
      ln -sfn "$(git --git-dir="$gd" cat-file blob "$obj")" "$dest/$path"
    elif git --git-dir="$gd" cat-file -e "$obj" 2>/dev/null; then
      git --git-dir="$gd" cat-file blob "$obj" >"$dest/$path"
      [ "$mode" = 100755 ] && chmod +x "$dest/$path"
    else
      note "  not in the mirror, skipped: $path"
      missing=$((missing + 1))
    fi
  done < <(git --git-dir="$gd" ls-tree -r "$commit")
  return 0
}

assemble() {
  local mirror=$1 src=$2
  local xr="$mirror/hedge-dev+XenosRecomp/repo"
  [ -d "$xr" ] || die "no XenosRecomp git dir at $xr (fetch github:hedge-dev/XenosRecomp first)"
  [ ! -e "$src" ] || [ -z "$(ls -A "$src")" ] || die "$src exists and is not empty"
  note "XenosRecomp at $(git --git-dir="$xr" rev-parse HEAD)"
  extract "$xr" HEAD "$src"
  for s in "${SUBMODULES[@]}"; do
    read -r path name pin <<<"$s"
    local gd="$mirror/$name/repo" at
    [ -d "$gd" ] || die "no git dir for submodule $path at $gd (fetch github:${name/+//} first)"
    local pinned_now
    pinned_now=$(git --git-dir="$xr" ls-tree HEAD "$path" | awk '{print $3}')
    [ "$pinned_now" = "$pin" ] || die "XenosRecomp now pins $path at $pinned_now, this script knows $pin: update SUBMODULES"
    if git --git-dir="$gd" cat-file -e "$pin^{commit}" 2>/dev/null; then
      at=$pin
    else
      at=$(git --git-dir="$gd" rev-parse HEAD)
      note "$path: pinned $pin is not in the mirror; using its HEAD $at ($(git --git-dir="$gd" log -1 --format=%cs HEAD))"
    fi
    note "$path at $at"
    extract "$gd" "$at" "$src/$path"
  done
  note "source tree written to $src"
}

default_dxc() {
  local base=${XDG_CACHE_HOME:-$HOME/.cache}/shrec/dxc
  ls "$base"/*/libdxcompiler.so 2>/dev/null | head -n1
}

check_prereqs() {
  local src=$1
  command -v cmake >/dev/null || die "cmake not found (Debian: apt-get install cmake)"
  local v
  v=$(cmake --version | head -n1 | awk '{print $3}')
  [ "$(printf '%s\n3.20\n' "$v" | sort -V | head -n1)" = 3.20 ] || die "cmake $v is older than 3.20"
  for f in XenosRecomp/main.cpp XenosRecomp/dxc_compiler.cpp XenosRecomp/shader_common.h \
           thirdparty/CMakeLists.txt thirdparty/fmt/CMakeLists.txt \
           thirdparty/xxHash/cmake_unofficial/CMakeLists.txt thirdparty/zstd/build/cmake/CMakeLists.txt \
           thirdparty/smol-v/source/smolv.cpp thirdparty/dxc-bin/CMakeLists.txt \
           thirdparty/dxc-bin/inc/dxcapi.h thirdparty/dxc-bin/inc/WinAdapter.h; do
    [ -f "$src/$f" ] || die "XR_SRC=$src lacks $f (submodules missing? use: $0 assemble MIRROR_ROOT XR_SRC)"
  done
  [ -n "${DXC_LIB:-}" ] || DXC_LIB=$(default_dxc)
  [ -n "${DXC_LIB:-}" ] || die "no DXC library: set DXC_LIB, or let shrec provision it (cargo run --release -- build tests/corpus/xenos -o /tmp/x.cpp)"
  [ -f "$DXC_LIB" ] || die "DXC_LIB=$DXC_LIB does not exist"
  local syms
  syms=$(nm -D --defined-only "$DXC_LIB" 2>/dev/null || true)
  grep -qw DxcCreateInstance <<<"$syms" \
    || die "DXC_LIB=$DXC_LIB does not export DxcCreateInstance"
  if [ -z "${CXX:-}" ]; then
    if command -v clang++ >/dev/null && command -v clang >/dev/null; then CXX=clang++ CC=clang
    elif command -v g++ >/dev/null; then CXX=g++ CC=gcc
    else die "no C++ compiler (Debian: apt-get install clang, or g++)"; fi
  fi
  command -v "$CXX" >/dev/null || die "CXX=$CXX not found"
  CC=${CC:-cc}
  command -v "$CC" >/dev/null || die "CC=$CC not found"
  echo '#include <tbb/version.h>
int main(){return TBB_VERSION_MAJOR>0?0:1;}' | "$CXX" -x c++ - -o /dev/null -ltbb 2>/dev/null \
    || die "oneTBB not usable by $CXX (Debian: apt-get install libtbb-dev); without it std::execution::par_unseq runs XenosRecomp on one thread"
}

# patch FILE PYTHON-FREE: replace exactly one occurrence of OLD by NEW (perl, literal strings).
patch_once() {
  local file=$1 old=$2 new=$3 n
  n=$(OLD=$old perl -0777 -ne 'my $o=$ENV{OLD}; my $c=()=/\Q$o\E/g; print $c' "$file")
  [ "$n" = 1 ] || die "patch: expected exactly one '$old' in $file, found $n (XenosRecomp changed?)"
  OLD=$old NEW=$new perl -0777 -pi -e 'my $o=$ENV{OLD}; my $n=$ENV{NEW}; s/\Q$o\E/$n/' "$file"
}

build() {
  local src=$1 out=$2
  check_prereqs "$src"
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  note "compiler: $($CXX --version | head -n1); DXC: $DXC_LIB"
  rm -rf "$out/src"
  cp -a "$src" "$out/src"
  local s="$out/src"
  # P1: DXC library.
  patch_once "$s/thirdparty/dxc-bin/CMakeLists.txt" \
    'set(DIRECTX_DXCOMPILER_LIB "${PROJECT_SOURCE_DIR}/lib/x64/libdxcompiler.so")' \
    "set(DIRECTX_DXCOMPILER_LIB \"$DXC_LIB\")"
  # P2 + P3: skip rejected shaders, time the SPIR-V DXC call.
  patch_once "$s/XenosRecomp/main.cpp" \
    'IDxcBlob* spirv = dxcCompiler.compile(recompiler.out, recompiler.isPixelShader, false, true);
                assert(spirv != nullptr);' \
    'auto xrT0 = std::chrono::steady_clock::now();
                IDxcBlob* spirv = dxcCompiler.compile(recompiler.out, recompiler.isPixelShader, false, true);
                auto xrNs = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - xrT0).count();
                fmt::print(stderr, "XR_DXC 0x{:X} {}\n", hashShaderPair.first, (long long)xrNs);
                if (spirv == nullptr) { fmt::print(stderr, "XR_SKIP 0x{:X} spirv\n", hashShaderPair.first); ++progress; return; }'
  patch_once "$s/XenosRecomp/main.cpp" '#include "dxc_compiler.h"' '#include "dxc_compiler.h"
#include <chrono>'
  for mode in generic unleashed; do
    local defs=""
    [ "$mode" = unleashed ] && defs="-DUNLEASHED_RECOMP"
    note "configuring $mode"
    cmake -S "$s" -B "$out/build-$mode" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
      -DCMAKE_CXX_FLAGS="$defs" -DCMAKE_CXX_STANDARD_LIBRARIES=-ltbb \
      -DCMAKE_BUILD_RPATH="$(dirname "$DXC_LIB")" \
      -DZSTD_BUILD_PROGRAMS=OFF -DZSTD_BUILD_SHARED=OFF -DZSTD_BUILD_TESTS=OFF \
      -DXXHASH_BUILD_XXHSUM=OFF -DFMT_TEST=OFF -DFMT_DOC=OFF \
      >"$out/build-$mode.configure.log" 2>&1 || { tail -n 30 "$out/build-$mode.configure.log" >&2; die "cmake configure ($mode) failed, log: $out/build-$mode.configure.log"; }
    note "building $mode"
    cmake --build "$out/build-$mode" --target XenosRecomp -j "${JOBS:-2}" \
      >"$out/build-$mode.log" 2>&1 || { grep -m 20 -E 'error|Error' "$out/build-$mode.log" >&2 || true; die "build ($mode) failed, log: $out/build-$mode.log"; }
    mkdir -p "$out/$mode"
    cp "$out/build-$mode/XenosRecomp/XenosRecomp" "$out/$mode/XenosRecomp"
    cp "$s/XenosRecomp/shader_common.h" "$out/$mode/shader_common.h"
    echo "$mode" >"$out/$mode/MODE"
    note "built $out/$mode/XenosRecomp"
  done
  # Smoke test: each binary loads DXC and compiles the six xmplayer shaders of shrec's corpus.
  local here smoke
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  smoke="$here/tests/corpus/xenos/LibXenonProject+xmplayer"
  if [ -d "$smoke" ]; then
    for mode in generic unleashed; do
      "$out/$mode/XenosRecomp" "$smoke" "$out/$mode/smoke.cpp" "$out/$mode/shader_common.h" >"$out/$mode/smoke.log" 2>&1 \
        || die "smoke test ($mode) failed, log: $out/$mode/smoke.log"
      grep -q 'XR_SKIP' "$out/$mode/smoke.log" && die "smoke test ($mode): DXC rejected an xmplayer shader, log: $out/$mode/smoke.log"
      grep -q 'g_shaderCacheEntryCount = 6;' "$out/$mode/smoke.cpp" || die "smoke test ($mode): expected 6 entries in $out/$mode/smoke.cpp"
      note "smoke test ($mode): 6 xmplayer shaders compiled"
    done
  fi
}

run() {
  local out=$1 mode=$2 input=$3 output=$4
  local bin="$out/$mode/XenosRecomp"
  [ -x "$bin" ] || die "no $bin (run: $0 build XR_SRC $out)"
  [ -e "$input" ] || die "input $input does not exist"
  "$bin" "$input" "$output" "$out/$mode/shader_common.h"
  [ -s "$output" ] || die "XenosRecomp wrote no $output"
}

outputs() {
  local out=$1 input=$2 res=$3
  [ -d "$input" ] || die "INPUT_DIR $input is not a directory"
  mkdir -p "$res"
  input=$(cd "$input" && pwd)
  for mode in generic unleashed; do
    local bin="$out/$mode/XenosRecomp" hdr="$out/$mode/shader_common.h"
    [ -x "$bin" ] || die "no $bin (run: $0 build XR_SRC $out)"
    "$bin" "$input" "$res/$mode.cpp" "$hdr" >"$res/$mode.stdout" 2>"$res/$mode.log" \
      || die "XenosRecomp ($mode) failed on $input, log: $res/$mode.log"
    grep -q g_shaderCacheEntryCount "$res/$mode.cpp" || die "XenosRecomp ($mode) wrote no cache to $res/$mode.cpp"
    local n=0
    while IFS= read -r -d '' f; do
      local magic rel
      magic=$(od -An -tx1 -N4 "$f" | tr -d ' \n')
      case "$magic" in 102a11??) ;; *) continue ;; esac
      rel=${f#"$input"/}
      mkdir -p "$res/hlsl/$mode/$(dirname "$rel")"
      "$bin" "$f" "$res/hlsl/$mode/$rel.hlsl" "$hdr" >/dev/null 2>>"$res/$mode.hlsl.log" \
        || die "XenosRecomp ($mode) failed translating $f"
      n=$((n + 1))
    done < <(find "$input" -type f -print0 | sort -z)
    note "$mode: $(grep -o 'g_shaderCacheEntryCount = [0-9]*' "$res/$mode.cpp"), $(grep -c XR_SKIP "$res/$mode.log" || true) rejected by DXC, $n single-file HLSL translations"
  done
  echo "$input" >"$res/INPUT"
  (cd "$out" && pwd) >"$res/BUILD"
}

case "${1:-}" in
  assemble) [ $# = 3 ] || die "usage: $0 assemble MIRROR_ROOT XR_SRC"; assemble "$2" "$3" ;;
  build) [ $# = 3 ] || die "usage: $0 build XR_SRC OUT_DIR"; build "$2" "$3" ;;
  outputs) [ $# = 4 ] || die "usage: $0 outputs OUT_DIR INPUT_DIR RESULTS_DIR"; outputs "$2" "$3" "$4" ;;
  run) [ $# = 5 ] || die "usage: $0 run OUT_DIR generic|unleashed INPUT OUTPUT.cpp"; run "$2" "$3" "$4" "$5" ;;
  *) die "usage: $0 assemble MIRROR_ROOT XR_SRC | build XR_SRC OUT_DIR | run OUT_DIR MODE INPUT OUTPUT.cpp | outputs OUT_DIR INPUT_DIR RESULTS_DIR" ;;
esac
