//! The one HTTP request-head parser of benchboot's two servers, and the results
//! server's answers: PID 1's read-only results server (`firmware/src/http.rs`, HTTP/1.0
//! `GET` of one document) and the blob server of the HTTP test ([`super::answer`]).
//!
//! [`parse_request`] is bounded in size, line length and header count and decides every
//! head within [`MAX_REQUEST`] bytes; [`respond`] builds the results server's whole
//! response. Both are pure: unit-tested here, fuzzed by `fuzz/`'s `http_request`.

use super::MAX_REQUEST;

/// The path the results are served at.
pub const RESULTS_PATH: &str = "/results.json";
/// Longest request line or header line, bytes (without its line ending).
pub const MAX_LINE: usize = 2048;
/// Most header lines a request may carry.
pub const MAX_HEADERS: usize = 64;
/// A request head that parsed: the request line's three words. Headers are checked for
/// shape and count but not kept: nothing here depends on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request<'a> {
    pub method: &'a str,
    /// The request target, origin form (`/results.json`).
    pub path: &'a str,
    /// `HTTP/1.0` or `HTTP/1.1`.
    pub version: &'a str,
}

/// Why a request head is refused; [`Error::status`] is the answer sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No empty line yet: read more (at the end of the stream, a 400).
    #[error("request head not terminated by an empty line (CRLF CRLF)")]
    Incomplete,
    #[error("request head longer than {MAX_REQUEST} bytes")]
    HeadTooLarge,
    #[error("request line longer than {MAX_LINE} bytes")]
    RequestLineTooLong,
    #[error("header line longer than {MAX_LINE} bytes")]
    HeaderLineTooLong,
    #[error("more than {MAX_HEADERS} header lines")]
    TooManyHeaders,
    #[error("request line is not `METHOD /path HTTP/1.x`")]
    BadRequestLine,
    #[error("header line is not `Name: value`")]
    BadHeader,
    #[error("request target is not an absolute path without `..` segments")]
    BadPath,
}

impl Error {
    /// The status line's code and reason for this refusal.
    pub fn status(self) -> &'static str {
        match self {
            Error::RequestLineTooLong => "414 URI Too Long",
            Error::HeadTooLarge | Error::HeaderLineTooLong | Error::TooManyHeaders => {
                "431 Request Header Fields Too Large"
            }
            Error::Incomplete | Error::BadRequestLine | Error::BadHeader | Error::BadPath => {
                "400 Bad Request"
            }
        }
    }
}

/// Parses the request head at the start of `buf` (anything after the empty line, a body,
/// is ignored). Lines end in CRLF; a bare LF is accepted too (RFC 9112 §2.2).
///
/// # Errors
/// [`Error::Incomplete`] while `buf` holds no empty line and no bound is broken yet (the
/// caller reads more); the other [`Error`]s as soon as a bound or the grammar is broken,
/// so a caller never needs to hold more than [`MAX_REQUEST`] bytes.
pub fn parse_request(buf: &[u8]) -> Result<Request<'_>, Error> {
    let mut request_line: Option<&[u8]> = None;
    let mut headers = 0usize;
    let mut start = 0usize;
    loop {
        let rest = &buf[start..];
        let Some(nl) = rest.iter().position(|&b| b == b'\n') else {
            // A partial line: refuse as soon as it is too long to ever fit.
            return Err(if rest.len() > MAX_LINE + 1 {
                if request_line.is_none() {
                    Error::RequestLineTooLong
                } else {
                    Error::HeaderLineTooLong
                }
            } else if buf.len() > MAX_REQUEST {
                Error::HeadTooLarge
            } else {
                Error::Incomplete
            });
        };
        let end = start + nl + 1;
        if end > MAX_REQUEST {
            return Err(Error::HeadTooLarge);
        }
        let line = rest[..nl].strip_suffix(b"\r").unwrap_or(&rest[..nl]);
        start = end;
        if line.len() > MAX_LINE {
            return Err(if request_line.is_none() {
                Error::RequestLineTooLong
            } else {
                Error::HeaderLineTooLong
            });
        }
        match request_line {
            // Blank lines before the request line are ignored (RFC 9112 §2.2), within
            // the size bound.
            None if line.is_empty() => {}
            None => request_line = Some(line),
            Some(first) if line.is_empty() => return request(first),
            Some(_) => {
                headers += 1;
                if headers > MAX_HEADERS {
                    return Err(Error::TooManyHeaders);
                }
                check_header(line)?;
            }
        }
    }
}

