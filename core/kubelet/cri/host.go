package cri

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"syscall"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/kubetab/kubetab/core/internal/capped"
)

// The kubetab_host functions: what a process needs that WASI preview1 does
// not have, for the userland (wasm/images/busybox). A module may import any
// of them; each is the host's side of a system call a Linux process makes:
//
//	kill(pid, sig) → errno                  kill(2), in the container's PID namespace
//	isatty(fd) → 0|1                        isatty(3): is the process on a terminal
//	sigint(op) → 0|1                        sigaction(SIGINT): op 1 catches it (an
//	                                        interactive sh: Ctrl-C stops the command,
//	                                        not the shell), 0 restores the default
//	                                        (it ends the process); op 2 takes a
//	                                        caught one: 1 if it came since
//	lookup(name, out) → n | -1 | -2         the pod's resolver: A records of an
//	                                        absolute name, "addr\n" each; -1 NXDOMAIN,
//	                                        -2 SERVFAIL
//	http_get(url, out) → handle | -code     connect(2)+write(2) of an HTTP GET through
//	http_read(handle, buf) → n              the cluster network, as the console's curl;
//	http_close(handle)                      out: "HTTP/1.1 200 OK\n<addr:port>"
//	spawn(argv, env, in, flags) → code      fork(2)+execve(2)+wait(2): another program
//	spawn_read(buf) → n                     of the container, run to its end
//
// Strings are (pointer, length) pairs in the guest's memory; argv and env
// are NUL-terminated strings one after another.
const HostModule = "kubetab_host"

// hostFunctions are the signatures of the kubetab_host functions, for
// validateCommand.
var hostFunctions = map[string]struct{ params, results int }{
	"kill": {2, 1}, "isatty": {1, 1}, "sigint": {1, 1}, "lookup": {4, 1},
	"http_get": {4, 1}, "http_read": {3, 1}, "http_close": {1, 0},
	"spawn": {7, 1}, "spawn_read": {2, 1},
}

// PodNetwork is the cluster network as a pod's processes reach it: what
// wget and nslookup in a container use. core/cluster implements it with the
// node's kube-proxy and the cluster DNS.
type PodNetwork interface {
	// RoundTrip sends req from a pod of namespace, as http.RoundTripper
	// does; addr is the address it connected to ("10.96.0.5:80": the
	// Service's, before kube-proxy's DNAT), for the client's messages.
	RoundTrip(req *http.Request, namespace string) (resp *http.Response, addr string, err error)
	// LookupNetIP resolves host as the pod's resolver does (an absolute
	// name ends with a dot). Errors are *net.DNSError.
	LookupNetIP(ctx context.Context, namespace, host string) ([]netip.Addr, error)
}

// WASI errno values the host functions return.
const (
	wasiEINVAL = 28
	wasiESRCH  = 71
)

// hostState is a process's side of the kubetab_host functions.
type hostState struct {
	c        *container
	proc     *process // the instance's own process
	iio      instanceIO
	bodies   map[int32]io.ReadCloser
	nextBody int32
	spawned  *bytes.Buffer // captured stdout of the last spawn
}

func hostOf(ctx context.Context) *hostState {
	if g := guestOf(ctx); g != nil {
		return g.host
	}
	return nil
}

// readString reads a (pointer, length) string from the guest's memory.
func readString(mod api.Module, ptr, n uint32) (string, bool) {
	b, ok := mod.Memory().Read(ptr, n)
	return string(b), ok
}

// writeOut writes s into the guest's buffer (ptr, capacity n), truncated.
func writeOut(mod api.Module, ptr, n uint32, s string) int32 {
	if uint32(len(s)) > n {
		s = s[:n]
	}
	if !mod.Memory().Write(ptr, []byte(s)) {
		return -1
	}
	return int32(len(s))
}

