// crash runs for a while, then exits with an error: the image for
// CrashLoopBackOff and restartPolicy lessons.
//
//	crash: running; exiting with code 1 in 5s
//	crash: giving up (exit code 1)
//
// Flags: --after=N seconds before it exits (default 5), --code=N the exit
// code (default 1).
#include <stdio.h>
#include <unistd.h>

#include "../flags.h"

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	long after = flag(argc, argv, "--after", 5);
	long code = flag(argc, argv, "--code", 1);
	printf("crash: running; exiting with code %ld in %lds\n", code, after);
	if (after > 0) {
		sleep((unsigned)after);
	}
	fprintf(stderr, "crash: giving up (exit code %ld)\n", code);
	return (int)code;
}
