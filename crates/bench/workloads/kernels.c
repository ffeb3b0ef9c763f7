/* The bench kernels (see kernels.h). Plain C11 plus Linux futexes; no APEX call, so the same
 * object serves the native baseline and the partition programs. */
#define _GNU_SOURCE
#include "kernels.h"

#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int64_t wl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- integer synthetic mix ---------------------------------------------------------------- */

enum colour { RED, GREEN, BLUE, CYAN, MAGENTA };

struct record {
    struct record *next;
    enum colour colour;
    int32_t number;
    int32_t value;
    char text[31];
};

static enum colour shift(enum colour c, int32_t n) {
    switch ((c + n) % 5) {
    case 0: return RED;
    case 1: return GREEN;
    case 2: return BLUE;
    case 3: return CYAN;
    default: return MAGENTA;
    }
}

/* Out of line at every level, like the procedure calls of a Dhrystone loop. */
__attribute__((noinline)) static int32_t mix_arith(int32_t a, int32_t b, int32_t *out) {
    int32_t c = a * 3 - b / (b | 1);
    *out = (c << 2) ^ (a >> 1);
    return c + (a > b ? 7 : -3);
}

__attribute__((noinline)) static int mix_strcmp(const char *a, const char *b) {
    while (*a && *a == *b) { a++; b++; }
    return (unsigned char)*a - (unsigned char)*b;
}

__attribute__((noinline)) static void mix_record(struct record *dst, const struct record *src, int32_t i) {
    *dst = *src;
    dst->number = src->number + i;
    dst->colour = shift(src->colour, i);
    dst->value = dst->number % 7 == 0 ? dst->value + 1 : dst->value - 1;
}

uint32_t wl_intmix(uint32_t runs) {
    static const char s1[31] = "PARTITA INTEGER MIX, 1'ST TEXT";
    static const char s2[31] = "PARTITA INTEGER MIX, 2'ND TEXT";
    struct record a, b;
    int32_t array1[50], array2[50][50];
    volatile int32_t sink = 0;
    uint32_t sum = 0;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    memset(array1, 0, sizeof array1);
    memset(array2, 0, sizeof array2);
    a.next = &b;
    memcpy(a.text, s1, sizeof s1);
    for (uint32_t run = 1; run <= runs; run++) {
        int32_t x = 2, y = 3, z = 0;
        char buf[31];
        memcpy(buf, (run & 1) ? s2 : s1, sizeof buf);
        int cmp = mix_strcmp(buf, a.text);
        while (x < y) {
            z = 5 * x - y;
            mix_arith(x, y, &z);
            x++;
        }
        array1[run % 50] = z + (int32_t)run;
        array2[run % 50][(run + 10) % 50] = array1[run % 50] + cmp;
        mix_record(&b, &a, (int32_t)run);
        for (char ch = 'A'; ch <= 'C'; ch++)
            if (ch == 'A' + (int)(run % 3)) z = mix_arith(z, ch, &y);
        sum = sum * 31u + (uint32_t)(z + b.value + array2[run % 50][(run + 10) % 50] + (int32_t)b.colour);
    }
    sink = (int32_t)sum;
    return (uint32_t)sink;
}

/* ---- data-structure kernel ---------------------------------------------------------------- */

uint16_t wl_crc16(const uint8_t *data, size_t len, uint16_t crc) {
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)data[i] << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
    }
    return crc;
}

static uint16_t crc_u32(uint32_t v, uint16_t crc) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    return wl_crc16(b, 4, crc);
}

struct node {
    struct node *next;
    int16_t key;
    int16_t val;
};

#define NODES 64
#define MAT 12

static struct node *list_reverse(struct node *n) {
    struct node *prev = NULL;
    while (n) {
        struct node *next = n->next;
        n->next = prev;
        prev = n;
        n = next;
    }
    return prev;
}

