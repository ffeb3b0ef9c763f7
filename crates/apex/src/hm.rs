//! The health-monitoring services needed now: REPORT_APPLICATION_MESSAGE (one line on stdout,
//! which the module shows live) and RAISE_APPLICATION_ERROR (for now printed on stderr; the
//! health monitor will route it).

use crate::critical::NoStop;
use crate::process;
use crate::sys::Line;
use crate::types::*;

unsafe extern "C" {
    static mut stdout: *mut libc::FILE;
    static mut stderr: *mut libc::FILE;
    fn flockfile(stream: *mut libc::FILE);
    fn funlockfile(stream: *mut libc::FILE);
}

/// Writes `bytes` and a newline to a C stream in one locked piece, so that lines of different
/// processes do not mix and the order with the program's own printf output is kept.
fn write_line(stream: *mut libc::FILE, bytes: &[u8]) {
    let _n = NoStop::enter();
    // SAFETY: `stream` is stdout or stderr of the C library, valid for the whole program;
    // the stream lock is held around the writes, and a STOP request is deferred meanwhile.
    unsafe {
        flockfile(stream);
        libc::fwrite(bytes.as_ptr().cast(), 1, bytes.len(), stream);
        libc::fputc(b'\n' as i32, stream);
        libc::fflush(stream);
        funlockfile(stream);
    }
}

/// REPORT_APPLICATION_MESSAGE.
pub fn report_application_message(message: &[u8]) -> ApexResult<()> {
    if message.len() > MAX_ERROR_MESSAGE_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let _ = crate::runtime::rt();
    // SAFETY: reading the C library's stdout pointer.
    write_line(unsafe { stdout }, message);
    Ok(())
}

/// RAISE_APPLICATION_ERROR: only APPLICATION_ERROR may be raised.
pub fn raise_application_error(error_code: u32, message: &[u8]) -> ApexResult<()> {
    if error_code != error_code::APPLICATION_ERROR || message.len() > MAX_ERROR_MESSAGE_SIZE {
        return Err(ErrorReturnCode::InvalidParam);
    }
    let _ = crate::runtime::rt();
    let mut l = Line::new();
    l.str("partita-apex: RAISE_APPLICATION_ERROR(APPLICATION_ERROR) by ");
    match process::current_index() {
        Some(i) => l.str("process ").int(process::id_of(i) as i64),
        None => l.str("the initialization process"),
    };
    l.str(": ").bytes(message);
    // SAFETY: reading the C library's stderr pointer.
    write_line(unsafe { stderr }, l.as_bytes());
    Ok(())
}
