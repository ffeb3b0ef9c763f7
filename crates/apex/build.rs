//! Builds the C process trampoline (sigsetjmp/siglongjmp cannot be written in Rust).

fn main() {
    println!("cargo:rerun-if-changed=c/trampoline.c");
    cc::Build::new().file("c/trampoline.c").warnings(true).extra_warnings(true).compile("partita_apex_trampoline");
}
