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
