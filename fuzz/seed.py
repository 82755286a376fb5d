#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ from the
repository's own data: board files, the results documents of host/tests/data (their
lists cut short, so they fit -max_len) and the plans inside them, the DHCP
packets captured in crates/dhcp/tests/integration/captured.rs, and a few HTTP request heads; and
dicts/json.dict, a libFuzzer dictionary of those documents' keys and edge integers.
Run from anywhere; re-running only adds or rewrites the same files."""

import base64
import hashlib
import json
import pathlib
import re
import zlib

FUZZ = pathlib.Path(__file__).resolve().parent
ROOT = FUZZ.parent


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = FUZZ / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + hashlib.sha1(data).hexdigest()[:16])).write_bytes(data)


def shorten(v):
    """The document's structure with lists of objects cut to two entries and long lists
    of numbers to four (short ones, e.g. `[10, 55, 0, 1]`, are fixed-size arrays)."""
    if isinstance(v, list):
        if any(isinstance(x, (dict, list)) for x in v):
            return [shorten(x) for x in v[:2]]
        return v if len(v) <= 16 else v[:4]
    if isinstance(v, dict):
        return {k: shorten(x) for k, x in v.items()}
    return v


for f in sorted((ROOT / "boards").glob("*.toml")):
    if f.name == "shared.toml":
        put("shared_toml", f.read_text())
    elif not f.name.endswith(".lock.toml"):
        put("board_toml", f.read_text())

for f in sorted((ROOT / "host/tests/data").glob("*.json")):
    doc = json.loads(f.read_text())
    put("results_json", json.dumps(shorten(doc), separators=(",", ":")))
    # The edge the fuzzer did not reach by itself: counts that add up past u64::MAX.
    for t in doc.get("network", {}).get("throughput", [])[:1]:
        t["board_cpu"]["user"] = 2**64 - 1
        t["board_cpu"]["system"] = 1
        put("results_json", json.dumps(shorten(doc), separators=(",", ":")))
    put("plan_json", json.dumps(doc["plan"], separators=(",", ":")))
    put("plan_json", json.dumps(shorten(doc["plan"]), indent=1))

# console_log: each document as PID 1 prints it (crates/console/src/document.rs: zlib,
# base64 in chunks of 96 bytes with their CRC-32), in a serial capture (time stamps, a
# kernel line between chunks) and in a LAVA job log (one record a line).
CHUNK = 96


def document_lines(run, doc):
    z = zlib.compress(doc, 9)
    chunks = [z[i : i + CHUNK] for i in range(0, len(z), CHUNK)]
    k = len(chunks)
    out = ["start run=%s board=rpi-zero-w" % run,
           "document begin run=%s format=zlib+base64 json-bytes=%d zlib-bytes=%d lines=%d "
           "sha256=%s" % (run, len(doc), len(z), k, hashlib.sha256(doc).hexdigest())]
    for i, c in enumerate(chunks):
        out.append("document %d/%d %s %08x" % (i + 1, k, base64.b64encode(c).decode(),
                                               zlib.crc32(c)))
    out.append("document end run=%s" % run)
    return out


def capture(lines):
    text = "U-Boot 2024.01\n"
    for i, l in enumerate(lines):
        text += "[%8.3f] benchboot: %s\r\n" % (i / 100, l)
        if i == 3:
            text += "[    0.500] usb 1-1: new high-speed USB device number 2\r\n"
    return text


def lava(lines):
    text = '{"dt": "2026-12-02T06:07:47.6", "lvl": "info", "msg": "start: 1 tmpfs-deploy"}\n'
    for l in lines:
        text += '- {"dt": "2026-12-02T06:08:16.6", "lvl": "target", "msg": %s}\n' % json.dumps(
            "benchboot: " + l)
    text += ('{"dt": "x", "lvl": "results", "msg": {"case": "run_complete", '
             '"definition": "benchboot-verdicts", "level": "3.1", "result": "pass"}}\n')
    return text


docs = [json.dumps(shorten(json.loads(f.read_text())), separators=(",", ":")).encode()
        for f in sorted((ROOT / "host/tests/data").glob("*.json"))]
for i, doc in enumerate(docs):
    put("console_log", capture(document_lines("run-%d" % i, doc)))
    put("console_log", lava(document_lines("run-%d" % i, doc)))
two = document_lines("a", docs[0][:2000]) + document_lines("b", b'{"x":1}')
put("console_log", capture(two))
put("console_log", capture(two[:4] + two))  # a reset in the middle of a document
hostile = ("document begin run=x format=zlib+base64 json-bytes=10 "
           "zlib-bytes=18446744073709551615 lines=192153584101141163 sha256=" + "0" * 64)
put("console_log", capture([hostile]))

# plan_toml: the shipped presets and the plan files of the README.
for f in sorted((ROOT / "plans").glob("*.toml")):
    put("plan_toml", f.read_text())
for block in re.findall(r"```toml\n(.*?)```", (ROOT / "README.md").read_text(), re.S):
    put("plan_toml", block)
put("plan_toml", 'extends = "quick"\n[storage]\ncard = ["ext4"]\nblock-sizes = ["4 KiB", "1 MiB"]\n'
    '[[storage.disk]]\nlabel = "usb"\ndevice = "LABEL=BBEXT4"\nfilesystem = "ext4"\n')

src = (ROOT / "crates/dhcp/tests/integration/captured.rs").read_text()
for name, body in re.findall(r'const (\w+): &str =\s*"((?:[^"\\]|\\\n)*)";', src):
    hexs = re.sub(r"\\\n\s*", "", body)
    hexs = re.sub(r"\{(\d+)\}", lambda m: "00" * int(m.group(1)), hexs)
    b = bytes.fromhex(hexs)
    if b[12:14] == b"\x08\x00":  # a whole Ethernet frame: strip Ethernet, IPv4, UDP
        b = b[14 + (b[14] & 0x0F) * 4 + 8 :]
    put("dhcp_packet", b)

for head in [
    "GET /results.json HTTP/1.1\r\nHost: 10.55.0.1:8080\r\nUser-Agent: ureq\r\nAccept: */*\r\n\r\n",
    "GET / HTTP/1.0\r\n\r\n",
    "HEAD /results.json HTTP/1.1\r\nHost: x\r\n\r\n",
    "GET /../etc/passwd HTTP/1.1\r\n\r\n",
    "GET /results.json HTTP/1.1\nHost: x\n\n",
]:
    put("http_request", head)

# journal_ring and card_image: records as crates/journal writes them (header with
# magic, version, encoding, sequence, lengths, CRC-32s; raw deflate; 4 KiB blocks).
BLOCK = 4096


def record(seq, run, doc):
    z = zlib.compressobj(1, zlib.DEFLATED, -15)
    payload = z.compress(doc) + z.flush()
    enc = 1
    if len(payload) >= len(doc):
        payload, enc = doc, 0
    h = bytearray(128)
    h[0:8] = b"BBJRNL\0\x01"
    h[8:10] = (1).to_bytes(2, "little")
    h[10:12] = enc.to_bytes(2, "little")
    h[16:24] = seq.to_bytes(8, "little")
    h[24:28] = len(payload).to_bytes(4, "little")
    h[28:32] = len(doc).to_bytes(4, "little")
    h[32:36] = zlib.crc32(payload).to_bytes(4, "little")
    h[36] = len(run)
    h[37 : 37 + len(run)] = run.encode()
    h[124:128] = zlib.crc32(bytes(h[:124])).to_bytes(4, "little")
    rec = bytes(h) + payload
    return rec + bytes(-len(rec) % BLOCK)


small = []
for f in sorted((ROOT / "host/tests/data").glob("*.json"))[:3]:
    doc = shorten(json.loads(f.read_text()))
    doc["plan"] = {}
    small.append((doc["run_id"], json.dumps(doc, separators=(",", ":")).encode()))
ring = b"".join(record(i + 1, run, d) for i, (run, d) in enumerate(small))
put("journal_ring", ring)
put("journal_ring", ring[: BLOCK + 200] + bytes(BLOCK - 200))  # the first record torn
put("journal_ring", record(1, "r-1", b'{"run_id":"r-1","system":{"written_ns":1}}'))


def fat12(label, files):
    """A FAT12 volume: 512-byte sectors, a sector per cluster, 2 FATs of 1 sector, 16
    root entries (the label first), `files` (8.3 name, bytes) each in its own run."""
    data = [c for _, body in files for c in [body[i : i + 512] for i in range(0, max(len(body), 1), 512)]]
    total = 4 + len(data) + 4
    bs = bytearray(512)
    bs[0:3] = b"\xeb\x3c\x90"
    bs[3:11] = b"MSWIN4.1"
    bs[11:13] = (512).to_bytes(2, "little")
    bs[13] = 1  # sectors per cluster
    bs[14:16] = (1).to_bytes(2, "little")  # reserved
    bs[16] = 2  # FATs
    bs[17:19] = (16).to_bytes(2, "little")  # root entries
    bs[19:21] = total.to_bytes(2, "little")
    bs[21] = 0xF8
    bs[22:24] = (1).to_bytes(2, "little")  # sectors per FAT
    bs[24:26] = (32).to_bytes(2, "little")
    bs[26:28] = (2).to_bytes(2, "little")
    bs[38] = 0x29
    bs[39:43] = b"\x12\x34\x56\x78"
    bs[43:54] = label.ljust(11).encode()
    bs[54:62] = b"FAT12   "
    bs[510:512] = b"\x55\xaa"
    fat = [0xFF8, 0xFFF]
    root = bytearray(512)
    root[0:11] = label.ljust(11).encode()
    root[11] = 0x08  # volume label
    cluster = 2
    e = 32
    for i, (name, body) in enumerate(files):
        n = max(1, -(-len(body) // 512))
        fat += [cluster + k + 1 for k in range(n - 1)] + [0xFFF]
        # A long name (one LFN entry, up to 13 characters) before its 8.3 alias.
        short = ("F%07d" % i + "TXT").encode()
        ck = 0
        for b in short:
            ck = (((ck & 1) << 7) + (ck >> 1) + b) & 0xFF
        units = [ord(c) for c in name] + [0] + [0xFFFF] * 12
        lfn = bytearray(32)
        lfn[0] = 0x41
        for j, o in enumerate([1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30]):
            lfn[o : o + 2] = units[j].to_bytes(2, "little")
        lfn[11], lfn[13] = 0x0F, ck
        root[e : e + 32] = lfn
        e += 32
        root[e : e + 11] = short
        root[e + 11] = 0x20
        root[e + 26 : e + 28] = cluster.to_bytes(2, "little")
        root[e + 28 : e + 32] = len(body).to_bytes(4, "little")
        e += 32
        cluster += n
    fs = bytearray(512)
    for i, v in enumerate(fat):
        o = i * 3 // 2
        if i % 2 == 0:
            fs[o] |= v & 0xFF
            fs[o + 1] |= (v >> 8) & 0x0F
        else:
            fs[o] |= (v << 4) & 0xF0
            fs[o + 1] |= (v >> 4) & 0xFF
    out = bytes(bs) + bytes(fs) * 2 + bytes(root) + b"".join(c.ljust(512, b"\0") for c in data)
    return out + bytes(total * 512 - len(out))


def mbr(entries):
    m = bytearray(512)
    for i, (sys, lba, sectors) in enumerate(entries):
        e = 446 + 16 * i
        m[e + 4] = sys
        m[e + 8 : e + 12] = lba.to_bytes(4, "little")
        m[e + 12 : e + 16] = sectors.to_bytes(4, "little")
    m[510:512] = b"\x55\xaa"
    return bytes(m)


run, doc = small[0]
fat = fat12("BBRESULTS", [("results.json", doc)])
journal = record(1, run, doc)
# p1 the FAT results partition at sector 1 (named by its label), p4 the journal, p3 an
# extended partition with two logical ones (EBR, then a sector of data each).
fat_s, jr_s = len(fat) // 512, len(journal) // 512
ext = 1 + fat_s
logical = mbr([(0x83, 1, 1), (0x05, 2, 2)]) + bytes(512) + mbr([(0x83, 1, 1)]) + bytes(512)
j_at = ext + 4
card = mbr([(0x0E, 1, fat_s), (0, 0, 0), (0x0F, ext, 4), (0xDA, j_at, jr_s)]) + fat + logical + journal
put("card_image", card)
put("card_image", card[: 512 + len(fat)])  # the journal cut off
put("card_image", mbr([(0x0E, 1, fat_s)]) + fat)  # no journal, p1 FAT only
put("card_image", fat)  # a bare FAT volume

# boards_dir: the folder's files, `=== <name>` before each.
folder = "=== shared.toml\n" + (ROOT / "boards/shared.toml").read_text()
for f in sorted((ROOT / "boards").glob("*.toml")):
    if f.name != "shared.toml" and not f.name.endswith(".lock.toml"):
        put("boards_dir", "=== %s\n%s" % (f.name, f.read_text()))
        put("boards_dir", folder + "=== %s\n%s" % (f.name, f.read_text()))

# A libFuzzer dictionary for the JSON targets: every key of the documents, the enum
# values, and the integers at the edges of u32/u64 (rates and sums of huge counts).
keys = set()


def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(json.dumps(k))
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
    elif isinstance(v, str) and len(v) < 24:
        keys.add(json.dumps(v))


for f in sorted((ROOT / "host/tests/data").glob("*.json")):
    walk(json.loads(f.read_text()))
edges = ["0", "1", "-1", "255", "256", "4294967295", "4294967296",
         "9223372036854775807", "18446744073709551615", "18446744073709551616",
         "1e308", "null", "true", "false", "[]", "{}"]
(FUZZ / "dicts").mkdir(exist_ok=True)
with open(FUZZ / "dicts" / "json.dict", "w") as d:
    for i, tok in enumerate(sorted(keys) + edges):
        d.write("t%d=%s\n" % (i, json.dumps(tok)))

for t in sorted((FUZZ / "corpus").iterdir()):
    print(f"{t.name}: {len(list(t.iterdir()))} files")
