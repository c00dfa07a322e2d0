package images_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"testing"

	"k8s.io/utils/clock"

	"github.com/kubetab/kubetab/core/kubelet/cri"
	"github.com/kubetab/kubetab/wasm/images"
)

func TestFetch(t *testing.T) {
	c := images.New()
	ctx := context.Background()
	h1, err := c.Fetch(ctx, "hello:1.0")
	if err != nil {
		t.Fatal(err)
	}
	h2, err := c.Fetch(ctx, "hello:2.0")
	if err != nil {
		t.Fatal(err)
	}
	if h1.Digest == h2.Digest {
		t.Fatal("hello:1.0 and hello:2.0 have the same digest")
	}

	tests := []struct {
		ref        string
		wantRef    string
		wantDigest string
		wantErr    error
		wantMsg    string
	}{
		{ref: "hello", wantRef: "hello:latest", wantDigest: h1.Digest},
		{ref: "hello:latest", wantRef: "hello:latest", wantDigest: h1.Digest},
		{ref: "hello:1.0", wantRef: "hello:1.0", wantDigest: h1.Digest},
		{ref: "hello:2.0", wantRef: "hello:2.0", wantDigest: h2.Digest},
		{ref: "hello@" + h2.Digest, wantRef: "hello@" + h2.Digest, wantDigest: h2.Digest},
		{ref: "hello:2.0@" + h2.Digest, wantRef: "hello:2.0@" + h2.Digest, wantDigest: h2.Digest},
		{ref: "hello:1.0@" + h2.Digest, wantErr: cri.ErrImageNotFound}, // tag and digest disagree
		{ref: "nginx@" + h2.Digest, wantErr: cri.ErrImageNotFound},     // right content, wrong repository
		{ref: "hello:9.9", wantErr: cri.ErrImageNotFound,
			wantMsg: `failed to pull and unpack image "hello:9.9": failed to resolve reference "hello:9.9": hello:9.9: not found`},
		{ref: "nginx", wantErr: cri.ErrImageNotFound,
			wantMsg: `failed to pull and unpack image "nginx:latest": failed to resolve reference "nginx:latest": nginx:latest: not found`},
		{ref: "HELLO", wantErr: cri.ErrInvalidReference},
		{ref: "hello:", wantErr: cri.ErrInvalidReference},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			img, err := c.Fetch(ctx, tt.ref)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || (tt.wantMsg != "" && err.Error() != tt.wantMsg) {
					t.Fatalf("Fetch(%q) error = %v, want %v %q", tt.ref, err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if img.Ref != tt.wantRef || img.Digest != tt.wantDigest || cri.ImageDigest(img) != img.Digest {
				t.Fatalf("Fetch(%q) = %s %s, want %s %s", tt.ref, img.Ref, img.Digest, tt.wantRef, tt.wantDigest)
			}
		})
	}

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Fetch(canceled, "hello"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fetch with a canceled ctx = %v", err)
	}
}