/// `METHOD SP target SP HTTP/1.x`, ASCII, single spaces.
fn request(line: &[u8]) -> Result<Request<'_>, Error> {
    if !line.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        return Err(Error::BadRequestLine);
    }
    // Only ASCII, checked above.
    let line = std::str::from_utf8(line).map_err(|_| Error::BadRequestLine)?;
    let mut words = line.split(' ');
    let (Some(method), Some(path), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(Error::BadRequestLine);
    };
    let token = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
    };
    if !token(method) || !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(Error::BadRequestLine);
    }
    if !path.starts_with('/') || path.starts_with("//") || traverses(path) {
        return Err(Error::BadPath);
    }
    Ok(Request {
        method,
        path,
        version,
    })
}

/// True when a segment of the path (query excluded) is `..` or `.`, also percent-encoded.
fn traverses(path: &str) -> bool {
    let path = path.split(['?', '#']).next().unwrap_or("");
    path.split('/').any(|segment| {
        let decoded = segment.to_ascii_lowercase().replace("%2e", ".");
        decoded == ".." || decoded == "."
    })
}

/// `name: value` with a token name and no control characters but tab in the value.
fn check_header(line: &[u8]) -> Result<(), Error> {
    let colon = line
        .iter()
        .position(|&b| b == b':')
        .ok_or(Error::BadHeader)?;
    let (name, value) = (&line[..colon], &line[colon + 1..]);
    let name_ok = !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b));
    let value_ok = value
        .iter()
        .all(|&b| b == b'\t' || (b >= 0x20 && b != 0x7f));
    if name_ok && value_ok {
        Ok(())
    } else {
        Err(Error::BadHeader)
    }
}

