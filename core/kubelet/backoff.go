package kubelet

import (
	"strings"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// Back-off bounds, upstream's (pkg/kubelet/kubelet.go): a crashing container
// is restarted after 10 s, 20 s, 40 s ... at most 5 min apart, and so is a
// failing image pull retried.
const (
	backOffPeriod       = 10 * time.Second
	maxContainerBackOff = 300 * time.Second
)

// backOff is a per-key exponential back-off on the injected clock, the
// kubelet's flowcontrol.Backoff (k8s.io/client-go/util/flowcontrol/backoff.go),
// written here because client-go is not a dependency of the browser build.
//
// A key's back-off starts at initial and doubles with each Next, up to max.
// Next stamps the entry with the current time (the restart); an entry whose
// next failure comes more than 2·max after that stamp has expired and starts
// over at initial: a container that ran fine for ten minutes after its last
// restart starts over at 10 s.
//
//	crash ─0s─▶ restart ─crash─ 10s ─▶ restart ─crash─ 20s ─▶ ... 160s, 300s, 300s ...
//	restart ─ runs 10 min+ ─ crash ─0s─▶ restart ─crash─ 10s ─▶ ...
type backOff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu      sync.Mutex // guards entries
	entries map[string]*backOffEntry
}

type backOffEntry struct {
	backOff    time.Duration
	lastUpdate time.Time
}

func newBackOff(c clock.PassiveClock, initial, max time.Duration) *backOff {
	return &backOff{clock: c, initial: initial, max: max, entries: map[string]*backOffEntry{}}
}

// Next moves key's back-off one step: initial for a new key, or one whose
// failure at eventTime came more than 2·max after its last Next; else
// doubled (capped at max). The entry is stamped with the current time.
func (b *backOff) Next(key string, eventTime time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.clock.Now()
	e, ok := b.entries[key]
	if !ok || b.expired(e, eventTime) {
		b.entries[key] = &backOffEntry{backOff: b.initial, lastUpdate: now}
		return
	}
	e.backOff = min(2*e.backOff, b.max)
	e.lastUpdate = now
}

// Get returns key's current back-off, 0 if none.
func (b *backOff) Get(key string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e, ok := b.entries[key]; ok {
		return e.backOff
	}
	return 0
}

// InBackOffSince reports whether less than key's back-off has passed since
// eventTime (the container's finish time), and how long is left.
func (b *backOff) InBackOffSince(key string, eventTime time.Time) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok || b.expired(e, eventTime) {
		return false, 0
	}
	left := e.backOff - b.clock.Since(eventTime)
	return left > 0, left
}

// InBackOffSinceUpdate is InBackOffSince measured from key's last Next.
func (b *backOff) InBackOffSinceUpdate(key string) (bool, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.entries[key]
	if !ok {
		return false, 0
	}
	now := b.clock.Now()
	if b.expired(e, now) {
		return false, 0
	}
	left := e.backOff - now.Sub(e.lastUpdate)
	return left > 0, left
}

func (b *backOff) expired(e *backOffEntry, eventTime time.Time) bool {
	return eventTime.Sub(e.lastUpdate) > 2*b.max
}

// DeletePrefix forgets every key starting with prefix (a pod's UID).
func (b *backOff) DeletePrefix(prefix string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k := range b.entries {
		if strings.HasPrefix(k, prefix) {
			delete(b.entries, k)
		}
	}
}
