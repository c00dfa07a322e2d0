// Package syncbuf is a bytes.Buffer that one goroutine may write while
// another reads: a test that follows a streaming command (kubectl get -w,
// logs -f, trace -f, a drain's retries) polls what it has printed so far.
//
// Upstream counterpart: none in Kubernetes; every test package there keeps
// its own (k8s.io/kubectl's testing helpers have one too).
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is safe for concurrent Write and String.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Len is how many bytes were written so far.
func (s *Buffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}
