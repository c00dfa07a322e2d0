// busybox is kubetab's userland: one multi-call WASI program, as BusyBox
// is, present in every image's /bin (/bin/sh, /bin/ls ... are copies of it)
// and the whole of the busybox image. It picks the applet by the name it was
// run as (argv[0]'s last component), or by its first argument when run as
// "busybox".
//
// WASI preview1 has no fork and no exec, so the shell runs applets in its own
// instance, a pipeline stage after stage through memory buffers, and any
// other program (the image's own, /usr/local/bin/web ...) through the
// runtime's kubetab_host.spawn. The network (wget, nslookup) and signals
// (kill) are host functions too; see core/kubelet/cri/host.go.
//
// Built by wasm/images/build.sh (clang --target=wasm32-wasi -Os, wasi-libc).
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HOST(name) __attribute__((import_module("kubetab_host"), import_name(name)))
HOST("kill") int32_t host_kill(int32_t pid, int32_t sig);
HOST("isatty") int32_t host_isatty(int32_t fd);
HOST("sigint") int32_t host_sigint(int32_t op);
HOST("lookup") int32_t host_lookup(const char *name, int32_t len, char *out, int32_t cap);
HOST("http_get") int32_t host_http_get(const char *url, int32_t len, char *out, int32_t cap);
HOST("http_read") int32_t host_http_read(int32_t h, char *buf, int32_t cap);
HOST("http_close") void host_http_close(int32_t h);
HOST("spawn") int32_t host_spawn(const char *argv, int32_t argvlen, const char *env, int32_t envlen,
                                 const char *in, int32_t inlen, int32_t flags);
HOST("spawn_read") int32_t host_spawn_read(char *buf, int32_t cap);

// Ctrl-C. An interactive shell catches SIGINT (host_sigint(1)), as sh does:
// the runtime then only records it, and the command line that runs stops at
// the next check (intr_pending: between commands, in sleep and tail -f),
// with status 130, and the shell prompts again. Without catching, SIGINT
// ends the process, as the default action does.
static int catching_intr, interrupted;

static int intr_pending(void) {
	if (catching_intr && !interrupted && host_sigint(2)) {
		interrupted = 1;
	}
	return interrupted;
}

// nap sleeps for up to seconds, in slices that notice a Ctrl-C; 0 when it
// was interrupted.
static int nap(double seconds) {
	while (seconds > 0) {
		double step = seconds > 0.1 ? 0.1 : seconds;
		struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
		nanosleep(&ts, NULL);
		seconds -= step;
		if (intr_pending()) {
			return 0;
		}
	}
	return 1;
}

extern char **environ;

// ---- I/O: what a command reads and writes. The shell points these at
// memory buffers and files for pipes and redirections.

typedef struct {
	FILE *f;          // a stream, or NULL for a buffer
	const char *buf;  // a buffer's bytes
	size_t len, pos;
} rd;

static rd rd_stdin = {0};
static rd *IN = &rd_stdin;
static FILE *OUT, *ERR;

static int rd_getc(rd *r) {
	if (r->f != NULL) {
		return fgetc(r->f);
	}
	if (r->buf == NULL || r->pos >= r->len) {
		return EOF;
	}
	return (unsigned char)r->buf[r->pos++];
}

static size_t rd_read(rd *r, char *b, size_t n) {
	if (r->f != NULL) {
		return fread(b, 1, n, r->f);
	}
	size_t left = r->buf == NULL ? 0 : r->len - r->pos;
	if (n > left) {
		n = left;
	}
	memcpy(b, r->buf + r->pos, n);
	r->pos += n;
	return n;
}

// rd_line reads one line (without its newline) into a growing buffer; it
// returns NULL at end of input.
static char *rd_line(rd *r, char **line, size_t *cap) {
	size_t n = 0;
	int c;
	while ((c = rd_getc(r)) != EOF) {
		if (n + 2 > *cap) {
			*cap = *cap ? *cap * 2 : 128;
			*line = realloc(*line, *cap);
		}
		if (c == '\n') {
			break;
		}
		(*line)[n++] = (char)c;
	}
	if (c == EOF && n == 0) {
		return NULL;
	}
	if (*line == NULL) {
		*cap = 2;
		*line = malloc(*cap);
	}
	(*line)[n] = '\0';
	return *line;
}

// slurp reads all of r.
static char *slurp(rd *r, size_t *len) {
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	size_t got;
	while ((got = rd_read(r, b + n, cap - n)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			b = realloc(b, cap);
		}
	}
	*len = n;
	return b;
}

static const char *applet = "busybox";

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	fprintf(ERR, "%s: ", applet);
	vfprintf(ERR, fmt, ap);
	fputc('\n', ERR);
	va_end(ap);
	return 1;
}

// open_in opens a file argument for reading: "-" is the command's input.
static int open_in(const char *name, rd *r) {
	memset(r, 0, sizeof *r);
	if (strcmp(name, "-") == 0) {
		*r = *IN;
		r->f = IN->f;
		return 0;
	}
	r->f = fopen(name, "r");
	if (r->f == NULL) {
		fail("%s: %s", name, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fileno(r->f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(r->f);
		r->f = NULL;
		fail("read error: Is a directory");
		return -1;
	}
	return 0;
}

static void close_in(rd *r) {
	if (r->f != NULL && r->f != IN->f) {
		fclose(r->f);
	}
}

// ---- applets

typedef int (*applet_fn)(int argc, char **argv);

static int sh_main(int argc, char **argv);
static int run_argv(int argc, char **argv);

static int cmd_true(int argc, char **argv) { (void)argc, (void)argv; return 0; }
static int cmd_false(int argc, char **argv) { (void)argc, (void)argv; return 1; }

static int cmd_echo(int argc, char **argv) {
	int nl = 1, esc = 0, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
		const char *o = argv[i] + 1;
		if (strspn(o, "neE") != strlen(o)) {
			break;
		}
		for (; *o; o++) {
			nl = *o == 'n' ? 0 : nl;
			esc = *o == 'e' ? 1 : *o == 'E' ? 0 : esc;
		}
	}
	for (; i < argc; i++) {
		for (const char *s = argv[i]; *s; s++) {
			if (esc && *s == '\\' && s[1]) {
				s++;
				switch (*s) {
				case 'n': fputc('\n', OUT); break;
				case 't': fputc('\t', OUT); break;
				case '\\': fputc('\\', OUT); break;
				case 'c': return 0;
				default: fputc('\\', OUT); fputc(*s, OUT);
				}
				continue;
			}
			fputc(*s, OUT);
		}
		if (i + 1 < argc) {
			fputc(' ', OUT);
		}
	}
	if (nl) {
		fputc('\n', OUT);
	}
	return 0;
}

static int cmd_cat(int argc, char **argv) {
	int rc = 0;
	char buf[4096];
	int n0 = argc;
	for (int i = 1; i <= argc; i++) {
		const char *name = i < argc ? argv[i] : "-";
		if (i == argc && n0 > 1) {
			break;
		}
		rd r;
		if (open_in(name, &r) != 0) {
			rc = 1;
			continue;
		}
		size_t n;
		while ((n = rd_read(&r, buf, sizeof buf)) > 0) {
			fwrite(buf, 1, n, OUT);
		}
		if (strcmp(name, "-") == 0) {
			IN->pos = r.pos;
		}
		close_in(&r);
	}
	return rc;
}

static int cmd_env(int argc, char **argv) {
	int i = 1;
	if (i < argc && (strcmp(argv[i], "-i") == 0 || strcmp(argv[i], "-") == 0)) {
		environ = calloc(1, sizeof(char *));
		i++;
	}
	for (; i < argc && strchr(argv[i], '=') != NULL; i++) {
		putenv(argv[i]);
	}
	if (i < argc) {
		return run_argv(argc - i, argv + i);
	}
	for (char **e = environ; *e; e++) {
		fprintf(OUT, "%s\n", *e);
	}
	return 0;
}

static int cmd_printenv(int argc, char **argv) {
	if (argc == 1) {
		for (char **e = environ; *e; e++) {
			fprintf(OUT, "%s\n", *e);
		}
		return 0;
	}
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		const char *v = getenv(argv[i]);
		if (v == NULL) {
			rc = 1;
		} else {
			fprintf(OUT, "%s\n", v);
		}
	}
	return rc;
}

