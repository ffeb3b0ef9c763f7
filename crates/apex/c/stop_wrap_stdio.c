/* The stdio entry points partitions commonly call, wrapped for safe STOP/SUSPEND (see
 * stop_guard.c): the real function runs (reached through glibc's other exported name for it),
 * then a STOP or SUSPEND that arrived meanwhile takes effect, now that the stream's lock is
 * released. Covered: printf, fprintf, vprintf, vfprintf, snprintf, sprintf, the _FORTIFY_SOURCE
 * variants __printf_chk, __fprintf_chk, __snprintf_chk, __sprintf_chk, and puts, fputs, putchar,
 * putc, fputc, fwrite, fflush, fgets, fread, getc, fgetc, fopen, fclose. Every other C library
 * function is covered by the re-send timer of stop_guard.c (the request takes effect at the first
 * re-send that finds the thread outside the C runtime). */
/* Without glibc's inline bodies of vprintf and putchar (bits/stdio.h, used when optimizing):
 * this file defines those names itself. */
#define __NO_INLINE__ 1
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#undef putc
#undef getc
#undef putchar

extern __thread volatile sig_atomic_t partita_stop_pending;
extern void partita_stop_point(void *return_address);

/* See stop_guard.c: the wrappers' code counts as the C library's. */
#define GUARD_CODE __attribute__((section("partita_libc_guard"), noinline))

extern int _IO_vfprintf(FILE *f, const char *fmt, va_list ap);
extern int _IO_vsprintf(char *s, const char *fmt, va_list ap);
extern int _IO_puts(const char *s);
extern int _IO_fputs(const char *s, FILE *f);
extern int _IO_putc(int c, FILE *f);
extern int _IO_getc(FILE *f);
extern size_t _IO_fwrite(const void *p, size_t size, size_t n, FILE *f);
extern size_t _IO_fread(void *p, size_t size, size_t n, FILE *f);
extern int _IO_fflush(FILE *f);
extern char *_IO_fgets(char *s, int n, FILE *f);
extern FILE *_IO_fopen(const char *path, const char *mode);
extern int _IO_fclose(FILE *f);
extern int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
extern int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap);
extern int __vsprintf_chk(char *s, int flag, size_t slen, const char *fmt, va_list ap);

#define AFTER_CALL()                                                                                                   \
    do {                                                                                                               \
        if (__builtin_expect(partita_stop_pending, 0)) {                                                               \
            int saved_errno = errno;                                                                                   \
            partita_stop_point(__builtin_return_address(0));                                                           \
            errno = saved_errno;                                                                                       \
        }                                                                                                              \
    } while (0)

#define VARIADIC(call, last)                                                                                           \
    va_list ap;                                                                                                        \
    va_start(ap, last);                                                                                                \
    int r = call;                                                                                                      \
    va_end(ap);                                                                                                        \
    AFTER_CALL();                                                                                                      \
    return r

GUARD_CODE int printf(const char *fmt, ...)
{
    VARIADIC(_IO_vfprintf(stdout, fmt, ap), fmt);
}

GUARD_CODE int fprintf(FILE *f, const char *fmt, ...)
{
    VARIADIC(_IO_vfprintf(f, fmt, ap), fmt);
}

GUARD_CODE int snprintf(char *s, size_t n, const char *fmt, ...)
{
    VARIADIC(vsnprintf(s, n, fmt, ap), fmt);
}

GUARD_CODE int sprintf(char *s, const char *fmt, ...)
{
    VARIADIC(_IO_vsprintf(s, fmt, ap), fmt);
}

GUARD_CODE int __printf_chk(int flag, const char *fmt, ...)
{
    VARIADIC(__vfprintf_chk(stdout, flag, fmt, ap), fmt);
}

GUARD_CODE int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
    VARIADIC(__vfprintf_chk(f, flag, fmt, ap), fmt);
}

GUARD_CODE int __snprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, ...)
{
    VARIADIC(__vsnprintf_chk(s, maxlen, flag, slen, fmt, ap), fmt);
}

GUARD_CODE int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...)
{
    VARIADIC(__vsprintf_chk(s, flag, slen, fmt, ap), fmt);
}

GUARD_CODE int vprintf(const char *fmt, va_list ap)
{
    int r = _IO_vfprintf(stdout, fmt, ap);
    AFTER_CALL();
    return r;
}

GUARD_CODE int vfprintf(FILE *f, const char *fmt, va_list ap)
{
    int r = _IO_vfprintf(f, fmt, ap);
    AFTER_CALL();
    return r;
}

#define WRAP(type, name, params, call)                                                                                 \
    GUARD_CODE type name params                                                                                    \
    {                                                                                                                  \
        type r = call;                                                                                                 \
        AFTER_CALL();                                                                                                  \
        return r;                                                                                                      \
    }

WRAP(int, puts, (const char *s), _IO_puts(s))
WRAP(int, fputs, (const char *s, FILE *f), _IO_fputs(s, f))
WRAP(int, putchar, (int c), _IO_putc(c, stdout))
WRAP(int, putc, (int c, FILE *f), _IO_putc(c, f))
WRAP(int, fputc, (int c, FILE *f), _IO_putc(c, f))
WRAP(int, getc, (FILE *f), _IO_getc(f))
WRAP(int, fgetc, (FILE *f), _IO_getc(f))
WRAP(size_t, fwrite, (const void *p, size_t size, size_t n, FILE *f), _IO_fwrite(p, size, n, f))
WRAP(size_t, fread, (void *p, size_t size, size_t n, FILE *f), _IO_fread(p, size, n, f))
WRAP(int, fflush, (FILE *f), _IO_fflush(f))
WRAP(char *, fgets, (char *s, int n, FILE *f), _IO_fgets(s, n, f))
WRAP(FILE *, fopen, (const char *path, const char *mode), _IO_fopen(path, mode))
WRAP(int, fclose, (FILE *f), _IO_fclose(f))
