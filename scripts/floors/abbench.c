/* Side-by-side timing of two commands: WARMUP runs of each, then ROUNDS
 * rounds alternating A and B, each run timed from spawn to exit. Prints the
 * median and minimum of each, the ratio of medians A/B, and the peak
 * resident memory of each measured process itself (wait4).
 *
 *   abbench ROUNDS WARMUP -- A [ARGS...] -- B [ARGS...] [-- A2 [ARGS...]]
 *
 * With A2, A's runs alternate between A and A2 (e.g. two different catalogs,
 * so that every update really changes the cache).
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

static double run(char **argv, long *rss_kib) {
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
    return (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
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
    char **a = argv + 4, **b = NULL, **a2 = NULL;
    for (int i = 4; i < argc; i++)
        if (strcmp(argv[i], "--") == 0) {
            argv[i] = NULL;
            if (!b) b = argv + i + 1; else { a2 = argv + i + 1; break; }
        }
    if (!a2) a2 = a;
    if (!b || !*b || rounds < 1) { fprintf(stderr, "abbench: need A and B\n"); return 2; }
    long rss_a = 0, rss_b = 0, ignore = 0;
    for (int i = 0; i < warmup; i++) { run(i % 2 ? a2 : a, &ignore); run(b, &ignore); }
    double *ta = malloc(rounds * sizeof *ta), *tb = malloc(rounds * sizeof *tb);
    for (int i = 0; i < rounds; i++) { ta[i] = run(i % 2 ? a2 : a, &rss_a); tb[i] = run(b, &rss_b); }
    qsort(ta, rounds, sizeof *ta, cmp);
    qsort(tb, rounds, sizeof *tb, cmp);
    double ma = ta[rounds / 2], mb = tb[rounds / 2];
    printf("A median %.3f ms (min %.3f), peak %ld KiB\n", ma, ta[0], rss_a);
    printf("B median %.3f ms (min %.3f), peak %ld KiB\n", mb, tb[0], rss_b);
    printf("ratio A/B %.2f\n", ma / mb);
    return 0;
}
