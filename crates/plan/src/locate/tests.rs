//! Tests of error locations: every validation error of a plan file names the file, the
//! line and the key as the file spells it.
use crate::{resolve, ImageFacts, Plan};

fn image() -> ImageFacts {
    ImageFacts {
        wifi: None,
        ..ImageFacts::example()
    }
}

fn base() -> Plan {
    let mut p = Plan::example();
    p.emulated = false;
    p.network.tests = Some(crate::NetTests::hardware());
    p
}

/// One bad plan per rule: (plan text, key as the file spells it, line, words of the
/// message).
const BAD: &[(&str, &str, usize, &str)] = &[
    ("[storage]\nbyte-cap = 0\n", "storage.byte-cap", 2, "above 0 bytes"),
    ("[storage]\n\ntime-cap = \"0 s\"\n", "storage.time-cap", 3, "above 0 ms"),
    ("[storage]\nblock-sizes = []\n", "storage.block-sizes", 2, "at least one"),
    ("[storage]\nmodes = []\n", "storage.modes", 2, "at least one"),
    ("[storage]\ncard = [\"ext4\", \"ext4\"]\n", "storage.card[1]", 2, "`ext4` is used twice"),
    ("[storage.device-reads]\nchunk = \"128 MiB\"\n", "storage.device-reads.chunk", 2, "64 MiB"),
    ("[storage.random]\nqueue-depths = []\n", "storage.random.queue-depths", 2, "1..=256"),
    ("[storage.random]\ntargets = [\"nope\"]\n", "storage.random.targets", 2, "`nope`"),
    ("[storage.random]\nregion = 512\n", "storage.random.region", 2, "512 B"),
    ("[[command]]\nid = \"a\"\npath = \"/bin/x\"\ntime-limit = \"1 s\"\n", "command[0].path", 3, "inside the results partition"),
    ("[[command]]\nid = \"a\"\npath = \"x\"\ntime-limit = \"1 s\"\n[[command]]\nid = \"A\"\npath = \"y\"\ntime-limit = \"1 s\"\n", "command[1].id", 6, "`a` and `A`"),
    ("[[command]]\nid = \"a\"\npath = \"x\"\ntime-limit = \"0 s\"\n", "command[0].time-limit", 4, "above 0 ms"),
    ("[network]\nduration = \"0 s\"\n", "network.duration", 2, "interval"),
    ("[network]\nstreams = [100]\n", "network.streams", 2, "1..=64"),
    ("[network]\nhttp = \"2 GiB\"\n", "network.http", 2, "1 GiB"),
    ("[network]\nudp-bitrate = \"200 Gbit/s\"\n", "network.udp-bitrate", 2, "100 Gbit/s"),
    ("[network]\nudp-datagram = 8\n", "network.udp-datagram", 2, "16 ..= 65507"),
    ("[card-check]\nenabled = true\ntime-limit = \"0 s\"\n", "card-check.time-limit", 3, "above 0 ms"),
    ("[memory]\nlatency-reads = 5000000000\n", "memory.latency-reads", 2, "5000000000 is outside 1..=1000000000"),
    ("[memory]\nlatency-reads = 0\n", "memory.latency-reads", 2, "0 is outside 1..=1000000000"),
    ("[memory]\nlatency-reads = -3\n", "memory.latency-reads", 2, "-3 is outside 1..=1000000000"),
    ("[storage]\nrepetitions = 0\n", "storage.repetitions", 2, "must be at least 1"),
    ("[memory]\n\nlatency-reads = 99999999999999999999\n", "memory.latency-reads", 3, "too large"),
    ("[memory]\nlatency-reads = 2000000000\n", "memory.latency-reads", 2, "outside 1..=1000000000"),
    ("[memory]\nlatency-repeats = 100000\n", "memory.latency-repeats", 2, "outside 1..=10000"),
    ("[memory]\nsample = \"0 ms\"\n", "memory.sample", 2, "above 0 ms"),
    ("[storage]\nblock-sizes = [\"4 KiB\", 512, 4096]\n", "storage.block-sizes[2]", 2, "4 KiB is listed twice"),
    ("[storage]\nmodes = [\"sync\", \"sync\"]\n", "storage.modes[1]", 2, "`sync` is listed twice"),
    ("[storage.random]\nqueue-depths = [1, 4, 1]\n", "storage.random.queue-depths[2]", 2, "depth 1 is listed twice"),
    ("[storage.random]\nduration = \"0 s\"\n", "storage.random.duration", 2, "above 0 ms"),
    ("[storage.device-reads]\ncached = \"0 s\"\n", "storage.device-reads.cached", 2, "above 0 ms"),
    ("[network]\nstreams = [1, 1]\n", "network.streams[1]", 2, "listed twice"),
    ("[network]\nlatency-samples = 4000000000\n", "network.latency-samples", 2, "4000000000 is outside 1..=10000"),
    ("[storage]\ntime-cap = \"1000 h\"\n", "storage.time-cap", 2, "above the bound of 168 h"),
    ("[storage]\nrepetitions = 4294967295\ntime-cap = \"5000 h\"\n", "storage.time-cap", 3, "storage alone"),
    ("[[command]]\nid = \"long\"\npath = \"x\"\ntime-limit = \"9000 h\"\n", "command[0].time-limit", 4, "command.long alone: 9000 h"),
    ("[memory]\nlatency-max = 1000\n", "memory.latency-max", 2, "power of two"),
    ("[memory]\nsamples = 0\n", "memory.samples", 2, "0 is outside 1..=10000"),
    ("[[storage.disk]]\nlabel = \"ext4\"\ndevice = \"LABEL=X\"\nfilesystem = \"ext4\"\n", "storage.disk[0].label", 2, "already a target's label"),
    ("[[storage.disk]]\nlabel = \"u\"\ndevice = \"/dev/sda\"\nfilesystem = \"raw\"\n", "storage.disk[0].device", 3, "destroy = true"),
    ("extends = \"nope\"\n", "extends", 1, "not a preset"),
];

#[test]
fn every_validation_error_names_file_line_and_the_key_as_written() {
    let mut wrong = Vec::new();
    for (text, key, line, words) in BAD {
        let shown = match resolve("bad.toml", text, &base(), &image()) {
            Ok(_) => {
                wrong.push(format!("accepted:\n{text}"));
                continue;
            }
            Err(e) => e.to_string(),
        };
        // The key's own name is on that line of the file.
        let name = key.rsplit('.').next().unwrap_or(key);
        let name = name.split('[').next().unwrap_or(name);
        let at = text.lines().nth(line - 1).unwrap_or_default();
        if !shown.starts_with(&format!("bad.toml:{line}: {key}: "))
            || !shown.contains(words)
            || !at.contains(name)
        {
            wrong.push(format!(
                "{text}-> {shown}\n   want bad.toml:{line}: {key}: ..{words}.."
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}
