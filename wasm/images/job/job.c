// job counts down and exits 0: the image for Job lessons (completions,
// parallelism, backoffLimit with --fail).
//
//	job: 3
//	job: 2
//	job: 1
//	job: done
//
// Args: the number to count down from (default 5) as the first argument or
// --from=N; --fail makes it exit 1 instead of 0 at the end.
#include <stdio.h>
#include <unistd.h>

#include "../flags.h"

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	long from = 5;
	if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9') {
		from = strtol(argv[1], NULL, 10);
	}
	from = flag(argc, argv, "--from", from);
	for (long n = from; n > 0; n--) {
		printf("job: %ld\n", n);
		sleep(1);
	}
	if (has(argc, argv, "--fail")) {
		printf("job: failed\n");
		return 1;
	}
	printf("job: done\n");
	return 0;
}
