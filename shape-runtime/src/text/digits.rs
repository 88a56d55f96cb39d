//! Bytes written as decimal digits: the text of what a model copies back (cursors, handles,
//! delimiter nonces), chosen so that its token count depends on its length alone.
//!
//! Base64 of random bytes tokenizes unpredictably: 20 random base64url characters are 10 to
//! 20 o200k tokens (median 14), so a page holding a fresh cursor or handle would hold a
//! different number of records from one call to the next. The tiktoken vocabularies split a
//! run of digits into groups of three from its start, and every group of one to three digits
//! is one token (checked for o200k_base and cl100k_base in the test suite), so `n` digits
//! are exactly ⌈n/3⌉ tokens whatever they say, and carry about 10 bits a token against
//! base64's 8.6 on average.
//!
//! Bytes are written in chunks of 7 (56 bits, 17 digits, zero-padded), the last chunk of
//! `k < 7` bytes in as few digits as its largest value needs; 2.43 digits a byte.
//!
//! ```
//! use toolshape::__private::digits;
//!
//! let text = digits::encode(&[0xff; 15]);
//! assert_eq!(text.len(), digits::encoded_len(15));
//! assert_eq!(text.len(), 37);
//! assert_eq!(digits::decode(&text), Some(vec![0xff; 15]));
//! assert_eq!(digits::decode("99999999999999999"), None); // over 2^56: never written
//! ```

/// Bytes in a full chunk.
const CHUNK: usize = 7;
/// Digits of a full chunk: 2^56 − 1 has 17.
const CHUNK_DIGITS: usize = 17;
/// Digits of a last chunk of `k` bytes (index `k`, 1 to 6): those of 2^(8k) − 1.
const TAIL_DIGITS: [usize; CHUNK] = [0, 3, 5, 8, 10, 13, 15];

/// How many digits `bytes` bytes are written as.
pub const fn encoded_len(bytes: usize) -> usize {
    bytes / CHUNK * CHUNK_DIGITS + TAIL_DIGITS[bytes % CHUNK]
}

/// `bytes` as decimal digits, [`encoded_len`] of them.
pub fn encode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(encoded_len(bytes.len()));
    encode_into(bytes, &mut out);
    out
}

/// Appends `bytes` as decimal digits to `out`.
pub fn encode_into(bytes: &[u8], out: &mut String) {
    use std::fmt::Write as _;
    for chunk in bytes.chunks(CHUNK) {
        let value = chunk.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
        let width = if chunk.len() == CHUNK {
            CHUNK_DIGITS
        } else {
            TAIL_DIGITS[chunk.len()]
        };
        // Writing to a String cannot fail.
        let _ = write!(out, "{value:0width$}");
    }
}

/// The bytes `text` encodes; `None` unless it is exactly what [`encode`] writes for some
/// bytes (digits only, a length a chunking gives, each chunk within its byte count).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    let digits = text.as_bytes();
    if !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let tail_digits = digits.len() % CHUNK_DIGITS;
    let tail_bytes = TAIL_DIGITS.iter().position(|&d| d == tail_digits)?;
    let mut out = Vec::with_capacity(digits.len() / CHUNK_DIGITS * CHUNK + tail_bytes);
    for chunk in digits.chunks(CHUNK_DIGITS) {
        let bytes = if chunk.len() == CHUNK_DIGITS {
            CHUNK
        } else {
            tail_bytes
        };
        let value = chunk
            .iter()
            .fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
        if value >> (8 * bytes) != 0 {
            return None;
        }
        out.extend_from_slice(&value.to_be_bytes()[8 - bytes..]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_round_trips_at_the_edges_of_each_chunk() {
        for len in 0..=40 {
            for fill in [0x00u8, 0x01, 0x7f, 0xff] {
                let bytes = vec![fill; len];
                let text = encode(&bytes);
                assert_eq!(text.len(), encoded_len(len), "{len}");
                assert_eq!(decode(&text), Some(bytes), "{len} {fill}");
            }
        }
    }

    #[test]
    fn what_encode_never_writes_is_refused() {
        // Lengths no chunking gives: 1, 2, 4, 6, 7, 9, 11, 12, 14, 16 digits past a chunk.
        for len in [1, 2, 4, 6, 7, 9, 11, 12, 14, 16, 18, 19] {
            assert_eq!(decode(&"0".repeat(len)), None, "{len}");
        }
        // A last chunk one past its byte count, and one at it.
        assert_eq!(decode("256"), None);
        assert_eq!(decode("255"), Some(vec![255]));
        assert_eq!(decode("65536"), None);
        assert_eq!(decode("65535"), Some(vec![255, 255]));
        assert_eq!(decode("72057594037927936"), None); // 2^56
        assert_eq!(decode("72057594037927935"), Some(vec![255; 7]));
        for bad in ["12a", " 123", "１２３", "-12", "+12"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
        assert_eq!(decode(""), Some(Vec::new()));
    }
}
