//! A Rust source file as the tidy rules read it: the code with every comment and the
//! contents of every string and char literal blanked to spaces (so byte offsets and line
//! numbers still match the file), the comments with the line each starts on, and the
//! code's tokens (identifiers and punctuation, `::` as one token). Not a full Rust
//! lexer: enough that the word `unsafe` in a comment or a string is not code, and a
//! lifetime `'a` is not a char literal.

/// One file lexed: `code` is `src` with comments and literal contents replaced by
/// spaces (newlines kept); `comments` are `(1-based line, text)` in file order.
pub struct Lexed {
    pub code: String,
    pub comments: Vec<(usize, String)>,
}

/// One token of the blanked code: `text` is an identifier (or number) or one
/// punctuation character, `::` kept whole; `at` is its byte offset in the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tok<'a> {
    pub text: &'a str,
    pub at: usize,
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn blank(out: &mut [u8], from: usize, to: usize) {
    for b in &mut out[from..to] {
        if *b != b'\n' {
            *b = b' ';
        }
    }
}

/// Where a `"`-string starting at `open` (the quote) ends: the index of its closing quote
/// (or the end of the file).
fn string_end(b: &[u8], open: usize) -> usize {
    let mut j = open + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 2,
            b'"' => return j,
            _ => j += 1,
        }
    }
    b.len()
}

/// Splits `src` into blanked code and comments (see [`Lexed`]).
pub fn lex(src: &str) -> Lexed {
    let b = src.as_bytes();
    let n = b.len();
    let mut out = b.to_vec();
    let mut comments = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < n {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c == b'/' && next == Some(b'/') {
            let j = src[i..].find('\n').map_or(n, |k| i + k);
            comments.push((line, src[i..j].to_string()));
            blank(&mut out, i, j);
            i = j;
        } else if c == b'/' && next == Some(b'*') {
            let (mut j, mut depth) = (i + 2, 1);
            while j < n && depth > 0 {
                if b[j] == b'/' && b.get(j + 1) == Some(&b'*') {
                    depth += 1;
                    j += 2;
                } else if b[j] == b'*' && b.get(j + 1) == Some(&b'/') {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            let j = j.min(n);
            comments.push((line, src[i..j].to_string()));
            line += src[i..j].matches('\n').count();
            blank(&mut out, i, j);
            i = j;
        } else if c == b'"' {
            let j = string_end(b, i);
            line += src[i..j].matches('\n').count();
            blank(&mut out, i + 1, j);
            i = j + 1;
        } else if c == b'\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime / label ('a).
            let end = if next == Some(b'\\') {
                b[i + 2..]
                    .iter()
                    .position(|&x| x == b'\'')
                    .map(|k| i + 2 + k)
            } else {
                let len = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + len) == Some(&b'\'')).then_some(i + 1 + len)
            };
            match end {
                Some(j) => {
                    blank(&mut out, i + 1, j);
                    i = j + 1;
                }
                None => i += 1,
            }
        } else if is_ident(c) {
            let mut j = i;
            while j < n && is_ident(b[j]) {
                j += 1;
            }
            let word = &src[i..j];
            let raw = matches!(word, "r" | "br" | "cr");
            if raw && matches!(b.get(j), Some(b'"') | Some(b'#')) {
                let hashes = b[j..].iter().take_while(|&&x| x == b'#').count();
                if b.get(j + hashes) == Some(&b'"') {
                    let body = j + hashes + 1;
                    let close = format!("\"{}", "#".repeat(hashes));
                    let k = src[body..].find(&close).map_or(n, |k| body + k);
                    line += src[i..k].matches('\n').count();
                    blank(&mut out, body, k);
                    i = (k + close.len()).min(n);
                    continue;
                }
            }
            // b"..", c"..", b'..': the prefix is skipped, the literal handled next round.
            i = j;
        } else {
            i += 1;
        }
    }
    Lexed {
        code: String::from_utf8(out).expect("blanking keeps UTF-8"),
        comments,
    }
}

/// The tokens of blanked `code` (from [`lex`]), whitespace dropped.
pub fn tokens(code: &str) -> Vec<Tok<'_>> {
    let b = code.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if is_ident(c) {
            let mut j = i;
            while j < b.len() && is_ident(b[j]) {
                j += 1;
            }
            toks.push(Tok {
                text: &code[i..j],
                at: i,
            });
            i = j;
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            toks.push(Tok { text: "::", at: i });
            i += 2;
        } else {
            toks.push(Tok {
                text: &code[i..i + 1],
                at: i,
            });
            i += 1;
        }
    }
    toks
}

/// `code` with every `#[cfg(test)] mod name { .. }` blanked.
pub fn without_test_modules(code: &str) -> String {
    let mut out = code.as_bytes().to_vec();
    let mut from = 0;
    while let Some(k) = code[from..].find("#[cfg(test)]") {
        let at = from + k;
        from = at + 1;
        let toks = tokens(&code[at..]);
        // #, [, cfg, (, test, ), ], then maybe `pub`, `mod`, name, `{`.
        let rest: Vec<&str> = toks.iter().skip(7).take(4).map(|t| t.text).collect();
        let brace = match rest.as_slice() {
            ["mod", _, "{", ..] => 9,
            ["pub", "mod", _, "{"] => 10,
            _ => continue,
        };
        let mut depth = 0;
        for t in &toks[brace..] {
            match t.text {
                "{" => depth += 1,
                "}" => {
                    depth -= 1;
                    if depth == 0 {
                        let end = at + t.at + 1;
                        for b in &mut out[at..end] {
                            if *b != b'\n' {
                                *b = b' ';
                            }
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// The 1-based line of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    1 + text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_literals_are_not_code() {
        let src = "let a = \"unsafe { }\"; // unsafe here\n/* unsafe\n */ let c = '\"';\n\
                   let r = r#\"unsafe\"#; fn f<'a>(x: &'a str) -> char { 'u' }\n";
        let l = lex(src);
        assert_eq!(l.code.len(), src.len());
        assert!(!l.code.contains("unsafe"), "{}", l.code);
        assert_eq!(l.code.lines().count(), src.lines().count());
        assert!(l.code.contains("fn f<'a>(x: &'a str)"), "{}", l.code);
        assert_eq!(
            l.comments,
            vec![
                (1, "// unsafe here".to_string()),
                (2, "/* unsafe\n */".to_string())
            ]
        );
        let words: Vec<_> = tokens(&l.code).iter().map(|t| t.text).collect();
        assert_eq!(&words[..4], ["let", "a", "=", "\""]);
        assert_eq!(line_of(src, src.find("let r").unwrap()), 4);
    }
}
