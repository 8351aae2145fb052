/* How long a new thread waits before it first runs while its parent keeps
 * its CPU busy, as an update's main thread does: left where Linux puts it
 * (on the parent's CPU, until the next load balance), and moved at once to
 * another CPU with pthread_setaffinity_np, as `update-providers` moves its
 * helper (src/update.rs, OtherCpus). Prints the median and maximum of each
 * over ROUNDS trials (default 50), in microseconds.
 *
 *   cc -O2 -pthread -o thread_start thread_start.c && ./thread_start 50 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static _Atomic double first_ran;

static void *helper(void *arg) {
    (void)arg;
    atomic_store(&first_ran, now_us());
    return NULL;
}

/* Starts a thread, keeps this CPU busy until it has run (at most 20 ms),
 * and returns how long it waited. */
static double trial(int move) {
    atomic_store(&first_ran, 0);
    double start = now_us();
    pthread_t thread;
    if (pthread_create(&thread, NULL, helper, NULL) != 0) { perror("pthread_create"); exit(1); }
    if (move) {
        cpu_set_t cpus;
        CPU_ZERO(&cpus);
        sched_getaffinity(0, sizeof cpus, &cpus);
        CPU_CLR(sched_getcpu(), &cpus);
        if (CPU_COUNT(&cpus) > 0) pthread_setaffinity_np(thread, sizeof cpus, &cpus);
    }
    while (atomic_load(&first_ran) == 0 && now_us() - start < 20000) {}
    double waited = atomic_load(&first_ran) ? atomic_load(&first_ran) - start : 20000;
    pthread_join(thread, NULL);
    return waited;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    if (rounds < 1) rounds = 1;
    double *left = malloc(rounds * sizeof *left), *moved = malloc(rounds * sizeof *moved);
    for (int i = 0; i < rounds; i++) {
        usleep(5000); /* the other CPU idle again, as before a command starts */
        left[i] = trial(0);
        usleep(5000);
        moved[i] = trial(1);
    }
    qsort(left, rounds, sizeof *left, cmp);
    qsort(moved, rounds, sizeof *moved, cmp);
    printf("left where it starts: median %.0f us, max %.0f us\n", left[rounds / 2], left[rounds - 1]);
    printf("moved to another CPU: median %.0f us, max %.0f us\n", moved[rounds / 2], moved[rounds - 1]);
    return 0;
}
