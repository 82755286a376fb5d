//! How figures print as words, wherever they appear: block sizes (`4 KiB`) and counts
//! with thousands separators (`12,345`).

/// "8 B", "4 KiB", "1 MiB".
pub fn block_size_label(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if bytes >= size && bytes.is_multiple_of(size) {
            return format!("{} {unit}", bytes / size);
        }
    }
    format!("{bytes} B")
}

/// `12345` → `12,345`.
pub fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_labels() {
        assert_eq!(block_size_label(8), "8 B");
        assert_eq!(block_size_label(4096), "4 KiB");
        assert_eq!(block_size_label(1 << 20), "1 MiB");
        assert_eq!(block_size_label(1536), "1536 B");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1_000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
        assert_eq!(grouped(u64::MAX), "18,446,744,073,709,551,615");
    }
}
