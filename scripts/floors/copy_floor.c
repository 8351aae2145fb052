/* The physical floor of `update-providers FILE`: read the source, write it
 * to a temporary file beside the destination, fsync it, rename it over the
 * destination, fsync the folder. No parsing, no checks beyond errors. */
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: copy_floor SRC DEST\n"); return 2; }
    int in = open(argv[1], O_RDONLY);
    struct stat st;
    if (in < 0 || fstat(in, &st) < 0) { perror("source"); return 1; }
    char *buf = malloc(st.st_size ? st.st_size : 1);
    ssize_t got = 0;
    while (got < st.st_size) {
        ssize_t n = read(in, buf + got, st.st_size - got);
        if (n <= 0) { perror("read"); return 1; }
        got += n;
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", argv[2], getpid());
    int out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) { perror("temp"); return 1; }
    for (ssize_t done = 0; done < got;) {
        ssize_t n = write(out, buf + done, got - done);
        if (n <= 0) { perror("write"); return 1; }
        done += n;
    }
    if (fsync(out) < 0 || close(out) < 0) { perror("fsync"); return 1; }
    if (rename(tmp, argv[2]) < 0) { perror("rename"); return 1; }
    char *dest = strdup(argv[2]);
    int dir = open(dirname(dest), O_RDONLY);
    if (dir < 0 || fsync(dir) < 0) { perror("dir"); return 1; }
    return 0;
}
