// Package trace records the hops a request makes through the control plane,
// so that a learner can follow it: kubectl to the API server, the API server
// to etcd, etcd's change to every component that watches it, that
// component's own requests, the scheduler's decision, the kubelet's calls to
// CNI and CRI.
//
//	kubectl ──POST deployments──▶ kube-apiserver ──put──▶ etcd
//	                                   │
//	                watch ADDED ◀──────┘ (one hop per watching component)
//	                    ▼
//	         deployment-controller ──POST replicasets──▶ kube-apiserver ...
//
// A Hop is one arrow of that picture. The API server records the requests it
// serves over HTTP, the in-process client (core/client) those of the
// controllers, the scheduler and the kubelets, and the registry records the
// writes to etcd and every watch event it delivers. The kubelets record
// their CNI and CRI calls. Hops that belong together share the store
// revision of the write behind them.
//
// The Recorder keeps the latest hops in a ring. The console's `trace`
// command prints them; the page's flow diagram will animate the same stream.
//
// Upstream counterpart: none as such. Kubernetes has pieces of it: the
// apiserver's audit log (requests), etcd's watch stream (changes), and
// OpenTelemetry tracing of the apiserver and kubelet (spans). kubetab joins
// them into one ordered stream, because seeing the whole path at once is
// the lesson.
package trace

import (
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Kind says what a hop is.
type Kind string

const (
	// Request is a call to the API server: From is the client, To is
	// "kube-apiserver"; Verb is the HTTP method or the client's verb.
	Request Kind = "request"
	// Response is the API server's answer: From "kube-apiserver", To the
	// client; Code is the HTTP status.
	Response Kind = "response"
	// Write is the API server's write to etcd: Verb is "put" or "delete",
	// Key the etcd key, Revision the write's revision.
	Write Kind = "write"
	// Watch is a change delivered to a watching component: Verb is the event
	// type (ADDED, MODIFIED, DELETED), Revision the write it reports.
	Watch Kind = "watch"
	// Call is a component's call to something that is not the API server:
	// a kubelet's CNI ADD, a CRI PullImage or StartContainer.
	Call Kind = "call"
	// Decision is a component's conclusion, such as the scheduler's choice of
	// a node, with the reasons in Detail.
	Decision Kind = "decision"
)

// Component names used by more than one package.
const (
	APIServer = "kube-apiserver"
	Etcd      = "etcd"
)

// Hop is one arrow: who talked to whom, about what.
type Hop struct {
	Seq  uint64    // order of recording, from 1
	Time time.Time // the cluster's clock
	Kind Kind
	From string // the component that acts: "kubectl", "kube-scheduler", "kubelet/node-1"
	To   string // the one it talks to; "" for a decision
	Verb string // create, list, watch, put, ADDED, ADD, PullImage, schedule ...

	// Resource names the kind of object ("pods", "deployments.apps", a
	// subresource as "pods/binding"); Namespace and Name the object.
	Resource  string
	Namespace string
	Name      string

	Key      string // the etcd key of a write
	Revision int64  // the store revision of the write behind the hop; 0 if none
	Code     int    // a response's HTTP status
	Detail   string // anything else worth a line: a reason, an IP, a node
}

// DefaultSize is how many hops a Recorder keeps unless told otherwise:
// about 3 MB, some thirty three-replica Deployments' worth of hops (about
// 500 each, watch events included). An idle cluster
// adds one or two a second (leases, node status).
const DefaultSize = 16384

// Recorder keeps the latest hops. The zero value is not usable; a nil
// *Recorder records nothing, so components need no checks.
type Recorder struct {
	clock clock.PassiveClock

	mu   sync.Mutex
	ring []Hop
	next uint64        // Seq of the next hop
	wake chan struct{} // closed when a hop arrives, if someone waits
}

// New returns a Recorder of size hops (DefaultSize if size <= 0) stamping
// hops with clk (the real clock if nil).
func New(size int, clk clock.PassiveClock) *Recorder {
	if size <= 0 {
		size = DefaultSize
	}
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Recorder{clock: clk, ring: make([]Hop, size), next: 1}
}

// Record adds a hop, stamping its Seq and Time.
func (r *Recorder) Record(h Hop) {
	if r == nil {
		return
	}
	r.mu.Lock()
	h.Time = r.clock.Now() // under the lock: Seq and Time agree
	h.Seq = r.next
	r.next++
	r.ring[h.Seq%uint64(len(r.ring))] = h
	if r.wake != nil {
		close(r.wake)
		r.wake = nil
	}
	r.mu.Unlock()
}

// Since returns the hops recorded after seq (0 for all that are kept), oldest
// first, and the Seq to pass next time. lost counts the hops after seq that
// the ring no longer holds.
func (r *Recorder) Since(seq uint64) (hops []Hop, next uint64, lost uint64) {
	if r == nil {
		return nil, seq, 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	first := uint64(1)
	if size := uint64(len(r.ring)); r.next > size {
		first = r.next - size
	}
	from := seq + 1
	if from < first {
		lost = first - from
		from = first
	}
	for s := from; s < r.next; s++ {
		hops = append(hops, r.ring[s%uint64(len(r.ring))])
	}
	return hops, r.next - 1, lost
}

// Wait returns a channel closed when a hop after seq is recorded (at once if
// there is one already).
func (r *Recorder) Wait(seq uint64) <-chan struct{} {
	if r == nil {
		return nil // blocks forever: nothing is ever recorded
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next-1 > seq {
		c := make(chan struct{})
		close(c)
		return c
	}
	if r.wake == nil {
		r.wake = make(chan struct{})
	}
	return r.wake
}

type componentKey struct{}

// WithComponent returns ctx naming the component that makes the calls
// ("kube-scheduler", "kubelet/node-1", "kubectl").
func WithComponent(ctx context.Context, component string) context.Context {
	if component == "" || Component(ctx) == component {
		return ctx
	}
	return context.WithValue(ctx, componentKey{}, component)
}

// Component is the component named by ctx, or "".
func Component(ctx context.Context) string {
	c, _ := ctx.Value(componentKey{}).(string)
	return c
}