/// Builds the full response for one request head as read from the socket
/// (`GET /results.json HTTP/1.1\r\n...\r\n\r\n`). `GET` of [`RESULTS_PATH`] or `/`
/// returns the body; other paths 404; other methods 405; a head that does not parse
/// (including one cut short) gets the status of its [`Error`].
pub fn respond(head: &[u8], body: &str) -> String {
    let (status, content_type, body) = match parse_request(head) {
        Ok(Request {
            method: "GET",
            path: RESULTS_PATH | "/",
            ..
        }) => ("200 OK", "application/json", body),
        Ok(Request { method: "GET", .. }) => (
            "404 Not Found",
            "text/plain",
            "not found: try /results.json\n",
        ),
        Ok(_) => (
            "405 Method Not Allowed",
            "text/plain",
            "read-only: GET only\n",
        ),
        Err(e) => (e.status(), "text/plain", "bad request: GET /results.json\n"),
    };
    let allow = if status.starts_with("405") {
        "Allow: GET\r\n"
    } else {
        ""
    };
    format!(
        "HTTP/1.0 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(head: &[u8]) -> String {
        let r = respond(head, "{}");
        r.lines().next().unwrap_or("").to_owned()
    }

    #[test]
    fn get_results() {
        let r = respond(
            b"GET /results.json HTTP/1.1\r\nHost: x\r\n\r\n",
            "{\"a\":1}",
        );
        assert!(r.starts_with("HTTP/1.0 200 OK\r\n"), "{r}");
        assert!(r.contains("Content-Length: 7\r\n"));
        assert!(r.ends_with("\r\n\r\n{\"a\":1}"));
        assert_eq!(status(b"GET / HTTP/1.0\r\n\r\n"), "HTTP/1.0 200 OK");
    }

    #[test]
    fn other_path_is_404_and_post_is_405() {
        assert_eq!(
            status(b"GET /etc/passwd HTTP/1.0\r\n\r\n"),
            "HTTP/1.0 404 Not Found"
        );
        let r = respond(b"POST /results.json HTTP/1.0\r\n\r\n", "x");
        assert!(r.starts_with("HTTP/1.0 405"), "{r}");
        assert!(r.contains("Allow: GET\r\n"), "{r}");
        assert_eq!(status(b""), "HTTP/1.0 400 Bad Request");
    }

    #[test]
    fn parses_the_request_line() {
        let head = b"GET /results.json HTTP/1.1\r\nHost: 10.55.0.1:8080\r\nAccept: */*\r\n\r\n";
        assert_eq!(
            parse_request(head),
            Ok(Request {
                method: "GET",
                path: "/results.json",
                version: "HTTP/1.1"
            })
        );
        // A body after the head is ignored; bare LF line endings are accepted.
        assert!(parse_request(b"GET / HTTP/1.0\r\n\r\nbody").is_ok());
        assert!(parse_request(b"GET / HTTP/1.0\nHost: x\n\n").is_ok());
        assert!(parse_request(b"\r\nGET / HTTP/1.0\r\n\r\n").is_ok());
    }

    #[test]
    fn incomplete_until_the_empty_line() {
        let full = b"GET /results.json HTTP/1.1\r\nHost: x\r\n\r\n";
        for cut in 0..full.len() {
            assert_eq!(parse_request(&full[..cut]), Err(Error::Incomplete), "{cut}");
        }
        assert!(parse_request(full).is_ok());
    }

    #[test]
    fn bounds() {
        let long_line = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_LINE));
        assert_eq!(
            parse_request(long_line.as_bytes()),
            Err(Error::RequestLineTooLong)
        );
        // Refused before the line ends, so the server stops reading.
        let partial = "G".repeat(MAX_LINE + 2);
        assert_eq!(
            parse_request(partial.as_bytes()),
            Err(Error::RequestLineTooLong)
        );
        let long_header = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "v".repeat(MAX_LINE));
        assert_eq!(
            parse_request(long_header.as_bytes()),
            Err(Error::HeaderLineTooLong)
        );
        let flood = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: y\r\n".repeat(MAX_HEADERS + 1)
        );
        assert_eq!(parse_request(flood.as_bytes()), Err(Error::TooManyHeaders));
        let ok = format!("GET / HTTP/1.1\r\n{}\r\n", "X: y\r\n".repeat(MAX_HEADERS));
        assert!(parse_request(ok.as_bytes()).is_ok());
        // Many short blank-line-free lines of headers under the count but over the size.
        let big = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            format!("X: {}\r\n", "v".repeat(MAX_LINE - 3)).repeat(5)
        );
        assert_eq!(parse_request(big.as_bytes()), Err(Error::HeadTooLarge));
        // Leading blank lines count against the size bound.
        let blanks = "\r\n".repeat(MAX_REQUEST);
        assert_eq!(parse_request(blanks.as_bytes()), Err(Error::HeadTooLarge));
        assert_eq!(
            Error::TooManyHeaders.status(),
            "431 Request Header Fields Too Large"
        );
        assert_eq!(Error::RequestLineTooLong.status(), "414 URI Too Long");
    }

    #[test]
    fn grammar() {
        for bad in [
            &b"GET /results.json\r\n\r\n"[..],
            b"GET  /results.json HTTP/1.1\r\n\r\n",
            b"GET /results.json HTTP/2\r\n\r\n",
            b"GET /results.json HTTP/1.1 extra\r\n\r\n",
            b"G\xc3\xa9T / HTTP/1.1\r\n\r\n",
            b"GET /\x01 HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(parse_request(bad), Err(Error::BadRequestLine), "{bad:?}");
        }
        for bad in [
            &b"GET / HTTP/1.1\r\nno colon\r\n\r\n"[..],
            b"GET / HTTP/1.1\r\n: empty name\r\n\r\n",
            b"GET / HTTP/1.1\r\n folded: x\r\n\r\n",
            b"GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n",
        ] {
            assert_eq!(parse_request(bad), Err(Error::BadHeader), "{bad:?}");
        }
    }

    #[test]
    fn traversal_and_odd_targets_refused() {
        for bad in [
            "/../etc/passwd",
            "/a/../results.json",
            "/%2e%2e/etc/passwd",
            "/.%2E/x",
            "/./results.json",
            "results.json",
            "http://board/results.json",
            "//results.json",
            "*",
        ] {
            let head = format!("GET {bad} HTTP/1.1\r\n\r\n");
            assert_eq!(parse_request(head.as_bytes()), Err(Error::BadPath), "{bad}");
            assert_eq!(status(head.as_bytes()), "HTTP/1.0 400 Bad Request", "{bad}");
        }
        // `..` inside a name is not a segment.
        assert!(parse_request(b"GET /a..b HTTP/1.1\r\n\r\n").is_ok());
    }
}
