package cluster

import (
	"fmt"
	"os"
	"sync"
	"testing"
)

// TestMain fails the package's tests when any component was refused a
// request: in a cluster as kubetab builds it, every component's rules
// cover what it does, and a denial means a missing rule.
func TestMain(m *testing.M) {
	var mu sync.Mutex
	var refused []string
	deniedMu.Lock()
	deniedHook = func(component string, err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(refused) < 20 {
			refused = append(refused, component+": "+err.Error())
		}
	}
	deniedMu.Unlock()
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if len(refused) > 0 {
		fmt.Fprintln(os.Stderr, "FAIL: components were refused requests (a missing rule in the bootstrap policy):")
		for _, r := range refused {
			fmt.Fprintln(os.Stderr, "  "+r)
		}
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
