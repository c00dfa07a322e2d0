package kubelet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// The prober (upstream: pkg/kubelet/prober: prober_manager.go, worker.go,
// prober.go, and pkg/probe/exec, http, tcp). Each probe of each container
// has a worker, a goroutine that probes every periodSeconds and keeps a
// result per container ID:
//
//	probe       result before the first probe   what a failure does
//	startup     unknown: not started            failureThreshold failures in a row: the container is
//	                                            killed and restarted ("failed startup probe")
//	liveness    success                         the same ("failed liveness probe, will be restarted")
//	readiness   failure: not ready              the container is not Ready, nor is the pod, so its
//	                                            IP leaves the Service's endpoints; nothing restarts
//
// While a startup probe has not succeeded, the liveness and readiness probes
// wait; once it has, it stops. No probe runs before initialDelaySeconds have
// passed since the container started. A result changes only after
// failureThreshold failures (or successThreshold successes) in a row; every
// failed probe is a Warning event, Unhealthy, "Liveness probe failed:
// HTTP probe failed with statuscode: 500". After a liveness or startup
// failure the worker holds until it sees the new container.
//
// How each handler reaches a guest that has no network (see package cri):
//
//	exec       a second instance of the image with the command as argv, the container's
//	           env and mounts (ExecSync); exit 0 is success; timeoutSeconds bounds it
//	httpGet    a request through the container's CGI handler (cri.Runtime.HTTPHandler):
//	           path, headers (Host too), any port; 200-399 is success
//	tcpSocket  an approximation: WASI preview1 cannot listen, so there is no socket to
//	           dial. It succeeds when the container is running and declares the port
//	           in its ports (the kubelet "connects" to what the container said it
//	           serves), and fails as "connection refused" otherwise
//	grpc       not supported: the probe errors
//
// Probes run on the kubelet's clock, so a test (or a paused cluster) decides
// when periodSeconds have passed. Upstream also waits a random part of the
// period before a worker's first probe when the kubelet has just started;
// kubetab does not, so that tests are deterministic.

// probeType names the three probes, as in events ("Liveness probe failed").
type probeType int

const (
	liveness probeType = iota
	readiness
	startup
)

func (t probeType) String() string {
	switch t {
	case liveness:
		return "Liveness"
	case readiness:
		return "Readiness"
	}
	return "Startup"
}

// probeResult is a worker's published result (upstream: prober/results).
type probeResult int

const (
	resultUnknown probeResult = iota
	resultSuccess
	resultFailure
)

// outcome is one probe's raw result (upstream: pkg/probe.Result), with
// upstream's lower-case names for events.
type outcome string

const (
	outcomeSuccess outcome = "success"
	outcomeWarning outcome = "warning"
	outcomeFailure outcome = "failure"
	outcomeUnknown outcome = "unknown"
)

const (
	// maxProbeRetries is how many times a probe that errors (rather than
	// fails) is tried at once.
	maxProbeRetries = 3
	// maxProbeOutput bounds the output kept from a probe (upstream's
	// maxRespBodyLength for HTTP, 10 KiB).
	maxProbeOutput = 10 << 10
	// probeUserAgent is what an HTTP probe sends as User-Agent:
	// "kube-probe/<major>.<minor>".
	probeUserAgent = "kube-probe/1.37"
)

type probeKey struct {
	uid       types.UID
	container string
	typ       probeType
}

type resultKey struct {
	containerID string // the runtime's ID, without wasm://
	typ         probeType
}

// proberManager runs the probe workers of a kubelet (upstream: prober.Manager).
type proberManager struct {
	kl *Kubelet

	// mu guards the fields below; never held across a probe or a call into
	// the kubelet.
	mu      sync.Mutex
	ctx     context.Context // Run's; nil while the kubelet is stopped
	wg      *sync.WaitGroup // Run's, which waits for the workers
	workers map[probeKey]*probeWorker
	results map[resultKey]probeResult

	probing atomic.Int32 // probes in flight, for tests
}

func newProberManager(kl *Kubelet) *proberManager {
	return &proberManager{kl: kl, workers: map[probeKey]*probeWorker{}, results: map[resultKey]probeResult{}}
}

// start lets the manager run workers under ctx, counted in wg; they all end
// when ctx is done. stop forgets ctx (the workers end with it).
func (m *proberManager) start(ctx context.Context, wg *sync.WaitGroup) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx, m.wg = ctx, wg
}

func (m *proberManager) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ctx, m.wg = nil, nil
}

