#!/usr/bin/env bash
# Seeds the corpora and runs fuzz targets one after the other, one job each.
# Usage: fuzz/run.sh [RUNS] [TARGET...]   (RUNS default 1000000; targets default all)
# Needs cargo-fuzz (`cargo install cargo-fuzz`) and rustup's stable toolchain; nightly
# flags are unlocked with RUSTC_BOOTSTRAP=1 (README.md).
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-1000000}
shift || true
python3 seed.py
declare -A max_len=(
    [results_json]=16384 # seeds are 4-9 KiB: the shipped documents with lists cut to two
    [board_toml]=4096    # the shipped board files are at most 2.2 KiB
    [shared_toml]=8192   # shared.toml is 4 KiB
    [plan_json]=4096     # the plans in the seeds are at most 1.8 KiB
    [http_request]=12288 # above http::MAX_REQUEST (8192), so the bound itself is fuzzed
    [dhcp_packet]=1500   # the server's receive buffer (crates/dhcp/src/net.rs RECV_LEN)
    [console_log]=8192   # seeds are 0.2-5.7 KiB (a short document: ~30 chunk lines of 170 B)
    [plan_toml]=4096     # the shipped presets are at most 2.2 KiB, the README's plans less
    [journal_ring]=16384 # four 4 KiB blocks: seeds of one to three records
    [card_image]=32768   # seeds 7.5-14 KiB: MBR, FAT12 results partition, EBRs, journal
    [boards_dir]=24576   # a board file and shared.toml (at most 6 + 9 KiB)
    [power_trace]=16384  # a trace JSON of a few hundred samples, a CSV, a frame, a body
)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(results_json board_toml shared_toml plan_json http_request dhcp_packet console_log plan_toml journal_ring card_image boards_dir power_trace)
for t in "${targets[@]}"; do
    dict=()
    case $t in results_json | plan_json) dict=(-dict=dicts/json.dict) ;; esac
    echo "== $t: -runs=$runs -max_len=${max_len[$t]} ${dict[*]}"
    start=$(date +%s)
    RUSTC_BOOTSTRAP=1 cargo +stable fuzz run --debug-assertions "$t" -- \
        -runs="$runs" -max_len="${max_len[$t]}" -timeout=30 -print_final_stats=1 "${dict[@]}"
    echo "== $t: $(($(date +%s) - start)) s"
done