static int read_first_line(const char *path, char *buf, size_t n) {
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	if (fgets(buf, (int)n, f) == NULL) {
		buf[0] = '\0';
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int cmd_hostname(int argc, char **argv) {
	(void)argc, (void)argv;
	char buf[256];
	if (read_first_line("/etc/hostname", buf, sizeof buf) != 0 || buf[0] == '\0') {
		const char *h = getenv("HOSTNAME");
		snprintf(buf, sizeof buf, "%s", h ? h : "localhost");
	}
	fprintf(OUT, "%s\n", buf);
	return 0;
}

static int cmd_pwd(int argc, char **argv) {
	(void)argc, (void)argv;
	char buf[1024];
	if (getcwd(buf, sizeof buf) == NULL) {
		return fail("getcwd: %s", strerror(errno));
	}
	fprintf(OUT, "%s\n", buf);
	return 0;
}

static int cmd_id(int argc, char **argv) {
	(void)argc, (void)argv;
	fprintf(OUT, "uid=0(root) gid=0(root) groups=0(root),10(wheel)\n");
	return 0;
}

static int cmd_whoami(int argc, char **argv) {
	(void)argc, (void)argv;
	fprintf(OUT, "root\n");
	return 0;
}

static int cmd_sleep(int argc, char **argv) {
	if (argc < 2) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: sleep [N]...\n");
		return 1;
	}
	double total = 0;
	for (int i = 1; i < argc; i++) {
		char *end;
		double d = strtod(argv[i], &end);
		switch (*end) {
		case 's': end++; break;
		case 'm': d *= 60; end++; break;
		case 'h': d *= 3600; end++; break;
		case 'd': d *= 86400; end++; break;
		}
		if (end == argv[i] || *end != '\0' || d < 0) {
			return fail("invalid number '%s'", argv[i]);
		}
		total += d;
	}
	return nap(total) ? 0 : 130;
}

static int cmd_date(int argc, char **argv) {
	const char *fmt = "%a %b %e %H:%M:%S %Z %Y";
	int utc = 1;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '+') {
			fmt = argv[i] + 1;
		} else if (strcmp(argv[i], "-u") == 0 || strcmp(argv[i], "-R") == 0) {
			if (argv[i][1] == 'R') {
				fmt = "%a, %d %b %Y %H:%M:%S +0000";
			}
		} else {
			return fail("invalid date '%s'", argv[i]);
		}
	}
	(void)utc;
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	char buf[256];
	strftime(buf, sizeof buf, fmt, &tm);
	fprintf(OUT, "%s\n", buf);
	return 0;
}

static int cmd_mkdir(int argc, char **argv) {
	int parents = 0, rc = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		parents |= strchr(argv[i], 'p') != NULL;
	}
	if (i == argc) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: mkdir [-p] DIRECTORY...\n");
		return 1;
	}
	for (; i < argc; i++) {
		char *p = strdup(argv[i]);
		if (parents) {
			for (char *s = p + 1; *s; s++) {
				if (*s == '/') {
					*s = '\0';
					mkdir(p, 0755);
					*s = '/';
				}
			}
		}
		if (mkdir(p, 0755) != 0 && !(parents && errno == EEXIST)) {
			fail("can't create directory '%s': %s", argv[i], strerror(errno));
			rc = 1;
		}
		free(p);
	}
	return rc;
}

static int cmd_touch(int argc, char **argv) {
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			continue;
		}
		int fd = open(argv[i], O_WRONLY | O_CREAT, 0644);
		if (fd < 0) {
			fail("%s: %s", argv[i], strerror(errno));
			rc = 1;
			continue;
		}
		futimens(fd, NULL);
		close(fd);
	}
	return rc;
}

static int remove_tree(const char *p, int recursive, int force) {
	struct stat st;
	if (lstat(p, &st) != 0) {
		if (force && errno == ENOENT) {
			return 0;
		}
		return fail("can't remove '%s': %s", p, strerror(errno));
	}
	if (S_ISDIR(st.st_mode)) {
		if (!recursive) {
			return fail("'%s' is a directory", p);
		}
		DIR *d = opendir(p);
		if (d != NULL) {
			struct dirent *e;
			int rc = 0;
			while ((e = readdir(d)) != NULL) {
				if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
					continue;
				}
				char sub[1024];
				snprintf(sub, sizeof sub, "%s/%s", p, e->d_name);
				rc |= remove_tree(sub, recursive, force);
			}
			closedir(d);
			if (rc) {
				return rc;
			}
		}
		if (rmdir(p) != 0) {
			return fail("can't remove '%s': %s", p, strerror(errno));
		}
		return 0;
	}
	if (unlink(p) != 0) {
		return fail("can't remove '%s': %s", p, strerror(errno));
	}
	return 0;
}

static int cmd_rm(int argc, char **argv) {
	int r = 0, f = 0, rc = 0, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		r |= strpbrk(argv[i], "rR") != NULL;
		f |= strchr(argv[i], 'f') != NULL;
	}
	if (i == argc && !f) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: rm [-irf] FILE...\n");
		return 1;
	}
	for (; i < argc; i++) {
		rc |= remove_tree(argv[i], r, f);
	}
	return rc;
}

static int cmd_rmdir(int argc, char **argv) {
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		if (rmdir(argv[i]) != 0) {
			rc = fail("'%s': %s", argv[i], strerror(errno));
		}
	}
	return rc;
}

static int copy_file(const char *from, const char *to) {
	FILE *in = fopen(from, "r");
	if (in == NULL) {
		return fail("can't open '%s': %s", from, strerror(errno));
	}
	FILE *out = fopen(to, "w");
	if (out == NULL) {
		fclose(in);
		return fail("can't create '%s': %s", to, strerror(errno));
	}
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
		fwrite(buf, 1, n, out);
	}
	fclose(in);
	struct stat st;
	if (stat(from, &st) == 0) {
		(void)st; // WASI preview1 has no chmod: the copy keeps the default mode
	}
	fclose(out);
	return 0;
}

static int is_dir(const char *p) {
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static const char *base_name(const char *p) {
	size_t n = strlen(p);
	while (n > 1 && p[n - 1] == '/') {
		n--;
	}
	const char *s = p + n;
	while (s > p && s[-1] != '/') {
		s--;
	}
	return s;
}

static int copy_tree(const char *from, const char *to, int recursive) {
	if (!is_dir(from)) {
		return copy_file(from, to);
	}
	if (!recursive) {
		return fail("omitting directory '%s'", from);
	}
	mkdir(to, 0755);
	DIR *d = opendir(from);
	if (d == NULL) {
		return fail("can't open '%s': %s", from, strerror(errno));
	}
	int rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		char a[1024], b[1024];
		snprintf(a, sizeof a, "%s/%s", from, e->d_name);
		snprintf(b, sizeof b, "%s/%s", to, e->d_name);
		rc |= copy_tree(a, b, recursive);
	}
	closedir(d);
	return rc;
}

