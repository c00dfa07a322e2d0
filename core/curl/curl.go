// Package curl is the console's `curl`: it sends HTTP requests into the
// cluster network, to Services by name or ClusterIP, to NodePorts and to pod
// addresses, and prints what came back the way curl does.
//
// Upstream counterpart: curl (https://curl.se), the tool every Kubernetes
// tutorial uses to reach a Service, usually from a debug pod
// (`kubectl run -it --rm tmp --image=curlimages/curl -- sh`). Only a small
// part of curl's options exists here; output, error messages and exit codes
// follow curl 8:
//
//	$ curl http://web.default.svc.cluster.local/
//	web: hello from web-7d4b9-x2x8q (10.244.2.2)
//	...
//	$ curl nope
//	curl: (6) Could not resolve host: nope
//	$ curl 10.96.0.10
//	curl: (7) Failed to connect to 10.96.0.10 port 80 after 0 ms: Couldn't connect to server
//
// Where it runs: on the first node's host network, resolving names like a
// pod in namespace default (dnsPolicy ClusterFirstWithHostNet), so "web",
// "web.default" and "web.default.svc.cluster.local" all name the Service web
// in default. Its requests go through that node's kube-proxy rules
// (core/proxy.Transport); each request is a new connection, so repeated
// requests show the load balancing.
//
// This package has no syscall/js; wasm/ registers it in the console.
package curl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/utils/clock"
)

// Version is the curl release whose behaviour and User-Agent this imitates.
const Version = "8.11.1"

// Exit codes, curl's (CURLcode).
const (
	ExitOK                  = 0
	ExitUnsupportedProtocol = 1  // CURLE_UNSUPPORTED_PROTOCOL
	ExitUsage               = 2  // CURLE_FAILED_INIT: bad command line
	ExitURLMalformat        = 3  // CURLE_URL_MALFORMAT
	ExitCouldntResolveHost  = 6  // CURLE_COULDNT_RESOLVE_HOST
	ExitCouldntConnect      = 7  // CURLE_COULDNT_CONNECT
	ExitHTTPReturnedError   = 22 // CURLE_HTTP_RETURNED_ERROR (with --fail)
	ExitOperationTimedOut   = 28 // CURLE_OPERATION_TIMEDOUT
	ExitTooManyRedirects    = 47 // CURLE_TOO_MANY_REDIRECTS
	ExitGotNothing          = 52 // CURLE_GOT_NOTHING
	ExitInterrupted         = 130
)

// maxRedirects is curl's default --max-redirs with -L.
const maxRedirects = 50

// IOStreams are the command's standard input, output and error.
type IOStreams struct {
	In          io.Reader
	Out, ErrOut io.Writer
}

// Config is what the command needs from its host.
type Config struct {
	// Transport carries the requests: the cluster's proxy.Transport.
	// Required.
	Transport http.RoundTripper
	// Clock measures "after N ms" and runs --max-time and
	// --connect-timeout. Nil means the real clock.
	Clock clock.Clock
}

// options is a parsed command line.
type options struct {
	silent, showError, include, head, verbose, fail, location bool
	method                                                    string
	headers                                                   []string
	data                                                      []string
	hasData                                                   bool
	userAgent                                                 string
	maxTime, connectTimeout                                   time.Duration
	urls                                                      []string
}

// usageError is a bad command line: curl prints it and a hint, exit 2.
type usageError string

func (e usageError) Error() string { return string(e) }

const hint = "curl: try 'curl --help' or 'curl --manual' for more information"

