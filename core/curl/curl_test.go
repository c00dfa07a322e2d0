package curl

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

// fakeNet answers like proxy.Transport: by host, a response or a
// connection error, with the trace calls a real round trip makes.
type fakeNet struct {
	clk  *testingclock.FakeClock
	seen []*http.Request
	// bodies the server got
	bodies []string
}

var addrs = map[string]string{"web": "10.96.100.1", "empty": "10.96.100.2", "drop": "10.96.100.3", "10.96.0.10": "10.96.0.10"}

func (f *fakeNet) RoundTrip(req *http.Request) (*http.Response, error) {
	trace := httptrace.ContextClientTrace(req.Context())
	host := req.URL.Hostname()
	ip, ok := addrs[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if host != ip && trace != nil && trace.DNSDone != nil {
		trace.DNSDone(httptrace.DNSDoneInfo{Addrs: []net.IPAddr{{IP: net.ParseIP(ip)}}})
	}
	dst := ip + ":80"
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", dst)
	}
	fail := func(err error) (*http.Response, error) {
		err = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
		if trace != nil && trace.ConnectDone != nil {
			trace.ConnectDone("tcp", dst, err)
		}
		return nil, err
	}
	switch host {
	case "empty", "10.96.0.10":
		f.clk.Step(3 * time.Millisecond)
		return fail(syscall.ECONNREFUSED)
	case "drop":
		<-req.Context().Done()
		return fail(req.Context().Err())
	}
	if trace != nil && trace.ConnectDone != nil {
		trace.ConnectDone("tcp", dst, nil)
	}
	f.seen = append(f.seen, req)
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
	}
	f.bodies = append(f.bodies, string(body))
	code, out := 200, "web: hello from web-1 (10.244.1.2)\n"
	hdr := http.Header{"Content-Type": {"text/plain; charset=utf-8"}, "Date": {"Sun, 29 Nov 2026 10:00:00 GMT"}}
	switch req.URL.Path {
	case "/missing":
		code, out = 404, "web: no page /missing\n"
	case "/old":
		code, out = 302, ""
		hdr.Set("Location", "/")
	case "/loop":
		code, out = 302, ""
		hdr.Set("Location", "/loop")
	}
	hdr.Set("Content-Length", fmt.Sprint(len(out)))
	if req.Method == http.MethodHead {
		out = ""
	}
	return &http.Response{Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), StatusCode: code, Proto: "HTTP/1.1",
		Header: hdr, Body: io.NopCloser(strings.NewReader(out)), Request: req}, nil
}

func run(t *testing.T, f *fakeNet, stdin string, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e bytes.Buffer
	code = Run(context.Background(), Config{Transport: f, Clock: f.clk}, args, IOStreams{In: strings.NewReader(stdin), Out: &o, ErrOut: &e})
	return code, o.String(), e.String()
}

func TestCurl(t *testing.T) {
	const hello = "web: hello from web-1 (10.244.1.2)\n"
	const headers = "HTTP/1.1 200 OK\r\nContent-Length: 35\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Sun, 29 Nov 2026 10:00:00 GMT\r\n\r\n"
	const try = "curl: try 'curl --help' or 'curl --manual' for more information\n"
	cases := []struct {
		name    string
		args    []string
		code    int
		out     string
		errOut  string
		request string // "METHOD URL" the server got
	}{
		{"a body", []string{"http://web/"}, 0, hello, "", "GET http://web/"},
		{"no scheme means http", []string{"web"}, 0, hello, "", "GET http://web/"},
		{"-i", []string{"-i", "web"}, 0, headers + hello, "", "GET http://web/"},
		{"-I", []string{"-I", "web"}, 0, headers, "", "HEAD http://web/"},
		{"-si combined", []string{"-si", "web"}, 0, headers + hello, "", "GET http://web/"},
		{"unknown host", []string{"http://nope.default.svc.cluster.local/"}, 6, "", "curl: (6) Could not resolve host: nope.default.svc.cluster.local\n", ""},
		{"-s hides errors", []string{"-s", "nope"}, 6, "", "", ""},
		{"-sS shows them", []string{"-sS", "nope"}, 6, "", "curl: (6) Could not resolve host: nope\n", ""},
		{"refused", []string{"10.96.0.10"}, 7, "", "curl: (7) Failed to connect to 10.96.0.10 port 80 after 3 ms: Couldn't connect to server\n", ""},
		{"refused by name", []string{"http://empty:80/"}, 7, "", "curl: (7) Failed to connect to empty port 80 after 3 ms: Couldn't connect to server\n", ""},
		{"an HTTP error is output", []string{"web/missing"}, 0, "web: no page /missing\n", "", "GET http://web/missing"},
		{"--fail", []string{"-f", "web/missing"}, 22, "", "curl: (22) The requested URL returned error: 404\n", "GET http://web/missing"},
		{"redirect shown", []string{"-i", "web/old"}, 0, "HTTP/1.1 302 Found\r\nContent-Length: 0\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Sun, 29 Nov 2026 10:00:00 GMT\r\nLocation: /\r\n\r\n", "", "GET http://web/old"},
		{"-L follows", []string{"-L", "web/old"}, 0, hello, "", "GET http://web/"},
		{"-L gives up", []string{"-L", "web/loop"}, 47, "", "curl: (47) Maximum (50) redirects followed\n", "GET http://web/loop"},
		{"-X", []string{"-X", "DELETE", "web"}, 0, hello, "", "DELETE http://web/"},
		{"-XPUT attached", []string{"-XPUT", "web"}, 0, hello, "", "PUT http://web/"},
		{"https", []string{"https://web/"}, 1, "", "curl: (1) Protocol \"https\" not supported\n", ""},
		{"bad port", []string{"http://web:99999999/"}, 3, "", "curl: (3) URL rejected: Port number was not a decimal number between 0 and 65535\n", ""},
		{"bad URL", []string{"http://[web/"}, 3, "", "curl: (3) URL rejected: Malformed input to a URL function\n", ""},
		{"no URL", []string{"-s"}, 2, "", "curl: no URL specified\n" + try, ""},
		{"unknown option", []string{"--frobnicate", "web"}, 2, "", "curl: option --frobnicate: is unknown\n" + try, ""},
		{"missing parameter", []string{"web", "-H"}, 2, "", "curl: option -H: requires parameter\n" + try, ""},
		{"bad number", []string{"-m", "soon", "web"}, 2, "", "curl: option -m: expected a proper numerical parameter\n" + try, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNet{clk: testingclock.NewFakeClock(time.Unix(0, 0))}
			code, out, errOut := run(t, f, "", tc.args...)
			if code != tc.code || out != tc.out || errOut != tc.errOut {
				t.Errorf("curl %s:\ncode %d, want %d\nstdout %q\nwant   %q\nstderr %q\nwant   %q",
					strings.Join(tc.args, " "), code, tc.code, out, tc.out, errOut, tc.errOut)
			}
			last := ""
			if n := len(f.seen); n > 0 {
				last = f.seen[n-1].Method + " " + f.seen[n-1].URL.String()
			}
			if last != tc.request {
				t.Errorf("last request %q, want %q", last, tc.request)
			}
		})
	}
}

