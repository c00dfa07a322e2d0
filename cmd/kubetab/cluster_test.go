package main

import (
	"bytes"
	"strings"
	"testing"
)

// `kubetab cluster` refuses to listen beyond loopback: it is a sandbox for
// the learner on this machine; it used to warn and serve.
func TestClusterRefusesNonLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string // "" = allowed
	}{
		{"127.0.0.1:6443", ""},
		{"127.0.0.5:0", ""},
		{"[::1]:6443", ""},
		{"localhost:6443", ""},
		{"0.0.0.0:6443", "refusing to serve on 0.0.0.0 (every interface): kubetab cluster is a sandbox for the learner on this machine"},
		{":6443", "refusing to serve on  (every interface)"},
		{"[::]:6443", "refusing to serve on :: (every interface)"},
		{"192.168.1.20:6443", "refusing to serve on 192.168.1.20: "},
		{"example.com:6443", "refusing to serve on example.com: "},
		{"127.0.0.1", "missing port in address"},
	} {
		err := checkLoopbackAddr(tc.addr)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.addr, err, tc.want)
		}
	}
	// The command stops before it listens or boots anything.
	cmd := newClusterCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"--addr", "0.0.0.0:0"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "listens on loopback only") {
		t.Fatalf("kubetab cluster --addr 0.0.0.0:0: %v (%s)", err, out.String())
	}
}