static int cp_or_mv(int argc, char **argv, int move) {
	int recursive = move, i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		recursive |= strpbrk(argv[i], "rRa") != NULL;
	}
	if (argc - i < 2) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: %s [-r] SOURCE... DEST\n", move ? "mv" : "cp");
		return 1;
	}
	const char *dst = argv[argc - 1];
	int todir = is_dir(dst), rc = 0;
	if (argc - i > 2 && !todir) {
		return fail("'%s' is not a directory", dst);
	}
	for (; i < argc - 1; i++) {
		char target[1024];
		if (todir) {
			snprintf(target, sizeof target, "%s/%s", dst, base_name(argv[i]));
		} else {
			snprintf(target, sizeof target, "%s", dst);
		}
		if (move) {
			if (rename(argv[i], target) == 0) {
				continue;
			}
			if (copy_tree(argv[i], target, 1) == 0) {
				rc |= remove_tree(argv[i], 1, 0);
			} else {
				rc = 1;
			}
			continue;
		}
		rc |= copy_tree(argv[i], target, recursive);
	}
	return rc;
}

static int cmd_cp(int argc, char **argv) { return cp_or_mv(argc, argv, 0); }
static int cmd_mv(int argc, char **argv) { return cp_or_mv(argc, argv, 1); }

static int cmd_ln(int argc, char **argv) {
	int sym = 0, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		sym |= strchr(argv[i], 's') != NULL;
	}
	if (argc - i != 2) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: ln [-s] TARGET LINK\n");
		return 1;
	}
	int r = sym ? symlink(argv[i], argv[i + 1]) : link(argv[i], argv[i + 1]);
	if (r != 0) {
		return fail("%s: %s", argv[i + 1], strerror(errno));
	}
	return 0;
}

// head and tail: -n N (or -N), -c N.
static long count_opt(int argc, char **argv, int *i, int *bytes, int *from) {
	long n = 10;
	for (; *i < argc && argv[*i][0] == '-' && argv[*i][1]; (*i)++) {
		const char *a = argv[*i];
		if (isdigit((unsigned char)a[1])) {
			n = atol(a + 1);
			continue;
		}
		if ((a[1] == 'n' || a[1] == 'c') && (a[2] || *i + 1 < argc)) {
			*bytes = a[1] == 'c';
			const char *v = a[2] ? a + 2 : argv[++*i];
			if (*v == '+' && from != NULL) {
				*from = 1;
				v++;
			}
			n = atol(v);
			continue;
		}
		if (a[1] == 'f' || a[1] == 'q') {
			continue;
		}
	}
	return n;
}

static int cmd_head(int argc, char **argv) {
	int i = 1, bytes = 0, rc = 0;
	long n = count_opt(argc, argv, &i, &bytes, NULL);
	int files = argc - i;
	for (int k = i; k <= argc; k++) {
		if (k == argc && files > 0) {
			break;
		}
		const char *name = k < argc ? argv[k] : "-";
		rd r;
		if (open_in(name, &r) != 0) {
			rc = 1;
			continue;
		}
		if (files > 1) {
			fprintf(OUT, "%s==> %s <==\n", k > i ? "\n" : "", name);
		}
		long seen = 0;
		int c;
		while (seen < n && (c = rd_getc(&r)) != EOF) {
			fputc(c, OUT);
			if (bytes || c == '\n') {
				seen++;
			}
		}
		close_in(&r);
	}
	return rc;
}

static int cmd_tail(int argc, char **argv) {
	int i = 1, bytes = 0, from = 0, rc = 0, follow = 0;
	for (int k = 1; k < argc; k++) {
		follow |= strcmp(argv[k], "-f") == 0;
	}
	long n = count_opt(argc, argv, &i, &bytes, &from);
	const char *name = i < argc ? argv[i] : "-";
	rd r;
	if (open_in(name, &r) != 0) {
		return 1;
	}
	size_t len;
	char *b = slurp(&r, &len);
	size_t start = 0;
	if (from) {
		if (bytes) {
			start = n > 0 ? (size_t)n - 1 : 0;
		} else {
			long line = 1;
			for (start = 0; start < len && line < n; start++) {
				if (b[start] == '\n') {
					line++;
				}
			}
		}
		if (start > len) {
			start = len;
		}
	} else if (bytes) {
		start = (size_t)n < len ? len - (size_t)n : 0;
	} else {
		long lines = 0;
		start = len;
		if (start > 0 && b[start - 1] == '\n') {
			start--;
		}
		while (start > 0) {
			if (b[start - 1] == '\n' && ++lines == n) {
				break;
			}
			start--;
		}
		if (n == 0) {
			start = len;
		}
	}
	fwrite(b + start, 1, len - start, OUT);
	fflush(OUT);
	if (follow && r.f != NULL && r.f != IN->f) {
		for (;;) {
			if (!nap(1)) {
				break;
			}
			clearerr(r.f);
			size_t got;
			char buf[4096];
			while ((got = fread(buf, 1, sizeof buf, r.f)) > 0) {
				fwrite(buf, 1, got, OUT);
			}
			fflush(OUT);
		}
	}
	close_in(&r);
	free(b);
	return rc;
}

static int cmd_grep(int argc, char **argv) {
	int inv = 0, icase = 0, count = 0, num = 0, quiet = 0, ext = 0, only_names = 0, i = 1;
	const char *pat = NULL;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "-e") == 0 && i + 1 < argc) {
			pat = argv[++i];
			continue;
		}
		for (const char *o = argv[i] + 1; *o; o++) {
			switch (*o) {
			case 'v': inv = 1; break;
			case 'i': icase = 1; break;
			case 'c': count = 1; break;
			case 'n': num = 1; break;
			case 'q': quiet = 1; break;
			case 'E': ext = 1; break;
			case 'F': break;
			case 'l': only_names = 1; break;
			default: return fail("invalid option -- '%c'", *o);
			}
		}
	}
	if (pat == NULL) {
		if (i == argc) {
			fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: grep [-vicnqElF] PATTERN [FILE]...\n");
			return 2;
		}
		pat = argv[i++];
	}
	regex_t re;
	if (regcomp(&re, pat, REG_NOSUB | (icase ? REG_ICASE : 0) | (ext ? REG_EXTENDED : 0)) != 0) {
		return fail("bad regex '%s'", pat) + 1;
	}
	int files = argc - i, matched = 0, rc = 0;
	char *line = NULL;
	size_t cap = 0;
	for (int k = i; k <= argc; k++) {
		if (k == argc && files > 0) {
			break;
		}
		const char *name = k < argc ? argv[k] : "-";
		rd r;
		if (open_in(name, &r) != 0) {
			rc = 2;
			continue;
		}
		long n = 0, lineno = 0;
		while (rd_line(&r, &line, &cap) != NULL) {
			lineno++;
			if ((regexec(&re, line, 0, NULL, 0) == 0) != inv) {
				n++;
				matched = 1;
				if (quiet) {
					break;
				}
				if (count || only_names) {
					continue;
				}
				if (files > 1) {
					fprintf(OUT, "%s:", name);
				}
				if (num) {
					fprintf(OUT, "%ld:", lineno);
				}
				fprintf(OUT, "%s\n", line);
			}
		}
		if (count) {
			if (files > 1) {
				fprintf(OUT, "%s:", name);
			}
			fprintf(OUT, "%ld\n", n);
		}
		if (only_names && n > 0) {
			fprintf(OUT, "%s\n", name);
		}
		close_in(&r);
		if (quiet && matched) {
			break;
		}
	}
	regfree(&re);
	free(line);
	return rc ? rc : matched ? 0 : 1;
}

