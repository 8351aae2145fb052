/* A minimal loopback catalog server for the benchmarks: GET /v2/providers
 * answers 304 when If-None-Match carries its ETag, else 200 with the file.
 * One connection at a time; counts the body bytes it sent (printed on
 * SIGTERM) so a run can prove it sent none. */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static long body_bytes = 0;
static void report(int sig) { (void)sig; fprintf(stderr, "body bytes sent: %ld\n", body_bytes); _exit(0); }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: server PORT FILE ETAG\n"); return 2; }
    signal(SIGTERM, report);
    signal(SIGPIPE, SIG_IGN);
    FILE *f = fopen(argv[2], "rb");
    struct stat st;
    if (!f || stat(argv[2], &st) < 0) { perror("file"); return 1; }
    char *body = malloc(st.st_size);
    if (fread(body, 1, st.st_size, f) != (size_t)st.st_size) { perror("read"); return 1; }
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 64) < 0) { perror("bind"); return 1; }
    char match[256];
    snprintf(match, sizeof match, "if-none-match: %s", argv[3]);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) continue;
        char req[8192];
        ssize_t got = 0, n;
        while (got < (ssize_t)sizeof req - 1 && (n = read(c, req + got, sizeof req - 1 - got)) > 0) {
            got += n;
            req[got] = 0;
            if (strstr(req, "\r\n\r\n")) break;
        }
        for (char *p = req; *p; p++) if (*p >= 'A' && *p <= 'Z') *p += 32;
        char head[512];
        if (strstr(req, match)) {
            int len = snprintf(head, sizeof head, "HTTP/1.1 304 Not Modified\r\nETag: %s\r\nConnection: close\r\n\r\n", argv[3]);
            write(c, head, len);
        } else {
            int len = snprintf(head, sizeof head,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nETag: %s\r\nContent-Length: %ld\r\nConnection: close\r\n\r\n",
                argv[3], (long)st.st_size);
            write(c, head, len);
            for (off_t done = 0; done < st.st_size;) {
                ssize_t w = write(c, body + done, st.st_size - done);
                if (w <= 0) break;
                done += w;
                body_bytes += w;
            }
        }
        close(c);
    }
}
