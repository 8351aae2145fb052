/* Side-by-side timing of two commands: WARMUP runs of each, then ROUNDS
 * rounds alternating A and B, each run timed from spawn to exit. Prints the
 * median and minimum of each, the ratio of medians A/B, the median CPU time
 * (user + system) of each and their ratio, and the peak resident memory of
 * each measured process itself (wait4).
 *
 *   abbench ROUNDS WARMUP -- A [ARGS...] -- B [ARGS...] [-- A2 [ARGS...]]
 *
 * With A2, A's runs alternate between A and A2 (e.g. two different catalogs,
 * so that every update really changes the cache).
 *
 * Environment: ABBENCH_FRESH_HOME=DIR gives every run a HOME of its own,
 * new and empty, made under DIR (a first start, a first download);
 * ABBENCH_PAUSE_MS=N waits N ms after each run, unmeasured, for what a run
 * left in the background (a detached refresh) to end.
 *
 * Output goes to /dev/null; a failing run aborts the benchmark. */
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *fresh_home;
static long pause_ms;

/* Runs argv; returns its wall time in ms, adds its CPU time to *cpu_ms. */
static double run(char **argv, long *rss_kib, double *cpu_ms) {
    if (fresh_home) {
        char home[4096];
        snprintf(home, sizeof home, "%s/homeXXXXXX", fresh_home);
        if (!mkdtemp(home)) { perror("mkdtemp"); exit(1); }
        setenv("HOME", home, 1);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid;
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) { perror(argv[0]); exit(1); }
    int status;
    struct rusage usage;
    wait4(pid, &status, 0, &usage);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "abbench: %s failed (status %d)\n", argv[0], status);
        exit(1);
    }
    if (usage.ru_maxrss > *rss_kib) *rss_kib = usage.ru_maxrss;
    *cpu_ms = (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3
        + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
    double wall = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (pause_ms > 0) usleep(pause_ms * 1000);
    return wall;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc < 7 || strcmp(argv[3], "--") != 0) {
        fprintf(stderr, "usage: abbench ROUNDS WARMUP -- A [ARGS...] -- B [ARGS...]\n");
        return 2;
    }
    int rounds = atoi(argv[1]), warmup = atoi(argv[2]);
    fresh_home = getenv("ABBENCH_FRESH_HOME");
    pause_ms = getenv("ABBENCH_PAUSE_MS") ? atol(getenv("ABBENCH_PAUSE_MS")) : 0;
    char **a = argv + 4, **b = NULL, **a2 = NULL;
    for (int i = 4; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;
            if (!b) b = argv + i + 1; else { a2 = argv + i + 1; break; }
        }
    if (!a2) a2 = a;
    if (!b || !*b || rounds < 1) { fprintf(stderr, "abbench: need A and B\n"); return 2; }
    long rss_a = 0, rss_b = 0, ignore = 0;
    double cpu_ignore;
    for (int i = 0; i < warmup; i++) { run(i % 2 ? a2 : a, &ignore, &cpu_ignore); run(b, &ignore, &cpu_ignore); }
    double *ta = malloc(rounds * sizeof *ta), *tb = malloc(rounds * sizeof *tb);
    double *ca = malloc(rounds * sizeof *ca), *cb = malloc(rounds * sizeof *cb);
    for (int i = 0; i < rounds; i++) {
        /* The alternation goes on from the warm-up's: after an odd
         * warm-up, A again would write what the cache holds already. */
        ta[i] = run((warmup + i) % 2 ? a2 : a, &rss_a, &ca[i]);
        tb[i] = run(b, &rss_b, &cb[i]);
    }
    qsort(ta, rounds, sizeof *ta, cmp);
    qsort(tb, rounds, sizeof *tb, cmp);
    qsort(ca, rounds, sizeof *ca, cmp);
    qsort(cb, rounds, sizeof *cb, cmp);
    double ma = ta[rounds / 2], mb = tb[rounds / 2];
    printf("A median %.3f ms (min %.3f), cpu %.3f ms, peak %ld KiB\n", ma, ta[0], ca[rounds / 2], rss_a);
    printf("B median %.3f ms (min %.3f), cpu %.3f ms, peak %ld KiB\n", mb, tb[0], cb[rounds / 2], rss_b);
    printf("ratio A/B %.2f, cpu %.2f\n", ma / mb, ca[rounds / 2] / cb[rounds / 2]);
    return 0;
}
