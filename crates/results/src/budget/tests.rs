//! The value budget on the shipped documents and on hostile ones.

use super::*;

/// Values and object keys of `v`, as serde builds them from the text.
fn count(v: &serde_json::Value) -> u64 {
    match v {
        serde_json::Value::Array(a) => 1 + a.iter().map(count).sum::<u64>(),
        serde_json::Value::Object(o) => 1 + o.values().map(|v| 1 + count(v)).sum::<u64>(),
        _ => 1,
    }
}

fn shipped() -> Vec<(String, String)> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut docs = Vec::new();
    for dir in ["host/tests/data", "crates/results/tests/data"] {
        for e in std::fs::read_dir(format!("{root}/{dir}")).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            // Results documents only: a power trace or a card's registers beside them
            // is another kind of file.
            let other = name.ends_with(".power.json") || name.ends_with(".card.json");
            if p.extension().is_some_and(|x| x == "json") && !other {
                docs.push((
                    p.display().to_string(),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    assert!(docs.len() >= 7, "{docs:?}");
    docs
}

/// The pre-scan counts exactly what serde builds, and the shipped documents sit far
/// inside the budget: at least 10 bytes per value, so the budget holds a real
/// document of 20 MiB and more.
#[test]
fn shipped_documents_are_counted_exactly_and_far_inside_the_budget() {
    for (name, text) in shipped() {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let t = tally(text.as_bytes(), MAX_DOCUMENT_VALUES).unwrap();
        assert_eq!(t.values, count(&v), "{name}");
        assert_eq!(t.bytes, text.len() as u64);
        assert!(t.bytes / t.values >= 10, "{name}: {t:?}");
        // A schema 1.13 QEMU run with every section (qemu-virt-arm64-1.13.json) holds
        // 64,164 values, 1.7 MB: 32 times below the budget.
        assert!(t.values < MAX_DOCUMENT_VALUES / 20, "{name}: {t:?}");
        crate::RunResults::from_json(&text).unwrap();
    }
}

#[test]
fn strings_escapes_and_scalars_are_counted_as_serde_lexes_them() {
    let cases: [(&str, u64); 9] = [
        ("", 0),
        ("0", 1),
        ("[]", 1),
        ("[0,1.5e3,-2,true,null]", 6),
        (r#"{"a":"x\"]],[{","b":[{}]}"#, 6),
        (r#"["\\",1]"#, 3),
        (r#"{"k\\\"":{"n":[[],[[]]]}}"#, 8),
        (" [ 1 , 2 ] ", 3),
        ("[\"é\u{202e}\",\"\"]", 3),
    ];
    for (text, want) in cases {
        assert_eq!(tally(text.as_bytes(), 100).unwrap().values, want, "{text}");
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(text) {
            assert_eq!(count(&v), want, "{text}");
        }
    }
}

/// Fed in pieces, split anywhere (inside a string, an escape, a number), the count
/// and the refusal are those of the whole text.
#[test]
fn pieces_count_as_the_whole() {
    let text = br#"{"a\"b":[12,345,"x\\",{"c":[true,false,null]}],"d":"\\\""}"#;
    let whole = tally(text, 100).unwrap();
    for cut in 0..=text.len() {
        let mut c = Counter::new(100);
        c.feed(&text[..cut]).unwrap();
        c.feed(&text[cut..]).unwrap();
        assert_eq!(c.tally(), whole, "cut at {cut}");
        let mut tight = Counter::new(whole.values - 1);
        let e = tight
            .feed(&text[..cut])
            .and_then(|()| tight.feed(&text[cut..]))
            .unwrap_err();
        assert_eq!(e.at, tally(text, whole.values - 1).unwrap_err().at);
        assert!(tight.feed(b"").is_err(), "a refused counter stays refused");
    }
}

/// 64 MiB of `0,`: 33 million values in the byte bound. The scan stops at the value
/// past the budget, having read 2 bytes per value and no further.
#[test]
fn a_dense_document_is_refused_where_the_budget_runs_out() {
    let mut text = Vec::with_capacity(crate::MAX_DOCUMENT_BYTES as usize);
    text.push(b'[');
    while text.len() + 2 < crate::MAX_DOCUMENT_BYTES as usize {
        text.extend_from_slice(b"0,");
    }
    text.push(b'0');
    text.push(b']');
    let e = tally(&text, MAX_DOCUMENT_VALUES).unwrap_err();
    // `[` is value 1, the k-th `0` (k from 1) value k + 1 at byte 2k - 1.
    assert_eq!(
        e,
        TooManyValues {
            max: MAX_DOCUMENT_VALUES,
            at: 2 * MAX_DOCUMENT_VALUES - 1,
            len: text.len() as u64,
        }
    );
    assert_eq!(
        e.to_string(),
        "more than 2097152 values (JSON values and keys) by byte 4194303: a results \
         document holds some hundred thousand; this one is damaged or crafted"
    );
    let text = String::from_utf8(text).unwrap();
    let err = crate::RunResults::from_json(&text).unwrap_err();
    assert!(
        matches!(err, crate::ResultsError::TooManyValues(t) if t == e),
        "{err}"
    );
}

/// A shape error quoted the whole offending string: a 1 MiB `run_id` of the wrong
/// type made a 1 MiB error line.
#[test]
fn error_lines_quote_at_most_a_few_hundred_characters() {
    let doc = crate::tests::sample().to_json();
    let long = "x".repeat(1 << 20);
    let bad = doc.replacen(
        "\"complete\": false",
        &format!("\"complete\": \"{long}\""),
        1,
    );
    assert_ne!(bad, doc);
    let e = crate::RunResults::from_json(&bad).unwrap_err().to_string();
    assert!(e.len() < 400, "{} bytes", e.len());
    assert!(e.contains("… (1048"), "{e}");
    let bad = doc.replacen("\"major\": 1", &format!("\"major\": \"{long}\""), 1);
    let e = crate::RunResults::from_json(&bad).unwrap_err().to_string();
    assert!(e.len() < 200, "{e}");
    assert_eq!(clip("abcdef", 3), "abc… (3 more characters)");
    assert_eq!(clip("abc", 3), "abc");
    assert_eq!(clip("ééé", 1), "é… (2 more characters)");
}