static int32_t list_find(const struct node *n, int16_t key) {
    for (int32_t i = 0; n; n = n->next, i++)
        if (n->key == key) return i;
    return -1;
}

/* Accepts signed decimal numbers with an optional fraction and exponent; counts transitions. */
static uint32_t state_machine(const char *s, uint32_t *accepted) {
    enum { START, SIGN, INT, DOT, FRAC, EXP, EXPSIGN, EXPINT, BAD } st = START;
    uint32_t transitions = 0;
    for (;; s++) {
        char c = *s;
        if (c == ',' || c == 0) {
            if (st == INT || st == FRAC || st == EXPINT) (*accepted)++;
            st = START;
            if (c == 0) break;
            continue;
        }
        int digit = c >= '0' && c <= '9';
        int before = st;
        switch (st) {
        case START: st = digit ? INT : (c == '+' || c == '-') ? SIGN : c == '.' ? DOT : BAD; break;
        case SIGN: st = digit ? INT : c == '.' ? DOT : BAD; break;
        case INT: st = digit ? INT : c == '.' ? FRAC : (c == 'e' || c == 'E') ? EXP : BAD; break;
        case DOT: st = digit ? FRAC : BAD; break;
        case FRAC: st = digit ? FRAC : (c == 'e' || c == 'E') ? EXP : BAD; break;
        case EXP: st = digit ? EXPINT : (c == '+' || c == '-') ? EXPSIGN : BAD; break;
        case EXPSIGN: st = digit ? EXPINT : BAD; break;
        case EXPINT: st = digit ? EXPINT : BAD; break;
        case BAD: break;
        }
        transitions += before != (int)st;
    }
    return transitions;
}

uint16_t wl_dskernel(uint32_t iters) {
    static const char text[] = "5012,1234,-874,+122,.5,7.25e3,3.3E-2,-.8,1e,12x4,--3,6.,0.001,42e+7,+,9";
    struct node nodes[NODES];
    int16_t a[MAT][MAT], b[MAT][MAT];
    int32_t c[MAT][MAT];
    uint16_t crc = 0xFFFF;
    uint32_t seed = 0x2545F491u;
    for (int i = 0; i < MAT; i++)
        for (int j = 0; j < MAT; j++) {
            a[i][j] = (int16_t)((i * 7 + j * 3) % 17 - 8);
            b[i][j] = (int16_t)((i * 5 + j * 11) % 13 - 6);
        }
    for (uint32_t it = 0; it < iters; it++) {
        for (int i = 0; i < NODES; i++) {
            seed = seed * 1103515245u + 12345u;
            nodes[i].key = (int16_t)((seed >> 16) & 0x3FF);
            nodes[i].val = (int16_t)i;
            nodes[i].next = i + 1 < NODES ? &nodes[i + 1] : NULL;
        }
        struct node *head = list_reverse(&nodes[0]);
        int32_t found = list_find(head, nodes[(it * 7) % NODES].key) + list_find(head, (int16_t)(it & 0x3FF));
        head = list_reverse(head);
        crc = crc_u32((uint32_t)found, crc);
        for (int i = 0; i < MAT; i++)
            for (int j = 0; j < MAT; j++) {
                int32_t s = 0;
                for (int k = 0; k < MAT; k++) s += a[i][k] * b[k][j];
                c[i][j] = s + (int32_t)it;
            }
        int32_t trace = 0;
        for (int i = 0; i < MAT; i++) trace += c[i][i] ^ c[i][MAT - 1 - i];
        crc = crc_u32((uint32_t)trace, crc);
        a[it % MAT][(it / MAT) % MAT] = (int16_t)(trace & 0xF);
        uint32_t accepted = 0;
        uint32_t transitions = state_machine(text, &accepted);
        crc = crc_u32(transitions * 256u + accepted, crc);
        crc = crc_u32((uint32_t)head->val, crc);
    }
    return crc;
}

/* ---- memory kernels ----------------------------------------------------------------------- */