static int cmd_wc(int argc, char **argv) {
	int l = 0, w = 0, c = 0, i = 1, rc = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		l |= strchr(argv[i], 'l') != NULL;
		w |= strchr(argv[i], 'w') != NULL;
		c |= strpbrk(argv[i], "cm") != NULL;
	}
	if (!l && !w && !c) {
		l = w = c = 1;
	}
	int files = argc - i;
	long tl = 0, tw = 0, tc = 0;
	for (int k = i; k <= argc; k++) {
		if (k == argc && files > 0) {
			break;
		}
		const char *name = k < argc ? argv[k] : "-";
		rd r;
		if (open_in(name, &r) != 0) {
			rc = 1;
			continue;
		}
		long nl = 0, nw = 0, nc = 0;
		int ch, inword = 0;
		while ((ch = rd_getc(&r)) != EOF) {
			nc++;
			if (ch == '\n') {
				nl++;
			}
			if (isspace(ch)) {
				inword = 0;
			} else if (!inword) {
				inword = 1;
				nw++;
			}
		}
		close_in(&r);
		tl += nl, tw += nw, tc += nc;
		int only = l + w + c == 1;
		const char *f = only ? "%ld" : "%7ld";
		const char *sep = "";
		if (l) { fprintf(OUT, f, nl); sep = " "; }
		if (w) { fprintf(OUT, "%s", sep); fprintf(OUT, f, nw); sep = " "; }
		if (c) { fprintf(OUT, "%s", sep); fprintf(OUT, f, nc); }
		if (files > 0) {
			fprintf(OUT, " %s", name);
		}
		fputc('\n', OUT);
	}
	if (files > 1) {
		fprintf(OUT, "%7ld %7ld %7ld total\n", tl, tw, tc);
	}
	return rc;
}

// ls: -l, -a, -A, -1, -d, -R (a subset of busybox's).
static void mode_string(mode_t m, char *s) {
	s[0] = S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' : S_ISCHR(m) ? 'c' : '-';
	if ((m & 0777) == 0) {
		// WASI's filestat carries the file type only: show the modes a
		// root-owned tree usually has.
		m |= S_ISDIR(m) ? 0755 : 0644;
	}
	const char *rwx = "rwxrwxrwx";
	for (int i = 0; i < 9; i++) {
		s[i + 1] = m & (1 << (8 - i)) ? rwx[i] : '-';
	}
	s[10] = '\0';
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void ls_entry(const char *path, const char *name, int longf) {
	if (!longf) {
		fprintf(OUT, "%s\n", name);
		return;
	}
	struct stat st;
	if (lstat(path, &st) != 0) {
		fail("%s: %s", path, strerror(errno));
		return;
	}
	char ms[11], tb[32];
	mode_string(st.st_mode, ms);
	struct tm tm;
	time_t t = st.st_mtime;
	gmtime_r(&t, &tm);
	strftime(tb, sizeof tb, "%b %e %H:%M", &tm);
	fprintf(OUT, "%s %4lu %-8s %-8s %9lld %s %s\n", ms, (unsigned long)st.st_nlink, "root", "root",
	        (long long)st.st_size, tb, name);
}

static int ls_dir(const char *dir, int all, int longf, int recursive, int header) {
	DIR *d = opendir(dir);
	if (d == NULL) {
		return fail("can't open '%s': %s", dir, strerror(errno));
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' && !all) {
			continue;
		}
		if (all == 1 && (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)) {
			continue;
		}
		names = realloc(names, (n + 1) * sizeof *names);
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (all == 2) {
		// -a: . and .. first, as readdir on a real file system gives them.
		int dot = 0, dotdot = 0;
		for (size_t i = 0; i < n; i++) {
			dot |= strcmp(names[i], ".") == 0;
			dotdot |= strcmp(names[i], "..") == 0;
		}
		if (!dot) { names = realloc(names, (n + 1) * sizeof *names); names[n++] = strdup("."); }
		if (!dotdot) { names = realloc(names, (n + 1) * sizeof *names); names[n++] = strdup(".."); }
	}
	qsort(names, n, sizeof *names, name_cmp);
	if (header) {
		fprintf(OUT, "%s:\n", dir);
	}
	if (longf) {
		fprintf(OUT, "total %zu\n", n);
	}
	for (size_t i = 0; i < n; i++) {
		char p[1024];
		snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, names[i]);
		ls_entry(p, names[i], longf);
	}
	if (recursive) {
		for (size_t i = 0; i < n; i++) {
			char p[1024];
			snprintf(p, sizeof p, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, names[i]);
			if (strcmp(names[i], ".") && strcmp(names[i], "..") && is_dir(p)) {
				fputc('\n', OUT);
				ls_dir(p, all, longf, recursive, 1);
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
	}
	free(names);
	return 0;
}

static int cmd_ls(int argc, char **argv) {
	int all = 0, longf = 0, dirself = 0, recursive = 0, i = 1, rc = 0;
	for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
		for (const char *o = argv[i] + 1; *o; o++) {
			switch (*o) {
			case 'a': all = 2; break;
			case 'A': all = all ? all : 1; break;
			case 'l': longf = 1; break;
			case 'd': dirself = 1; break;
			case 'R': recursive = 1; break;
			case '1': case 'h': case 'F': case 't': case 'r': case 'S': break;
			default: return fail("invalid option -- '%c'", *o);
			}
		}
	}
	int nargs = argc - i;
	if (nargs == 0) {
		return ls_dir(".", all, longf, recursive, recursive);
	}
	// Files first, then directories, as ls prints them.
	for (int k = i; k < argc; k++) {
		struct stat st;
		if (stat(argv[k], &st) != 0) {
			rc = fail("%s: %s", argv[k], strerror(errno));
			continue;
		}
		if (!S_ISDIR(st.st_mode) || dirself) {
			ls_entry(argv[k], argv[k], longf);
		}
	}
	int first = 1;
	for (int k = i; k < argc; k++) {
		if (dirself || !is_dir(argv[k])) {
			continue;
		}
		if (!first || nargs > 1) {
			if (!first) {
				fputc('\n', OUT);
			}
		}
		ls_dir(argv[k], all, longf, recursive, nargs > 1 || recursive);
		first = 0;
	}
	return rc;
}

static int cmd_ps(int argc, char **argv) {
	(void)argc, (void)argv;
	DIR *d = opendir("/proc");
	if (d == NULL) {
		return fail("can't open '/proc': %s", strerror(errno));
	}
	int pids[1024], n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 1024) {
		if (isdigit((unsigned char)e->d_name[0])) {
			pids[n++] = atoi(e->d_name);
		}
	}
	closedir(d);
	for (int a = 0; a < n; a++) {
		for (int b = a + 1; b < n; b++) {
			if (pids[b] < pids[a]) {
				int t = pids[a];
				pids[a] = pids[b];
				pids[b] = t;
			}
		}
	}
	fprintf(OUT, "PID   USER     TIME  COMMAND\n");
	for (int k = 0; k < n; k++) {
		char p[64], buf[4096];
		snprintf(p, sizeof p, "/proc/%d/cmdline", pids[k]);
		FILE *f = fopen(p, "r");
		if (f == NULL) {
			continue;
		}
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		for (size_t j = 0; j + 1 < len; j++) {
			if (buf[j] == '\0') {
				buf[j] = ' ';
			}
		}
		buf[len] = '\0';
		fprintf(OUT, "%5d %-8s %5s %s\n", pids[k], "root", "0:00", buf);
	}
	return 0;
}

static const char *signames[] = {"0", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1",
                                 "SEGV", "USR2", "PIPE", "ALRM", "TERM"};

