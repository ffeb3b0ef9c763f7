/* Console and exit helpers of guest images: each console byte is one port write (one VM
   exit, ~7 us here), so guests print little. */
#include "partita_guest.h"

void pt_putc(char c) { pt_outb(PT_CONSOLE_PORT, (uint8_t)c); }

void pt_puts(const char *s) {
    while (*s) pt_putc(*s++);
}

void pt_put_u64(uint64_t v) {
    char buf[21];
    int i = 20;
    buf[i] = 0;
    do {
        buf[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v && i > 0);
    pt_puts(&buf[i]);
}

void pt_exit(uint32_t status) {
    __asm__ volatile("outl %0, %1" : : "a"(status), "Nd"((uint16_t)PT_EXIT_PORT));
    for (;;) __asm__ volatile("cli; hlt");
}