#define LINE 64

double wl_chase(size_t bytes, uint64_t loads) {
    size_t n = bytes / LINE;
    if (n < 2) n = 2;
    char *mem = aligned_alloc(4096, (n * LINE + 4095) / 4096 * 4096);
    size_t *order = malloc(n * sizeof *order);
    if (!mem || !order) abort();
    /* Sattolo's algorithm: one cycle through every line, in random order. */
    for (size_t i = 0; i < n; i++) order[i] = i;
    uint64_t r = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17;
        size_t j = (size_t)(r % i);
        size_t t = order[i]; order[i] = order[j]; order[j] = t;
    }
    for (size_t i = 0; i < n; i++) *(void **)(mem + i * LINE) = mem + order[i] * LINE;
    free(order);
    void *volatile *p = (void *volatile *)mem;
    for (size_t i = 0; i < n; i++) p = (void *volatile *)*p; /* warm up */
    int64_t t0 = wl_now_ns();
    for (uint64_t i = 0; i < loads; i++) p = (void *volatile *)*p;
    int64_t t1 = wl_now_ns();
    volatile void *keep = (void *)p;
    (void)keep;
    free(mem);
    return (double)(t1 - t0) / (double)loads;
}

void wl_memcopy(size_t bytes, uint64_t rounds) {
    char *a = malloc(bytes), *b = malloc(bytes);
    if (!a || !b) abort();
    memset(a, 1, bytes);
    memset(b, 2, bytes);
    for (uint64_t i = 0; rounds == 0 || i < rounds; i++) {
        memcpy((i & 1) ? a : b, (i & 1) ? b : a, bytes);
        __asm__ volatile("" ::: "memory");
    }
    free(a);
    free(b);
}

uint64_t wl_payload(uint8_t *buf, size_t bytes, uint64_t lines) {
    size_t nlines = bytes / LINE, at = 0;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < lines; i++) {
        at += 97; /* a prime stride of lines defeats the prefetchers somewhat */
        if (at >= nlines) at -= nlines;
        sum += buf[at * LINE]++;
    }
    return sum;
}

/* ---- locks -------------------------------------------------------------------------------- */

static void busy_lock(uint32_t *l) {
    while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(l, __ATOMIC_RELAXED)) __builtin_ia32_pause();
}

static void busy_unlock(uint32_t *l) { __atomic_store_n(l, 0, __ATOMIC_RELEASE); }

static long futex(uint32_t *addr, int op, uint32_t val) {
    /* Shared (not FUTEX_PRIVATE_FLAG): the waiters are in other processes. */
    return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

/* The three-state futex mutex: 0 free, 1 taken, 2 taken and maybe waiters. */
static void block_lock(uint32_t *l) {
    uint32_t c = 0;
    if (__atomic_compare_exchange_n(l, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return;
    if (c != 2) c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
    while (c != 0) {
        futex(l, FUTEX_WAIT, 2);
        c = __atomic_exchange_n(l, 2, __ATOMIC_ACQUIRE);
    }
}

static void block_unlock(uint32_t *l) {
    if (__atomic_exchange_n(l, 0, __ATOMIC_RELEASE) == 2) futex(l, FUTEX_WAKE, 1);
}

int64_t wl_spin(struct wl_spin_shared *s, enum wl_lock_kind kind, uint32_t iters, uint32_t who) {
    int64_t t0 = wl_now_ns();
    for (uint32_t i = 0; i < iters; i++) {
        if (kind == WL_LOCK_BUSY) busy_lock(&s->lock); else block_lock(&s->lock);
        size_t k = (i * 31u + who) % 512;
        uint64_t v = s->data[k];
        s->data[k] = v + who + 1;
        s->counter++;
        if (kind == WL_LOCK_BUSY) busy_unlock(&s->lock); else block_unlock(&s->lock);
    }
    return wl_now_ns() - t0;
}