func TestCurlRequestHeadersAndData(t *testing.T) {
	f := &fakeNet{clk: testingclock.NewFakeClock(time.Unix(0, 0))}
	code, _, _ := run(t, f, "from=stdin\n", "-d", "a=1", "--data", "@-", "-H", "X-Trace: yes", "-H", "Accept:", "-A", "tester/2", "-H", "Host: web.example", "web")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	req := f.seen[0]
	if req.Method != "POST" || f.bodies[0] != "a=1&from=stdin" {
		t.Errorf("%s with body %q, want POST a=1&from=stdin", req.Method, f.bodies[0])
	}
	for k, want := range map[string]string{
		"Content-Type": "application/x-www-form-urlencoded", "X-Trace": "yes", "Accept": "", "User-Agent": "tester/2",
	} {
		if got := req.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if req.Host != "web.example" {
		t.Errorf("Host %q", req.Host)
	}
	// The defaults.
	run(t, f, "", "web")
	if ua, acc := f.seen[1].Header.Get("User-Agent"), f.seen[1].Header.Get("Accept"); ua != "curl/"+Version || acc != "*/*" {
		t.Errorf("defaults: User-Agent %q, Accept %q", ua, acc)
	}
}

func TestCurlVerbose(t *testing.T) {
	f := &fakeNet{clk: testingclock.NewFakeClock(time.Unix(0, 0))}
	code, out, errOut := run(t, f, "", "-v", "web")
	want := `* Host web:80 was resolved.
* IPv6: (none)
* IPv4: 10.96.100.1
*   Trying 10.96.100.1:80...
* Connected to web (10.96.100.1) port 80
* using HTTP/1.x
> GET / HTTP/1.1
> Host: web
> User-Agent: curl/8.11.1
> Accept: */*
> 
* Request completely sent off
< HTTP/1.1 200 OK
< Content-Length: 35
< Content-Type: text/plain; charset=utf-8
< Date: Sun, 29 Nov 2026 10:00:00 GMT
< 
* Connection #0 to host web left intact
`
	if code != 0 || errOut != want || out != "web: hello from web-1 (10.244.1.2)\n" {
		t.Errorf("code %d\nstderr:\n%s\nwant:\n%s\nstdout %q", code, errOut, want, out)
	}
	_, _, errOut = run(t, f, "", "-v", "empty")
	if !strings.Contains(errOut, "* connect to 10.96.100.2 port 80 failed: Connection refused\n") {
		t.Errorf("-v of a refused connection:\n%s", errOut)
	}
}

// TestCurlTimeouts: a dropped connection ends at --connect-timeout or
// --max-time, measured on the clock.
func TestCurlTimeouts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		step time.Duration
		want string
	}{
		{[]string{"--connect-timeout", "2", "drop"}, 2 * time.Second, "curl: (28) Failed to connect to drop port 80 after 2000 ms: Timeout was reached\n"},
		{[]string{"-m", "1.5", "drop"}, 1500 * time.Millisecond, "curl: (28) Failed to connect to drop port 80 after 1500 ms: Timeout was reached\n"},
	} {
		f := &fakeNet{clk: testingclock.NewFakeClock(time.Unix(0, 0))}
		type result struct {
			code   int
			errOut string
		}
		done := make(chan result, 1)
		go func() {
			code, _, errOut := run(t, f, "", tc.args...)
			done <- result{code, errOut}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !f.clk.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("curl never started its timer")
			}
			time.Sleep(time.Millisecond)
		}
		f.clk.Step(tc.step)
		r := <-done
		if r.code != ExitOperationTimedOut || r.errOut != tc.want {
			t.Errorf("curl %v: exit %d, %q; want 28, %q", tc.args, r.code, r.errOut, tc.want)
		}
	}

	// Ctrl-C: the shell's 130, nothing printed.
	f := &fakeNet{clk: testingclock.NewFakeClock(time.Unix(0, 0))}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	if code := Run(ctx, Config{Transport: f, Clock: f.clk}, []string{"drop"}, IOStreams{Out: &o, ErrOut: &e}); code != ExitInterrupted || e.Len() != 0 {
		t.Errorf("interrupted: exit %d, %q", code, e.String())
	}
}