// TestCatalogModules checks every listed image: it is a WASI command a node
// can pull, it was built with its tag's defines, and its folder's README says
// how it was built.
func TestCatalogModules(t *testing.T) {
	c := images.New()
	cache := cri.NewCompileCache()
	defer cache.Close(context.Background())
	rt, err := cri.New(cri.Config{Images: c, Cache: cache, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	greetings := map[string]string{"hello:1.0": "Hello from", "hello:2.0": "Hi again from", "hello:latest": "Hello from"}
	for _, e := range c.List() {
		t.Run(e.Ref, func(t *testing.T) {
			if e.About == "" || e.Size == 0 {
				t.Fatalf("entry %+v lacks a description or content", e)
			}
			if _, err := rt.PullImage(context.Background(), e.Ref); err != nil {
				t.Fatalf("PullImage: %v", err)
			}
			img, err := c.Fetch(context.Background(), e.Ref)
			if err != nil {
				t.Fatal(err)
			}
			if g, ok := greetings[e.Ref]; ok && !bytes.Contains(img.Module, []byte(g)) {
				t.Fatalf("%s does not contain its greeting %q: built with the wrong -DGREETING?", e.Ref, g)
			}
			name, _, _ := strings.Cut(e.Ref, ":")
			readme, err := os.ReadFile(path.Join(name, "README.md"))
			if err != nil {
				t.Fatalf("image folder has no README.md saying how it was built: %v", err)
			}
			if !strings.Contains(string(readme), "clang ") {
				t.Fatalf("%s/README.md does not give the build command", name)
			}
		})
	}
}

func TestAdd(t *testing.T) {
	c := images.New()
	hello, err := c.Fetch(context.Background(), "hello:1.0")
	if err != nil {
		t.Fatal(err)
	}
	reactor, err := os.ReadFile("../../core/kubelet/cri/testdata/reactor.wasm")
	if err != nil {
		t.Fatal(err)
	}
	envimport, err := os.ReadFile("../../core/kubelet/cri/testdata/envimport.wasm")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tag string
		module    []byte
		wantErr   error
		wantMsg   string
	}{
		{"mine", "1.0", hello.Module, nil, ""},
		{"mine", "1.0", hello.Module, nil, ""}, // replacing your own image is fine
		{"mine", "", hello.Module, nil, ""},    // "latest"
		{"Mine", "1.0", hello.Module, cri.ErrInvalidReference, "name must be lowercase"},
		{"mine", "1.0@sha256:0", hello.Module, cri.ErrInvalidReference, ""},
		{"hello", "1.0", hello.Module, images.ErrBuiltin, "hello:1.0 ships with kubetab"},
		{"hello", "", hello.Module, images.ErrBuiltin, "hello:latest ships with kubetab"},
		{"big", "1.0", make([]byte, images.MaxModuleBytes+1), images.ErrTooLarge, "the limit is 8388608 (8 MiB)"},
		{"text", "1.0", []byte("print('hello')"), cri.ErrInvalidImage, "not a WebAssembly 1.0 binary"},
		{"lib", "1.0", reactor, cri.ErrInvalidImage, "it is a WASI reactor"},
		{"js", "1.0", envimport, cri.ErrInvalidImage, "it imports env.magic: a container can only import wasi_snapshot_preview1 functions"},
	}
	for _, tt := range tests {
		err := c.Add(tt.name, tt.tag, tt.module)
		if (tt.wantErr == nil) != (err == nil) || (err != nil && (!errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg))) {
			t.Errorf("Add(%q, %q) = %v, want %v saying %q", tt.name, tt.tag, err, tt.wantErr, tt.wantMsg)
		}
	}
	img, err := c.Fetch(context.Background(), "mine:1.0")
	if err != nil || !bytes.Equal(img.Module, hello.Module) || strings.Join(img.Config.Entrypoint, " ") != "mine" {
		t.Fatalf("Fetch(mine:1.0) = %+v, %v; want hello's module, run as mine", img.Config, err)
	}
	if _, err := c.Fetch(context.Background(), "mine"); err != nil {
		t.Fatalf("Fetch(mine) = %v", err)
	}
	var refs []string
	for _, e := range c.List() {
		if strings.HasPrefix(e.Ref, "mine") {
			refs = append(refs, e.Ref+" "+e.About)
		}
	}
	if len(refs) != 2 || !strings.Contains(refs[0], "added by you") {
		t.Fatalf("listed %q, want mine:1.0 and mine:latest once each", refs)
	}
}

