#!/usr/bin/env python3
"""Adds schema 1.14's distributions to every-figure.json (run once, from this folder).

Invented figures, as the rest of the file: every storage pass and random run gets a
latency histogram in fio's log-linear buckets (crates/results/src/latency.rs, fio's
stat.c `plat_val_to_idx`), 99 % of the timed calls a little under the pass's mean call
time and 1 % at ten times it; one call in `65536 / block` is timed below 64 KiB, as the
engine times them. Every TCP interval gets both ends' TCP_INFO sample (retransmits, cwnd,
srtt, rttvar) and every TCP run the totals `TcpTotals::of` would give. The schema
version becomes 1.14, the first with these fields.
"""
import json

PLAT_BITS, PLAT_NR = 6, 29 << 6


def bucket_of(ns):
    """fio's plat_val_to_idx: one bucket per value below 128 ns, then 64 per power of 2."""
    msb = ns.bit_length() - 1 if ns else 0
    if msb <= PLAT_BITS:
        return ns
    err = msb - PLAT_BITS
    return min(((err + 1) << PLAT_BITS) + ((ns >> err) & ((1 << PLAT_BITS) - 1)), PLAT_NR - 1)


def latency(values, calls):
    """`Latency` of `values` [(ns, how many)] out of `calls` calls."""
    buckets = {}
    for ns, n in values:
        if n:
            buckets[bucket_of(ns)] = buckets.get(bucket_of(ns), 0) + n
    timed = [v for v in values if v[1]]
    return {
        "count": sum(n for _, n in timed),
        "calls": calls,
        "min_ns": min(ns for ns, _ in timed),
        "max_ns": max(ns for ns, _ in timed),
        "sum_ns": sum(ns * n for ns, n in timed),
        "buckets": [[i, buckets[i]] for i in sorted(buckets)],
    }


def split(mean_ns, count, calls):
    slow = count // 100
    return latency([(int(mean_ns * 0.9), count - slow), (int(mean_ns * 10), slow)], calls)


def main():
    path = "every-figure.json"
    d = json.load(open(path))
    d["schema_version"] = {"major": 1, "minor": 14}
    for m in d["storage"]:
        calls = max(1, m["bytes"] // m["block_size"])
        every = max(1, 65536 // m["block_size"])
        count = max(1, calls // every)
        m["latency"] = split(m["nanos"] / calls, count, calls)
    for x in d["random"]:
        mean = x["nanos"] * x["queue_depth"] / x["ios"]
        x["latency"] = split(mean, x["ios"], x["ios"])
    for t in d["network"]["throughput"]:
        for end in ("board", "host"):
            samples = []
            for i, iv in enumerate(t["intervals"]):
                srtt = 2000 + 500 * i + (0 if end == "board" else 250)
                s = {
                    "retransmits": i % 2 + (1 if end == "board" else 0),
                    "cwnd_bytes": 65536 * t["streams"] * (i + 1),
                    "srtt_us": srtt,
                    "srtt_max_us": srtt + 300,
                    "rttvar_us": srtt // 4,
                    "streams": t["streams"],
                }
                iv[f"{end}_tcp"] = s
                samples.append(s)
            if samples:
                t[f"{end}_tcp"] = {
                    "retransmits": sum(s["retransmits"] for s in samples),
                    "srtt_us": sum(s["srtt_us"] for s in samples) // len(samples),
                    "srtt_max_us": max(s["srtt_max_us"] for s in samples),
                }
    with open(path, "w") as f:
        json.dump(d, f, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()
