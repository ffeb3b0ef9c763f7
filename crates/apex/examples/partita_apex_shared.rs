//! The shared-library flavour of `partita_apex`: built as `libpartita_apex.so` (a cdylib) by
//! `cargo build --release -p partita-apex --example partita_apex`, into target/release/examples/
//! so that it never sits beside the static library the C build command links. It exports the
//! same C symbols (the `#[no_mangle]` services of the library).
pub use partita_apex::*;
