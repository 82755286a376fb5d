#!/usr/bin/env python3
"""Writes handmade-a.json and handmade-b.json: small hand-made results documents with
repetitions for the report/compare tests. Invented figures, not measurements: the plan is
the one of rpi-zero-w-qemu.json cut down to two targets and three block sizes.

handmade-a: 4 repetitions everywhere, one warning and one error event, incomplete run.
handmade-b: 4 KiB twice as fast (storage and IOPS), network 1.5x, only 3 repetitions on
vfat (4+3 values cannot reach p < 0.05 in a two-sided rank test).

Run from this folder: python3 make_handmade.py
"""
import copy
import json

base = json.load(open("rpi-zero-w-qemu.json"))
plan = copy.deepcopy(base["plan"])


def make(name, scale, reps):
    p = copy.deepcopy(plan)
    p["board"] = "handmade-board"
    p["emulated"] = False
    p["storage"]["targets"] = [
        {"label": "ext4", "device": "/dev/sda1", "filesystem": "ext4"},
        {"label": "vfat", "device": "/dev/sda2", "filesystem": "vfat"},
    ]
    p["storage"]["block_sizes"] = [512, 4096, 1048576]
    p["storage"]["modes"] = ["sync", "direct"]
    p["storage"]["repetitions"] = 4
    p["storage"]["device_reads"]["disks"] = ["/dev/sda"]
    p["storage"]["random"]["targets"] = ["ext4"]
    p["storage"]["random"]["queue_depths"] = [1]
    p["storage"]["byte_cap"] = 64 << 20
    p["storage"]["time_cap_ms"] = 10000
    r = {
        "schema_version": {"major": 1, "minor": 2},
        "run_id": name,
        "board": "handmade-board",
        "emulated": False,
        "system": {
            "kernel_release": "6.1.0-test",
            "machine": "armv7l",
            "mem_total_bytes": 1 << 30,
            "init_started_ns": 2_000_000_000,
            "written_ns": 62_000_000_000,
            "governor": "performance",
        },
        "plan": p,
        "census": [
            {
                "at": "before-storage",
                "user_processes": [{"pid": 1, "ppid": 0, "comm": "init"}],
                "kernel_threads": 40,
            }
        ],
        "storage": [],
        "device_reads": [],
        "random": [],
        "verify": [{"target": "ext4", "bytes": 1 << 20, "first_mismatch": None}],
        "devices": [],
        "events": [],
        "complete": True,
    }
    for t in ["ext4", "vfat"]:
        for mode in ["sync", "direct"]:
            for d in ["write", "read"]:
                for bs in [512, 4096, 1048576]:
                    mib = {512: 2.0, 4096: 10.0, 1048576: 40.0}[bs]
                    mib *= (1.5 if d == "read" else 1.0) * (0.8 if t == "vfat" else 1.0)
                    for rep in range(reps.get((t,), 4)):
                        v = mib * scale.get(bs, 1.0) * (1 + 0.05 * rep)
                        r["storage"].append({
                            "target": t, "filesystem": t, "block_size": bs,
                            "direction": d, "mode": mode, "requested_mode": mode,
                            "note": None, "repetition": rep,
                            "bytes": int(round(v * (1 << 20))), "nanos": 1_000_000_000,
                            "stopped_by": "time",
                        })
    r["device_reads"] = [
        {"device": "/dev/sda", "kind": "cached", "bytes": 800 << 20, "nanos": 2_000_000_000},
        {"device": "/dev/sda", "kind": "buffered",
         "bytes": int(30 * scale.get(1048576, 1) * (1 << 20)) * 3, "nanos": 3_000_000_000},
    ]
    for rep in range(4):
        for op, ios in [("read", 1600), ("write", 450)]:
            r["random"].append({
                "target": "ext4", "op": op, "block_size": 4096, "queue_depth": 1,
                "region_bytes": 1 << 26, "ios": int(ios * scale.get(4096, 1)) + 10 * rep,
                "nanos": 1_000_000_000,
            })

    def cpu(sys, soft, idle):
        return {"user": 1, "nice": 0, "system": sys, "idle": idle, "iowait": 0,
                "irq": 0, "softirq": soft, "steal": 0}

    def iv(s, by, sys, soft):
        return {"start_ns": s * 1_000_000_000, "end_ns": (s + 1) * 1_000_000_000,
                "bytes": by, "board_cpu": cpu(sys, soft, 0), "host_cpu": cpu(2, 1, 97)}

    k = scale.get("net", 1.0)
    r["network"] = {
        "links": [],
        "throughput": [
            {"link": "ecm", "direction": "board-to-host", "streams": 1,
             "omit_ns": 1_000_000_000,
             "intervals": [iv(0, int(18_000_000 * k), 47, 53), iv(1, int(20_000_000 * k), 46, 54)],
             "bytes": int(38_000_000 * k), "nanos": 2_000_000_000,
             "board_cpu": cpu(93, 107, 0), "host_cpu": cpu(4, 2, 194)},
            {"link": "ecm", "direction": "host-to-board", "streams": 1,
             "omit_ns": 1_000_000_000,
             "intervals": [iv(0, int(13_000_000 * k), 40, 60), iv(1, int(14_000_000 * k), 41, 59)],
             "bytes": int(27_000_000 * k), "nanos": 2_000_000_000,
             "board_cpu": cpu(81, 119, 0), "host_cpu": cpu(4, 2, 194)},
        ],
        "latency": [{"link": "ecm", "rtt_ns": [300_000, 320_000, 310_000, 900_000, 305_000]}],
        "http": [{"link": "ecm", "direction": "host-to-board", "bytes": 100 << 20,
                  "nanos": int(8_000_000_000 / k), "board_cpu": cpu(40, 60, 0),
                  "host_cpu": cpu(1, 1, 98)}],
    }
    return r


a = make("handmade-a", {}, {})
a["events"] = [
    {"step": "governor", "severity": "warning",
     "message": "scaling_governor is read-only, left ondemand"},
    {"step": "storage.vfat.bs512", "severity": "error",
     "message": "worker exited with signal 9"},
]
a["complete"] = False
b = make("handmade-b", {4096: 2.1, "net": 1.5}, {("vfat",): 3})
json.dump(a, open("handmade-a.json", "w"), indent=2)
json.dump(b, open("handmade-b.json", "w"), indent=2)
