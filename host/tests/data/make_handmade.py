#!/usr/bin/env python3
"""Writes handmade-a.json and handmade-b.json: small hand-made results documents with
repetitions for the report/compare tests. Invented figures, not measurements: the plan is
the one of rpi-zero-w-qemu.json cut down to two targets and three block sizes.

handmade-a: 4 repetitions everywhere, one warning and one error event, incomplete run.
handmade-b: 4 KiB twice as fast (storage and IOPS), network 1.5x, only 3 repetitions on
vfat (4+3 values cannot reach p < 0.05 in a two-sided rank test).
handmade-throttled: handmade-b's figures as schema 1.3 with board health around every
step (a Raspberry Pi kernel with /dev/vcio: the firmware's measured clock and flags):
under-voltage and throttling during storage.ext4.sync.bs4096 (flags 0x50005 after it,
the sticky 0x50000 from then on), ARM frequency capping raised during the host-to-board
TCP run (0x70002 after it).
handmade-isolation: handmade-throttled as schema 1.4 with the isolation proof (census
verdicts with a foreign usermode helper, interrupts per step, command line, modules).

handmade-card: qemu-virt-arm64-1.13.json reshaped as a hardware run (not emulated; the
targets on an SD card, mmcblk0, with a SanDisk Extreme 64 GB's real CID/CSD/SCR/OCR from
crates/sdcard/tests/fixtures.rs, an SSR claiming A2 and a Pi 4's ios, decoded as PID 1
decodes them); storage figures scaled to a tenth, random I/O x2.2 (so ext4 passes A1), no
error events: invented figures, for the headline and runs-page tests.

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


def snapshot(at_s, raw, hz, temp):
    def ok(v, src):
        return {"status": "ok", "value": v, "source": src}
    cpufreq = "/sys/devices/system/cpu/cpu0/cpufreq"
    return {
        "at_ns": at_s * 1_000_000_000,
        "arm_measured_hz": ok(hz, "mailbox:GET_CLOCK_RATE_MEASURED(ARM)"),
        "arm_set_hz": ok(1_000_000_000, "mailbox:GET_CLOCK_RATE(ARM)"),
        "core_measured_hz": ok(400_000_000, "mailbox:GET_CLOCK_RATE_MEASURED(CORE)"),
        "cpufreq_khz": ok(1_000_000, cpufreq + "/cpuinfo_cur_freq"),
        "governor": ok("performance", cpufreq + "/scaling_governor"),
        "temperature_millicelsius": ok(temp, "/sys/class/thermal/thermal_zone0/temp (cpu-thermal)"),
        "throttled": ok({
            "raw": raw,
            "under_voltage_now": bool(raw & 1),
            "frequency_capped_now": bool(raw & 2),
            "throttled_now": bool(raw & 4),
            "soft_temp_limit_now": bool(raw & 8),
            "under_voltage_occurred": bool(raw & 0x10000),
            "frequency_capped_occurred": bool(raw & 0x20000),
            "throttled_occurred": bool(raw & 0x40000),
            "soft_temp_limit_occurred": bool(raw & 0x80000),
        }, "mailbox:GET_THROTTLED"),
        "under_voltage_alarm": {
            "status": "unavailable",
            "reason": "no hwmon device named rpi_volt in /sys/class/hwmon (raspberrypi-hwmon "
                      "not loaded, or not a Raspberry Pi)",
        },
    }


def throttled_run():
    r = make("handmade-throttled", {4096: 2.1, "net": 1.5}, {("vfat",): 3})
    r["schema_version"]["minor"] = 3
    steps = []
    for t in ["ext4", "vfat"]:
        for mode in ["sync", "direct"]:
            for bs in [512, 4096, 1048576]:
                steps.append((f"storage.{t}.{mode}.bs{bs}",
                              {"kind": "storage", "target": t, "mode": mode, "block_size": bs}))
    steps.append(("device-read.sda", {"kind": "device-read", "device": "/dev/sda"}))
    for op in ["read", "write"]:
        steps.append((f"random.ext4.{op}.qd1",
                      {"kind": "random", "target": "ext4", "op": op, "queue_depth": 1}))
    steps.append(("verify.ext4", {"kind": "verify", "target": "ext4"}))
    net = [("network.ecm.tcp.board-to-host.s1",
            {"kind": "tcp", "direction": "board-to-host", "streams": 1}),
           ("network.ecm.tcp.host-to-board.s1",
            {"kind": "tcp", "direction": "host-to-board", "streams": 1}),
           ("network.ecm.rtt", {"kind": "latency"}),
           ("network.ecm.http.host-to-board", {"kind": "http", "direction": "host-to-board"})]
    for step, test in net:
        steps.append((step, {"kind": "network", "link": "ecm", "test": test}))
    # What the firmware's word reads after each step (sticky bits stay set).
    after = {"storage.ext4.sync.bs4096": 0x50005, "network.ecm.tcp.host-to-board.s1": 0x70002}
    raw, t, temp = 0, 3, 45_000
    health = []
    for step, scope in steps:
        before = snapshot(t, raw, 1_000_000_000 if raw & 0xf == 0 else 700_000_000, temp)
        t += 5
        temp += 1_000
        raw = after.get(step, raw)
        hz = 700_000_000 if raw & 0x6 else 1_000_000_000
        health.append({"step": step, "scope": scope, "before": before,
                       "after": snapshot(t, raw, hz, temp)})
        # The condition is over by the next step; its sticky bit stays.
        raw &= 0xffff0000
        t += 1
    r["health"] = health
    return r


def isolation_run():
    """handmade-throttled as schema 1.4 with the isolation proof: kernel threads named in
    every census, PID 1's worker alive at one, a foreign process (a usermode helper,
    parent kthreadd) at after-storage, interrupts per step, command line and modules."""
    r = throttled_run()
    r["run_id"] = "handmade-isolation"
    r["schema_version"]["minor"] = 4
    kthreads = ["kthreadd", "rcu_gp", "rcu_par_gp", "kworker/0:0H-events_highpri",
                "mm_percpu_wq", "ksoftirqd/0", "rcu_sched", "migration/0", "cpuhp/0",
                "kdevtmpfs", "kworker/u2:1-events_unbound", "mmc_complete", "kblockd"]
    init = {"pid": 1, "ppid": 0, "comm": "benchboot-init"}
    worker = {"pid": 212, "ppid": 1, "comm": "benchboot-init"}
    helper = {"pid": 230, "ppid": 2, "comm": "modprobe"}

    def census(at, procs, threads, foreign):
        return {"at": at, "user_processes": procs, "kernel_threads": len(threads),
                "kernel_thread_names": threads, "isolated": not foreign,
                "foreign": foreign}

    r["census"] = [
        census("before-storage", [init], kthreads, []),
        census("after-storage", [init, worker, helper], kthreads + ["kworker/0:2"], [helper]),
        census("after-network", [init], kthreads + ["kworker/0:2", "irq/40-dwc2"], []),
    ]
    r["isolated"] = False
    r["events"] = [{"step": "census.after-storage", "severity": "warning",
                    "message": "user-space process(es) besides PID 1 and its workers: "
                               "230 modprobe (parent 2)"}]
    r["system"]["kernel_cmdline"] = {
        "status": "ok", "source": "/proc/cmdline",
        "value": "console=serial0,115200 root=/dev/ram0 rdinit=/init benchboot.plan=plan"}
    r["system"]["modules"] = {"status": "ok", "source": "/proc/modules", "value": [
        {"name": "usb_f_ecm", "size_bytes": 20480, "refcount": 1, "used_by": []},
        {"name": "u_ether", "size_bytes": 24576, "refcount": 1, "used_by": ["usb_f_ecm"]},
        {"name": "libcomposite", "size_bytes": 61440, "refcount": 2, "used_by": ["usb_f_ecm"]},
        {"name": "dwc2", "size_bytes": 180224, "refcount": 0, "used_by": []},
    ]}
    for i, h in enumerate(r["health"]):
        kind = h["scope"]["kind"]
        if kind == "network":
            d = [("40 dwc2_hsotg:usb1", 30_000 + 100 * i), ("17 arch_timer", 2_000),
                 ("IPI0 CPU wakeup interrupts", 0)]
        elif kind == "verify":
            d = [("38 mmc1", 4_000), ("17 arch_timer", 1_000)]
        else:
            d = [("38 mmc1", 1_000 * (i + 1)), ("17 arch_timer", 500), ("34 DMA IRQ", 20),
                 ("24 3f00b880.mailbox", 2 if i % 2 else 0)]
        d = sorted([(s, n) for s, n in d if n > 0], key=lambda x: (-x[1], x[0]))
        h["interrupts"] = {"status": "ok", "source": "/proc/interrupts",
                           "value": [{"source": s, "count": n} for s, n in d]}
    return r


def card_run():
    """handmade-card (see the docstring at the top)."""
    r = json.load(open("qemu-virt-arm64-1.13.json"))
    card = json.load(open("sandisk-extreme-64gb.card.json"))
    size = card["csd"]["value"]["capacity_bytes"]
    r["run_id"] = "handmade-card"
    r["board"] = "handmade-pi"
    r["emulated"] = False
    r["plan"]["emulated"] = False
    r["plan"]["board"] = "handmade-pi"
    for t in r["plan"]["storage"]["targets"]:
        t["device"] = t["device"].replace("/dev/vda", "/dev/mmcblk0p")
    for m in r["storage"]:
        m["bytes"] = m["bytes"] // 10
    for x in r["random"]:
        x["ios"] = int(x["ios"] * 2.2)
    r["device_reads"] = []
    r["devices"] = [{
        "name": "mmcblk0", "model": "SN64G", "size_bytes": size,
        "logical_block_size": 512, "physical_block_size": 512, "manfid": "0x000003",
        "date": "11/2022", "serial_sha256": card["cid"]["value"]["serial_sha256"],
        "bus_clock_hz": 50_000_000, "card": card,
        "drivers": ["mmcblk", "mmc_host_sdhci_iproc"],
    }]
    r["boot_card"] = {"nominal": "mmcblk0", "found": "mmcblk0", "signature": "0xfc23daff",
                      "how": "the whole disk whose MBR carries the image's disk signature "
                             "0xfc23daff"}
    c = r["card_check"]
    c["device"] = "/dev/mmcblk0"
    for rep in [c["report"], c["report"]["full"]]:
        rep["claimed_bytes"] = size
        rep["region"][1] = size
    r["events"] = [e for e in r["events"] if e["severity"] != "error"]
    r["faults"] = []
    return r


json.dump(a, open("handmade-a.json", "w"), indent=2)
json.dump(b, open("handmade-b.json", "w"), indent=2)
json.dump(throttled_run(), open("handmade-throttled.json", "w"), indent=2)
json.dump(isolation_run(), open("handmade-isolation.json", "w"), indent=2)
json.dump(card_run(), open("handmade-card.json", "w"), indent=2)
