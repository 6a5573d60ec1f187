#!/bin/sh
# Runs one fuzz target with seeds from the bundled corpus (issue "Robustness").
#   fuzz/run.sh TARGET [libFuzzer options...]     e.g. fuzz/run.sh detect -runs=10000000
# Needs cargo-fuzz (`cargo install cargo-fuzz`); RUSTC_BOOTSTRAP lets the stable toolchain
# accept the sanitizer flags cargo fuzz passes. Targets: `ls fuzz/fuzz_targets`.
set -eu
cd "$(dirname "$0")/.."
t=$1
shift
seeds=fuzz/corpus/$t
mkdir -p "$seeds"
case $t in
detect) src=tests/corpus ;;
*xenos*) src=tests/corpus/xenos ;;
*gfd* | *gx2* | *sharcfb*) src=tests/corpus/gx2 ;;
*dvlb* | *pica*) src=tests/corpus/pica ;;
*agal*) src=tests/corpus/agal ;;
smolv_decode) src=tests/vectors/smolv ;;
*) src= ;;
esac
if [ -n "$src" ]; then
    find "$src" -type f ! -name '*.md' ! -name 'LICENSE*' -size -256k | while read -r f; do
        cp "$f" "$seeds/$(sha1sum <"$f" | cut -c1-40)"
    done
fi
RUSTC_BOOTSTRAP=1 exec cargo fuzz run --release ${SHREC_FUZZ_SANITIZER:+-s "$SHREC_FUZZ_SANITIZER"} "$t" "$seeds" -- -max_len=65536 -timeout=10 -rss_limit_mb=2048 "$@"
