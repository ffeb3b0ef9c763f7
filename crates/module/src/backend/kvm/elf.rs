//! The guest image loader: a 64-bit, little-endian, x86-64, statically linked ELF executable
//! (`ET_EXEC`) whose `PT_LOAD` segments are copied to their physical addresses in guest RAM.
//! The image is untrusted input (any file a configuration names): every header value is
//! checked before it is used, and every error names the file and what is wrong.

use std::path::Path;

/// Largest image file read (the whole file is read at once).
const MAX_FILE: u64 = 256 << 20;
const EHDR_SIZE: usize = 64;
const PHDR_SIZE: usize = 56;
const MAX_PHNUM: usize = 64;
const PT_LOAD: u32 = 1;
const PT_INTERP: u32 = 3;
const PT_DYNAMIC: u32 = 2;
const PF_X: u32 = 1;

/// One segment to copy: `data` at `addr`, then zeros up to `addr + mem_size`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub addr: u64,
    pub data: Vec<u8>,
    pub mem_size: u64,
}

/// A checked guest image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    pub entry: u64,
    pub segments: Vec<Segment>,
    /// End of the highest segment (the stack must stay above it).
    pub end: u64,
}

fn u16_at(b: &[u8], o: usize) -> u16 {
    u16::from_le_bytes([b[o], b[o + 1]])
}
fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes(b[o..o + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"))
}

/// Reads and checks the image at `path` for a guest whose RAM is `[lowest, ram_size)` usable
/// by the image.
pub fn load(path: &Path, lowest: u64, ram_size: u64) -> Result<Image, String> {
    let err = |what: String| format!("guest image {}: {what}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.len() > MAX_FILE {
        return Err(err(format!("{} bytes: larger than the {MAX_FILE} bytes an image may have", meta.len())));
    }
    let bytes = std::fs::read(path).map_err(|e| err(format!("cannot read it: {e}")))?;
    parse(&bytes, lowest, ram_size).map_err(err)
}

/// Checks `b` as a guest image (see [`load`]).
pub fn parse(b: &[u8], lowest: u64, ram_size: u64) -> Result<Image, String> {
    if b.len() < EHDR_SIZE {
        return Err(format!("{} bytes: too short for an ELF header", b.len()));
    }
    if &b[..4] != b"\x7fELF" {
        return Err("not an ELF file (bad magic)".into());
    }
    if b[4] != 2 {
        return Err(format!("ELF class {}: a guest image must be 64-bit (ELFCLASS64)", b[4]));
    }
    if b[5] != 1 {
        return Err(format!("ELF data encoding {}: a guest image must be little-endian", b[5]));
    }
    if b[6] != 1 {
        return Err(format!("ELF version {}: expected 1", b[6]));
    }
    let e_type = u16_at(b, 16);
    if e_type != 2 {
        return Err(format!("ELF type {e_type}: a guest image must be a static executable (ET_EXEC; link with -static -no-pie)"));
    }
    let machine = u16_at(b, 18);
    if machine != 62 {
        return Err(format!("ELF machine {machine}: a guest image must be x86-64 (62)"));
    }
    let entry = u64_at(b, 24);
    let phoff = u64_at(b, 32);
    let phentsize = u16_at(b, 54) as usize;
    let phnum = u16_at(b, 56) as usize;
    if phentsize != PHDR_SIZE {
        return Err(format!("program header entry size {phentsize}: expected {PHDR_SIZE}"));
    }
    if phnum == 0 || phnum > MAX_PHNUM {
        return Err(format!("{phnum} program headers: expected 1 to {MAX_PHNUM}"));
    }
    let table_end = phoff.checked_add((phnum * PHDR_SIZE) as u64).filter(|&e| e <= b.len() as u64);
    let Some(table_end) = table_end else {
        return Err(format!("program header table at offset {phoff} ({phnum} entries) lies outside the file ({} bytes)", b.len()));
    };
    let mut segments: Vec<Segment> = Vec::new();
    let mut entry_ok = false;
    for (i, o) in (phoff as usize..table_end as usize).step_by(PHDR_SIZE).enumerate() {
        let (p_type, flags) = (u32_at(b, o), u32_at(b, o + 4));
        let (offset, paddr, filesz, memsz) = (u64_at(b, o + 8), u64_at(b, o + 24), u64_at(b, o + 32), u64_at(b, o + 40));
        match p_type {
            PT_INTERP | PT_DYNAMIC => {
                return Err(format!("program header {i} asks for dynamic linking: a guest image must be static"));
            }
            PT_LOAD => {}
            _ => continue,
        }
        if filesz > memsz {
            return Err(format!("segment {i}: file size {filesz} larger than its memory size {memsz}"));
        }
        if offset.checked_add(filesz).is_none_or(|end| end > b.len() as u64) {
            return Err(format!("segment {i}: bytes {offset}+{filesz} lie outside the file ({} bytes)", b.len()));
        }
        let end = paddr.checked_add(memsz).ok_or_else(|| format!("segment {i}: address 0x{paddr:x} + size {memsz} overflows"))?;
        if paddr < lowest || end > ram_size {
            return Err(format!(
                "segment {i} at 0x{paddr:x}..0x{end:x} lies outside the image's part of guest RAM (0x{lowest:x}..0x{ram_size:x}; link at 0x{lowest:x} and give the partition more memory)"
            ));
        }
        if let Some(s) = segments.iter().find(|s| paddr < s.addr + s.mem_size && s.addr < end) {
            return Err(format!("segment {i} at 0x{paddr:x}..0x{end:x} overlaps the segment at 0x{:x}", s.addr));
        }
        if flags & PF_X != 0 && (paddr..end).contains(&entry) {
            entry_ok = true;
        }
        segments.push(Segment { addr: paddr, data: b[offset as usize..(offset + filesz) as usize].to_vec(), mem_size: memsz });
    }
    if segments.is_empty() {
        return Err("no PT_LOAD segment".into());
    }
    if !entry_ok {
        return Err(format!("entry point 0x{entry:x} is not inside an executable PT_LOAD segment"));
    }
    let end = segments.iter().map(|s| s.addr + s.mem_size).max().unwrap_or(lowest);
    Ok(Image { entry, segments, end })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal image: one executable segment of `code` at 0x100000, entry at its start.
    pub(crate) fn image(code: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; EHDR_SIZE + PHDR_SIZE];
        b[..4].copy_from_slice(b"\x7fELF");
        (b[4], b[5], b[6]) = (2, 1, 1);
        b[16..18].copy_from_slice(&2u16.to_le_bytes());
        b[18..20].copy_from_slice(&62u16.to_le_bytes());
        b[24..32].copy_from_slice(&0x10_0000u64.to_le_bytes());
        b[32..40].copy_from_slice(&(EHDR_SIZE as u64).to_le_bytes());
        b[54..56].copy_from_slice(&(PHDR_SIZE as u16).to_le_bytes());
        b[56..58].copy_from_slice(&1u16.to_le_bytes());
        let o = EHDR_SIZE;
        b[o..o + 4].copy_from_slice(&PT_LOAD.to_le_bytes());
        b[o + 4..o + 8].copy_from_slice(&(PF_X | 4).to_le_bytes());
        b[o + 8..o + 16].copy_from_slice(&((EHDR_SIZE + PHDR_SIZE) as u64).to_le_bytes());
        b[o + 16..o + 24].copy_from_slice(&0x10_0000u64.to_le_bytes());
        b[o + 24..o + 32].copy_from_slice(&0x10_0000u64.to_le_bytes());
        b[o + 32..o + 40].copy_from_slice(&(code.len() as u64).to_le_bytes());
        b[o + 40..o + 48].copy_from_slice(&(code.len() as u64 + 0x1000).to_le_bytes());
        b.extend_from_slice(code);
        b
    }

    const RAM: u64 = 4 << 20;

    #[test]
    fn a_minimal_image_loads() {
        let img = parse(&image(&[0xf4]), IMAGE_LOWEST, RAM).expect("valid");
        assert_eq!(img.entry, 0x10_0000);
        assert_eq!(img.segments.len(), 1);
        assert_eq!(img.segments[0].data, vec![0xf4]);
        assert_eq!(img.end, 0x10_0000 + 1 + 0x1000);
    }

    const IMAGE_LOWEST: u64 = 0x10_0000;

    fn refused(b: &[u8], what: &str) {
        let e = parse(b, IMAGE_LOWEST, RAM).expect_err("must be refused");
        assert!(e.contains(what), "{e:?} should say {what:?}");
    }

    #[test]
    fn every_header_value_is_checked() {
        let good = image(&[0xf4; 16]);
        refused(&good[..40], "too short");
        let mut b = good.clone();
        b[0] = 0;
        refused(&b, "bad magic");
        let mut b = good.clone();
        b[4] = 1;
        refused(&b, "64-bit");
        let mut b = good.clone();
        b[16] = 3;
        refused(&b, "ET_EXEC");
        let mut b = good.clone();
        b[18] = 3;
        refused(&b, "x86-64");
        let mut b = good.clone();
        b[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        refused(&b, "outside the file");
        let mut b = good.clone();
        b[56] = 200;
        refused(&b, "program headers");
        let o = EHDR_SIZE;
        let mut b = good.clone();
        b[o + 32..o + 40].copy_from_slice(&(1u64 << 40).to_le_bytes());
        refused(&b, "larger than its memory size");
        let mut b = good.clone();
        b[o + 40..o + 48].copy_from_slice(&(1u64 << 40).to_le_bytes());
        refused(&b, "outside the image's part of guest RAM");
        let mut b = good.clone();
        b[o + 24..o + 32].copy_from_slice(&(u64::MAX - 4).to_le_bytes());
        refused(&b, "overflows");
        let mut b = good.clone();
        b[o + 24..o + 32].copy_from_slice(&0x1000u64.to_le_bytes());
        refused(&b, "outside the image's part");
        let mut b = good.clone();
        b[24..32].copy_from_slice(&0x20_0000u64.to_le_bytes());
        refused(&b, "entry point");
        let mut b = good;
        b[o..o + 4].copy_from_slice(&PT_INTERP.to_le_bytes());
        refused(&b, "static");
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bad.elf");
        std::fs::write(&path, b"#!/bin/sh\n").expect("write");
        let e = load(&path, IMAGE_LOWEST, RAM).expect_err("refused");
        assert!(e.starts_with(&format!("guest image {}: ", path.display())), "{e}");
        assert!(e.contains("bad magic") || e.contains("too short"), "{e}");
    }
}
