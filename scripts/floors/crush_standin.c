/* A stand-in Crush for the front's rows of scripts/bench: it answers
 * `--version` as a release after v0.90 does, and otherwise exits at once,
 * so that a row measures what the front adds to a start and nothing of
 * Crush itself. */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--version") == 0) puts("crush version v0.91.0");
    return 0;
}
