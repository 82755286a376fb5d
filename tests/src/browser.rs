//! A page opened in a real browser: Debian's `chromium`, headless, once per question
//! (its command line has no session to keep), each run in its own profile folder.
//!
//! - [`dom`]: the DOM after the page's script ran (`--dump-dom`), with the console's
//!   messages and every URL the browser's network stack was asked for (`--log-net-log`);
//! - [`screenshot`]: a PNG of the page at a given window size.
//!
//! [`requests_leaving`] and [`console_errors`] are the checks: a page that fetches
//! anything but itself, or logs an error (a script error, a refused request), fails.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// The browser binary, if installed (`chromium`, Debian's package).
pub fn chromium() -> Option<PathBuf> {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
}

/// True when chromium is here; otherwise [`crate::missing`] (a failure under CI).
///
/// # Panics
/// Under CI when chromium is missing.
pub fn require_chromium(test: &str) -> bool {
    if chromium().is_some() {
        return true;
    }
    crate::missing(
        test,
        "chromium is not installed",
        "run `cargo xtask setup --tests` (it installs Debian's chromium)",
    );
    false
}

/// What one headless load of a page gave.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The serialized DOM after load and scripts.
    pub dom: String,
    /// chromium's log lines of the page's console (`CONSOLE(...)` lines of stderr).
    pub console: Vec<String>,
    /// Every URL the page asked for (from the net log, [`net_log_urls`]).
    pub urls: Vec<String>,
}

fn base_command(profile: &Path) -> Result<Command> {
    let bin = chromium().context("chromium is not installed (cargo xtask setup --tests)")?;
    let mut c = Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--disable-breakpad",
        "--disable-domain-reliability",
        "--no-pings",
        "--no-proxy-server",
        "--metrics-recording-only",
        "--hide-scrollbars",
        "--virtual-time-budget=3000",
        "--enable-logging=stderr",
        "--v=0",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    // Nothing resolves: a request that slipped out reaches no one, and shows in the log.
    .arg("--host-resolver-rules=MAP * ~NOTFOUND");
    Ok(c)
}

fn run(mut c: Command, what: &str) -> Result<std::process::Output> {
    let child = c
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .with_context(|| format!("starting chromium for {what}"))?;
    let (tx, rx) = std::sync::mpsc::channel();
    let id = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(Duration::from_secs(120)) {
        Ok(out) => Ok(out?),
        Err(_) => {
            let _ = Command::new("kill").args(["-9", &id.to_string()]).status();
            bail!("chromium did not finish {what} within 120 s")
        }
    }
}

/// The `file://` URL of `path` (absolute), with `fragment` (`sort=t1.0.desc`) if any.
pub fn file_url(path: &Path, fragment: Option<&str>) -> Result<String> {
    let abs = std::fs::canonicalize(path).with_context(|| format!("{}", path.display()))?;
    let mut url = format!("file://{}", abs.display());
    if let Some(f) = fragment {
        url.push('#');
        url.push_str(f);
    }
    Ok(url)
}

/// Loads `url` headless and returns the DOM, the console and the URLs requested.
///
/// # Errors
/// chromium is missing, fails or hangs (120 s).
pub fn dom(url: &str) -> Result<Loaded> {
    let work = tempfile::tempdir()?;
    let netlog = work.path().join("net.json");
    let mut c = base_command(&work.path().join("profile"))?;
    c.arg(format!("--log-net-log={}", netlog.display()))
        .arg("--dump-dom")
        .arg(url);
    let out = run(c, url)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        bail!("chromium --dump-dom {url}: {}\n{stderr}", out.status);
    }
    let net = std::fs::read_to_string(&netlog).unwrap_or_default();
    Ok(Loaded {
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        console: stderr
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(String::from)
            .collect(),
        urls: net_log_urls(&net),
    })
}

/// The URLs the page itself asked for, from a chromium JSON net log: every
/// `URL_REQUEST_START_JOB` event whose network isolation key is the page's (`file://`).
/// The browser's own background requests (its updater, its clock, account checks:
/// isolation key `null` or a Google site) are not the page's and are left out; the
/// host resolver rule makes them fail before any packet leaves (`ERR_NAME_NOT_RESOLVED`).
/// An unreadable log gives `["<net log unreadable>"]`, so a check on it fails.
pub fn net_log_urls(net_log: &str) -> Vec<String> {
    let Ok(log) = serde_json::from_str::<serde_json::Value>(net_log) else {
        return vec!["<net log unreadable>".into()];
    };
    let start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"].as_u64();
    let mut out: Vec<String> = Vec::new();
    for e in log["events"].as_array().into_iter().flatten() {
        if e["type"].as_u64() != start || start.is_none() {
            continue;
        }
        let p = &e["params"];
        let from_page = p["network_isolation_key"]
            .as_str()
            .is_some_and(|k| k.starts_with("file://"));
        if let (true, Some(u)) = (from_page, p["url"].as_str()) {
            if !out.iter().any(|o| o == u) {
                out.push(u.to_owned());
            }
        }
    }
    out
}