const help = `Usage: curl [options...] <url>
 -d, --data <data>           HTTP POST data
 -f, --fail                  Fail fast with no output on HTTP errors
 -H, --header <header>       Pass custom header(s) to server
 -I, --head                  Show document info only
 -i, --include               Include response headers in output
 -L, --location              Follow redirects
 -m, --max-time <seconds>    Maximum time allowed for transfer
     --connect-timeout <seconds>  Maximum time allowed to connect
 -X, --request <method>      Specify request method to use
 -S, --show-error            Show error even when -s is used
 -s, --silent                Silent mode
 -A, --user-agent <name>     Send User-Agent <name> to server
 -v, --verbose               Make the operation more talkative
 -h, --help                  This help text
 -V, --version               Show version number and quit

kubetab's curl runs on node-1's host network and resolves names like a pod
in namespace default: "web" is web.default.svc.cluster.local.
`

// parse reads curl's command line: short options may be combined (-sS, -si)
// and take their argument attached or as the next word (-XPOST, -X POST).
func parse(args []string) (*options, bool, error) {
	o := &options{}
	takesArg := map[string]bool{
		"-X": true, "--request": true, "-H": true, "--header": true, "-d": true, "--data": true,
		"--data-raw": true, "--data-binary": true, "--data-ascii": true, "-A": true, "--user-agent": true,
		"-m": true, "--max-time": true, "--connect-timeout": true,
	}
	seconds := func(opt, v string) (time.Duration, error) {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return 0, usageError(fmt.Sprintf("curl: option %s: expected a proper numerical parameter", opt))
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	apply := func(opt, val string) (bool, error) {
		switch opt {
		case "-s", "--silent":
			o.silent = true
		case "-S", "--show-error":
			o.showError = true
		case "-i", "--include":
			o.include = true
		case "-I", "--head":
			o.head = true
		case "-v", "--verbose":
			o.verbose = true
		case "-f", "--fail":
			o.fail = true
		case "-L", "--location":
			o.location = true
		case "-X", "--request":
			o.method = val
		case "-H", "--header":
			o.headers = append(o.headers, val)
		case "-d", "--data", "--data-raw", "--data-binary", "--data-ascii":
			o.data, o.hasData = append(o.data, val), true
		case "-A", "--user-agent":
			o.userAgent = val
		case "-m", "--max-time":
			d, err := seconds(opt, val)
			o.maxTime = d
			return false, err
		case "--connect-timeout":
			d, err := seconds(opt, val)
			o.connectTimeout = d
			return false, err
		case "-h", "--help", "-V", "--version":
			return true, nil
		default:
			return false, usageError(fmt.Sprintf("curl: option %s: is unknown", opt))
		}
		return false, nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			o.urls = append(o.urls, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "--"):
			val := ""
			if takesArg[a] {
				if i+1 >= len(args) {
					return nil, false, usageError(fmt.Sprintf("curl: option %s: requires parameter", a))
				}
				i++
				val = args[i]
			}
			if stop, err := apply(a, val); stop || err != nil {
				return o, stop, err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				opt := "-" + string(a[j])
				val := ""
				if takesArg[opt] {
					switch {
					case j+1 < len(a):
						val = a[j+1:]
					case i+1 < len(args):
						i++
						val = args[i]
					default:
						return nil, false, usageError(fmt.Sprintf("curl: option %s: requires parameter", opt))
					}
					j = len(a)
				}
				if stop, err := apply(opt, val); stop || err != nil {
					return o, stop, err
				}
			}
		default:
			o.urls = append(o.urls, a)
		}
	}
	if len(o.urls) == 0 {
		return nil, false, usageError("curl: no URL specified")
	}
	return o, false, nil
}