// instantiateUserlandHost adds the kubetab_host module to a wazero runtime.
func instantiateUserlandHost(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	b := rt.NewHostModuleBuilder(HostModule)
	fn := func(name string, params, results int, f func(ctx context.Context, mod api.Module, h *hostState, stack []uint64)) {
		p := make([]api.ValueType, params)
		r := make([]api.ValueType, results)
		for i := range p {
			p[i] = i32
		}
		for i := range r {
			r[i] = i32
		}
		b = b.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			h := hostOf(ctx)
			if h == nil {
				if results > 0 {
					stack[0] = api.EncodeI32(-1)
				}
				return
			}
			g := guestOf(ctx)
			g.pause() // time in the host is not the guest's CPU time
			defer g.resume()
			f(ctx, mod, h, stack)
		}), p, r).WithName(name).Export(name)
	}
	fn("kill", 2, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		switch err := h.c.signal(api.DecodeI32(stack[0]), api.DecodeI32(stack[1])); {
		case err == nil:
			stack[0] = 0
		case errors.Is(err, errNoSuchProcess):
			stack[0] = api.EncodeI32(wasiESRCH)
		default:
			stack[0] = api.EncodeI32(wasiEINVAL)
		}
	})
	fn("isatty", 1, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		fd := api.DecodeI32(stack[0])
		stack[0] = 0
		if h.iio.tty && fd >= 0 && fd <= 2 {
			stack[0] = 1
		}
	})
	fn("sigint", 1, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		op := api.DecodeI32(stack[0])
		stack[0] = 0
		switch op {
		case 0, 1:
			h.proc.catchINT.Store(op == 1)
		case 2:
			if h.proc.pendingINT.Swap(false) {
				stack[0] = 1
			}
		}
	})
	fn("lookup", 4, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		name, ok := readString(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
		if !ok || h.c.network == nil {
			stack[0] = api.EncodeI32(-2)
			return
		}
		addrs, err := h.c.network.LookupNetIP(ctx, h.c.cfg.PodNamespace, name)
		var dnsErr *net.DNSError
		switch {
		case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
			stack[0] = api.EncodeI32(-1)
			return
		case err != nil || len(addrs) == 0:
			stack[0] = api.EncodeI32(-2)
			return
		}
		var sb strings.Builder
		for _, a := range addrs {
			sb.WriteString(a.String() + "\n")
		}
		stack[0] = api.EncodeI32(writeOut(mod, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]), sb.String()))
	})
	fn("http_get", 4, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		url, ok := readString(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
		outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
		code, info := h.httpGet(ctx, url, ok)
		writeOut(mod, outPtr, outCap, info)
		stack[0] = api.EncodeI32(code)
	})
	fn("http_read", 3, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		body := h.bodies[api.DecodeI32(stack[0])]
		if body == nil {
			stack[0] = api.EncodeI32(-1)
			return
		}
		buf := make([]byte, min(api.DecodeU32(stack[2]), 64<<10))
		n, err := body.Read(buf)
		if n == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				stack[0] = 0
			} else {
				stack[0] = api.EncodeI32(-1)
			}
			return
		}
		stack[0] = api.EncodeI32(writeOut(mod, api.DecodeU32(stack[1]), uint32(n), string(buf[:n])))
	})
	fn("http_close", 1, 0, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		id := api.DecodeI32(stack[0])
		if body := h.bodies[id]; body != nil {
			body.Close()
			delete(h.bodies, id)
		}
	})
	fn("spawn", 7, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		argv, ok1 := readString(mod, api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
		env, ok2 := readString(mod, api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
		in, ok3 := readString(mod, api.DecodeU32(stack[4]), api.DecodeU32(stack[5]))
		if !ok1 || !ok2 || !ok3 {
			stack[0] = api.EncodeI32(-126)
			return
		}
		stack[0] = api.EncodeI32(h.spawn(ctx, splitNUL(argv), splitNUL(env), in, api.DecodeI32(stack[6])))
	})
	fn("spawn_read", 2, 1, func(ctx context.Context, mod api.Module, h *hostState, stack []uint64) {
		if h.spawned == nil {
			stack[0] = 0
			return
		}
		chunk := h.spawned.Next(int(api.DecodeU32(stack[1])))
		stack[0] = api.EncodeI32(writeOut(mod, api.DecodeU32(stack[0]), uint32(len(chunk)), string(chunk)))
	})
	_, err := b.Instantiate(ctx)
	return err
}

