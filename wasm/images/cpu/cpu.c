// cpu burns CPU flat out and reports its rate every second: the image for
// resources.limits.cpu (throttling), `kubectl top` and for keeping a tab
// responsive while a guest never sleeps.
//
//	cpu: 12.3 M iterations/s (total 12.3 M)
//
// The loop calls nothing: only the runtime's instrumentation can interrupt
// it. It reads the clock every 2^16 iterations to know when a second is up.
//
// --work=N instead runs N thousand iterations, prints a checksum and exits 0:
// the same output whatever the speed, for tests and benchmarks.
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "../flags.h"

// step is one iteration: a xorshift of the state, so the compiler can
// neither skip nor fold the loop.
static inline uint64_t step(uint64_t x) {
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return x;
}

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	setvbuf(stdout, NULL, _IOLBF, 0);
	uint64_t x = 88172645463325252ull;
	long work = flag(argc, argv, "--work", -1);
	if (work >= 0) {
		for (long i = 0; i < work * 1000; i++) {
			x = step(x);
		}
		printf("cpu: %ld thousand iterations, checksum %016llx\n", work, (unsigned long long)x);
		return 0;
	}
	uint64_t total = 0, since = 0;
	double last = now();
	for (;;) {
		for (int i = 0; i < 65536; i++) {
			x = step(x);
		}
		total += 65536;
		since += 65536;
		double t = now();
		if (t - last >= 1.0) {
			printf("cpu: %.1f M iterations/s (total %.1f M, %x)\n", since / (t - last) / 1e6, total / 1e6, (unsigned)(x & 0xf));
			since = 0;
			last = t;
		}
	}
}
