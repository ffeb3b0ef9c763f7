//! ARINC 653 names: NAME_TYPE is `char[MAX_NAME_LENGTH]`, not necessarily NUL-terminated. A name
//! is read up to 30 bytes, stopping at the first NUL, so string literals work too.

use core::fmt;

pub const MAX_NAME_LENGTH: usize = 30;

/// A name of at most [`MAX_NAME_LENGTH`] bytes, compared byte for byte.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Name {
    bytes: [u8; MAX_NAME_LENGTH],
    len: u8,
}

impl Name {
    pub const EMPTY: Name = Name { bytes: [0; MAX_NAME_LENGTH], len: 0 };

    /// The first 30 bytes of `b` before any NUL.
    pub fn from_bytes(b: &[u8]) -> Name {
        let b = &b[..b.len().min(MAX_NAME_LENGTH)];
        let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
        let mut bytes = [0; MAX_NAME_LENGTH];
        bytes[..b.len()].copy_from_slice(b);
        Name { bytes, len: b.len() as u8 }
    }

    /// Reads a C name: at most 30 bytes, stopping at NUL. Never reads past a NUL, so a short
    /// string literal is fine.
    ///
    /// # Safety
    /// `p` must be null or point to memory readable up to its first NUL or its 30th byte.
    pub unsafe fn from_c(p: *const libc::c_char) -> Name {
        if p.is_null() {
            return Name::EMPTY;
        }
        let mut bytes = [0; MAX_NAME_LENGTH];
        let mut len = 0;
        while len < MAX_NAME_LENGTH {
            // SAFETY: the caller guarantees bytes up to the first NUL (or the 30th) are readable,
            // and we stop at the first NUL.
            let c = unsafe { *p.add(len) } as u8;
            if c == 0 {
                break;
            }
            bytes[len] = c;
            len += 1;
        }
        Name { bytes, len: len as u8 }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The name as NAME_TYPE: NUL-padded to 30 bytes.
    pub fn to_c(&self) -> [libc::c_char; MAX_NAME_LENGTH] {
        self.bytes.map(|b| b as libc::c_char)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        Name::from_bytes(s.as_bytes())
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stop_at_nul_and_thirty_bytes() {
        assert_eq!(Name::from("P1").as_bytes(), b"P1");
        assert_eq!(Name::from_bytes(b"AB\0CD").as_bytes(), b"AB");
        let long = "x".repeat(40);
        assert_eq!(Name::from(long.as_str()).as_bytes().len(), MAX_NAME_LENGTH);
        // SAFETY: a NUL-terminated literal.
        let c = unsafe { Name::from_c(c"GnC".as_ptr()) };
        assert_eq!(c, Name::from("GnC"));
        let exact = [b'y' as libc::c_char; MAX_NAME_LENGTH];
        // SAFETY: 30 readable bytes without a NUL: the reader stops at 30.
        let e = unsafe { Name::from_c(exact.as_ptr()) };
        assert_eq!(e.as_bytes(), &[b'y'; MAX_NAME_LENGTH]);
        assert_eq!(e.to_c(), exact);
    }
}