static int cmd_kill(int argc, char **argv) {
	int sig = 15, i = 1;
	if (i < argc && strcmp(argv[i], "-l") == 0) {
		for (int s = 1; s < 16; s++) {
			fprintf(OUT, "%2d) SIG%s\n", s, signames[s]);
		}
		return 0;
	}
	if (i < argc && argv[i][0] == '-' && argv[i][1]) {
		const char *s = argv[i] + 1;
		if (strcmp(s, "s") == 0 && i + 1 < argc) {
			s = argv[++i];
		}
		if (strncmp(s, "SIG", 3) == 0) {
			s += 3;
		}
		if (isdigit((unsigned char)*s)) {
			sig = atoi(s);
		} else {
			sig = -1;
			for (int k = 0; k < 16; k++) {
				if (strcmp(s, signames[k]) == 0) {
					sig = k;
				}
			}
			if (sig < 0) {
				return fail("bad signal name '%s'", s);
			}
		}
		i++;
	}
	if (i == argc) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: kill [-l] [-SIG] PID...\n");
		return 1;
	}
	int rc = 0;
	for (; i < argc; i++) {
		int32_t e = host_kill(atoi(argv[i]), sig);
		if (e != 0) {
			rc = fail("can't kill pid %s: %s", argv[i], e == 71 ? "No such process" : "Invalid argument");
		}
	}
	return rc;
}

static int cmd_basename(int argc, char **argv) {
	if (argc < 2) {
		return fail("missing operand");
	}
	char b[1024];
	snprintf(b, sizeof b, "%s", base_name(argv[1]));
	size_t n = strlen(b);
	while (n > 1 && b[n - 1] == '/') {
		b[--n] = '\0';
	}
	if (argc > 2) {
		size_t s = strlen(argv[2]);
		if (n > s && strcmp(b + n - s, argv[2]) == 0) {
			b[n - s] = '\0';
		}
	}
	fprintf(OUT, "%s\n", b);
	return 0;
}

static int cmd_dirname(int argc, char **argv) {
	if (argc < 2) {
		return fail("missing operand");
	}
	char *p = strdup(argv[1]);
	char *s = strrchr(p, '/');
	if (s == NULL) {
		fprintf(OUT, ".\n");
	} else {
		while (s > p && s[-1] == '/') {
			s--;
		}
		*s = '\0';
		fprintf(OUT, "%s\n", s == p ? "/" : p);
	}
	free(p);
	return 0;
}

static int cmd_uname(int argc, char **argv) {
	char host[256];
	if (read_first_line("/etc/hostname", host, sizeof host) != 0) {
		snprintf(host, sizeof host, "localhost");
	}
	// The process runs on WASI, not on a Linux kernel: say so.
	if (argc > 1 && strcmp(argv[1], "-a") == 0) {
		fprintf(OUT, "WASI %s preview1 kubetab wasm32 WASI\n", host);
	} else if (argc > 1 && strcmp(argv[1], "-n") == 0) {
		fprintf(OUT, "%s\n", host);
	} else if (argc > 1 && strcmp(argv[1], "-m") == 0) {
		fprintf(OUT, "wasm32\n");
	} else {
		fprintf(OUT, "WASI\n");
	}
	return 0;
}

// ---- the network: wget and nslookup through the cluster's network

static int resolv_conf(char *server, size_t n, char search[8][256], int *nsearch, int *ndots) {
	FILE *f = fopen("/etc/resolv.conf", "r");
	*nsearch = 0;
	*ndots = 1;
	snprintf(server, n, "%s", "");
	if (f == NULL) {
		return -1;
	}
	char line[1024];
	while (fgets(line, sizeof line, f) != NULL) {
		char *tok = strtok(line, " \t\n");
		if (tok == NULL) {
			continue;
		}
		if (strcmp(tok, "nameserver") == 0 && server[0] == '\0') {
			char *v = strtok(NULL, " \t\n");
			if (v) {
				snprintf(server, n, "%s", v);
			}
		} else if (strcmp(tok, "search") == 0) {
			char *v;
			*nsearch = 0;
			while ((v = strtok(NULL, " \t\n")) != NULL && *nsearch < 8) {
				snprintf(search[(*nsearch)++], 256, "%s", v);
			}
		} else if (strcmp(tok, "options") == 0) {
			char *v;
			while ((v = strtok(NULL, " \t\n")) != NULL) {
				if (strncmp(v, "ndots:", 6) == 0) {
					*ndots = atoi(v + 6);
				}
			}
		}
	}
	fclose(f);
	return 0;
}

static int cmd_nslookup(int argc, char **argv) {
	const char *name = NULL;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-' && name == NULL) {
			name = argv[i];
		}
	}
	if (name == NULL) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: nslookup HOST [DNS_SERVER]\n");
		return 1;
	}
	char server[64], search[8][256];
	int nsearch, ndots;
	resolv_conf(server, sizeof server, search, &nsearch, &ndots);
	fprintf(OUT, "Server:\t\t%s\nAddress:\t%s:53\n\n", server, server);
	// res_search: a name with fewer than ndots dots tries the search list
	// first; a name ending in a dot is only itself.
	char cands[10][512];
	int nc = 0, dots = 0;
	size_t len = strlen(name);
	for (const char *s = name; *s; s++) {
		dots += *s == '.';
	}
	if (len > 0 && name[len - 1] == '.') {
		snprintf(cands[nc++], 512, "%s", name);
	} else {
		if (dots >= ndots) {
			snprintf(cands[nc++], 512, "%s.", name);
		}
		for (int k = 0; k < nsearch; k++) {
			snprintf(cands[nc++], 512, "%s.%s.", name, search[k]);
		}
		if (dots < ndots) {
			snprintf(cands[nc++], 512, "%s.", name);
		}
	}
	char out[2048];
	int failed_servfail = 0;
	for (int k = 0; k < nc; k++) {
		int32_t n = host_lookup(cands[k], (int32_t)strlen(cands[k]), out, sizeof out - 1);
		if (n > 0) {
			out[n] = '\0';
			cands[k][strlen(cands[k]) - 1] = '\0';
			fprintf(OUT, "Name:\t%s\n", cands[k]);
			for (char *a = strtok(out, "\n"); a; a = strtok(NULL, "\n")) {
				fprintf(OUT, "Address: %s\n", a);
			}
			fputc('\n', OUT);
			return 0;
		}
		failed_servfail |= n == -2;
	}
	fprintf(OUT, "** server can't find %s: %s\n\n", name, failed_servfail ? "SERVFAIL" : "NXDOMAIN");
	return 1;
}