/// The URLs of `loaded` that are not the page itself (`file://` of `page`, any fragment)
/// nor a `data:` URL: what left, or tried to leave, the file.
pub fn requests_leaving(loaded: &Loaded, page: &str) -> Vec<String> {
    let page = page.split('#').next().unwrap_or(page);
    loaded
        .urls
        .iter()
        .filter(|u| u.split('#').next() != Some(page) && !u.starts_with("data:"))
        .cloned()
        .collect()
}

/// The console lines of `loaded` at error level (script errors, refused loads, CSP
/// violations): chromium logs them as `ERROR:CONSOLE` or, in newer builds, as
/// `CONSOLE(...)` lines whose text says `Uncaught` or `Refused`.
pub fn console_errors(loaded: &Loaded) -> Vec<String> {
    loaded
        .console
        .iter()
        .filter(|l| {
            l.contains("ERROR:CONSOLE")
                || l.contains("Uncaught")
                || l.contains("Refused")
                || l.contains("Failed to load")
        })
        .cloned()
        .collect()
}

/// A PNG screenshot of `url` in a `width` x `height` window, into `png`.
///
/// # Errors
/// chromium is missing, fails or writes no file.
pub fn screenshot(url: &str, png: &Path, width: u32, height: u32) -> Result<()> {
    let work = tempfile::tempdir()?;
    let mut c = base_command(&work.path().join("profile"))?;
    c.arg(format!("--screenshot={}", png.display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(url);
    let out = run(c, url)?;
    if !out.status.success() || !png.exists() {
        bail!(
            "chromium --screenshot {url}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

/// Opens a copy of the page `file` in a frame `width` x `height` CSS px (headless
/// chromium's window is at least 500 px wide, so a phone's 400 px is a frame's width:
/// the page's media queries see it as its viewport) with `script` appended (an inline
/// script, as the page's own CSP allows; it runs after the page's own), and returns
/// what the script left in `window.benchbootMeasure` (a string, typically JSON): the
/// harness for measuring the laid-out page (`getBoundingClientRect`, computed styles)
/// at a given width. The copy sits beside `file`, so relative links still work.
///
/// # Errors
/// chromium is missing, fails, or the script left nothing (it threw: the text says).
pub fn measure(file: &Path, width: u32, height: u32, script: &str) -> Result<String> {
    let page = std::fs::read_to_string(file).with_context(|| format!("{}", file.display()))?;
    let harness = format!(
        "<script>(function(){{try{{{script}}}catch(e){{window.benchbootMeasure='error: '+e;}}\
         parent.postMessage(String(window.benchbootMeasure),'*');}})();</script>"
    );
    let at = page.rfind("</body>").unwrap_or(page.len());
    let name = file
        .file_name()
        .map_or("page.html".into(), |n| n.to_string_lossy().into_owned());
    let copy = file.with_file_name(format!(".measure-{name}"));
    let frame = file.with_file_name(format!(".frame-{name}"));
    std::fs::write(&copy, format!("{}{harness}{}", &page[..at], &page[at..]))?;
    std::fs::write(
        &frame,
        format!(
            "<!DOCTYPE html><html><body style=\"margin:0\">\
             <script>window.addEventListener('message',function(e){{\
             var o=document.createElement('pre');o.id='benchboot-measure';\
             o.textContent=e.data;document.body.appendChild(o);}});</script>\
             <iframe src=\"{}\" width=\"{width}\" height=\"{height}\" style=\"border:0\"></iframe>\
             </body></html>",
            file_url(&copy, None)?
        ),
    )?;
    let work = tempfile::tempdir()?;
    let mut c = base_command(&work.path().join("profile"))?;
    c.arg(format!(
        "--window-size={},{}",
        width.max(500) + 20,
        height + 20
    ))
    .arg("--dump-dom")
    .arg(file_url(&frame, None)?);
    let out = run(c, "a measurement");
    let _ = std::fs::remove_file(&copy);
    let _ = std::fs::remove_file(&frame);
    let out = out?;
    let dom = String::from_utf8_lossy(&out.stdout);
    let tag = "<pre id=\"benchboot-measure\">";
    let start = dom.find(tag).with_context(|| {
        format!(
            "the measuring script left nothing: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let rest = &dom[start + tag.len()..];
    let text = decode(&rest[..rest.find("</pre>").unwrap_or(rest.len())]);
    if text.starts_with("error: ") {
        bail!("the measuring script threw: {text}");
    }
    Ok(text)
}

/// The measuring script of [`smallest_plot_text`]: every `<text>` with text of every
/// visible inline SVG, its font size (computed, SVG user units) times the SVG's scale
/// (rendered width over its viewBox width): the smallest, as `{"px":..,"text":..,
/// "width":<window inner width>,"svgs":<visible SVGs>}`.
pub const SMALLEST_TEXT_JS: &str = r#"
var min=1e9,what="",svgs=0;
Array.prototype.forEach.call(document.querySelectorAll("svg"),function(svg){
  var r=svg.getBoundingClientRect();if(r.width===0||r.height===0)return;svgs++;
  var vb=svg.viewBox&&svg.viewBox.baseVal&&svg.viewBox.baseVal.width?svg.viewBox.baseVal.width:+svg.getAttribute("width");
  var scale=r.width/vb;
  Array.prototype.forEach.call(svg.querySelectorAll("text"),function(t){
    if(!t.textContent.trim())return;
    var px=parseFloat(getComputedStyle(t).fontSize)*scale;
    if(px<min){min=px;what=t.textContent;}
  });
});
window.benchbootMeasure=JSON.stringify({px:min,text:what,width:window.innerWidth,svgs:svgs});
"#;

/// The smallest rendered font size, CSS px, of any text in the visible plots of page
/// `file` at window width `width` ([`SMALLEST_TEXT_JS`]): (px, that text, the window's
/// inner width, the number of visible SVGs).
///
/// # Errors
/// As [`measure`], or its answer is not the JSON expected.
pub fn smallest_plot_text(file: &Path, width: u32) -> Result<(f64, String, f64, u64)> {
    let v: serde_json::Value = serde_json::from_str(&measure(file, width, 900, SMALLEST_TEXT_JS)?)?;
    Ok((
        v["px"].as_f64().context("px")?,
        v["text"].as_str().unwrap_or_default().to_owned(),
        v["width"].as_f64().context("width")?,
        v["svgs"].as_u64().context("svgs")?,
    ))
}

/// The measuring script of [`cells_off_screen`]: every visible cell (`th`, `td`) of
/// table `#t1` whose right edge is past the window's inner width (scrolled out of a
/// box or past the page), as `{"width":..,"cells":N,"off":["text",...]}`.
pub const OFF_SCREEN_JS: &str = r##"
var w=document.documentElement.clientWidth,off=[],n=0;
Array.prototype.forEach.call(document.querySelectorAll("#t1 th,#t1 td"),function(c){
  var r=c.getBoundingClientRect();if(r.width===0||r.height===0)return;n++;
  if(r.right>w+1||r.left<-1)off.push(c.textContent.trim().slice(0,40));
});
window.benchbootMeasure=JSON.stringify({width:w,cells:n,off:off});
"##;

/// The visible cells of table `t1` of page `file` lying (partly) outside a `width` px
/// window ([`OFF_SCREEN_JS`]): (the page's client width, visible cells, the texts of
/// those off-screen).
///
/// # Errors
/// As [`measure`], or its answer is not the JSON expected.
pub fn cells_off_screen(file: &Path, width: u32) -> Result<(f64, u64, Vec<String>)> {
    let v: serde_json::Value = serde_json::from_str(&measure(file, width, 900, OFF_SCREEN_JS)?)?;
    Ok((
        v["width"].as_f64().context("width")?,
        v["cells"].as_u64().context("cells")?,
        v["off"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(String::from))
            .collect(),
    ))
}

/// The rows of the table with id `id` in `dom`, each as its cells' text (tags removed,
/// entities `&amp;` `&lt;` `&gt;` `&quot;` `&#39;` decoded). Header rows (`<th>` only)
/// are left out.
pub fn table_rows(dom: &str, id: &str) -> Vec<Vec<String>> {
    let Some(start) = dom.find(&format!("id=\"{id}\"")) else {
        return Vec::new();
    };
    let table = &dom[start..];
    let table = &table[..table.find("</table>").unwrap_or(table.len())];
    table
        .split("<tr")
        .skip(1)
        .filter_map(|row| {
            let cells: Vec<String> = row
                .split("<td")
                .skip(1)
                .map(|c| {
                    let inner = &c[c.find('>').map_or(0, |i| i + 1)..];
                    let inner = &inner[..inner.find("</td>").unwrap_or(inner.len())];
                    decode(&strip_tags(inner))
                })
                .collect();
            (!cells.is_empty()).then_some(cells)
        })
        .collect()
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

fn decode(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Writes to `out` the rows of the PNG `png` in `ranges` (pixel rows, half-open, in
/// order), one under the other: a tall page's top and one of its parts in one picture.
///
/// # Errors
/// The file is not a PNG this decoder reads, or `out` cannot be written.
pub fn png_rows(png: &Path, ranges: &[std::ops::Range<u32>], out: &Path) -> Result<()> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png)?));
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    let row = info.line_size;
    let mut data = Vec::new();
    let mut height = 0u32;
    for r in ranges {
        let (a, b) = (r.start.min(info.height), r.end.min(info.height));
        data.extend_from_slice(&buf[a as usize * row..b as usize * row]);
        height += b - a;
    }
    let mut enc = png::Encoder::new(
        std::io::BufWriter::new(std::fs::File::create(out)?),
        info.width,
        height,
    );
    enc.set_color(info.color_type);
    enc.set_depth(info.bit_depth);
    enc.set_compression(png::Compression::Best);
    enc.write_header()?.write_image_data(&data)?;
    Ok(())
}

/// How many distinct colours a PNG has, counted up to `cap` (a blank page has one).
///
/// # Errors
/// The file is not a PNG this decoder reads.
pub fn png_colours(png: &Path, cap: usize) -> Result<usize> {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(png)?));
    let mut reader = decoder.read_info()?;
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf)?;
    let px = info.color_type.samples();
    let mut seen = std::collections::HashSet::new();
    for p in buf[..info.buffer_size()].chunks(px) {
        seen.insert(p.to_vec());
        if seen.len() >= cap {
            break;
        }
    }
    Ok(seen.len())
}

/// Opens the page `file` headless and asserts what every page of benchboot must be:
/// nothing requested but the file, no console error, the DOM holds `tables` tables and
/// `svgs` inline SVGs (counted as `<table` and `<svg` tags). Returns the load.
///
/// # Panics
/// When any of that fails, naming the file and what was found.
pub fn assert_page(file: &Path, tables: usize, svgs: usize) -> Loaded {
    let url = file_url(file, None).unwrap();
    let loaded = dom(&url).unwrap();
    let leaving = requests_leaving(&loaded, &url);
    assert!(
        leaving.is_empty(),
        "{}: requests left the file: {leaving:?}",
        file.display()
    );
    let errors = console_errors(&loaded);
    assert!(
        errors.is_empty(),
        "{}: console errors: {errors:?}",
        file.display()
    );
    assert_eq!(
        (
            loaded.dom.matches("<table").count(),
            loaded.dom.matches("<svg").count()
        ),
        (tables, svgs),
        "{}: (tables, SVGs) in the DOM",
        file.display()
    );
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_a_serialized_table() {
        let dom = r#"<table class="sortable" id="t2"><thead><tr><th scope="col" aria-sort="descending">a</th></tr></thead><tbody><tr><td><a href="x.html">r&amp;1</a></td><td class="num">2.00</td></tr><tr><td>r2</td><td class="num">1.00</td></tr></tbody></table>"#;
        assert_eq!(
            table_rows(dom, "t2"),
            [vec!["r&1", "2.00"], vec!["r2", "1.00"]]
        );
        assert!(table_rows(dom, "t9").is_empty());
    }

    /// The shape of chromium 156's net log: the page's request (isolation key
    /// `file://`) counts, the browser's updater (`null null`) does not; other event types
    /// are not requests.
    #[test]
    fn urls_of_a_net_log_and_which_leave() {
        let log = r#"{"constants":{"logEventTypes":{"URL_REQUEST_START_JOB":7,"CORS_REQUEST":8}},"events":[
            {"type":7,"params":{"network_isolation_key":"null null","url":"http://update.googleapis.com/service/update2/json"}},
            {"type":7,"params":{"network_isolation_key":"file:// [internally: file://] file:// [internally: file://]","url":"file:///p/r.html"}},
            {"type":7,"params":{"network_isolation_key":"file:// [internally: file://] file:// [internally: file://]","url":"http://203.0.113.9/x.png"}},
            {"type":8,"params":{"network_isolation_key":"file://","url":"http://203.0.113.9/y.png"}},
            {"type":7,"params":{"net_error":-105}}]}"#;
        let loaded = Loaded {
            dom: String::new(),
            console: vec![],
            urls: net_log_urls(log),
        };
        assert_eq!(
            loaded.urls,
            ["file:///p/r.html", "http://203.0.113.9/x.png"]
        );
        assert_eq!(net_log_urls("{not json"), ["<net log unreadable>"]);
        assert_eq!(
            requests_leaving(&loaded, "file:///p/r.html#sort=t1.0.asc"),
            ["http://203.0.113.9/x.png"]
        );
    }
}
