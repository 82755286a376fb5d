//! `cargo xtask bench net-http`: benchboot's HTTP runs both ways against nginx serving
//! a file from /dev/shm to `curl -o /dev/null`, over loopback.

use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use benchboot_results::network::mbit_per_s;

use super::{
    benchboot_net, client, clock_ticks_per_s, free_port, host_line, median, wait_listening, Server,
};

/// Size of the HTTP object each way, bytes (the plan's largest, 1 GiB).
pub const HTTP_BYTES: u64 = 1 << 30;

/// Busy jiffies (user + nice + system + irq + softirq: fields 1, 2, 3, 6, 7) of the
/// `cpu ` line of a `/proc/stat` text (proc(5)).
pub fn parse_busy_jiffies(stat: &str) -> Option<u64> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let f: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|w| w.parse().ok())
        .collect::<Option<_>>()?;
    Some(f.get(..3)?.iter().sum::<u64>() + f.get(5..7)?.iter().sum::<u64>())
}

fn busy_jiffies() -> Result<u64> {
    let text = std::fs::read_to_string("/proc/stat")?;
    parse_busy_jiffies(&text).context("unexpected /proc/stat")
}

/// nginx serving one file from a folder of its own under /dev/shm (removed on drop).
struct Nginx {
    server: Server,
    dir: std::path::PathBuf,
    addr: SocketAddr,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.server.0.kill();
        let _ = self.server.0.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_nginx(bytes: u64) -> Result<Nginx> {
    if Command::new("nginx").arg("-v").output().is_err() {
        bail!("nginx is not installed: apt-get install nginx");
    }
    let dir = std::path::PathBuf::from(format!(
        "/dev/shm/benchboot-bench-nginx-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(dir.join("www"))?;
    {
        use std::io::Write;
        let mut f = std::fs::File::create(dir.join("www/blob"))?;
        let chunk: Vec<u8> = (0..1u32 << 20)
            .map(|i| (i.wrapping_mul(2654435761) >> 24) as u8 | 1)
            .collect();
        let mut left = bytes;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            f.write_all(&chunk[..n])?;
            left -= n as u64;
        }
    }
    let addr: SocketAddr = ([127, 0, 0, 1], free_port()?).into();
    let d = dir.display();
    // One worker as one process (one board is measured at a time here), sendfile
    // on as nginx ships it, no access log.
    let conf = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log;\nevents {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  sendfile on;\n  tcp_nopush on;\n\
           client_body_temp_path {d}/tmp;\n  proxy_temp_path {d}/tmp;\n\
           fastcgi_temp_path {d}/tmp;\n  uwsgi_temp_path {d}/tmp;\n  scgi_temp_path {d}/tmp;\n\
           server {{ listen {addr}; root {d}/www; }}\n}}\n"
    );
    std::fs::write(dir.join("nginx.conf"), conf)?;
    let child = Command::new("nginx")
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(dir.join("nginx.conf"))
        .arg("-e")
        .arg(dir.join("error.log"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .context("starting nginx")?;
    let mut n = Nginx {
        server: Server(child),
        dir,
        addr,
    };
    wait_listening(addr, &mut n.server)?;
    Ok(n)
}

/// `curl -o /dev/null -w '%{size_download} %{time_total}'` → (bytes, s).
pub fn parse_curl(out: &str) -> Option<(f64, f64)> {
    let mut w = out.split_whitespace();
    let bytes = w.next()?.parse().ok()?;
    let secs = w.next()?.parse().ok()?;
    Some((bytes, secs))
}

/// `cargo xtask bench net-http`.
pub fn http(runs: u32) -> Result<()> {
    let host = crate::qemu::build_host_tool(true)?;
    let hz = clock_ticks_per_s();
    let bb_addr: SocketAddr = ([127, 0, 0, 1], free_port()?).into();
    let mut peer = Server(
        Command::new(&host)
            .args(["peer", "--listen", &bb_addr.to_string()])
            .stderr(Stdio::null())
            .spawn()
            .context("starting benchboot peer")?,
    );
    wait_listening(bb_addr, &mut peer)?;
    let nginx = start_nginx(HTTP_BYTES)?;
    let url = format!("http://{}/blob", nginx.addr);
    println!(
        "bench net-http: loopback, {} MiB each way from RAM; {runs} runs per tool after one \
         warm-up run, interleaved, median. benchboot: `benchboot net` (its GET from the peer, \
         then the peer's GET from it) against `benchboot peer`; reference: nginx (sendfile, \
         one worker) serving a file on /dev/shm to `curl -o /dev/null`, twice",
        HTTP_BYTES >> 20
    );
    // Per tool: [host-to-board Mbit/s, board-to-host Mbit/s, transfer busy jiffies per
    // GB (system-wide, both transfers), process CPU s per GB (whole run)].
    let mut bb: [Vec<f64>; 4] = Default::default();
    let mut rf: [Vec<f64>; 4] = Default::default();
    let gb = 2.0 * HTTP_BYTES as f64 / 1e9;
    for run_no in 0..=runs {
        let keep = run_no > 0;
        let run_bb = || benchboot_http_run(&host, bb_addr, &peer, hz, gb);
        let run_ref = || reference_http_run(&url, &nginx, hz, gb);
        let (b, f) = if run_no % 2 == 0 {
            let b = run_bb()?;
            (b, run_ref()?)
        } else {
            let f = run_ref()?;
            (run_bb()?, f)
        };
        if keep {
            for k in 0..4 {
                bb[k].push(b[k]);
                rf[k].push(f[k]);
            }
        }
        eprintln!(
            "  run {run_no}{}: benchboot {:.0} / {:.0} Mbit/s, {:.1} busy jiffies/GB, {:.3} CPU s/GB; \
             nginx+curl {:.0} / {:.0} Mbit/s, {:.1} busy jiffies/GB, {:.3} CPU s/GB",
            if keep { "" } else { " (warm-up)" },
            b[0],
            b[1],
            b[2],
            b[3],
            f[0],
            f[1],
            f[2],
            f[3]
        );
    }
    print_http_table(&bb, &rf, hz);
    drop(nginx);
    drop(peer);
    Ok(())
}

/// One `benchboot net` HTTP run against the peer: `[host-to-board Mbit/s, board-to-host
/// Mbit/s, transfer busy jiffies per GB, process CPU s per GB]`.
fn benchboot_http_run(
    host: &Path,
    bb_addr: SocketAddr,
    peer: &Server,
    hz: f64,
    gb: f64,
) -> Result<[f64; 4]> {
    let (r, t) = benchboot_net(
        host,
        bb_addr,
        peer,
        &[
            "--streams",
            "0",
            "--latency-samples",
            "0",
            "--http-bytes",
            &HTTP_BYTES.to_string(),
        ],
    )?;
    let [h2b, b2h] = r.http.as_slice() else {
        bail!(
            "benchboot net: expected two HTTP runs, got {}",
            r.http.len()
        );
    };
    // The fetching side's /proc/stat over its GET: system-wide, transfer only.
    let busy = |c: &benchboot_results::network::CpuTimes| {
        (c.user + c.nice + c.system + c.irq + c.softirq) as f64
    };
    Ok([
        mbit_per_s(h2b.bytes, h2b.nanos),
        mbit_per_s(b2h.bytes, b2h.nanos),
        (busy(&h2b.board_cpu) + busy(&b2h.host_cpu)) / gb,
        t as f64 / hz / gb,
    ])
}

/// The reference run: `curl` fetching nginx's object twice, the same four figures.
fn reference_http_run(url: &str, nginx: &Nginx, hz: f64, gb: f64) -> Result<[f64; 4]> {
    let mut rates = [0.0; 2];
    let mut busy = 0u64;
    let mut ticks_total = 0u64;
    for rate in &mut rates {
        let b0 = busy_jiffies()?;
        let (out, t) = client(
            Command::new("curl").args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{size_download} %{time_total}",
                url,
            ]),
            &nginx.server,
        )?;
        busy += busy_jiffies()? - b0;
        ticks_total += t;
        let (bytes, secs) = parse_curl(&out).context("unexpected curl -w output")?;
        if bytes as u64 != HTTP_BYTES {
            bail!("curl got {bytes} of {HTTP_BYTES} bytes");
        }
        *rate = bytes * 8.0 / secs / 1e6;
    }
    Ok([
        rates[0],
        rates[1],
        busy as f64 / gb,
        ticks_total as f64 / hz / gb,
    ])
}