static int cmd_wget(int argc, char **argv) {
	int quiet = 0, spider = 0, i = 1;
	const char *outname = NULL, *url = NULL;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = 1;
		} else if (strcmp(a, "--spider") == 0) {
			spider = 1;
		} else if (strncmp(a, "-qO", 3) == 0) {
			quiet = 1;
			outname = a[3] ? a + 3 : (i + 1 < argc ? argv[++i] : "-");
		} else if (strncmp(a, "-O", 2) == 0) {
			outname = a[2] ? a + 2 : (i + 1 < argc ? argv[++i] : "-");
		} else if (strcmp(a, "-T") == 0 || strcmp(a, "-t") == 0 || strcmp(a, "--header") == 0 || strcmp(a, "-U") == 0) {
			i++;
		} else if (a[0] == '-' && a[1]) {
			if (strcmp(a, "-S") != 0 && strncmp(a, "--timeout", 9) != 0) {
				return fail("unrecognized option '%s'", a);
			}
		} else {
			url = a;
		}
	}
	if (url == NULL) {
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: wget [-q] [-O FILE] [--spider] URL\n");
		return 1;
	}
	char full[2048];
	if (strstr(url, "://") == NULL) {
		snprintf(full, sizeof full, "http://%s", url);
	} else {
		snprintf(full, sizeof full, "%s", url);
	}
	// host[:port] for the messages
	char host[512];
	const char *h = strstr(full, "://") + 3;
	size_t hl = strcspn(h, "/?#");
	snprintf(host, sizeof host, "%.*s", (int)hl, h);
	char *colon = strrchr(host, ':');
	if (colon) {
		*colon = '\0';
	}
	char info[1024];
	int32_t hd = host_http_get(full, (int32_t)strlen(full), info, sizeof info - 1);
	if (hd <= 0) {
		int32_t n = -hd;
		(void)n;
		info[sizeof info - 1] = '\0';
		switch (hd) {
		case -1: return fail("bad address '%s'", host);
		case -2: return fail("can't connect to remote host (%s): Connection refused", info);
		case -3: return fail("can't connect to remote host (%s): Host is unreachable", info);
		case -4: return fail("can't connect to remote host (%s): Network is unreachable", info);
		case -5: return fail("download timed out");
		case -6: return fail("unsupported scheme in '%s'", full);
		default: return fail("%s", info);
		}
	}
	// info: "HTTP/1.1 200 OK\n10.96.0.5:80"
	char *nl = strchr(info, '\n');
	const char *addr = nl ? nl + 1 : "";
	if (nl) {
		*nl = '\0';
	}
	if (!quiet) {
		fprintf(ERR, "Connecting to %s (%s)\n", host, addr);
	}
	int code = atoi(strchr(info, ' ') ? strchr(info, ' ') + 1 : "0");
	if (code >= 400) {
		host_http_close(hd);
		return fail("server returned error: %s", info);
	}
	if (spider) {
		host_http_close(hd);
		if (!quiet) {
			fprintf(ERR, "remote file exists\n");
		}
		return 0;
	}
	FILE *out = OUT;
	char saved[512] = "";
	if (outname == NULL) {
		const char *path = h + hl;
		const char *b = strrchr(path, '/');
		b = b ? b + 1 : "";
		snprintf(saved, sizeof saved, "%.*s", (int)strcspn(b, "?#"), b);
		if (saved[0] == '\0') {
			snprintf(saved, sizeof saved, "index.html");
		}
		outname = saved;
	}
	if (strcmp(outname, "-") != 0) {
		out = fopen(outname, "w");
		if (out == NULL) {
			host_http_close(hd);
			return fail("can't open '%s': %s", outname, strerror(errno));
		}
		if (!quiet) {
			fprintf(ERR, "saving to '%s'\n", outname);
		}
	} else if (!quiet) {
		fprintf(ERR, "writing to stdout\n");
	}
	char buf[8192];
	int32_t n;
	long total = 0;
	while ((n = host_http_read(hd, buf, sizeof buf)) > 0) {
		fwrite(buf, 1, (size_t)n, out);
		total += n;
	}
	host_http_close(hd);
	if (out != OUT) {
		fclose(out);
	}
	if (n < 0) {
		return fail("error getting response");
	}
	if (!quiet) {
		fprintf(ERR, "%-20s 100%% |********************************| %5ld  0:00:00 ETA\n", outname, total);
		if (out != OUT) {
			fprintf(ERR, "'%s' saved\n", outname);
		} else {
			fprintf(ERR, "written to stdout\n");
		}
	}
	return 0;
}

// ---- tar (ustar), what kubectl cp runs: tar -xmf - [-C DIR], tar cf - PATH

static unsigned long oct(const char *s, size_t n) {
	unsigned long v = 0;
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] >= '0' && s[i] <= '7') {
			v = v * 8 + (unsigned long)(s[i] - '0');
		}
	}
	return v;
}

static void tar_header(FILE *out, const char *name, mode_t mode, unsigned long size, time_t mtime, char type) {
	char h[512];
	memset(h, 0, sizeof h);
	size_t nl = strlen(name);
	if (nl > 100) {
		// GNU long name: a 'L' entry carrying the name.
		tar_header(out, "././@LongLink", 0, nl + 1, 0, 'L');
		fwrite(name, 1, nl + 1, out);
		char pad[512] = {0};
		fwrite(pad, 1, (512 - (nl + 1) % 512) % 512, out);
	}
	memcpy(h, name, nl > 100 ? 100 : nl);
	snprintf(h + 100, 8, "%07o", (unsigned)(mode & 07777));
	snprintf(h + 108, 8, "%07o", 0);
	snprintf(h + 116, 8, "%07o", 0);
	snprintf(h + 124, 12, "%011lo", size);
	snprintf(h + 136, 12, "%011llo", (unsigned long long)mtime);
	memset(h + 148, ' ', 8);
	h[156] = type;
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memcpy(h + 265, "root", 4);
	memcpy(h + 297, "root", 4);
	unsigned sum = 0;
	for (int i = 0; i < 512; i++) {
		sum += (unsigned char)h[i];
	}
	snprintf(h + 148, 8, "%06o", sum);
	h[155] = ' ';
	fwrite(h, 1, 512, out);
}

static int tar_add(FILE *out, const char *path, const char *name, int verbose) {
	struct stat st;
	if (stat(path, &st) != 0) {
		return fail("%s: %s", path, strerror(errno));
	}
	if (verbose) {
		fprintf(ERR, "%s\n", name);
	}
	if (S_ISDIR(st.st_mode)) {
		char dn[1024];
		snprintf(dn, sizeof dn, "%s/", name);
		tar_header(out, dn, st.st_mode, 0, st.st_mtime, '5');
		DIR *d = opendir(path);
		if (d == NULL) {
			return fail("%s: %s", path, strerror(errno));
		}
		struct dirent *e;
		int rc = 0;
		char **names = NULL;
		size_t n = 0;
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				names = realloc(names, (n + 1) * sizeof *names);
				names[n++] = strdup(e->d_name);
			}
		}
		closedir(d);
		qsort(names, n, sizeof *names, name_cmp);
		for (size_t i = 0; i < n; i++) {
			char a[1024], b[1024];
			snprintf(a, sizeof a, "%s/%s", path, names[i]);
			snprintf(b, sizeof b, "%s/%s", name, names[i]);
			rc |= tar_add(out, a, b, verbose);
			free(names[i]);
		}
		free(names);
		return rc;
	}
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return fail("%s: %s", path, strerror(errno));
	}
	tar_header(out, name, st.st_mode, (unsigned long)st.st_size, st.st_mtime, '0');
	char buf[8192];
	size_t n, total = 0;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
		fwrite(buf, 1, n, out);
		total += n;
	}
	fclose(f);
	char pad[512] = {0};
	fwrite(pad, 1, (512 - total % 512) % 512, out);
	return 0;
}

