// flags.h: the one helper every image shares, included by each image's .c.
#ifndef KUBETAB_FLAGS_H
#define KUBETAB_FLAGS_H

#include <stdlib.h>
#include <string.h>

// flag returns the integer value of --name=N in argv, or def when it is absent.
static inline long flag(int argc, char **argv, const char *name, long def) {
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
			return strtol(argv[i] + n + 1, NULL, 10);
		}
	}
	return def;
}

// has reports whether argv contains the exact word.
static inline int has(int argc, char **argv, const char *word) {
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], word) == 0) {
			return 1;
		}
	}
	return 0;
}

#endif
