package cri_test

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// testdata holds small guests written in WAT (see testdata/README.md).
//
//go:embed testdata/*.wasm
var testdata embed.FS

// registry is an ImageSource over modules held in memory: image "<name>"
// (any tag) is the module stored under name.
type registry map[string][]byte

func (r registry) Fetch(ctx context.Context, ref string) (cri.Image, error) {
	p, err := cri.ParseRef(ref)
	if err != nil {
		return cri.Image{}, err
	}
	mod, ok := r[p.Name]
	if !ok {
		return cri.Image{}, fmt.Errorf("%w: %s", cri.ErrImageNotFound, ref)
	}
	return cri.Image{Ref: p.String(), Digest: cri.Digest(mod), Module: mod}, nil
}

// testRegistry serves every testdata module under its file name.
func testRegistry(t testing.TB) registry {
	t.Helper()
	entries, err := testdata.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	r := registry{}
	for _, e := range entries {
		b, err := testdata.ReadFile("testdata/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		r[strings.TrimSuffix(e.Name(), ".wasm")] = b
	}
	r["garbage"] = []byte("this is not a wasm module")
	return r
}

// lyingRegistry serves a module under another module's digest.
type lyingRegistry struct{ registry }

func (l lyingRegistry) Fetch(ctx context.Context, ref string) (cri.Image, error) {
	img, err := l.registry.Fetch(ctx, ref)
	img.Digest = cri.Digest([]byte("something else"))
	return img, err
}

func TestInvalidImages(t *testing.T) {
	n := newNode(t, nil, testRegistry(t))
	tests := []struct {
		ref     string
		wantMsg string
	}{
		{"reactor", `it is a WASI reactor (exports "_initialize")`},
		{"envimport", "imports env.magic: a container can only import wasi_snapshot_preview1 functions"},
		{"badwasi", "imports wasi_snapshot_preview1.fd_teleport, which is not a WASI preview1 function"},
		{"nomemory", `no "memory" export`},
		{"garbage", "bad magic number"},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			_, err := n.PullImage(context.Background(), tt.ref)
			if !errors.Is(err, cri.ErrInvalidImage) || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("PullImage(%q) = %v, want ErrInvalidImage saying %q", tt.ref, err, tt.wantMsg)
			}
			if !strings.HasPrefix(err.Error(), fmt.Sprintf("failed to pull and unpack image %q: ", tt.ref+":latest")) {
				t.Fatalf("error %q does not start like containerd's pull errors", err)
			}
			if _, ok := n.ImageStatus(tt.ref); ok {
				t.Fatal("an invalid image is listed on the node")
			}
		})
	}

	liar := newNode(t, nil, lyingRegistry{testRegistry(t)})
	if _, err := liar.PullImage(context.Background(), "spam"); err == nil || !strings.Contains(err.Error(), "digest mismatch") {
		t.Fatalf("pull with a wrong digest = %v, want a digest mismatch", err)
	}
}

func TestGuestExits(t *testing.T) {
	tests := []struct {
		image      string
		memLimit   int64
		wantCode   int32
		wantReason string
		wantMsg    string
	}{
		{image: "unreachable", wantCode: 134, wantReason: "Error", wantMsg: "wasm error: unreachable"},
		{image: "oob", wantCode: 139, wantReason: "Error", wantMsg: "wasm error: out of bounds memory access"},
		{image: "dataoob", wantCode: 128, wantReason: "StartError", wantMsg: "data[0]: out of bounds memory access"},
		{image: "grow", wantCode: 0, wantReason: "Completed"},
		// 1 MiB is 16 pages: growing from 1 to 65 pages ends the guest,
		// OOMKilled (an uninstrumented guest would see memory.grow fail
		// instead: TestOOMKilled).
		{image: "grow", memLimit: 1 << 20, wantCode: 137, wantReason: "OOMKilled", wantMsg: "memory limit 1048576 bytes reached"},
		{image: "grow", memLimit: 65 << 16, wantCode: 0, wantReason: "Completed"},
	}
	n := newNode(t, nil, testRegistry(t))
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s limit %d", tt.image, tt.memLimit), func(t *testing.T) {
			id := n.run(t, cri.ContainerConfig{Name: "c", Image: tt.image, MemoryLimitBytes: tt.memLimit})
			st := n.waitExited(t, id)
			if st.ExitCode != tt.wantCode || st.Reason != tt.wantReason || !strings.Contains(st.Message, tt.wantMsg) {
				t.Fatalf("exit = %d %q %q, want %d %q containing %q", st.ExitCode, st.Reason, st.Message, tt.wantCode, tt.wantReason, tt.wantMsg)
			}
		})
	}
}

// TestStopBusyGuest stops guests that never sleep.
func TestStopBusyGuest(t *testing.T) {
	tests := []struct {
		image string
	}{
		{image: "spam"}, // stopped at its next write
		{image: "loop"}, // stopped in kubetab.yield: it calls nothing else
	}
	n := newNode(t, nil, testRegistry(t))
	for _, tt := range tests {
		t.Run(tt.image, func(t *testing.T) {
			id := n.run(t, cri.ContainerConfig{Name: "c", Image: tt.image})
			if tt.image == "spam" {
				n.waitForLog(t, id, "x\nx\n")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := n.StopContainer(ctx, id, 0); err != nil {
				t.Fatal(err)
			}
			if st, _ := n.ContainerStatus(id); st.State != cri.ContainerExited || st.ExitCode != 137 {
				t.Fatalf("after stop: %v %d, want Exited 137", st.State, st.ExitCode)
			}
		})
	}
}
