//! Any bytes through decode, parse, validate, analysis and summary: nothing may panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    partita_config::fuzz_one(data, Path::new("/nonexistent"));
});