/// The table of medians and the method's words.
fn print_http_table(bb: &[Vec<f64>; 4], rf: &[Vec<f64>; 4], hz: f64) {
    let b: Vec<f64> = bb.iter().map(|v| median(v)).collect();
    let f: Vec<f64> = rf.iter().map(|v| median(v)).collect();
    println!(
        "{:>30} {:>11} {:>11} {:>7}",
        "", "benchboot", "nginx+curl", "bb/ref"
    );
    let rows = [
        ("host-to-board Mbit/s", 0),
        ("board-to-host Mbit/s", 1),
        ("transfer busy jiffies/GB", 2),
        ("process CPU s/GB", 3),
    ];
    for (name, k) in rows {
        println!(
            "{name:>30} {:>11.2} {:>11.2} {:>7.3}",
            b[k],
            f[k],
            b[k] / f[k]
        );
    }
    println!(
        "Mbit/s = 10^6 bit/s of body from sending the request to the last byte (benchboot's \
         HttpRun; curl's time_total). transfer busy jiffies/GB: system-wide /proc/stat user + \
         nice + system + irq + softirq over each GET (benchboot: the fetching side's reading; \
         reference: around each curl), per 10^9 body bytes, {hz} jiffies/s: other load on \
         this machine counts too. process CPU s/GB: user + sys of client and server processes \
         over the whole run (benchboot fills both objects in RAM first; nginx's file was \
         written before). Host: {}",
        host_line()
    );
}
