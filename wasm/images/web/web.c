// web is kubetab's HTTP server image. WASI preview1 has no sockets, so it is
// served CGI-style (CGI/1.1, RFC 3875): the runtime starts one instance per
// request with the request in the environment (REQUEST_METHOD, PATH_INFO,
// QUERY_STRING, HTTP_* headers) and its body on stdin, and reads the
// response from stdout: headers, a blank line, the body. See
// cri.Runtime.HTTPHandler.
//
// Run as the container itself (no REQUEST_METHOD) it says it is ready and
// waits until stopped, as a server's listener would.
//
//	GET /         200  web: hello from <pod> (<pod IP>) / request #N ...
//	GET /healthz  200 "ok", or 500 "unhealthy" when told to fail
//	GET /fail     makes /healthz fail from now on (needs /data)
//	GET /heal     makes /healthz pass again
//
// State: an instance remembers nothing, so the request counter lives in a
// file, /data/count, when a volume (an emptyDir) is mounted at /data; it
// then counts every request the pod served, across container restarts.
// Without /data the counter says so. (Concurrent requests may race on it.)
//
// /healthz fails when the env UNHEALTHY is set, or the file /data/unhealthy
// or /tmp/unhealthy exists; `kubectl exec POD -- web --unhealthy` creates
// /data/unhealthy and `--healthy` removes it.
#include <stdio.h>
#include <unistd.h>

#include "../flags.h"

static const char *env(const char *name, const char *def) {
	const char *v = getenv(name);
	return v != NULL && v[0] != '\0' ? v : def;
}

static int unhealthy(void) {
	return getenv("UNHEALTHY") != NULL || access("/data/unhealthy", F_OK) == 0 ||
	       access("/tmp/unhealthy", F_OK) == 0;
}

// mark creates (on != 0) or removes /data/unhealthy; it returns 0 on success.
static int mark(int on) {
	if (!on) {
		return unlink("/data/unhealthy") == 0 || access("/data/unhealthy", F_OK) != 0 ? 0 : -1;
	}
	FILE *f = fopen("/data/unhealthy", "w");
	if (f == NULL) {
		return -1;
	}
	fputs("unhealthy\n", f);
	return fclose(f);
}

// count increments /data/count and returns the new value, or -1 without /data.
static long count(void) {
	long n = 0;
	FILE *f = fopen("/data/count", "r");
	if (f != NULL) {
		if (fscanf(f, "%ld", &n) != 1) {
			n = 0;
		}
		fclose(f);
	}
	f = fopen("/data/count", "w");
	if (f == NULL) {
		return -1;
	}
	fprintf(f, "%ld\n", ++n);
	fclose(f);
	return n;
}

static void respond(int status, const char *reason) {
	printf("Status: %d %s\nContent-Type: text/plain; charset=utf-8\n\n", status, reason);
}

int main(int argc, char **argv) {
	const char *pod = env("HOSTNAME", "(no HOSTNAME)");
	const char *ip = env("POD_IP", "no POD_IP");
	const char *method = getenv("REQUEST_METHOD");
	if (method == NULL) {
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (has(argc, argv, "--unhealthy") || has(argc, argv, "--healthy")) {
			int on = has(argc, argv, "--unhealthy");
			if (mark(on) != 0) {
				fprintf(stderr, "web: cannot %s /data/unhealthy: is a volume mounted at /data?\n", on ? "create" : "remove");
				return 1;
			}
			printf("web: /healthz will %s\n", on ? "fail" : "pass");
			return 0;
		}
		printf("web: %s (%s) ready; serving HTTP CGI-style, one instance per request\n", pod, ip);
		for (;;) {
			sleep(3600);
		}
	}

	const char *path = env("PATH_INFO", "/");
	if (strcmp(path, "/healthz") == 0) {
		if (unhealthy()) {
			respond(500, "Internal Server Error");
			printf("unhealthy\n");
		} else {
			respond(200, "OK");
			printf("ok\n");
		}
		return 0;
	}
	if (strcmp(path, "/fail") == 0 || strcmp(path, "/heal") == 0) {
		int on = strcmp(path, "/fail") == 0;
		if (mark(on) != 0) {
			respond(409, "Conflict");
			printf("web: cannot change /data/unhealthy: mount a volume at /data\n");
			return 0;
		}
		respond(200, "OK");
		printf("web: /healthz will %s\n", on ? "fail" : "pass");
		return 0;
	}
	if (strcmp(path, "/") != 0) {
		respond(404, "Not Found");
		printf("web: no page %s\n", path);
		return 0;
	}
	long n = count();
	respond(200, "OK");
	printf("web: hello from %s (%s)\n", pod, ip);
	if (n < 0) {
		printf("requests: not counted (no volume at /data: each request is a new instance)\n");
	} else {
		printf("requests served by this pod: %ld\n", n);
	}
	printf("%s %s\n", method, env("REQUEST_URI", path));
	return 0;
}