// addPod starts a worker for each probe of the pod's containers that has
// none (upstream: AddPod). It is called at every sync of a live pod.
func (m *proberManager) addPod(pod *corev1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ctx == nil || m.ctx.Err() != nil {
		return
	}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		for typ, spec := range map[probeType]*corev1.Probe{liveness: c.LivenessProbe, readiness: c.ReadinessProbe, startup: c.StartupProbe} {
			key := probeKey{pod.UID, c.Name, typ}
			if spec == nil || m.workers[key] != nil {
				continue
			}
			w := &probeWorker{
				m: m, key: key, container: *c.DeepCopy(), spec: spec.DeepCopy(),
				stopCh: make(chan struct{}, 1), trigger: make(chan struct{}, 1),
			}
			switch typ {
			case liveness:
				w.initial = resultSuccess
			case readiness:
				w.initial = resultFailure
			default:
				w.initial = resultUnknown
			}
			m.workers[key] = w
			m.wg.Add(1)
			go func(ctx context.Context) {
				defer m.wg.Done()
				w.run(ctx)
			}(m.ctx)
		}
	}
}

// removePod stops the workers of a pod (upstream: RemovePod).
func (m *proberManager) removePod(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, w := range m.workers {
		if k.uid == uid {
			w.stop()
		}
	}
}

func (m *proberManager) removeWorker(w *probeWorker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.workers[w.key] == w {
		delete(m.workers, w.key)
	}
}

// result returns the result of a container's probe, if it has one.
func (m *proberManager) result(containerID string, typ probeType) (probeResult, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.results[resultKey{containerID, typ}]
	return r, ok
}

// set records a result; a change wakes the pod's sync up, which updates its
// status (Ready) or restarts the container (upstream: the readiness manager
// updates the status manager; liveness and startup failures reach the sync
// loop through their results channels).
func (m *proberManager) set(uid types.UID, containerID string, typ probeType, r probeResult) {
	m.mu.Lock()
	old, ok := m.results[resultKey{containerID, typ}]
	m.results[resultKey{containerID, typ}] = r
	m.mu.Unlock()
	if !ok || old != r {
		m.kl.enqueue(uid)
	}
}

// succeeded reports whether a container's probe has succeeded.
func (m *proberManager) succeeded(containerID string, typ probeType) bool {
	r, ok := m.result(containerID, typ)
	return ok && r == resultSuccess
}

// failed reports whether a container's probe has failed.
func (m *proberManager) failed(containerID string, typ probeType) bool {
	r, ok := m.result(containerID, typ)
	return ok && r == resultFailure
}

func (m *proberManager) remove(containerID string, typ probeType) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.results, resultKey{containerID, typ})
}

// triggerReadiness asks the readiness worker of a started container that is
// not ready to probe now (upstream: UpdatePodStatus's manual trigger), so a
// container whose startup probe just passed, or a restarted one, does not
// wait a whole period to become ready.
func (m *proberManager) triggerReadiness(uid types.UID, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.workers[probeKey{uid, name, readiness}]; w != nil {
		select {
		case w.trigger <- struct{}{}:
		default:
		}
	}
}

// probeWorker probes one container periodically (upstream: worker).
type probeWorker struct {
	m         *proberManager
	key       probeKey
	container corev1.Container // as in the spec when the worker started
	spec      *corev1.Probe
	initial   probeResult
	stopCh    chan struct{}
	trigger   chan struct{}

	// Used by the worker's goroutine only.
	containerID string // the container it last saw
	lastResult  outcome
	resultRun   int  // how many times in a row lastResult came
	onHold      bool // after a liveness/startup failure, until a new container
}

func (w *probeWorker) stop() {
	select {
	case w.stopCh <- struct{}{}:
	default:
	}
}

// run probes now and then every periodSeconds until the pod is finished,
// the worker is stopped, or ctx is done.
func (w *probeWorker) run(ctx context.Context) {
	period := time.Duration(w.spec.PeriodSeconds) * time.Second
	if period <= 0 {
		period = 10 * time.Second
	}
	t := w.m.kl.clock.NewTicker(period)
	defer func() {
		t.Stop()
		if w.containerID != "" {
			w.m.remove(w.containerID, w.key.typ)
		}
		w.m.removeWorker(w)
	}()
	for w.doProbe(ctx) {
		select {
		case <-ctx.Done():
			return
		case <-w.stopCh:
			return
		case <-t.C():
		case <-w.trigger:
		}
	}
}