func splitNUL(s string) []string {
	s = strings.TrimSuffix(s, "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// httpGet sends a GET through the pod network. It returns a body handle and
// "HTTP/1.1 200 OK\n<address>", or a negative code and what failed (the
// address, or a message): -1 the name did not resolve, -2 connection
// refused, -3 host unreachable, -4 network unreachable, -5 timed out, -6 not
// an http URL, -7 anything else.
func (h *hostState) httpGet(ctx context.Context, url string, ok bool) (int32, string) {
	if !ok || !strings.HasPrefix(url, "http://") {
		return -6, url
	}
	if h.c.network == nil {
		return -4, "no pod network"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return -7, err.Error()
	}
	req.Header.Set("User-Agent", "Wget")
	resp, addr, err := h.c.network.RoundTrip(req, h.c.cfg.PodNamespace)
	if addr == "" {
		addr = req.URL.Host
	}
	if err != nil {
		var dnsErr *net.DNSError
		var opErr *net.OpError
		if errors.As(err, &opErr) && opErr.Addr != nil {
			addr = opErr.Addr.String()
		}
		switch {
		case errors.As(err, &dnsErr):
			return -1, req.URL.Hostname()
		case errors.Is(err, syscall.ECONNREFUSED):
			return -2, addr
		case errors.Is(err, syscall.EHOSTUNREACH):
			return -3, addr
		case errors.Is(err, syscall.ENETUNREACH):
			return -4, addr
		case errors.Is(err, syscall.ETIMEDOUT), errors.Is(err, context.DeadlineExceeded):
			return -5, addr
		}
		return -7, err.Error()
	}
	if h.bodies == nil {
		h.bodies = map[int32]io.ReadCloser{}
	}
	h.nextBody++
	h.bodies[h.nextBody] = resp.Body
	return h.nextBody, fmt.Sprintf("%s %s\n%s", resp.Proto, resp.Status, addr)
}

// spawn runs argv as another process of the container and waits for it:
// what a shell's fork and exec do. It inherits the caller's stdin (flags
// bit 1) or reads in; its stdout is the caller's, or captured for
// spawn_read (flags bit 2); its stderr is the caller's. It returns the exit
// code, or -127 (not found) or -126 (not runnable).
func (h *hostState) spawn(ctx context.Context, argv, env []string, in string, flags int32) int32 {
	if len(argv) == 0 {
		return -127
	}
	var vars []EnvVar
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			vars = append(vars, EnvVar{Name: k, Value: v})
		}
	}
	pathEnv, ok := envValue(vars, "PATH")
	if !ok {
		pathEnv = DefaultPath
	}
	dir, _ := envValue(vars, "PWD")
	if !strings.HasPrefix(dir, "/") {
		dir = "/"
	}
	prog, err := h.c.programIn(ctx, argv[0], pathEnv, dir)
	var ee *execError
	if errors.As(err, &ee) {
		return -ee.code
	}
	if err != nil {
		return -126
	}
	iio := instanceIO{argv: argv, env: vars, ownEnv: true, stdout: h.iio.stdout, stderr: h.iio.stderr, tty: h.iio.tty}
	if flags&1 != 0 {
		iio.stdin = h.iio.stdin
	} else {
		iio.stdin = strings.NewReader(in)
	}
	if flags&2 != 0 {
		h.spawned = &bytes.Buffer{}
		iio.stdout = &capped.Buffer{Max: MaxExecOutput}
	}
	if iio.stdout == nil {
		iio.stdout = io.Discard
	}
	if iio.stderr == nil {
		iio.stderr = io.Discard
	}
	code, _, msg := h.c.run(ctx, prog, iio)
	if msg != "" {
		fmt.Fprintln(iio.stderr, msg)
	}
	if b, ok := iio.stdout.(*capped.Buffer); ok && flags&2 != 0 {
		h.spawned.Write(b.Bytes())
	}
	return code
}
