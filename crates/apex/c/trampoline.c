/* Start routine of every ARINC process thread, and the way back to it.
 *
 * A process thread runs partita_process_main() (Rust), which waits DORMANT for START and then
 * calls the process entry point. STOP_SELF, and STOP by another process (through a signal
 * handler on the target thread), must abandon whatever the process was doing, at any depth,
 * and start over at the top: sigsetjmp marks the top, partita_process_jump() goes back to it
 * with siglongjmp (restoring the signal mask saved here, so the stop signal is unblocked again).
 * The frames jumped over belong to the application's entry point and to runtime code that holds
 * no lock and nothing with a destructor at that moment (the runtime defers requests that arrive
 * inside its critical sections). */

#include <setjmp.h>
#include <stddef.h>

extern void partita_process_prepare(void *arg);
extern void partita_process_main(void *arg, void *env) __attribute__((noreturn));

void *partita_process_trampoline(void *arg)
{
    sigjmp_buf env;
    partita_process_prepare(arg);
    /* Returns 0 now, and 1 after each jump back; either way the loop starts over. */
    (void)sigsetjmp(env, 1);
    partita_process_main(arg, &env);
    return NULL;
}

void partita_process_jump(void *env)
{
    siglongjmp(*(sigjmp_buf *)env, 1);
}
