// oom allocates memory until it hits its limit: the image for
// resources.limits.memory and OOMKilled lessons. Each MiB is written to, so
// it is really used.
//
//	oom: allocated 1 MiB
//	oom: allocated 2 MiB
//	...
//
// Under a memory limit the runtime kills it at the limit (exit 137,
// OOMKilled). Flags: --step-ms=N pause between MiB (default 100, so a
// learner can watch `kubectl top`), --max-mib=N stop at N MiB and exit 0,
// --hold with --max-mib: stop growing at N MiB and keep the memory until
// stopped (a pod that uses a lot and stays: the kubelet's eviction manager
// is what ends it when its node runs low).
#include <stdio.h>
#include <time.h>

#include "../flags.h"

// head keeps every block reachable: without it the compiler sees memory that
// is never read and removes malloc and memset altogether.
static char *volatile head;

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	long step = flag(argc, argv, "--step-ms", 100);
	long max = flag(argc, argv, "--max-mib", -1);
	int hold = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--hold") == 0) {
			hold = 1;
		}
	}
	for (long mib = 1; max < 0 || mib <= max; mib++) {
		char *p = malloc(1 << 20);
		if (p == NULL) {
			printf("oom: malloc failed after %ld MiB\n", mib - 1);
			return 1;
		}
		memset(p, (int)mib, 1 << 20);
		*(char **)p = head; // a list of the blocks
		head = p;
		printf("oom: allocated %ld MiB\n", mib);
		if (step > 0) {
			struct timespec ts = {step / 1000, (step % 1000) * 1000000};
			nanosleep(&ts, NULL);
		}
	}
	if (hold) {
		printf("oom: holding %ld MiB\n", max);
		for (;;) {
			struct timespec ts = {3600, 0};
			nanosleep(&ts, NULL);
		}
	}
	printf("oom: stopping at %ld MiB\n", max);
	return 0;
}
