package kubectl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	sigsjson "sigs.k8s.io/json"
)

// Media types kubectl sends in Accept headers.
const (
	acceptJSON = "application/json"
	// acceptTable asks the server to render a list as a meta.k8s.io Table,
	// as `kubectl get` does (upstream also offers v1beta1, then plain JSON).
	acceptTable = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)

// userAgent is what kubetab's kubectl calls itself in requests.
const userAgent = "kubectl/" + Version + " (kubetab)"

// restClient is the small part of client-go's rest.Client kubectl needs:
// build a URL, send, and turn a failure into the server's metav1.Status.
//
// It calls the RoundTripper itself rather than through an http.Client:
// kubectl needs no redirects or cookies, and http.Client would link
// net/http's whole socket transport (HTTP/2, TLS, dialing) into the wasm
// build for nothing (about 1 MB).
type restClient struct {
	rt     http.RoundTripper
	server *url.URL

	// timeout is --request-timeout: each request (reading its answer
	// included) ends after it, and the server is told so (?timeout=).
	// Zero means no timeout.
	timeout time.Duration
	// log prints the requests at klog verbosity -v (see klog.go); nil
	// prints nothing.
	log *klogger
	// as and asGroups are --as and --as-group: every request carries them
	// as Impersonate-User and Impersonate-Group headers (client-go's
	// ImpersonatingRoundTripper).
	as       string
	asGroups []string
}

func newRESTClient(rt http.RoundTripper, server *url.URL) *restClient {
	return &restClient{rt: rt, server: server}
}

// request describes one call.
type request struct {
	method      string
	path        string // absolute path: /api/v1/namespaces/default/pods
	query       url.Values
	body        []byte
	stream      io.Reader // the body, read as it comes (exec and attach's channels); instead of body
	contentType string
	accept      string
}

// do sends r. A 2xx answer is returned with its body open for the caller to
// read and close; anything else is read and returned as an error (a
// *apierrors.StatusError when the server sent a Status).
func (c *restClient) do(ctx context.Context, r request) (*http.Response, error) {
	u := *c.server
	u.Path = strings.TrimSuffix(u.Path, "/") + r.path
	q := r.query
	cancel := context.CancelFunc(func() {})
	if c.timeout > 0 {
		q = cloneValues(q)
		q.Set("timeout", c.timeout.String())
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
	}
	u.RawQuery = q.Encode()
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	if r.stream != nil {
		body = r.stream
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		cancel()
		return nil, err
	}
	if r.contentType != "" {
		req.Header.Set("Content-Type", r.contentType)
	}
	accept := r.accept
	if accept == "" {
		accept = acceptJSON
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", userAgent)
	if c.as != "" || len(c.asGroups) > 0 {
		req.Header.Set("Impersonate-User", c.as)
		for _, g := range c.asGroups {
			req.Header.Add("Impersonate-Group", g)
		}
	}
	c.log.request(req, r.body)
	start := c.log.now()
	resp, err := c.rt.RoundTrip(req)
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("Unable to connect to the server: %w", unwrapURLError(err))
	}
	c.log.response(req, resp, start)
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	c.log.body("Response Body", data)
	return nil, statusError(resp.StatusCode, r.method, data)
}

// cancelBody ends the request's timeout context when the body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// statusError turns an error answer into the error client-go would return:
// the server's Status if it sent one, else a generic error for the code.
func statusError(code int, method string, body []byte) error {
	var st metav1.Status
	if json.Unmarshal(body, &st) == nil && st.Kind == "Status" && st.Status == metav1.StatusFailure {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &apierrors.StatusError{ErrStatus: st}
	}
	verb := strings.ToLower(method)
	return apierrors.NewGenericServerResponse(code, verb, schema.GroupResource{}, "", strings.TrimSpace(string(body)), 0, true)
}

// into sends r and decodes a JSON answer into out (numbers that are integers
// stay int64 in maps, as in client-go's unstructured decoding).
func (c *restClient) into(ctx context.Context, r request, out any) error {
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	c.log.body("Response Body", data)
	return decodeJSON(data, out)
}

func decodeJSON(data []byte, out any) error {
	if m, ok := out.(*map[string]any); ok {
		return sigsjson.UnmarshalCaseSensitivePreserveInts(data, m)
	}
	return json.Unmarshal(data, out)
}