// Run runs one curl command line and returns its exit code.
func Run(ctx context.Context, cfg Config, args []string, s IOStreams) int {
	if s.In == nil {
		s.In = strings.NewReader("")
	}
	o, stop, err := parse(args)
	if err != nil {
		fmt.Fprintln(s.ErrOut, err)
		fmt.Fprintln(s.ErrOut, hint)
		return ExitUsage
	}
	if stop {
		if slicesContain(args, "-V", "--version") {
			fmt.Fprintf(s.Out, "curl %s (wasm32-unknown-wasi) kubetab\nProtocols: http\n", Version)
		} else {
			fmt.Fprint(s.Out, help)
		}
		return ExitOK
	}
	if cfg.Transport == nil {
		fmt.Fprintln(s.ErrOut, "curl: no network (the cluster has no Transport)")
		return ExitCouldntConnect
	}
	clk := cfg.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	body, err := requestBody(o, s.In, s.ErrOut)
	if err != nil {
		fmt.Fprintln(s.ErrOut, err)
		return ExitUsage
	}
	c := &command{o: o, clk: clk, rt: cfg.Transport, s: s}
	code := ExitOK
	for _, u := range o.urls {
		if code = c.fetch(ctx, u, body); code != ExitOK {
			break // curl goes on with the next URL, but reports the last failure; one is enough here
		}
	}
	return code
}

func slicesContain(args []string, vals ...string) bool {
	for _, a := range args {
		for _, v := range vals {
			if a == v {
				return true
			}
		}
	}
	return false
}

// requestBody joins the -d values with '&', as curl does; "@-" reads
// standard input.
func requestBody(o *options, in io.Reader, errOut io.Writer) ([]byte, error) {
	if !o.hasData {
		return nil, nil
	}
	var parts []string
	for _, d := range o.data {
		switch {
		case d == "@-":
			b, err := io.ReadAll(in)
			if err != nil {
				return nil, err
			}
			parts = append(parts, strings.NewReplacer("\r", "", "\n", "").Replace(string(b)))
		case strings.HasPrefix(d, "@"):
			fmt.Fprintf(errOut, "Warning: Couldn't read data from file \"%s\", this makes an empty POST.\n", d[1:])
			parts = append(parts, "")
		default:
			parts = append(parts, d)
		}
	}
	return []byte(strings.Join(parts, "&")), nil
}

// command is one run: its options and where it writes.
type command struct {
	o   *options
	clk clock.Clock
	rt  http.RoundTripper
	s   IOStreams
}

// fail prints a curl error (unless -s without -S) and returns its code.
func (c *command) fail(code int, format string, args ...any) int {
	if !c.o.silent || c.o.showError {
		fmt.Fprintf(c.s.ErrOut, "curl: (%d) %s\n", code, fmt.Sprintf(format, args...))
	}
	return code
}

func (c *command) verbosef(format string, args ...any) {
	if c.o.verbose {
		fmt.Fprintf(c.s.ErrOut, format, args...)
	}
}

// parseURL reads a URL the way curl does: no scheme means http.
func parseURL(raw string) (*url.URL, error) {
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u, nil
}

var (
	errConnectTimeout = errors.New("connect timeout")
	errMaxTime        = errors.New("max time")
)

// fetch requests one URL, following redirects with -L.
func (c *command) fetch(ctx context.Context, raw string, body []byte) int {
	u, err := parseURL(raw)
	if err != nil {
		return c.fail(ExitURLMalformat, "URL rejected: Malformed input to a URL function")
	}
	method := c.o.method
	switch {
	case method != "":
	case c.o.head:
		method = http.MethodHead
	case c.o.hasData:
		method = http.MethodPost
	default:
		method = http.MethodGet
	}
	start := c.clk.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	connected := make(chan struct{}, 1)
	stopTimers := c.startTimers(cancel, connected)
	defer stopTimers()

	for redirects := 0; ; redirects++ {
		if u.Scheme != "http" {
			return c.fail(ExitUnsupportedProtocol, "Protocol \"%s\" not supported", u.Scheme)
		}
		if u.Hostname() == "" {
			return c.fail(ExitURLMalformat, "URL rejected: No host part in the URL")
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 0 || n > 65535 {
				return c.fail(ExitURLMalformat, "URL rejected: Port number was not a decimal number between 0 and 65535")
			}
		}
		resp, code := c.roundTrip(ctx, u, method, body, start, connected)
		if resp == nil {
			return code
		}
		loc := resp.Header.Get("Location")
		if c.o.location && loc != "" && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			next, err := u.Parse(loc)
			resp.Body.Close()
			if err != nil {
				return c.fail(ExitURLMalformat, "URL rejected: Malformed input to a URL function")
			}
			if redirects+1 > maxRedirects {
				return c.fail(ExitTooManyRedirects, "Maximum (%d) redirects followed", maxRedirects)
			}
			c.verbosef("* Issue another request to this URL: '%s'\n", next)
			switch resp.StatusCode {
			case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther:
				if method == http.MethodPost && c.o.method == "" {
					method, body = http.MethodGet, nil
				}
			}
			u = next
			continue
		}
		return c.output(resp, u)
	}
}