static int mkdirs_for(const char *path) {
	char *p = strdup(path);
	for (char *s = p + 1; *s; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	free(p);
	return 0;
}

static int tar_extract(rd *in, int verbose, int list) {
	char h[512];
	char longname[4096] = "";
	int zeros = 0;
	while (rd_read(in, h, 512) == 512) {
		int empty = 1;
		for (int i = 0; i < 512; i++) {
			if (h[i]) {
				empty = 0;
				break;
			}
		}
		if (empty) {
			if (++zeros == 2) {
				break;
			}
			continue;
		}
		unsigned long size = oct(h + 124, 12);
		mode_t mode = (mode_t)oct(h + 100, 8);
		char type = h[156];
		char name[4096];
		if (longname[0]) {
			snprintf(name, sizeof name, "%s", longname);
			longname[0] = '\0';
		} else if (h[345] && memcmp(h + 257, "ustar", 5) == 0) {
			snprintf(name, sizeof name, "%.155s/%.100s", h + 345, h);
		} else {
			snprintf(name, sizeof name, "%.100s", h);
		}
		size_t padded = (size + 511) / 512 * 512;
		if (type == 'L' || type == 'x' || type == 'g') {
			char *data = malloc(padded + 1);
			if (rd_read(in, data, padded) != padded) {
				free(data);
				return fail("short read");
			}
			data[size] = '\0';
			if (type == 'L') {
				snprintf(longname, sizeof longname, "%s", data);
			} else if (type == 'x') {
				// PAX records: "LEN key=value\n"
				for (char *r = data; r < data + size;) {
					long len = strtol(r, NULL, 10);
					if (len <= 0) {
						break;
					}
					char *kv = strchr(r, ' ');
					if (kv && strncmp(kv + 1, "path=", 5) == 0) {
						snprintf(longname, sizeof longname, "%.*s", (int)(r + len - (kv + 6) - 1), kv + 6);
					}
					r += len;
				}
			}
			free(data);
			continue;
		}
		const char *p = name;
		while (*p == '/') {
			p++;
		}
		if (strstr(p, "../") == p || strstr(p, "/../") != NULL || strcmp(p, "..") == 0) {
			fail("skipping unsafe path '%s'", name);
			char skip[512];
			for (size_t k = 0; k < padded; k += 512) {
				rd_read(in, skip, 512);
			}
			continue;
		}
		if (verbose || list) {
			fprintf(list ? OUT : ERR, "%s\n", p);
		}
		if (list || *p == '\0') {
			char skip[512];
			for (size_t k = 0; k < padded; k += 512) {
				rd_read(in, skip, 512);
			}
			continue;
		}
		if (type == '5') {
			mkdirs_for(p);
			mkdir(p, mode ? mode : 0755);
			continue;
		}
		FILE *out = NULL;
		if (type == '0' || type == '\0' || type == '7') {
			mkdirs_for(p);
			out = fopen(p, "w");
			if (out == NULL) {
				fail("can't open '%s': %s", p, strerror(errno));
			}
		}
		char buf[512];
		unsigned long left = size;
		for (size_t k = 0; k < padded; k += 512) {
			if (rd_read(in, buf, 512) != 512) {
				if (out) {
					fclose(out);
				}
				return fail("short read");
			}
			if (out) {
				fwrite(buf, 1, left < 512 ? left : 512, out);
			}
			left = left < 512 ? 0 : left - 512;
		}
		if (out) {
			// WASI preview1 has no chmod: the mode in the archive is not restored.
			fclose(out);
		}
	}
	return 0;
}

static int cmd_tar(int argc, char **argv) {
	int create = 0, extract = 0, list = 0, verbose = 0, i = 1;
	const char *file = NULL, *dir = NULL;
	char **paths = calloc((size_t)argc + 1, sizeof *paths);
	int np = 0;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-C") == 0 && i + 1 < argc) {
			dir = argv[++i];
			continue;
		}
		if ((i == 1 && a[0] != '-') || (a[0] == '-' && a[1] != '-' && a[1])) {
			for (const char *o = a[0] == '-' ? a + 1 : a; *o; o++) {
				switch (*o) {
				case 'c': create = 1; break;
				case 'x': extract = 1; break;
				case 't': list = 1; break;
				case 'v': verbose = 1; break;
				case 'f': file = i + 1 < argc ? argv[++i] : "-"; break;
				case 'm': case 'o': case 'p': break;
				case 'z': case 'j': free(paths); return fail("compression is not supported");
				default: free(paths); return fail("invalid option -- '%c'", *o);
				}
			}
			continue;
		}
		paths[np++] = argv[i];
	}
	if (create + extract + list != 1) {
		free(paths);
		fprintf(ERR, "BusyBox v1.36.1 (kubetab) multi-call binary.\n\nUsage: tar c|x|t [-v] [-C DIR] [-f TARFILE] [FILE]...\n");
		return 1;
	}
	if (dir != NULL && chdir(dir) != 0) {
		free(paths);
		return fail("can't change directory to '%s': %s", dir, strerror(errno));
	}
	int rc = 0;
	if (create) {
		if (np == 0) {
			free(paths);
			return fail("empty archive");
		}
		FILE *out = file == NULL || strcmp(file, "-") == 0 ? OUT : fopen(file, "w");
		if (out == NULL) {
			free(paths);
			return fail("can't open '%s': %s", file, strerror(errno));
		}
		int warned = 0;
		for (int k = 0; k < np; k++) {
			const char *name = paths[k];
			while (*name == '/') {
				if (!warned) {
					fprintf(ERR, "tar: removing leading '/' from member names\n");
					warned = 1;
				}
				name++;
			}
			rc |= tar_add(out, paths[k], *name ? name : ".", verbose);
		}
		char z[1024] = {0};
		fwrite(z, 1, sizeof z, out);
		if (out != OUT) {
			fclose(out);
		}
	} else {
		rd r;
		if (file == NULL || strcmp(file, "-") == 0) {
			r = *IN;
		} else if (open_in(file, &r) != 0) {
			free(paths);
			return 1;
		}
		rc = tar_extract(&r, verbose, list);
		if (file == NULL || strcmp(file, "-") == 0) {
			IN->pos = r.pos;
		} else {
			close_in(&r);
		}
	}
	free(paths);
	return rc;
}

// ---- the shell's test builtin, also an applet ([ and test)

static int cmd_test(int argc, char **argv) {
	int close = strcmp(base_name(argv[0]), "[") == 0;
	if (close) {
		if (strcmp(argv[argc - 1], "]") != 0) {
			return fail("missing ]") + 1;
		}
		argc--;
	}
	int neg = 0, i = 1;
	if (i < argc && strcmp(argv[i], "!") == 0) {
		neg = 1;
		i++;
	}
	int n = argc - i, r;
	struct stat st;
	if (n == 0) {
		r = 0;
	} else if (n == 1) {
		r = argv[i][0] != '\0';
	} else if (n == 2) {
		const char *op = argv[i], *a = argv[i + 1];
		if (strcmp(op, "-z") == 0) r = a[0] == '\0';
		else if (strcmp(op, "-n") == 0) r = a[0] != '\0';
		else if (strcmp(op, "-e") == 0) r = stat(a, &st) == 0;
		else if (strcmp(op, "-f") == 0) r = stat(a, &st) == 0 && S_ISREG(st.st_mode);
		else if (strcmp(op, "-d") == 0) r = stat(a, &st) == 0 && S_ISDIR(st.st_mode);
		else if (strcmp(op, "-s") == 0) r = stat(a, &st) == 0 && st.st_size > 0;
		else if (strcmp(op, "-r") == 0 || strcmp(op, "-w") == 0 || strcmp(op, "-x") == 0) r = stat(a, &st) == 0;
		else return fail("%s: unknown operand", op) + 1;
	} else if (n == 3) {
		const char *a = argv[i], *op = argv[i + 1], *b = argv[i + 2];
		long x = atol(a), y = atol(b);
		if (strcmp(op, "=") == 0 || strcmp(op, "==") == 0) r = strcmp(a, b) == 0;
		else if (strcmp(op, "!=") == 0) r = strcmp(a, b) != 0;
		else if (strcmp(op, "-eq") == 0) r = x == y;
		else if (strcmp(op, "-ne") == 0) r = x != y;
		else if (strcmp(op, "-lt") == 0) r = x < y;
		else if (strcmp(op, "-le") == 0) r = x <= y;
		else if (strcmp(op, "-gt") == 0) r = x > y;
		else if (strcmp(op, "-ge") == 0) r = x >= y;
		else return fail("%s: unknown operand", op) + 1;
	} else {
		return fail("too many arguments") + 1;
	}
	return (r != neg) ? 0 : 1;
}

static int cmd_seq(int argc, char **argv) {
	long first = 1, inc = 1, last;
	if (argc == 2) {
		last = atol(argv[1]);
	} else if (argc == 3) {
		first = atol(argv[1]), last = atol(argv[2]);
	} else if (argc == 4) {
		first = atol(argv[1]), inc = atol(argv[2]), last = atol(argv[3]);
	} else {
		return fail("missing operand");
	}
	for (long v = first; inc > 0 ? v <= last : v >= last; v += inc) {
		fprintf(OUT, "%ld\n", v);
		if (inc == 0) {
			break;
		}
	}
	return 0;
}

static int cmd_busybox(int argc, char **argv);
static int cmd_which(int argc, char **argv);

