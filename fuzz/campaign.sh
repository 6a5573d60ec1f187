#!/bin/sh
# Runs every fuzz target (or the ones named) for the issue's acceptance bar: 10 million
# executions or one hour, whichever comes first; prints libFuzzer's summary line per target.
#   fuzz/campaign.sh [TARGET...]       logs: fuzz/logs/TARGET.log, summary: fuzz/logs/summary.txt
# SHREC_FUZZ_SANITIZER=none (the default here) builds without AddressSanitizer: shrec's fuzzed
# code is safe Rust (no `unsafe` outside the memory map, the thread clock and DXC loading), so a
# bug shows as a panic, an abort, a timeout or the RSS limit, all of which libFuzzer catches;
# without ASan the targets run about three times faster. Set it to `address` to use ASan.
set -u
cd "$(dirname "$0")/.."
mkdir -p fuzz/logs
targets=${*:-$(ls fuzz/fuzz_targets | sed 's/\.rs$//')}
for t in $targets; do
    log=fuzz/logs/$t.log
    start=$(date +%s)
    SHREC_FUZZ_SANITIZER=${SHREC_FUZZ_SANITIZER:-none} fuzz/run.sh "$t" -runs=10000000 -max_total_time=3600 -print_final_stats=1 >"$log" 2>&1
    rc=$?
    end=$(date +%s)
    done_line=$(grep -E '^Done [0-9]+ runs' "$log" | tail -1)
    echo "$t: exit $rc, $((end - start)) s wall: ${done_line:-no summary line (see $log)}" | tee -a fuzz/logs/summary.txt
done
