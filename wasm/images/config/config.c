// config prints its environment and the files of its mounted directories,
// then re-reads them every few seconds and prints them again when something
// changed: the image for ConfigMap, Secret and downward API lessons (env
// vars are fixed at start; mounted files follow updates).
//
//	config: round 1
//	env HOSTNAME=web-7d4b9-x2x8q
//	env COLOR=blue
//	file /etc/config/color: blue
//	config: round 4 (changed)
//	...
//
// Args: the directories to read (default /etc/config); --interval=N seconds
// between reads (default 5); --rounds=N stop after N reads and exit 0.
// Entries starting with "." are skipped (a configMap volume keeps its
// versions in ..data and ..<timestamp>).
#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#include "../flags.h"

extern char **environ;

#define SNAP (64 * 1024)
#define MAXFILE 4096
#define MAXNAMES 256

static char snap[SNAP], prev[SNAP];
static size_t len;

static void add(const char *s, size_t n) {
	if (len + n >= SNAP - 1) {
		n = SNAP - 1 - len;
	}
	memcpy(snap + len, s, n);
	len += n;
	snap[len] = 0;
}

static void adds(const char *s) { add(s, strlen(s)); }

static int cmp(const void *a, const void *b) {
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void readdir_into(const char *dir) {
	DIR *d = opendir(dir);
	if (d == NULL) {
		adds("dir ");
		adds(dir);
		adds(": not mounted\n");
		return;
	}
	char *names[MAXNAMES];
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < MAXNAMES) {
		if (e->d_name[0] != '.') {
			names[n++] = strdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, n, sizeof names[0], cmp);
	for (int i = 0; i < n; i++) {
		char path[1024], buf[MAXFILE];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		FILE *f = fopen(path, "r");
		if (f == NULL) {
			adds("file ");
			adds(path);
			adds(": (not a readable file)\n");
			free(names[i]);
			continue;
		}
		size_t got = fread(buf, 1, sizeof buf, f);
		fclose(f);
		while (got > 0 && buf[got - 1] == '\n') {
			got--;
		}
		adds("file ");
		adds(path);
		adds(": ");
		add(buf, got);
		adds("\n");
		free(names[i]);
	}
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	long interval = flag(argc, argv, "--interval", 5);
	long rounds = flag(argc, argv, "--rounds", -1);
	for (long round = 1; rounds < 0 || round <= rounds; round++) {
		len = 0;
		snap[0] = 0;
		for (char **e = environ; *e != NULL; e++) {
			adds("env ");
			adds(*e);
			adds("\n");
		}
		int dirs = 0;
		for (int i = 1; i < argc; i++) {
			if (strncmp(argv[i], "--", 2) != 0) {
				readdir_into(argv[i]);
				dirs++;
			}
		}
		if (dirs == 0) {
			readdir_into("/etc/config");
		}
		if (round == 1 || strcmp(snap, prev) != 0) {
			printf("config: round %ld%s\n%s", round, round == 1 ? "" : " (changed)", snap);
			memcpy(prev, snap, len + 1);
		}
		if (rounds < 0 || round < rounds) {
			sleep((unsigned)interval);
		}
	}
	return 0;
}
