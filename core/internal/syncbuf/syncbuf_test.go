package syncbuf

import (
	"fmt"
	"sync"
	"testing"
)

// Concurrent writers lose nothing, and a reader may look meanwhile (go test
// -race checks the locking).
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d", i%10)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if b.Len() != 800 || len(b.String()) != 800 {
		t.Fatalf("%d bytes, want 800", b.Len())
	}
}
