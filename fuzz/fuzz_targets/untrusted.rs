//! Any bytes as the words a partition wrote into its shared memory, through every decoder the
//! module reads it with: nothing may panic, nothing refused may get through.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    partita_abi::untrusted::fuzz_one(data);
});