// startTimers runs --connect-timeout and --max-time on the clock; each
// cancels the request with its cause. The returned func stops them.
func (c *command) startTimers(cancel context.CancelCauseFunc, connected <-chan struct{}) func() {
	done := make(chan struct{})
	start := func(d time.Duration, cause error, untilConnected bool) {
		if d <= 0 {
			return
		}
		t := c.clk.NewTimer(d)
		go func() {
			defer t.Stop()
			var conn <-chan struct{}
			if untilConnected {
				conn = connected
			}
			select {
			case <-t.C():
				cancel(cause)
			case <-conn:
			case <-done:
			}
		}()
	}
	start(c.o.connectTimeout, errConnectTimeout, true)
	start(c.o.maxTime, errMaxTime, false)
	return func() { close(done) }
}

// roundTrip sends one request and reports a failure the way curl does; a
// nil response comes with the exit code.
func (c *command) roundTrip(ctx context.Context, u *url.URL, method string, body []byte, start time.Time, connected chan<- struct{}) (*http.Response, int) {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "80"
	}
	trace := &httptrace.ClientTrace{
		DNSDone: func(info httptrace.DNSDoneInfo) {
			if info.Err == nil {
				c.verbosef("* Host %s:%s was resolved.\n* IPv6: (none)\n* IPv4: %s\n", host, port, joinAddrs(info.Addrs))
			}
		},
		ConnectStart: func(_, addr string) {
			c.verbosef("*   Trying %s...\n", addr)
		},
		ConnectDone: func(_, addr string, err error) {
			if err != nil {
				h, p, _ := net.SplitHostPort(addr)
				c.verbosef("* connect to %s port %s failed: %s\n", h, p, errnoText(err))
				return
			}
			select {
			case connected <- struct{}{}:
			default:
			}
			h, _, _ := net.SplitHostPort(addr)
			c.verbosef("* Connected to %s (%s) port %s\n* using HTTP/1.x\n", host, h, port)
		},
	}
	var rbody io.Reader
	if body != nil {
		rbody = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u.String(), rbody)
	if err != nil {
		return nil, c.fail(ExitURLMalformat, "URL rejected: Malformed input to a URL function")
	}
	req.Header.Set("User-Agent", "curl/"+Version)
	if c.o.userAgent != "" {
		req.Header.Set("User-Agent", c.o.userAgent)
	}
	req.Header.Set("Accept", "*/*")
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, h := range c.o.headers {
		name, val, ok := strings.Cut(h, ":")
		switch {
		case ok && strings.TrimSpace(val) == "":
			req.Header.Del(name) // "Name:" removes a header curl would send
		case ok:
			if strings.EqualFold(strings.TrimSpace(name), "Host") {
				req.Host = strings.TrimSpace(val)
				continue
			}
			req.Header.Add(strings.TrimSpace(name), strings.TrimSpace(val))
		case strings.HasSuffix(h, ";"):
			req.Header.Add(strings.TrimSuffix(h, ";"), "")
		}
	}

	resp, err := c.rt.RoundTrip(req)
	elapsed := c.clk.Since(start).Milliseconds()
	if err == nil {
		if c.o.verbose {
			c.verbosef("> %s %s HTTP/1.1\n> Host: %s\n", method, u.RequestURI(), hostHeader(req))
			// curl's own headers in its order, then the -H ones.
			rest := req.Header.Clone()
			for _, k := range []string{"User-Agent", "Accept"} {
				for _, v := range rest[k] {
					c.verbosef("> %s: %s\n", k, v)
				}
				delete(rest, k)
			}
			writeHeaders(c.s.ErrOut, "> ", rest, "\n")
			c.verbosef("> \n* Request completely sent off\n< %s %s\n", resp.Proto, resp.Status)
			writeHeaders(c.s.ErrOut, "< ", resp.Header, "\n")
			c.verbosef("< \n")
		}
		return resp, ExitOK
	}
	cause := context.Cause(ctx)
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr):
		return nil, c.fail(ExitCouldntResolveHost, "Could not resolve host: %s", host)
	case errors.Is(cause, errConnectTimeout), errors.Is(cause, errMaxTime) && dialFailed(err):
		return nil, c.fail(ExitOperationTimedOut, "Failed to connect to %s port %s after %d ms: Timeout was reached", host, port, elapsed)
	case errors.Is(cause, errMaxTime):
		return nil, c.fail(ExitOperationTimedOut, "Operation timed out after %d milliseconds with 0 bytes received", elapsed)
	case ctx.Err() != nil:
		return nil, ExitInterrupted // Ctrl-C: the shell says nothing
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return nil, c.fail(ExitCouldntConnect, "Failed to connect to %s port %s after %d ms: Couldn't connect to server", host, port, elapsed)
	}
	if strings.Contains(err.Error(), "unsupported protocol scheme") {
		return nil, c.fail(ExitUnsupportedProtocol, "Protocol \"%s\" not supported", u.Scheme)
	}
	return nil, c.fail(ExitGotNothing, "Empty reply from server")
}

