/* The same tasks as ClockCost.java, in C: what a plain rdtsc, an ordered one
 * (lfence; rdtsc, as the vDSO reads the TSC) and clock_gettime cost in a task whose
 * loads miss the cache. Build: cc -O2 -o clock_cost clock_cost.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static uint64_t read_clock(int how) {
    struct timespec t;
    switch (how) {
    case 1: return __rdtsc();
    case 2: _mm_lfence(); return __rdtsc();
    case 3: clock_gettime(CLOCK_MONOTONIC, &t); return (uint64_t)t.tv_nsec;
    default: return 0;
    }
}

int main(void) {
    const int n = 1 << 24, tasks = 2000000;
    const char *names[] = {"no clock", "rdtsc", "lfence; rdtsc", "clock_gettime"};
    int *a = malloc(sizeof(int) * n);
    if (!a) return 1;
    for (int i = 0; i < n; i++) a[i] = i * 7;
    volatile uint64_t sink = 0;
    double best[4] = {1e18, 1e18, 1e18, 1e18};
    for (int rep = 0; rep < 4; rep++) {
        for (int how = 0; how < 4; how++) {
            double t0 = now_ns();
            uint64_t s = 0, ts = 0;
            int idx = 0;
            for (int k = 0; k < tasks; k++) {
                for (int j = 0; j < 16; j++) {
                    idx += 4099;
                    if (idx >= n) idx -= n;
                    s += (uint64_t)a[idx];
                }
                if (how) ts += read_clock(how);
            }
            double t = (now_ns() - t0) / tasks;
            sink += s + ts;
            if (rep > 0 && t < best[how]) best[how] = t;
        }
    }
    for (int how = 0; how < 4; how++)
        printf("cache-missing task, %-14s %6.1f ns/task\n", names[how], best[how]);
    free(a);
    return 0;
}
