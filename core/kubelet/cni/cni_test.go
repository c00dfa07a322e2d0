package cni_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kubetab/kubetab/core/kubelet/cni"
)

func TestNew(t *testing.T) {
	tests := []struct {
		cidr     string
		wantErr  string
		gateway  string
		rangeSet string
		size     int
	}{
		{cidr: "10.244.1.0/24", gateway: "10.244.1.1", rangeSet: "10.244.1.1-10.244.1.254", size: 253},
		{cidr: "10.244.1.7/24", gateway: "10.244.1.1", rangeSet: "10.244.1.1-10.244.1.254", size: 253}, // host bits are masked
		{cidr: "10.244.0.0/16", gateway: "10.244.0.1", rangeSet: "10.244.0.1-10.244.255.254", size: 65533},
		{cidr: "192.168.5.0/30", gateway: "192.168.5.1", rangeSet: "192.168.5.1-192.168.5.2", size: 1},
		{cidr: "192.168.5.0/31", wantErr: "too small"},
		{cidr: "fd00::/64", wantErr: "only IPv4"},
		{cidr: "10.244.1.0", wantErr: "invalid podCIDR"},
		{cidr: "", wantErr: "invalid podCIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.cidr, func(t *testing.T) {
			n, err := cni.New(tt.cidr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) error = %v, want one containing %q", tt.cidr, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := n.Gateway().String(); got != tt.gateway {
				t.Errorf("Gateway() = %s, want %s", got, tt.gateway)
			}
			if got := n.RangeSet(); got != tt.rangeSet {
				t.Errorf("RangeSet() = %s, want %s", got, tt.rangeSet)
			}
			if got := n.Size(); got != tt.size {
				t.Errorf("Size() = %d, want %d", got, tt.size)
			}
		})
	}
}

// step is one ADD ("+id") or DEL ("-id") and the address an ADD should get.
type step struct {
	op   string
	want string // for ADD: the address, or "exhausted"
}

func TestAddDel(t *testing.T) {
	tests := []struct {
		name  string
		cidr  string
		steps []step
	}{
		{
			name:  "first address after the gateway",
			cidr:  "10.244.1.0/24",
			steps: []step{{"+a", "10.244.1.2/24"}, {"+b", "10.244.1.3/24"}, {"+c", "10.244.1.4/24"}},
		},
		{
			name:  "ADD is idempotent",
			cidr:  "10.244.1.0/24",
			steps: []step{{"+a", "10.244.1.2/24"}, {"+a", "10.244.1.2/24"}, {"+b", "10.244.1.3/24"}},
		},
		{
			name: "a freed address is reused lowest first",
			cidr: "10.244.1.0/24",
			steps: []step{
				{"+a", "10.244.1.2/24"}, {"+b", "10.244.1.3/24"}, {"+c", "10.244.1.4/24"}, {"+d", "10.244.1.5/24"},
				{"-c", ""}, {"-a", ""},
				{"+e", "10.244.1.2/24"}, {"+f", "10.244.1.4/24"}, {"+g", "10.244.1.6/24"},
			},
		},
		{
			name:  "DEL of an unknown id is not an error",
			cidr:  "10.244.1.0/24",
			steps: []step{{"-nobody", ""}, {"+a", "10.244.1.2/24"}, {"-a", ""}, {"-a", ""}, {"+b", "10.244.1.2/24"}},
		},
		{
			name: "exhausted, then freed",
			cidr: "10.0.0.0/29", // .1 gateway, .2-.6 for pods, .7 broadcast
			steps: []step{
				{"+a", "10.0.0.2/29"}, {"+b", "10.0.0.3/29"}, {"+c", "10.0.0.4/29"}, {"+d", "10.0.0.5/29"}, {"+e", "10.0.0.6/29"},
				{"+f", "exhausted"}, {"-c", ""}, {"+f", "10.0.0.4/29"}, {"+g", "exhausted"},
			},
		},
		{
			name:  "a /30 has one pod address",
			cidr:  "192.168.5.0/30",
			steps: []step{{"+a", "192.168.5.2/30"}, {"+b", "exhausted"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := cni.New(tt.cidr)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range tt.steps {
				id := s.op[1:]
				if s.op[0] == '-' {
					n.Del(id)
					if _, ok := n.Get(id); ok {
						t.Fatalf("step %d: %s still holds an address after DEL", i, id)
					}
					continue
				}
				res, err := n.Add(id)
				if s.want == "exhausted" {
					if !errors.Is(err, cni.ErrExhausted) {
						t.Fatalf("step %d: Add(%s) = %v, %v; want ErrExhausted", i, id, res, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("step %d: Add(%s): %v", i, id, err)
				}
				if got := res.Address.String(); got != s.want {
					t.Fatalf("step %d: Add(%s) = %s, want %s", i, id, got, s.want)
				}
				if res.Gateway != n.Gateway() || res.Interface != "eth0" {
					t.Fatalf("step %d: Add(%s) = %+v, want gateway %s on eth0", i, id, res, n.Gateway())
				}
				if holder, ok := n.Holder(res.IP()); !ok || holder != id {
					t.Fatalf("step %d: Holder(%s) = %q, %v; want %q", i, res.IP(), holder, ok, id)
				}
			}
		})
	}
}

func TestExhaustedMessage(t *testing.T) {
	n, err := cni.New("10.244.1.0/24")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n.Size(); i++ {
		if _, err := n.Add(fmt.Sprint("pod-", i)); err != nil {
			t.Fatalf("Add #%d: %v", i, err)
		}
	}
	if n.Len() != 253 {
		t.Fatalf("Len() = %d, want 253", n.Len())
	}
	_, err = n.Add("one-too-many")
	// libcni's wrapper around host-local's message, as a kubelet event shows it.
	want := `plugin type="bridge" failed (add): failed to allocate for range 0: no IP addresses available in range set: 10.244.1.1-10.244.1.254`
	if err == nil || err.Error() != want {
		t.Fatalf("Add on a full range: %v\nwant: %s", err, want)
	}
}

func TestAddRequiresID(t *testing.T) {
	n, _ := cni.New("10.244.1.0/24")
	if _, err := n.Add(""); err == nil {
		t.Fatal("Add(\"\") succeeded")
	}
}
