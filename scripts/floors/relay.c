/* A slow link on loopback, for the benchmarks: a relay that delivers what
 * it forwards as a link with a one-way delay of DELAY_MS would.
 *
 *   relay LISTEN_PORT UPSTREAM_PORT DELAY_MS
 *
 * On loopback connect() returns at once, so a relay that merely held each
 * chunk for the delay from when it read it would hide whatever the client
 * does between connect() and its first write (setting up TLS, seeding a
 * random generator): over a real link that work is added to the round
 * trip of the connection's handshake. So the relay delivers:
 *
 * - the client's bytes written before it heard anything from the server at
 *   read time + 3 x DELAY_MS (connect's round trip, then the bytes' own way
 *   across, counted from when the client wrote them);
 * - every other chunk, either way, at read time + DELAY_MS;
 * - and it connects upstream DELAY_MS after it accepted (the SYN's way).
 *
 * Chunks keep their order: each direction is a queue, written out by a
 * thread of its own when each chunk is due. With UPSTREAM_PORT 0 it
 * accepts connections and never answers: a server that hangs. One thread
 * per connection and direction; it runs until killed. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long delay_ns;

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void sleep_until(long long at) {
    long long left = at - now_ns();
    if (left <= 0) return;
    struct timespec t = { left / 1000000000LL, left % 1000000000LL };
    while (nanosleep(&t, &t) < 0 && errno == EINTR) {}
}

struct chunk {
    struct chunk *next;
    long long due;
    ssize_t len; /* 0: the end of the stream */
    char data[];
};

/* One direction: read from `from`, deliver to `to` when due. */
struct pipe {
    int from, to;
    int first_extra; /* 1: client to server, extra delay until answered */
    int *answered; /* set once a byte reached the client */
    pthread_mutex_t lock;
    pthread_cond_t ready;
    struct chunk *head, *tail;
};

static void push(struct pipe *p, struct chunk *c) {
    pthread_mutex_lock(&p->lock);
    c->next = NULL;
    if (p->tail) p->tail->next = c; else p->head = c;
    p->tail = c;
    pthread_cond_signal(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

static void *reader(void *arg) {
    struct pipe *p = arg;
    for (;;) {
        struct chunk *c = malloc(sizeof *c + 65536);
        ssize_t n = read(p->from, c->data, 65536);
        long long at = now_ns();
        c->len = n > 0 ? n : 0;
        int early = p->first_extra && !__atomic_load_n(p->answered, __ATOMIC_ACQUIRE);
        c->due = at + (early ? 3 : 1) * delay_ns;
        push(p, c);
        if (n <= 0) return NULL;
    }
}

static void *writer(void *arg) {
    struct pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->lock);
        while (!p->head) pthread_cond_wait(&p->ready, &p->lock);
        struct chunk *c = p->head;
        p->head = c->next;
        if (!p->head) p->tail = NULL;
        pthread_mutex_unlock(&p->lock);
        sleep_until(c->due);
        if (c->len == 0) {
            shutdown(p->to, SHUT_WR);
            free(c);
            return NULL;
        }
        for (ssize_t done = 0; done < c->len;) {
            ssize_t w = write(p->to, c->data + done, c->len - done);
            if (w <= 0) { free(c); shutdown(p->from, SHUT_RD); return NULL; }
            done += w;
        }
        if (!p->first_extra) __atomic_store_n(p->answered, 1, __ATOMIC_RELEASE);
        free(c);
    }
}

/* A link adds delay, not the relay's own batching: every chunk goes out
 * when due (Nagle's algorithm with the peer's delayed ACKs would hold some
 * back 40 ms). */
static void no_delay(int s) {
    int one = 1;
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static struct sockaddr_in loopback(int port) {
    struct sockaddr_in addr = {0};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return addr;
}

struct connection { int client; int upstream_port; };

static void *serve(void *arg) {
    struct connection conn = *(struct connection *)arg;
    free(arg);
    if (conn.upstream_port == 0) { for (;;) pause(); }
    long long accepted = now_ns();
    no_delay(conn.client);
    int *answered = calloc(1, sizeof *answered);
    struct pipe *up = calloc(1, sizeof *up), *down = calloc(1, sizeof *down);
    pthread_mutex_init(&up->lock, NULL); pthread_cond_init(&up->ready, NULL);
    pthread_mutex_init(&down->lock, NULL); pthread_cond_init(&down->ready, NULL);
    up->from = conn.client; up->first_extra = 1; up->answered = answered;
    down->to = conn.client; down->answered = answered;
    /* What the client writes meanwhile is read and queued already. */
    pthread_t t[4];
    pthread_create(&t[0], NULL, reader, up);
    sleep_until(accepted + delay_ns);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = loopback(conn.upstream_port);
    if (connect(s, (struct sockaddr *)&to, sizeof to) < 0) { close(conn.client); return NULL; }
    no_delay(s);
    up->to = s; down->from = s;
    pthread_create(&t[1], NULL, writer, up);
    pthread_create(&t[2], NULL, reader, down);
    pthread_create(&t[3], NULL, writer, down);
    for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
    close(s);
    close(conn.client);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: relay LISTEN_PORT UPSTREAM_PORT DELAY_MS\n"); return 2; }
    int upstream = atoi(argv[2]);
    delay_ns = atol(argv[3]) * 1000000L;
    signal(SIGPIPE, SIG_IGN);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = loopback(atoi(argv[1]));
    if (bind(s, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(s, 128) < 0) { perror("listen"); return 1; }
    for (;;) {
        int client = accept(s, NULL, NULL);
        if (client < 0) continue;
        struct connection *conn = malloc(sizeof *conn);
        conn->client = client;
        conn->upstream_port = upstream;
        pthread_t t;
        pthread_create(&t, NULL, serve, conn);
        pthread_detach(t);
    }
}