// dialFailed reports whether a request failed while connecting.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func hostHeader(req *http.Request) string {
	if req.Host != "" {
		return req.Host
	}
	return req.URL.Host
}

// errnoText is the strerror of a connect failure, for -v.
func errnoText(err error) string {
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno) && errno == syscall.ECONNREFUSED:
		return "Connection refused"
	case errors.As(err, &errno) && errno == syscall.EHOSTUNREACH:
		return "No route to host"
	case errors.As(err, &errno) && errno == syscall.ENETUNREACH:
		return "Network is unreachable"
	case errors.As(err, &errno) && errno == syscall.ETIMEDOUT:
		return "Connection timed out"
	}
	return err.Error()
}

func joinAddrs(addrs []net.IPAddr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// writeHeaders writes headers sorted by name, each as "prefix Name: value".
func writeHeaders(w io.Writer, prefix string, h http.Header, eol string) {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			fmt.Fprintf(w, "%s%s: %s%s", prefix, k, v, eol)
		}
	}
}

// output prints a response: the headers with -i or -I, then the body;
// --fail turns an HTTP error into exit 22 with nothing printed.
func (c *command) output(resp *http.Response, u *url.URL) int {
	defer resp.Body.Close()
	if c.o.fail && resp.StatusCode >= 400 {
		return c.fail(ExitHTTPReturnedError, "The requested URL returned error: %d", resp.StatusCode)
	}
	if c.o.include || c.o.head {
		fmt.Fprintf(c.s.Out, "%s %s\r\n", resp.Proto, resp.Status)
		writeHeaders(c.s.Out, "", resp.Header, "\r\n")
		fmt.Fprint(c.s.Out, "\r\n")
	}
	if _, err := io.Copy(c.s.Out, resp.Body); err != nil {
		return c.fail(23, "Failure writing output to destination")
	}
	c.verbosef("* Connection #0 to host %s left intact\n", u.Hostname())
	return ExitOK
}
