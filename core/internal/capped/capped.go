// Package capped is a buffer that keeps at most a given number of bytes: a
// guest container's output must never fill the host's memory (in the
// browser, the tab's), however much it prints. The kubelet's runtime holds
// an exec's output in one (as the CRI's ExecSync caps its output), and so
// does the API server's answer to a non-streaming exec.
//
// Upstream counterpart: the capped writers of the kubelet's CRI server
// (pkg/kubelet/util/ioutils.LimitWriter); there the rest is an error, here
// it is dropped and counted, so the guest goes on.
package capped

import "bytes"

// Buffer keeps the first Max bytes written to it and counts the rest in
// Dropped, reporting every write whole.
type Buffer struct {
	bytes.Buffer
	Max     int
	Dropped int
}

// Write keeps what fits under Max.
func (b *Buffer) Write(p []byte) (int, error) {
	room := max(b.Max-b.Len(), 0)
	keep := min(len(p), room)
	b.Buffer.Write(p[:keep])
	b.Dropped += len(p) - keep
	return len(p), nil
}