// doProbe probes once if it is time to, and records the result. It reports
// whether the worker should go on (upstream: worker.doProbe).
func (w *probeWorker) doProbe(ctx context.Context) bool {
	kl := w.m.kl
	status, ok := kl.lastStatus(w.key.uid)
	if !ok {
		return true // not synced yet
	}
	if isTerminal(status.Phase) {
		return false
	}
	var cs *corev1.ContainerStatus
	for i := range status.ContainerStatuses {
		if status.ContainerStatuses[i].Name == w.key.container {
			cs = &status.ContainerStatuses[i]
		}
	}
	if cs == nil || cs.ContainerID == "" {
		return true // not created yet
	}
	id := strings.TrimPrefix(cs.ContainerID, containerIDPrefix)
	if w.containerID != id {
		if w.containerID != "" {
			w.m.remove(w.containerID, w.key.typ)
		}
		w.containerID = id
		w.m.set(w.key.uid, id, w.key.typ, w.initial)
		w.onHold = false
	}
	if w.onHold {
		return true
	}
	pod := kl.podByUID(w.key.uid)
	if pod == nil {
		return false
	}
	if cs.State.Running == nil {
		w.m.set(w.key.uid, id, w.key.typ, resultFailure)
		// Go on unless the container will never run again.
		return cs.State.Terminated == nil || pod.Spec.RestartPolicy != corev1.RestartPolicyNever
	}
	if pod.DeletionTimestamp != nil && w.key.typ != readiness {
		// The pod is going away: a quiet shutdown, no restarts.
		w.m.set(w.key.uid, id, w.key.typ, resultSuccess)
		return false
	}
	if int32(kl.clock.Since(cs.State.Running.StartedAt.Time).Seconds()) < w.spec.InitialDelaySeconds {
		return true
	}
	if cs.Started != nil && *cs.Started {
		if w.key.typ == startup {
			return true // started: the startup probe's work is done
		}
	} else if w.key.typ != startup {
		return true // the others wait for the startup probe
	}

	result, err := w.probe(ctx, pod, status, id)
	if err != nil || ctx.Err() != nil {
		return true // an error is not a result
	}
	if w.lastResult == result {
		w.resultRun++
	} else {
		w.lastResult, w.resultRun = result, 1
	}
	failure := result == outcomeFailure || result == outcomeUnknown
	if (failure && w.resultRun < int(max(w.spec.FailureThreshold, 1))) ||
		(!failure && w.resultRun < int(max(w.spec.SuccessThreshold, 1))) {
		return true // below the threshold: the result stays
	}
	r := resultSuccess
	if failure {
		r = resultFailure
	}
	w.m.set(w.key.uid, id, w.key.typ, r)
	if failure && w.key.typ != readiness {
		// The container will be restarted: hold until the new one.
		w.onHold = true
		w.resultRun = 0
	}
	return true
}

// probe runs the probe (retrying errors) and records the events of a failed
// one (upstream: prober.probe). A returned error means no result.
func (w *probeWorker) probe(ctx context.Context, pod *corev1.Pod, status *corev1.PodStatus, id string) (outcome, error) {
	var res outcome
	var out string
	var err error
	w.m.probing.Add(1)
	defer w.m.probing.Add(-1)
	for i := 0; i < maxProbeRetries; i++ {
		if res, out, err = w.runProbe(ctx, status, id); err == nil || ctx.Err() != nil {
			break
		}
	}
	kl := w.m.kl
	event := func(reason, format string, args ...any) {
		kl.recorder.FieldEventf(pod, fieldPath(pod, w.key.container), corev1.EventTypeWarning, reason, format, args...)
	}
	switch {
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		event(EventContainerUnhealthy, "%s probe errored and resulted in %s state: %v", w.key.typ, outcomeUnknown, err)
		return "", err
	case res == outcomeWarning:
		event(EventContainerProbeWarning, "%s probe warning: %s", w.key.typ, out)
		return outcomeSuccess, nil
	case res == outcomeFailure:
		event(EventContainerUnhealthy, "%s probe failed: %s", w.key.typ, out)
	case res == outcomeUnknown:
		event(EventContainerUnhealthy, "%s probe resulted in %s state: %s", w.key.typ, res, out)
	}
	return res, nil
}

