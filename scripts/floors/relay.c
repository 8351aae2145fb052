/* A slow link for the start-up benchmarks: a loopback relay that holds each
 * chunk it forwards for DELAY_MS before passing it on, both ways (so a
 * request and its answer take 2 x DELAY_MS more, as over a link with that
 * one-way delay). With UPSTREAM_PORT 0 it accepts connections and never
 * answers: a server that hangs.
 *
 *   relay LISTEN_PORT UPSTREAM_PORT DELAY_MS
 *
 * One process per connection and direction; it runs until killed, and
 * they end with it (Linux). */
#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

static int delay_ms;

static void pump(int from, int to) {
    char buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n <= 0) break;
        usleep(delay_ms * 1000);
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(to, buf + done, n - done);
            if (w <= 0) _exit(0);
            done += w;
        }
    }
    shutdown(to, SHUT_WR);
}

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: relay LISTEN_PORT UPSTREAM_PORT DELAY_MS\n"); return 2; }
    int upstream = atoi(argv[2]);
    delay_ms = atoi(argv[3]);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = loopback(atoi(argv[1]));
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 128) < 0) { perror("listen"); return 1; }
    for (;;) {
        int client = accept(s, NULL, NULL);
        if (client < 0) continue;
        if (fork() == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            close(s);
            if (upstream == 0) { for (;;) pause(); }
            int up = socket(AF_INET, SOCK_STREAM, 0);
            struct sockaddr_in to = loopback(upstream);
            if (connect(up, (struct sockaddr *)&to, sizeof to) < 0) _exit(1);
            if (fork() == 0) { prctl(PR_SET_PDEATHSIG, SIGKILL); pump(client, up); _exit(0); }
            pump(up, client);
            _exit(0);
        }
        close(client);
    }
}
