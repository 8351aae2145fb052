/* The physical floor of a start-up with a fresh cache: one TCP connection
 * to the loopback server, one GET with If-None-Match, read the answer (a 304)
 * to the end. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: get_floor PORT ETAG\n"); return 2; }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(atoi(argv[1]));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&addr, sizeof addr) < 0) { perror("connect"); return 1; }
    char req[1024];
    int len = snprintf(req, sizeof req,
        "GET /v2/providers HTTP/1.1\r\nHost: 127.0.0.1\r\nIf-None-Match: %s\r\nConnection: close\r\n\r\n", argv[2]);
    if (write(s, req, len) != len) { perror("write"); return 1; }
    char buf[4096];
    ssize_t n, total = 0;
    while ((n = read(s, buf, sizeof buf)) > 0) total += n;
    if (total < 12 || strncmp(buf, "HTTP/1.1 304", 12) != 0) { fprintf(stderr, "expected a 304\n"); return 1; }
    return 0;
}
