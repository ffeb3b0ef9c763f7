//! Builds the C parts of the runtime: the process trampoline (sigsetjmp/siglongjmp cannot be
//! written in Rust) and the safe STOP/SUSPEND guard with its C library wrappers (they define
//! malloc, printf, ... in the program, which must not be compiled as the compiler's builtins).

fn main() {
    for f in ["c/trampoline.c", "c/stop_guard.c", "c/stop_wrap_malloc.c", "c/stop_wrap_stdio.c"] {
        println!("cargo:rerun-if-changed={f}");
    }
    cc::Build::new()
        .files(["c/trampoline.c", "c/stop_guard.c", "c/stop_wrap_malloc.c", "c/stop_wrap_stdio.c"])
        .flag("-fno-builtin")
        .flag("-U_FORTIFY_SOURCE")
        .warnings(true)
        .extra_warnings(true)
        .compile("partita_apex_trampoline");
}
