/* Runs a command and prints the peak resident memory of that very process
 * (from wait4), in KiB, to stderr as "peak_rss_kib N". The command's own
 * output is passed through. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: peak_rss COMMAND [ARGS...]\n"); return 2; }
    pid_t pid = fork();
    if (pid == 0) { execvp(argv[1], argv + 1); perror("exec"); _exit(127); }
    int status;
    struct rusage usage;
    if (wait4(pid, &status, 0, &usage) < 0) { perror("wait4"); return 1; }
    fprintf(stderr, "peak_rss_kib %ld\n", usage.ru_maxrss);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
