// escape tries to leave its volume through symbolic links, as a hostile
// container would: for each pair of arguments LINK TARGET it creates the
// symlink LINK -> TARGET, then reads LINK (a file, or LINK/etc/hostname for a
// directory) and writes LINK/escaped. It prints what happened at each step;
// the runtime's tests check that nothing outside the container was reached.
//
// Built by wasm/images/build.sh (clang --target=wasm32-wasi -Os).
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *what, const char *path) {
	char buf[256];
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		printf("%s %s: %s\n", what, path, strerror(errno));
		return;
	}
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	printf("%s %s: read %zu bytes: %s\n", what, path, n, buf);
}

int main(int argc, char **argv) {
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *link = argv[i], *target = argv[i + 1];
		if (symlink(target, link) != 0) {
			printf("symlink %s -> %s: %s\n", link, target, strerror(errno));
		} else {
			printf("symlink %s -> %s: made\n", link, target);
		}
		show("read", link);
		char p[512];
		snprintf(p, sizeof p, "%s/etc/hostname", link);
		show("read", p);
		snprintf(p, sizeof p, "%s/escaped", link);
		FILE *f = fopen(p, "w");
		if (f == NULL) {
			printf("write %s: %s\n", p, strerror(errno));
		} else {
			fputs("escaped\n", f);
			fclose(f);
			printf("write %s: written\n", p);
		}
	}
	return 0;
}
