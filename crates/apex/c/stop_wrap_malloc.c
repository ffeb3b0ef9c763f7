/* The malloc family, wrapped for safe STOP/SUSPEND (see stop_guard.c): the real allocator runs
 * (glibc's __libc_* entry points), then a STOP or SUSPEND that arrived meanwhile takes effect, now
 * that the allocator's lock is released. A program that defines its own malloc keeps it (this
 * object is then not linked), and STOP inside that allocator is covered by the re-send timer
 * only if it lives in a shared C runtime object. */
#include <errno.h>
#include <signal.h>
#include <stddef.h>

extern __thread volatile sig_atomic_t partita_stop_pending;
extern void partita_stop_point(void *return_address);

/* See stop_guard.c: the wrappers' code counts as the C library's. */
#define GUARD_CODE __attribute__((section("partita_libc_guard"), noinline))

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

#define AFTER_CALL()                                                                                                   \
    do {                                                                                                               \
        if (__builtin_expect(partita_stop_pending, 0)) {                                                               \
            int saved_errno = errno;                                                                                   \
            partita_stop_point(__builtin_return_address(0));                                                           \
            errno = saved_errno;                                                                                       \
        }                                                                                                              \
    } while (0)

GUARD_CODE void *malloc(size_t n)
{
    void *p = __libc_malloc(n);
    AFTER_CALL();
    return p;
}

GUARD_CODE void *calloc(size_t n, size_t size)
{
    void *p = __libc_calloc(n, size);
    AFTER_CALL();
    return p;
}

GUARD_CODE void *realloc(void *old, size_t n)
{
    void *p = __libc_realloc(old, n);
    AFTER_CALL();
    return p;
}

GUARD_CODE void free(void *p)
{
    __libc_free(p);
    AFTER_CALL();
}
