package cri

import (
	"bytes"
	"io/fs"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestImageLayer: a root made from an image's layer is what laying the
// image out from scratch gives (the same paths, modes, bytes and inode
// numbers); a write in one container's root reaches neither the layer nor
// another container's root, whose bytes stay the image's own until written.
func TestImageLayer(t *testing.T) {
	image := []File{
		{Path: "/usr/local/bin/app", Mode: 0o755, Data: []byte("\x00asm program")},
		{Path: "/bin/busybox", Mode: 0o755, Data: []byte("\x00asm busybox")},
		{Path: "/bin/sh", Link: "/bin/busybox"},
		{Path: "/etc/passwd", Data: []byte("root:x:0:0::/root:/bin/sh\n")},
	}
	own := []File{{Path: "/etc/hostname", Data: []byte("p\n")}}
	mounts := []Mount{{ContainerPath: "/data"}}

	// From scratch, as a root was made before layers: one MemDir, every
	// path put in order.
	want := NewMemDir()
	for _, dir := range rootDirs {
		want.mkdirAll(dir, 0o755)
	}
	want.root.children["tmp"].mode = fs.ModeDir | 0o777
	for _, f := range image {
		if f.Link != "" {
			f.Data, f.Mode = image[1].Data, image[1].Mode
		}
		want.putFile(f, true)
	}
	for _, f := range own {
		want.putFile(f, false)
	}
	want.mkdirAll("/data", 0o755)

	layer := newImageLayer(image)
	a, b := layer.rootFS(own, mounts), layer.rootFS(own, mounts)
	var walk func(p string, w, g *memNode)
	walk = func(p string, w, g *memNode) {
		if g == nil {
			t.Errorf("%s: missing", p)
			return
		}
		if w.ino != g.ino || w.mode != g.mode || !bytes.Equal(w.data, g.data) || w.shared != g.shared || len(w.children) != len(g.children) {
			t.Errorf("%s: got ino %d mode %v shared %v %q (%d entries), want ino %d mode %v shared %v %q (%d entries)",
				p, g.ino, g.mode, g.shared, g.data, len(g.children), w.ino, w.mode, w.shared, w.data, len(w.children))
		}
		for name, c := range w.children {
			walk(p+"/"+name, c, g.children[name])
		}
	}
	walk("", want.root, a.root)
	if a.Size() != want.Size() || a.t.nextIno != want.t.nextIno {
		t.Errorf("size %d, next inode %d; want %d, %d", a.Size(), a.t.nextIno, want.Size(), want.t.nextIno)
	}

	// Writes: a shared file written in a, a new file in a.
	f, errno := a.OpenFile("/etc/passwd", experimentalsys.O_WRONLY|experimentalsys.O_TRUNC, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if _, errno := f.Write([]byte("changed\n")); errno != 0 {
		t.Fatal(errno)
	}
	f.Close()
	a.WriteFile("tmp/new", []byte("x"), 0o644)
	for name, d := range map[string]*MemDir{"b": b, "a new root": layer.rootFS(own, mounts)} {
		if got, err := d.ReadFile("etc/passwd"); err != nil || string(got) != "root:x:0:0::/root:/bin/sh\n" {
			t.Errorf("%s: /etc/passwd %q, %v: a's write reached it", name, got, err)
		}
		if _, err := d.ReadFile("tmp/new"); err == nil {
			t.Errorf("%s has a's /tmp/new", name)
		}
	}
	if got, _ := a.ReadFile("etc/passwd"); string(got) != "changed\n" {
		t.Errorf("a: /etc/passwd %q after its write", got)
	}
	if string(image[3].Data) != "root:x:0:0::/root:/bin/sh\n" {
		t.Errorf("the image's bytes changed: %q", image[3].Data)
	}
}
