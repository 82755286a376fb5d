//! Hex text as the kernel prints a register, turned into bytes, and bit fields read the
//! way the SD specification numbers them (bit 0 is the last bit of the register).

/// Parses `text` (surrounding whitespace and an optional `0x` ignored) as exactly
/// `digits` hex digits; the error names the register and the expected length.
pub(crate) fn parse(register: &str, text: &str, digits: usize) -> Result<Vec<u8>, String> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    if !t.is_ascii() || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!(
            "{register}: not hex (expected {digits} hex digits, got {:?})",
            shorten(t)
        ));
    }
    if t.len() != digits {
        return Err(format!(
            "{register}: {} hex digits, expected {digits}",
            t.len()
        ));
    }
    let bytes = t.as_bytes();
    Ok(bytes
        .chunks(2)
        .map(|pair| (nibble(pair[0]) << 4) | nibble(pair[1]))
        .collect())
}

fn nibble(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        b'a'..=b'f' => b - b'a' + 10,
        b'A'..=b'F' => b - b'A' + 10,
        _ => 0,
    }
}

fn shorten(t: &str) -> String {
    t.chars().take(40).collect()
}

/// Lower-case hex of `bytes`, as the kernel prints them.
pub(crate) fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A register's bytes, most significant first, read by the specification's bit numbers.
pub(crate) struct Bits<'a>(pub(crate) &'a [u8]);

impl Bits<'_> {
    /// Bit `i` (0 = least significant bit of the whole register); 0 when out of range.
    pub(crate) fn bit(&self, i: usize) -> u64 {
        let len = self.0.len();
        if i / 8 >= len {
            return 0;
        }
        u64::from((self.0[len - 1 - i / 8] >> (i % 8)) & 1)
    }

    /// The field `[high:low]` of the specification's tables, as a number.
    pub(crate) fn field(&self, high: usize, low: usize) -> u64 {
        (low..=high)
            .rev()
            .fold(0, |acc, i| (acc << 1) | self.bit(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        assert_eq!(
            parse("ocr", "0x00300000\n", 8).unwrap(),
            vec![0, 0x30, 0, 0]
        );
        assert!(parse("scr", "abc", 16).unwrap_err().contains("expected 16"));
        assert!(parse("scr", "zz", 16).unwrap_err().contains("not hex"));
        assert!(parse("cid", "ü", 32).is_err());
    }

    #[test]
    fn fields_use_spec_numbering() {
        let b = [0x80, 0x01];
        let bits = Bits(&b);
        assert_eq!(bits.bit(15), 1);
        assert_eq!(bits.bit(0), 1);
        assert_eq!(bits.field(15, 14), 0b10);
        assert_eq!(bits.field(99, 98), 0);
    }
}
