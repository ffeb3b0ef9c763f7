//! Partition output: bytes from a partition's stdout/stderr pipes become complete lines shown
//! live as `[NAME] line` and kept, unprefixed, in a log file per partition.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

/// Longest line kept whole; longer ones are cut so one partition cannot exhaust the module.
const MAX_LINE: usize = 64 * 1024;

pub struct PartitionOutput {
    prefix: String,
    pending: Vec<u8>,
    log: Option<File>,
}

impl PartitionOutput {
    pub fn new(name: &str, log_path: Option<&Path>) -> io::Result<PartitionOutput> {
        let log = match log_path {
            Some(p) => Some(File::options().create(true).append(true).open(p)?),
            None => None,
        };
        Ok(PartitionOutput { prefix: format!("[{name}] "), pending: Vec::new(), log })
    }

    /// Takes a chunk read from a pipe and writes every complete line to `live` and the log.
    pub fn feed(&mut self, chunk: &[u8], live: &mut impl Write) -> io::Result<()> {
        self.pending.extend_from_slice(chunk);
        while let Some(pos) =
            self.pending.iter().position(|&b| b == b'\n').or_else(|| (self.pending.len() >= MAX_LINE).then_some(MAX_LINE - 1))
        {
            let line: Vec<u8> = self.pending.drain(..=pos).collect();
            self.emit(&line, live)?;
        }
        Ok(())
    }

    /// At end of stream: a last line without newline is still shown.
    pub fn finish(&mut self, live: &mut impl Write) -> io::Result<()> {
        if !self.pending.is_empty() {
            let mut line = std::mem::take(&mut self.pending);
            line.push(b'\n');
            self.emit(&line, live)?;
        }
        Ok(())
    }

    fn emit(&mut self, line: &[u8], live: &mut impl Write) -> io::Result<()> {
        let mut line = line.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        live.write_all(self.prefix.as_bytes())?;
        live.write_all(&line)?;
        if let Some(log) = &mut self.log {
            log.write_all(&line)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed_and_split_across_chunks() {
        let dir = std::env::temp_dir().join(format!("partita-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("ofp.log");
        let mut out = PartitionOutput::new("OFP", Some(&log)).unwrap();
        let mut live = Vec::new();
        out.feed(b"hel", &mut live).unwrap();
        assert!(live.is_empty());
        out.feed(b"lo\nworld\npart", &mut live).unwrap();
        out.finish(&mut live).unwrap();
        assert_eq!(String::from_utf8(live).unwrap(), "[OFP] hello\n[OFP] world\n[OFP] part\n");
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "hello\nworld\npart\n");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn endless_lines_are_cut() {
        let mut out = PartitionOutput::new("X", None).unwrap();
        let mut live = Vec::new();
        out.feed(&vec![b'a'; MAX_LINE * 2 + 10], &mut live).unwrap();
        assert_eq!(live.iter().filter(|&&b| b == b'\n').count(), 2);
    }
}