// runProbe runs the probe's handler once.
func (w *probeWorker) runProbe(ctx context.Context, status *corev1.PodStatus, id string) (outcome, string, error) {
	p := w.spec
	timeout := time.Duration(p.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	kl := w.m.kl
	switch {
	case p.Exec != nil:
		cmd := p.Exec.Command
		stdout, stderr, code, err := kl.runtime.ExecSync(ctx, id, cmd, timeout)
		switch {
		case errors.Is(err, cri.ErrExecTimeout):
			return outcomeFailure, fmt.Sprintf("command %q timed out", strings.Join(cmd, " ")), nil
		case err != nil:
			return outcomeUnknown, "", rpcErr(err)
		}
		out := string(capBytes(append(stdout, stderr...), maxProbeOutput))
		if code != 0 {
			return outcomeFailure, out, nil
		}
		return outcomeSuccess, out, nil
	case p.HTTPGet != nil:
		port, err := probePort(p.HTTPGet.Port, &w.container)
		if err != nil {
			return outcomeUnknown, "", err
		}
		host := p.HTTPGet.Host
		if host == "" {
			host = status.PodIP
		}
		return kl.httpProbe(ctx, id, p.HTTPGet, host, port, timeout)
	case p.TCPSocket != nil:
		port, err := probePort(p.TCPSocket.Port, &w.container)
		if err != nil {
			return outcomeUnknown, "", err
		}
		host := p.TCPSocket.Host
		if host == "" {
			host = status.PodIP
		}
		for _, cp := range w.container.Ports {
			if int(cp.ContainerPort) == port && (cp.Protocol == "" || cp.Protocol == corev1.ProtocolTCP) {
				return outcomeSuccess, "", nil
			}
		}
		return outcomeFailure, fmt.Sprintf("dial tcp %s: connect: connection refused", net.JoinHostPort(host, strconv.Itoa(port))), nil
	case p.GRPC != nil:
		return outcomeUnknown, "", errors.New("gRPC probes are not supported by kubetab")
	}
	return outcomeUnknown, "", errors.New("missing probe handler")
}

// rpcErr words a runtime error as the kubelet sees it over gRPC.
func rpcErr(err error) error { return errors.New(rpcError(err)) }

func capBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// probePort resolves a probe's port: a number, or the name of one of the
// container's ports (upstream: extractPort; a name that is no port is tried
// as a number, hence strconv's error in the event).
func probePort(p intstr.IntOrString, c *corev1.Container) (int, error) {
	port := -1
	switch p.Type {
	case intstr.Int:
		port = p.IntValue()
	case intstr.String:
		found := false
		for _, cp := range c.Ports {
			if cp.Name == p.StrVal {
				port, found = int(cp.ContainerPort), true
			}
		}
		if !found {
			n, err := strconv.Atoi(p.StrVal)
			if err != nil {
				return port, err
			}
			port = n
		}
	}
	if port > 0 && port < 65536 {
		return port, nil
	}
	return port, fmt.Errorf("invalid port number: %v", port)
}

// httpProbe sends the probe's GET through the container's CGI handler
// (upstream: pkg/probe/http DoHTTPProbe, whose results it reproduces).
func (kl *Kubelet) httpProbe(ctx context.Context, id string, g *corev1.HTTPGetAction, host string, port int, timeout time.Duration) (outcome, string, error) {
	scheme := strings.ToLower(string(g.Scheme))
	if scheme == "" {
		scheme = "http"
	}
	p := g.Path
	if p != "" && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	u, err := url.Parse(scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port)) + p)
	if err != nil {
		return outcomeUnknown, "", err
	}
	// The timeout runs on the kubelet's clock.
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var timedOut atomic.Bool
	t := kl.clock.AfterFunc(timeout, func() { timedOut.Store(true); cancel() })
	defer t.Stop()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return outcomeUnknown, "", err
	}
	for _, h := range g.HTTPHeaders {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", probeUserAgent)
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "*/*")
	}
	req.RemoteAddr = net.JoinHostPort(kl.nodeIP, "41234")
	rw := &probeResponse{header: http.Header{}}
	kl.runtime.HTTPHandler(id).ServeHTTP(rw, req)
	if timedOut.Load() {
		return outcomeFailure, fmt.Sprintf("Get %q: context deadline exceeded (Client.Timeout exceeded while awaiting headers)", u.String()), nil
	}
	if ctx.Err() != nil {
		return outcomeUnknown, "", ctx.Err()
	}
	code := rw.code
	if code == 0 {
		code = http.StatusOK
	}
	body := rw.body.String()
	switch {
	case code >= 200 && code < 300:
		return outcomeSuccess, body, nil
	case code >= 300 && code < 400:
		return outcomeWarning, "Probe terminated redirects, Response body: " + body, nil
	}
	return outcomeFailure, fmt.Sprintf("HTTP probe failed with statuscode: %d", code), nil
}

// probeResponse collects a handler's answer to a probe, keeping at most
// maxProbeOutput bytes of its body.
type probeResponse struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *probeResponse) Header() http.Header { return r.header }

func (r *probeResponse) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *probeResponse) Write(p []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	if room := maxProbeOutput - r.body.Len(); room > 0 {
		r.body.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