// TestCheckAdd: the checks Add makes before it reads the module, with Add's
// messages, so the browser can refuse a huge file before copying it.
func TestCheckAdd(t *testing.T) {
	c := images.New()
	tests := []struct {
		name, tag string
		size      int
		wantRef   string
		wantErr   error
		wantMsg   string
	}{
		{name: "myapp", size: 100, wantRef: "myapp:latest"},
		{name: "myapp", tag: "1.0", size: images.MaxModuleBytes, wantRef: "myapp:1.0"},
		{name: "myapp", size: images.MaxModuleBytes + 1, wantErr: images.ErrTooLarge,
			wantMsg: "images: module too large: myapp:latest is 8388609 bytes, the limit is 8388608 (8 MiB)"},
		{name: "hello", tag: "2.0", size: 1 << 30, wantErr: images.ErrBuiltin, wantMsg: "hello:2.0 ships with kubetab"},
		{name: "My App", size: 100, wantErr: cri.ErrInvalidReference},
	}
	for _, tt := range tests {
		t.Run(tt.name+":"+tt.tag, func(t *testing.T) {
			ref, err := c.CheckAdd(tt.name, tt.tag, tt.size)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !strings.Contains(err.Error(), tt.wantMsg) {
					t.Fatalf("CheckAdd = %q, %v; want %v saying %q", ref, err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil || ref != tt.wantRef {
				t.Fatalf("CheckAdd = %q, %v; want %q", ref, err, tt.wantRef)
			}
		})
	}
	// Add returns the same error for the same size, without a module to check.
	if err := c.Add("myapp", "", make([]byte, images.MaxModuleBytes+1)); !errors.Is(err, images.ErrTooLarge) {
		t.Fatalf("Add of a large module = %v", err)
	}
}

func TestListBuiltin(t *testing.T) {
	c := images.New()
	hello, err := c.Fetch(context.Background(), "hello:1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add("mine", "", hello.Module); err != nil {
		t.Fatal(err)
	}
	for _, e := range c.List() {
		if want := e.Ref != "mine:latest"; e.Builtin != want {
			t.Errorf("%s: Builtin = %v, want %v", e.Ref, e.Builtin, want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	c := images.New()
	hello, err := c.Fetch(context.Background(), "hello:1.0")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add("mine", "0.1", hello.Module); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := c.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "IMAGE TAG IMAGE ID SIZE COMMAND PORTS ABOUT" {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines) != len(c.List())+1 {
		t.Fatalf("%d lines for %d images:\n%s", len(lines), len(c.List()), b.String())
	}
	mine, err := c.Fetch(context.Background(), "mine:0.1")
	if err != nil {
		t.Fatal(err)
	}
	size := len(mine.Module)
	for _, f := range mine.Files {
		size += len(f.Data)
	}
	id := strings.TrimPrefix(mine.Digest, "sha256:")[:13]
	for _, want := range []string{
		fmt.Sprintf(`mine 0.1 %s %.1fkB "mine" - added by you`, id, float64(size)/1000),
		`busybox 1.36 `, `"sh" - BusyBox-style userland`, `"web" 8080/tcp HTTP`,
	} {
		if !strings.Contains(strings.Join(strings.Fields(b.String()), " "), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// TestApplets: the userland's own list of applets (busybox with no
// arguments) is images.Applets, the links every image has in /bin; and
// every image runs its userland.
func TestApplets(t *testing.T) {
	ctx := context.Background()
	cache := cri.NewCompileCache()
	defer cache.Close(ctx)
	rt, err := cri.New(cri.Config{Images: images.New(), Cache: cache, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	for _, image := range []string{"busybox", "hello:2.0"} {
		if _, err := rt.PullImage(ctx, image); err != nil {
			t.Fatal(err)
		}
		id, err := rt.CreateContainer(ctx, cri.ContainerConfig{Name: "c", Image: image, Command: []string{"sleep", "3600"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := rt.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		out, errOut, code, err := rt.ExecSync(ctx, id, []string{"busybox"}, 0)
		if err != nil || code != 0 {
			t.Fatalf("%s: busybox = %d %v %s", image, code, err, errOut)
		}
		_, list, _ := strings.Cut(string(out), "Currently defined functions:\n\t")
		var got []string
		for _, a := range strings.Split(strings.TrimSpace(list), ", ") {
			if a != "busybox" {
				got = append(got, a)
			}
		}
		if strings.Join(got, " ") != strings.Join(images.Applets, " ") {
			t.Errorf("%s: the userland's applets:\n%q\nimages.Applets:\n%q", image, got, images.Applets)
		}
	}
}
