// sleep waits until it is stopped, doing nothing: the image for pods that
// only need to exist (scheduling, volumes, `kubectl exec` targets).
//
//	sleep: waiting until stopped
//
// An optional first argument N makes it exit 0 after N seconds, like
// sleep(1).
#include <stdio.h>
#include <unistd.h>

#include "../flags.h"

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1) {
		long n = strtol(argv[1], NULL, 10);
		printf("sleep: sleeping %lds\n", n);
		sleep((unsigned)n);
		return 0;
	}
	printf("sleep: waiting until stopped\n");
	for (;;) {
		sleep(3600);
	}
}
