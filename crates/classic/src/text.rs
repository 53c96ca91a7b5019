//! What the front-ends' readers share about input text: decoding a file that must be UTF-8
//! (naming the line and byte where it is not), and keeping echoed input readable in messages.

/// Where a file stops being UTF-8: the 1-based line, the 1-based byte within that line, and the
/// byte's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotUtf8 {
    pub line: usize,
    pub byte: usize,
    pub value: u8,
}

impl NotUtf8 {
    /// The message, without the file and line (which the caller's error puts in front).
    pub fn message(&self) -> String {
        format!(
            "byte {} of the line (0x{:02x}) is not valid UTF-8; the file must be UTF-8 text",
            self.byte, self.value
        )
    }
}

/// The file's text, or where it is not UTF-8.
pub fn decode(bytes: Vec<u8>) -> Result<String, NotUtf8> {
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let at = e.utf8_error().valid_up_to();
        let before = &bytes[..at];
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        NotUtf8 {
            line: before.iter().filter(|&&b| b == b'\n').count() + 1,
            byte: at - line_start + 1,
            value: bytes[at],
        }
    })
}

/// Longest run of input (without blanks) a message echoes whole.
const LONGEST_ECHO: usize = 120;

/// `message` with every run of non-blank characters longer than 120 characters cut to its first
/// 48 and last 16 characters and its length, so that a megabyte line echoed back in an error stays
/// a readable message. Messages hold input between backticks; the cut keeps them.
pub fn shorten(message: &str) -> String {
    if message.len() <= LONGEST_ECHO {
        return message.to_string();
    }
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while !rest.is_empty() {
        let blank = rest.find(char::is_whitespace).unwrap_or(rest.len());
        let (word, after) = rest.split_at(blank);
        out.push_str(&shorten_word(word));
        let next = after
            .char_indices()
            .find(|(_, c)| !c.is_whitespace())
            .map_or(after.len(), |(i, _)| i);
        out.push_str(&after[..next]);
        rest = &after[next..];
    }
    out
}

fn shorten_word(word: &str) -> String {
    let chars = word.chars().count();
    if chars <= LONGEST_ECHO {
        return word.to_string();
    }
    let head: String = word.chars().take(48).collect();
    let tail: String = word.chars().skip(chars - 16).collect();
    format!("{head}…{tail} ({} bytes)", word.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_names_the_line_and_byte() {
        assert_eq!(decode(b"ab\ncd".to_vec()).unwrap(), "ab\ncd");
        let e = decode(b"one\ntwo\nth\xffree\n".to_vec()).unwrap_err();
        assert_eq!(
            e,
            NotUtf8 {
                line: 3,
                byte: 3,
                value: 0xff
            }
        );
        assert!(e.message().starts_with("byte 3 of the line (0xff) is not valid UTF-8"));
        // A truncated multi-byte character at the start of the file.
        let e = decode(b"\xe2\x82".to_vec()).unwrap_err();
        assert_eq!(
            e,
            NotUtf8 {
                line: 1,
                byte: 1,
                value: 0xe2
            }
        );
    }

    #[test]
    fn shorten_cuts_long_words_only() {
        assert_eq!(shorten("short `word` stays"), "short `word` stays");
        let long = format!("`{}`", "x".repeat(1_000_000));
        let m = shorten(&format!("unknown option {long} in [filesystem]"));
        assert!(m.len() < 150, "{m}");
        assert!(m.starts_with("unknown option `xxx"), "{m}");
        assert!(m.ends_with("xxx` (1000002 bytes) in [filesystem]"), "{m}");
        // Blanks are kept as they were.
        let m = shorten(&format!("a\n\t{}  b", "é".repeat(200)));
        assert!(m.starts_with("a\n\téé") && m.ends_with(" (400 bytes)  b"), "{m}");
    }
}
