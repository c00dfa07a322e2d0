// hello is kubetab's first container image: a long-running "web server" that
// only talks to its log. It is a WASI preview1 command (wasm32-wasi), built by
// ../build.sh with Debian's clang and wasi-libc; the kubelet runs it in wazero.
//
// What it does, in the order a learner sees it in `kubectl logs`:
//
//	Hello from web-7d4b9-x2x8q! (hello:1.0) args: --port=8080
//	hello: tick 1
//	hello: tick 2
//	...
//
// The pod name comes from the HOSTNAME environment variable, which the
// container runtime sets to the pod's name, as it does in Kubernetes. The args
// are the container's `args:` (argv[1:]). A tick is printed every second until
// the container is stopped; each sleep goes through WASI poll_oneoff, which is
// where the runtime can stop the guest.
//
// Two optional flags make the same image useful for Jobs and crash lessons:
//
//	--ticks=N  exit after N ticks (exit code 0 unless --exit is given)
//	--exit=N   exit code to use when --ticks runs out (default 0)
//	--stdin    instead of ticking, echo each line of standard input as
//	           "hello: stdin: <line>" until it ends, then exit (with --exit's
//	           code): `echo hi | kubectl exec -i web-x -- hello --stdin`
//
// VERSION and GREETING are set at build time (-D), so hello:1.0 and hello:2.0
// are two images from one source, like two tags built from two commits.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef VERSION
#define VERSION "dev"
#endif
#ifndef GREETING
#define GREETING "Hello from"
#endif

// flag returns the integer value of --name=N in argv, or def when it is absent.
static long flag(int argc, char **argv, const char *name, long def) {
	size_t n = strlen(name);
	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') {
			return strtol(argv[i] + n + 1, NULL, 10);
		}
	}
	return def;
}

int main(int argc, char **argv) {
	// A container's stdout is a pipe to the runtime's log, not a terminal, so
	// C would buffer it in 1 KiB blocks and `kubectl logs` would stay empty.
	// Flush at every newline instead (the same reason Python needs -u in a pod).
	setvbuf(stdout, NULL, _IOLBF, 0);

	const char *pod = getenv("HOSTNAME");
	if (pod == NULL || pod[0] == '\0') {
		pod = "(no HOSTNAME)";
	}
	printf("%s %s! (hello:%s) args:", GREETING, pod, VERSION);
	if (argc < 2) {
		printf(" (none)");
	}
	for (int i = 1; i < argc; i++) {
		printf(" %s", argv[i]);
	}
	printf("\n");

	long ticks = flag(argc, argv, "--ticks", -1);
	long code = flag(argc, argv, "--exit", 0);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--stdin") == 0) {
			char line[4096];
			long lines = 0;
			while (fgets(line, sizeof line, stdin) != NULL) {
				line[strcspn(line, "\n")] = '\0';
				printf("hello: stdin: %s\n", line);
				lines++;
			}
			printf("hello: done after %ld lines of stdin, exit code %ld\n", lines, code);
			return (int)code;
		}
	}
	for (long n = 1; ticks < 0 || n <= ticks; n++) {
		sleep(1);
		printf("hello: tick %ld\n", n);
	}
	printf("hello: done after %ld ticks, exit code %ld\n", ticks, code);
	return (int)code;
}
