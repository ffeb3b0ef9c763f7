//! Turning the bytes of a configuration file into text: encodings, size limit, and a line
//! index that maps byte offsets to line and column in constant-ish time.

use crate::diag::Span;

/// Configurations larger than this are refused before parsing (a real one is a few hundred KiB).
pub const MAX_CONFIG_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    pub span: Span,
    pub message: String,
}

/// Decodes a configuration: UTF-8 (with or without BOM), UTF-16 with a BOM, or the
/// ISO-8859-1 / US-ASCII encodings when the XML declaration names them.
pub fn decode(bytes: &[u8]) -> Result<String, DecodeError> {
    let at_start = Span { line: 1, column: 1 };
    if bytes.len() > MAX_CONFIG_BYTES {
        return Err(DecodeError {
            span: at_start,
            message: format!("file is {} bytes, over the {} MiB limit for a configuration", bytes.len(), MAX_CONFIG_BYTES >> 20),
        });
    }
    if let Some(rest) = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]) {
        return utf8(rest);
    }
    let utf16 = |rest: &[u8], big_endian: bool| -> Result<String, DecodeError> {
        if !rest.len().is_multiple_of(2) {
            return Err(DecodeError { span: at_start, message: "UTF-16 file has an odd number of bytes".into() });
        }
        let units =
            rest.chunks_exact(2).map(|c| if big_endian { u16::from_be_bytes([c[0], c[1]]) } else { u16::from_le_bytes([c[0], c[1]]) });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map_err(|e| DecodeError { span: at_start, message: format!("invalid UTF-16: {e}") })
    };
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, false);
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, true);
    }
    // UTF-16 without a byte order mark: the document starts with '<' and a zero byte.
    if bytes.starts_with(b"<\0") {
        return utf16(bytes, false);
    }
    if bytes.starts_with(b"\0<") {
        return utf16(bytes, true);
    }
    if declared_latin1(bytes) {
        return Ok(bytes.iter().map(|&b| char::from(b)).collect());
    }
    utf8(bytes)
}

fn utf8(bytes: &[u8]) -> Result<String, DecodeError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_owned()),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            // The prefix up to valid_up_to() is valid UTF-8 by definition.
            let prefix = std::str::from_utf8(valid).unwrap_or_default();
            let line = prefix.matches('\n').count() as u32 + 1;
            let column = prefix.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
            Err(DecodeError {
                span: Span { line, column },
                message: format!(
                    "invalid UTF-8 (byte 0x{:02X} at offset {}); save the file as UTF-8 or declare its encoding",
                    bytes[e.valid_up_to()],
                    e.valid_up_to()
                ),
            })
        }
    }
}

fn declared_latin1(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(200)];
    if !head.starts_with(b"<?xml") {
        return false;
    }
    let end = head.windows(2).position(|w| w == b"?>").unwrap_or(head.len());
    let decl = String::from_utf8_lossy(&head[..end]).to_ascii_lowercase();
    ["iso-8859-1", "latin1", "latin-1", "us-ascii"]
        .iter()
        .any(|enc| decl.contains(&format!("encoding=\"{enc}\"")) || decl.contains(&format!("encoding='{enc}'")))
}

/// Byte offset -> 1-based line and column (in characters), by binary search over line starts.
pub struct LineIndex<'a> {
    text: &'a str,
    line_starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { text, line_starts }
    }

    pub fn span(&self, offset: usize) -> Span {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line];
        let column = self.text.get(start..offset).map_or(offset - start, |s| s.chars().count());
        Span { line: line as u32 + 1, column: column as u32 + 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_boms_and_latin1() {
        assert_eq!(decode(b"\xEF\xBB\xBF<a/>").unwrap(), "<a/>");
        assert_eq!(decode(b"\xFF\xFE<\x00a\x00/\x00>\x00").unwrap(), "<a/>");
        assert_eq!(decode(b"\xFE\xFF\x00<\x00a\x00/\x00>").unwrap(), "<a/>");
        assert_eq!(decode(b"<\x00a\x00/\x00>\x00").unwrap(), "<a/>");
        let latin = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><a n=\"\xE9\"/>";
        assert!(decode(latin).unwrap().contains('\u{e9}'));
    }

    #[test]
    fn invalid_utf8_points_at_the_byte() {
        let err = decode(b"<a>\n  <b x=\"\xFF\"/></a>").unwrap_err();
        assert_eq!(err.span, Span { line: 2, column: 9 });
        assert!(err.message.contains("0xFF"), "{}", err.message);
    }

    #[test]
    fn line_index_counts_characters() {
        let text = "ab\ncdé f\n\nx";
        let idx = LineIndex::new(text);
        assert_eq!(idx.span(0), Span { line: 1, column: 1 });
        assert_eq!(idx.span(3), Span { line: 2, column: 1 });
        assert_eq!(idx.span(text.find('f').unwrap()), Span { line: 2, column: 5 });
        assert_eq!(idx.span(text.len()), Span { line: 4, column: 2 });
    }
}
