package controller

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/kubetab/kubetab/core/client"
)

// Informer is what Run needs of an informer: client.Informer[T] for any T.
type Informer interface {
	Run(ctx context.Context)
	HasSynced() bool
}

// Synced reports whether every informer has delivered its first list: a
// controller's HasSynced. From then on the controller learns of a change
// by its watches (until one breaks and it lists again).
func Synced(informers ...Informer) bool {
	for _, inf := range informers {
		if !inf.HasSynced() {
			return false
		}
	}
	return true
}

// Worker describes the queue side of a controller for Run.
type Worker[K comparable] struct {
	// Queue holds the keys to reconcile.
	Queue *client.Queue[K]
	// Workers is the number of goroutines taking keys (at least 1).
	Workers int
	// Reconcile handles one key; an error re-queues it with back-off.
	Reconcile func(ctx context.Context, key K) error
	// MaxRetries, when positive, drops a key after that many failures in a
	// row, as the deployment controller does (maxRetries = 15); 0 retries
	// forever, as the replica set controller does.
	MaxRetries int
}

// Run starts the informers, waits until their caches are filled, runs the
// workers and blocks until ctx is done; then it shuts the queue down and
// waits for the informers and workers to return. This is the Run of every
// upstream controller (WaitForNamedCacheSync, then wait.UntilWithContext per
// worker).
//
// Workers block in Queue.Get, so an idle controller costs nothing: in the
// browser, where goroutines are never preempted, nothing busy-waits.
func Run[K comparable](ctx context.Context, name string, informers []Informer, w Worker[K]) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer w.Queue.ShutDown()

	synced := make([]func() bool, len(informers))
	for i, inf := range informers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			inf.Run(ctx)
		}()
		synced[i] = inf.HasSynced
	}
	if !client.WaitForCacheSync(ctx, synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("%s: caches did not sync", name)
	}
	n := w.Workers
	if n < 1 {
		n = 1
	}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w.processNextWorkItem(ctx) {
			}
		}()
	}
	<-ctx.Done()
	return nil
}

// processNextWorkItem takes one key, reconciles it and decides whether it
// comes back: upstream's processNextWorkItem + handleErr.
func (w Worker[K]) processNextWorkItem(ctx context.Context) bool {
	key, ok := w.Queue.Get(ctx)
	if !ok {
		return false
	}
	defer w.Queue.Done(key)
	err := w.Reconcile(ctx, key)
	switch {
	case err == nil:
		w.Queue.Forget(key)
	case w.MaxRetries > 0 && w.Queue.NumRequeues(key) >= w.MaxRetries:
		// Give up: the key comes back only with the next event about it.
		w.Queue.Forget(key)
	default:
		// Conflicts (409) land here too: the next attempt reads the cache
		// again, which by then holds the newer object.
		w.Queue.AddRateLimited(key)
	}
	return true
}

// SplitKey splits a cache key "namespace/name" (or "name").
func SplitKey(key string) (namespace, name string) {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i], key[i+1:]
	}
	return "", key
}
