//! The host tool's one HTTP GET of what a board or a lab serves (`fetch`, `collect
//! --addr`, `collect --from-lava URL`): no redirect is followed (a board never redirects;
//! ureq 2.12 panicked on a `Location: file:///etc/passwd`, and a redirect would carry the
//! request elsewhere), the body is read within a bound and refused past it (never cut
//! silently), and a failure is one sentence in plain words with the address once.

use std::io::Read;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Result};

/// One GET.
#[derive(Debug, Clone, Copy)]
pub struct Get<'a> {
    /// The URL requested.
    pub url: &'a str,
    /// The URL as messages print it (a zoned IPv6 address the request URL cannot hold).
    pub shown: &'a str,
    /// Connect and whole-answer timeout.
    pub timeout: Duration,
    /// Connect here whatever the URL's host says (a board's address with an IPv6 zone,
    /// which a URL cannot carry); `None`: resolve the URL's host.
    pub at: Option<SocketAddr>,
    /// `Authorization: Token ...` (a LAVA API token).
    pub token: Option<&'a str>,
    /// The longest body, bytes: one byte more is refused.
    pub max_bytes: u64,
    /// What the body is, for messages: "a results document", "a benchboot run's job log".
    pub what: &'a str,
    /// What to check when nothing answers, appended to the message.
    pub hint: &'a str,
}

/// A transport failure in words: what happened, never ureq's chain.
fn transport_words(t: &ureq::Transport, timeout: Duration) -> String {
    use std::io::ErrorKind as K;
    let io = std::error::Error::source(t).and_then(|s| s.downcast_ref::<std::io::Error>());
    match (t.kind(), io.map(std::io::Error::kind)) {
        (_, Some(K::ConnectionRefused)) => "nothing listens there (connection refused)".into(),
        (_, Some(K::TimedOut | K::WouldBlock)) => {
            format!("no answer within {} s", timeout.as_secs())
        }
        (_, Some(K::HostUnreachable | K::NetworkUnreachable)) => "no route to it".into(),
        (_, Some(K::ConnectionReset | K::ConnectionAborted | K::UnexpectedEof)) => {
            "the connection was closed before a whole answer came".into()
        }
        (ureq::ErrorKind::Dns, _) => "the name does not resolve".into(),
        (ureq::ErrorKind::BadStatus | ureq::ErrorKind::BadHeader, _) => {
            "the answer is not HTTP".into()
        }
        (ureq::ErrorKind::InvalidUrl | ureq::ErrorKind::UnknownScheme, _) => {
            "not an http:// or https:// address".into()
        }
        (_, Some(_)) => benchboot_input::os_words(io.unwrap_or_else(|| unreachable!())),
        (kind, None) => t.message().map_or_else(|| kind.to_string(), str::to_owned),
    }
}

/// GETs `g.url` and gives its body.
///
/// # Errors
/// No answer (in words, with `g.hint`), an answer other than 200 (a redirect names where
/// it points, escaped), or a body longer than `g.max_bytes`.
pub fn get(g: &Get<'_>) -> Result<Vec<u8>> {
    let mut agent = ureq::AgentBuilder::new().timeout(g.timeout).redirects(0);
    if let Some(at) = g.at {
        agent = agent.resolver(move |_: &str| Ok(vec![at]));
    }
    let mut req = agent.build().get(g.url);
    if let Some(t) = g.token {
        req = req.set("Authorization", &format!("Token {t}"));
    }
    let url = g.shown;
    let resp = match req.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(code, r)) => {
            bail!(
                "GET {url}: the server answered {code} {}",
                escaped(r.status_text())
            )
        }
        Err(ureq::Error::Transport(t)) => {
            bail!("GET {url}: {}{}", transport_words(&t, g.timeout), g.hint)
        }
    };
    if resp.status() != 200 {
        let (code, text) = (resp.status(), escaped(resp.status_text()));
        match resp.header("location") {
            Some(to) => bail!(
                "GET {url}: the server answered {code} {text}, a redirect to {}: benchboot \
                 follows no redirect; give that address if it is the one you mean",
                escaped(to)
            ),
            None => bail!("GET {url}: the server answered {code} {text}, not 200 OK"),
        }
    }
    let mut body = Vec::new();
    resp.into_reader()
        .take(g.max_bytes + 1)
        .read_to_end(&mut body)
        .map_err(|e| {
            anyhow::anyhow!(
                "GET {url}: reading the answer: {}",
                benchboot_input::os_words(&e)
            )
        })?;
    if body.len() as u64 > g.max_bytes {
        bail!(
            "GET {url}: the answer is over {}, more than {} can be: is this the right \
             address?",
            benchboot_input::size_text(g.max_bytes),
            g.what
        );
    }
    Ok(body)
}

fn escaped(s: &str) -> String {
    let cut: String = s.chars().take(200).collect();
    benchboot_results::text::escape(&cut).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    /// Answers every connection with `answer` (a whole HTTP response), on a free port.
    fn serve(answer: &'static [u8]) -> String {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            for s in l.incoming().flatten() {
                let mut s = s;
                let mut buf = [0u8; 4096];
                let _ = std::io::Read::read(&mut s, &mut buf);
                let _ = s.write_all(answer);
            }
        });
        addr
    }

    fn get_from(addr: &str, max: u64) -> Result<Vec<u8>> {
        let url = format!("http://{addr}/results.json");
        get(&Get {
            url: &url,
            shown: &url,
            timeout: Duration::from_secs(5),
            at: None,
            token: None,
            max_bytes: max,
            what: "a results document",
            hint: ": is the board up?",
        })
    }

    #[test]
    fn a_redirect_is_said_and_never_followed() {
        // ureq 2.12 panicked following a Location with no host.
        let addr = serve(
            b"HTTP/1.1 302 Found\r\nLocation: file:///etc/passwd\r\nContent-Length: 0\r\n\r\n",
        );
        let e = format!("{:#}", get_from(&addr, 100).unwrap_err());
        assert!(
            e.ends_with("answered 302 Found, a redirect to file:///etc/passwd: benchboot follows no redirect; give that address if it is the one you mean"),
            "{e}"
        );
    }

    #[test]
    fn nothing_listening_is_one_plain_sentence() {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let e = format!(
            "{:#}",
            get_from(&format!("127.0.0.1:{port}"), 100).unwrap_err()
        );
        assert_eq!(
            e,
            format!(
                "GET http://127.0.0.1:{port}/results.json: nothing listens there (connection \
                 refused): is the board up?"
            )
        );
    }

    #[test]
    fn a_body_past_the_bound_is_refused_one_at_it_read() {
        let addr = serve(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
        assert_eq!(get_from(&addr, 5).unwrap(), b"hello");
        let e = format!("{:#}", get_from(&addr, 4).unwrap_err());
        assert!(
            e.contains("the answer is over 4 bytes, more than a results document can be"),
            "{e}"
        );
        // Not 200 and no redirect: said as what it is.
        let addr = serve(b"HTTP/1.1 204 No Content\r\n\r\n");
        let e = format!("{:#}", get_from(&addr, 4).unwrap_err());
        assert!(
            e.ends_with("the server answered 204 No Content, not 200 OK"),
            "{e}"
        );
        let addr = serve(b"HTTP/1.1 404 Not \x1b[2JFound\r\nContent-Length: 0\r\n\r\n");
        let e = format!("{:#}", get_from(&addr, 4).unwrap_err());
        assert!(
            e.ends_with("the server answered 404 Not \\u{1b}[2JFound"),
            "{e}"
        );
    }
}
