package kubectl

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"
)

// klogger prints what kubectl's -v=N shows about its HTTP requests, in the
// format of upstream's klog and client-go's transport/round_trippers.go
// (kubectl v1.32), so that a learner can watch "kubectl is an HTTP/JSON
// client" at work:
//
//	-v=6  one line per request:  GET https://... 200 OK in 3 milliseconds
//	-v=7  the request line and its headers, then "Response Status: ..."
//	-v=8  also the request and response bodies (cut after 1024 bytes) and
//	      the response headers
//	-v=9  a curl command line instead of the request headers, bodies cut
//	      after 10240 bytes
//
// Each line has klog's header: severity I, month and day, time to the
// microsecond, the process id, and the file:line that logged it, e.g.
//
//	I1201 22:31:00.123456       1 round_trippers.go:560] GET ...
//
// kubetab's kubectl is not a process of its own (it runs inside the
// cluster's process, or the tab's Web Worker), so the process id is always
// klogPID; file:line are those of upstream v1.32's log calls, so a line
// reads the same as real kubectl's. The time is the CLI's clock. Lines
// that real kubectl prints about its kubeconfig ("Config loaded from
// file") are not printed: the console has no kubeconfig file.
//
// A nil *klogger prints nothing.
type klogger struct {
	v     int
	w     io.Writer
	clock clock.PassiveClock
}

// klogPID is the process id kubetab prints in klog headers.
const klogPID = 1

// Upstream v1.32's file:line of each message.
const (
	locRequest        = "round_trippers.go:470"
	locRequestHeaders = "round_trippers.go:476"
	locHeader         = "round_trippers.go:480"
	locCurl           = "round_trippers.go:473"
	locStatusLine     = "round_trippers.go:560"
	locStatistics     = "round_trippers.go:577"
	locStatus         = "round_trippers.go:581"
	locRespHeaders    = "round_trippers.go:584"
	locRespHeader     = "round_trippers.go:587"
	locBody           = "helper.go:113"
)

func (l *klogger) enabled(v int) bool { return l != nil && l.v >= v }

func (l *klogger) now() time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.clock.Now()
}

func (l *klogger) printf(loc, format string, args ...any) {
	t := l.clock.Now()
	fmt.Fprintf(l.w, "I%s %7d %s] %s\n", t.Format("0102 15:04:05.000000"), klogPID, loc, fmt.Sprintf(format, args...))
}

// request logs a request about to be sent, with its body.
func (l *klogger) request(req *http.Request, body []byte) {
	if !l.enabled(7) {
		return
	}
	if l.enabled(8) {
		l.body("Request Body", body)
	}
	if l.enabled(9) {
		var b strings.Builder
		fmt.Fprintf(&b, "curl -v -X%s ", req.Method)
		for _, k := range headerOrder(req.Header, "User-Agent", "Accept", "Content-Type") {
			for _, v := range req.Header[k] {
				fmt.Fprintf(&b, " -H %q", k+": "+v)
			}
		}
		fmt.Fprintf(&b, " '%s'", req.URL.String())
		l.printf(locCurl, "%s", b.String())
		return
	}
	l.printf(locRequest, "%s %s", req.Method, req.URL.String())
	l.printf(locRequestHeaders, "Request Headers:")
	for _, k := range headerOrder(req.Header, "Content-Type", "Accept", "User-Agent") {
		for _, v := range req.Header[k] {
			l.printf(locHeader, "    %s: %s", k, v)
		}
	}
}

// response logs the status line (and at 8 the headers) of an answer.
func (l *klogger) response(req *http.Request, resp *http.Response, start time.Time) {
	if !l.enabled(6) {
		return
	}
	ms := l.clock.Since(start).Milliseconds()
	status := resp.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	switch {
	case l.v == 7 || l.v == 8:
		l.printf(locStatus, "Response Status: %s in %d milliseconds", status, ms)
	default:
		l.printf(locStatusLine, "%s %s %s in %d milliseconds", req.Method, req.URL.String(), status, ms)
	}
	if l.enabled(9) {
		l.printf(locStatistics, "HTTP Statistics: DNSLookup 0 ms Dial 0 ms TLSHandshake 0 ms ServerProcessing %d ms Duration %d ms", ms, ms)
	}
	if l.enabled(8) {
		l.printf(locRespHeaders, "Response Headers:")
		for _, k := range headerOrder(resp.Header, "Content-Type", "Date") {
			for _, v := range resp.Header[k] {
				l.printf(locRespHeader, "    %s: %s", k, v)
			}
		}
	}
}

// body logs a request or response body as klog's structured value: quoted
// on one line, or, when it has a newline, as a "<" ... " >" block of
// tab-indented lines. At 8 it is cut after 1024 bytes, at 9 after 10240,
// with upstream's " [truncated N chars]".
func (l *klogger) body(what string, data []byte) {
	if !l.enabled(8) {
		return
	}
	max := 1024
	if l.enabled(9) {
		max = 10240
	}
	s := string(data)
	if len(s) > max {
		s = s[:max] + fmt.Sprintf(" [truncated %d chars]", len(s)-max)
	}
	if !strings.Contains(s, "\n") {
		l.printf(locBody, "%q body=%s", what, strconv.Quote(s))
		return
	}
	var b strings.Builder
	b.WriteString("<\n")
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		b.WriteString("\t" + line + "\n")
	}
	b.WriteString(" >")
	l.printf(locBody, "%q body=%s", what, b.String())
}

// headerOrder lists h's keys: first the named ones (in that order), then
// the rest sorted.
func headerOrder(h http.Header, first ...string) []string {
	var keys []string
	seen := map[string]bool{}
	for _, k := range first {
		if _, ok := h[k]; ok {
			keys = append(keys, k)
			seen[k] = true
		}
	}
	var rest []string
	for k := range h {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(keys, rest...)
}