static const struct {
	const char *name;
	applet_fn fn;
} applets[] = {
	{"[", cmd_test},          {"basename", cmd_basename}, {"busybox", cmd_busybox}, {"cat", cmd_cat},
	{"cp", cmd_cp},           {"date", cmd_date},         {"dirname", cmd_dirname}, {"echo", cmd_echo},
	{"env", cmd_env},         {"false", cmd_false},       {"grep", cmd_grep},       {"head", cmd_head},
	{"hostname", cmd_hostname}, {"id", cmd_id},           {"kill", cmd_kill},       {"ln", cmd_ln},
	{"ls", cmd_ls},           {"mkdir", cmd_mkdir},       {"mv", cmd_mv},           {"nslookup", cmd_nslookup},
	{"printenv", cmd_printenv}, {"ps", cmd_ps},           {"pwd", cmd_pwd},         {"rm", cmd_rm},
	{"rmdir", cmd_rmdir},     {"seq", cmd_seq},           {"sh", sh_main},          {"sleep", cmd_sleep},
	{"tail", cmd_tail},       {"tar", cmd_tar},           {"test", cmd_test},       {"touch", cmd_touch},
	{"true", cmd_true},       {"uname", cmd_uname},       {"wc", cmd_wc},           {"wget", cmd_wget},
	{"which", cmd_which},     {"whoami", cmd_whoami},
};
#define NAPPLETS (sizeof applets / sizeof applets[0])

static applet_fn find_applet(const char *name) {
	for (size_t i = 0; i < NAPPLETS; i++) {
		if (strcmp(applets[i].name, name) == 0) {
			return applets[i].fn;
		}
	}
	return NULL;
}

static int cmd_busybox(int argc, char **argv) {
	if (argc > 1) {
		applet_fn f = find_applet(argv[1]);
		if (f == NULL) {
			return fail("applet not found") + 126;
		}
		applet = argv[1];
		return f(argc - 1, argv + 1);
	}
	fprintf(OUT, "BusyBox v1.36.1 (kubetab) multi-call binary.\n"
	             "BusyBox is copyrighted by many authors; this is kubetab's own small rewrite for WASI.\n\n"
	             "Usage: busybox [function [arguments]...]\n   or: function [arguments]...\n\n"
	             "Currently defined functions:\n\t");
	for (size_t i = 0; i < NAPPLETS; i++) {
		fprintf(OUT, "%s%s", applets[i].name, i + 1 < NAPPLETS ? ", " : "\n");
	}
	return 0;
}

// find_in_path looks a command up on PATH; it returns a malloc'd path.
static char *find_in_path(const char *name) {
	if (strchr(name, '/') != NULL) {
		struct stat st;
		return stat(name, &st) == 0 && !S_ISDIR(st.st_mode) ? strdup(name) : NULL;
	}
	const char *path = getenv("PATH");
	if (path == NULL) {
		path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	}
	char *p = strdup(path), *save = NULL;
	for (char *d = strtok_r(p, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		char full[1024];
		struct stat st;
		snprintf(full, sizeof full, "%s/%s", d, name);
		// WASI's filestat has no permission bits: any regular file may be
		// a program (the runtime decides when it runs it).
		if (stat(full, &st) == 0 && S_ISREG(st.st_mode)) {
			free(p);
			return strdup(full);
		}
	}
	free(p);
	return NULL;
}

static int cmd_which(int argc, char **argv) {
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		char *p = find_in_path(argv[i]);
		if (p == NULL) {
			rc = 1;
			continue;
		}
		fprintf(OUT, "%s\n", p);
		free(p);
	}
	return rc;
}

// ---- running a command: an applet in this instance, or any other program
// through the runtime

// is_self reports whether path is a copy of this program (an applet link).
static int is_self(const char *path) {
	const char *b = base_name(path);
	if (find_applet(b) == NULL) {
		return 0;
	}
	// /bin/<applet> and /usr/bin/<applet> are this program in every image.
	return strncmp(path, "/bin/", 5) == 0 || strncmp(path, "/usr/bin/", 9) == 0 || strchr(path, '/') == NULL;
}

// run_program runs argv with the runtime's spawn: the program gets this
// process's environment, the command's input, and writes to the command's
// output (directly when that is this process's own output).
static int run_program(int argc, char **argv) {
	(void)argc;
	size_t alen = 0, elen = 0;
	for (char **a = argv; *a; a++) {
		alen += strlen(*a) + 1;
	}
	for (char **e = environ; *e; e++) {
		elen += strlen(*e) + 1;
	}
	char *ab = malloc(alen + 1), *eb = malloc(elen + 1), *p = ab;
	for (char **a = argv; *a; a++) {
		size_t n = strlen(*a) + 1;
		memcpy(p, *a, n);
		p += n;
	}
	p = eb;
	for (char **e = environ; *e; e++) {
		size_t n = strlen(*e) + 1;
		memcpy(p, *e, n);
		p += n;
	}
	// Input: a buffer is handed over; this process's own stdin is
	// inherited (flag 1); a file is read whole first.
	const char *in = NULL;
	size_t inlen = 0;
	int flags = 0;
	char *owned = NULL;
	if (IN == &rd_stdin && IN->f == stdin) {
		flags |= 1;
	} else if (IN->f != NULL) {
		owned = slurp(IN, &inlen);
		in = owned;
	} else if (IN->buf != NULL) {
		in = IN->buf + IN->pos;
		inlen = IN->len - IN->pos;
	}
	int direct = OUT == stdout;
	if (!direct) {
		flags |= 2; // capture stdout; read it back with spawn_read
	}
	fflush(stdout);
	fflush(stderr);
	char cwd[1024];
	if (getcwd(cwd, sizeof cwd) != NULL) {
		setenv("PWD", cwd, 1);
	}
	int32_t code = host_spawn(ab, (int32_t)alen, eb, (int32_t)elen, in, (int32_t)inlen, flags);
	if (!direct) {
		char buf[8192];
		int32_t n;
		while ((n = host_spawn_read(buf, sizeof buf)) > 0) {
			fwrite(buf, 1, (size_t)n, OUT);
		}
	}
	free(ab);
	free(eb);
	free(owned);
	if (code < 0) {
		// -127: not found, -126: not runnable, as the shell reports them.
		fprintf(ERR, "sh: %s: %s\n", argv[0], code == -127 ? "not found" : "Permission denied");
		return -code;
	}
	return code;
}

static int run_argv(int argc, char **argv) {
	const char *name = argv[0];
	applet_fn f = NULL;
	if (strchr(name, '/') == NULL) {
		char *p = find_in_path(name);
		if (p != NULL && is_self(p)) {
			f = find_applet(name);
		} else if (p == NULL) {
			f = find_applet(name);
			if (f == NULL) {
				fprintf(ERR, "sh: %s: not found\n", name);
				return 127;
			}
		}
		free(p);
	} else if (is_self(name)) {
		f = find_applet(base_name(name));
	}
	if (f != NULL) {
		const char *saved = applet;
		applet = base_name(name);
		int rc = f(argc, argv);
		applet = saved;
		fflush(OUT);
		return rc;
	}
	return run_program(argc, argv);
}

#include "sh.h"

int main(int argc, char **argv) {
	OUT = stdout;
	ERR = stderr;
	rd_stdin.f = stdin;
	// WASI has no current directory a runtime could set: start where the
	// container's workingDir (PWD) says.
	const char *pwd = getenv("PWD");
	if (pwd != NULL && pwd[0] == '/') {
		chdir(pwd);
	}
	applet = base_name(argv[0]);
	applet_fn f = find_applet(applet);
	if (f == NULL) {
		fprintf(stderr, "%s: applet not found\n", applet);
		return 127;
	}
	int rc = f(argc, argv);
	fflush(stdout);
	return rc;
}
