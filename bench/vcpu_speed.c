/*
 * bench/vcpu_speed.c: how fast each CPU of this machine runs, alone and with all of them
 * busy at once, so a benchmark can say what the host gave it beside its figures.
 *
 *   bench_vcpu_speed [MS]
 *
 * Each CPU the process may run on gets a thread pinned to it that steps a 64-bit linear
 * congruential generator (one multiply and one add a step, a dependency chain, no memory)
 * for MS milliseconds (default 100): first one CPU at a time, then all together. Prints
 * one line: `vCPU speed (M steps/s): alone 0:598 1:610; together 0:590 1:601`. On a virtual
 * machine whose CPUs share physical cores with other tenants, "together" falls below
 * "alone" when a neighbour is busy: then work that needs every CPU (a `run` of many
 * tables) loses more than work that mostly needs one (a `stream`'s reader).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "timing.h"

typedef struct spin {
    int       cpu;
    double    ms;
    double    rate; /* million steps a second */
    pthread_t th;
} spin;

static void *spin_main(void *arg)
{
    spin *s = arg;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(s->cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    volatile uint64_t x = 1;
    uint64_t n = 0;
    double t0 = bench_now_ms(), t;
    do {
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        n += 100000;
        t = bench_now_ms() - t0;
    } while (t < s->ms);
    s->rate = (double)n / t / 1e3;
    return NULL;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 100;
    if (ms <= 0) {
        fprintf(stderr, "usage: bench_vcpu_speed [MS]\n");
        return 2;
    }
    cpu_set_t mine;
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) {
        perror("sched_getaffinity");
        return 1;
    }
    spin s[CPU_SETSIZE];
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < 64; c++)
        if (CPU_ISSET(c, &mine))
            s[n++] = (spin){ .cpu = c, .ms = ms };
    printf("vCPU speed (M steps/s): alone");
    for (int i = 0; i < n; i++) {
        pthread_create(&s[i].th, NULL, spin_main, &s[i]);
        pthread_join(s[i].th, NULL);
        printf(" %d:%.0f", s[i].cpu, s[i].rate);
    }
    printf("; together");
    for (int i = 0; i < n; i++)
        pthread_create(&s[i].th, NULL, spin_main, &s[i]);
    for (int i = 0; i < n; i++)
        pthread_join(s[i].th, NULL);
    for (int i = 0; i < n; i++)
        printf(" %d:%.0f", s[i].cpu, s[i].rate);
    printf("\n");
    return 0;
}
