package cri_test

import (
	"errors"
	"io"
	"io/fs"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// TestMemDir checks the POSIX answers a guest's libc relies on.
func TestMemDir(t *testing.T) {
	d := cri.NewMemDir()
	const (
		rw   = experimentalsys.O_RDWR
		crt  = experimentalsys.O_CREAT
		excl = experimentalsys.O_EXCL
		trnc = experimentalsys.O_TRUNC
		app  = experimentalsys.O_APPEND
		ro   = experimentalsys.O_RDONLY
		dir  = experimentalsys.O_DIRECTORY
	)
	open := func(p string, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
		return d.OpenFile(p, flag, 0o644)
	}
	must := func(errno experimentalsys.Errno) {
		t.Helper()
		if errno != 0 {
			t.Fatal(errno)
		}
	}
	f, errno := open("a.txt", rw|crt)
	must(errno)
	_, errno = f.Write([]byte("hello world"))
	must(errno)
	_, errno = f.Seek(6, io.SeekStart)
	must(errno)
	buf := make([]byte, 16)
	n, _ := f.Read(buf)
	if string(buf[:n]) != "world" {
		t.Fatalf("read %q", buf[:n])
	}
	must(f.Close())
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Fatalf("write after close: %v", errno)
	}

	f, errno = open("a.txt", rw|app)
	must(errno)
	f.Write([]byte("!"))
	f.Close()
	if b, _ := d.ReadFile("a.txt"); string(b) != "hello world!" {
		t.Fatalf("after append: %q", b)
	}
	if d.Size() != 12 {
		t.Fatalf("size %d", d.Size())
	}
	f, _ = open("a.txt", rw|trnc)
	f.Close()
	if d.Size() != 0 {
		t.Fatalf("size after O_TRUNC %d", d.Size())
	}

	tests := []struct {
		name string
		got  experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"create existing with O_EXCL", second(open("a.txt", rw|crt|excl)), experimentalsys.EEXIST},
		{"open missing", second(open("nope", ro)), experimentalsys.ENOENT},
		{"create in missing dir", second(open("no/such", rw|crt)), experimentalsys.ENOENT},
		{"mkdir", d.Mkdir("sub", 0o755), 0},
		{"mkdir again", d.Mkdir("sub", 0o755), experimentalsys.EEXIST},
		{"mkdir over a file", d.Mkdir("a.txt", 0o755), experimentalsys.ENOTDIR},
		{"open dir for writing", second(open("sub", rw)), experimentalsys.EISDIR},
		{"O_DIRECTORY on a file", second(open("a.txt", ro|dir)), experimentalsys.ENOTDIR},
		{"file in sub", second(open("sub/b", rw|crt)), 0},
		{"rmdir non-empty", d.Rmdir("sub"), experimentalsys.ENOTEMPTY},
		{"unlink a dir", d.Unlink("sub"), experimentalsys.EISDIR},
		{"rename dir into itself", d.Rename("sub", "sub/inner"), experimentalsys.EINVAL},
		{"rename file over dir", d.Rename("a.txt", "sub"), experimentalsys.EISDIR},
		{"rename file", d.Rename("sub/b", "c"), 0},
		{"rmdir empty", d.Rmdir("sub"), 0},
		{"unlink", d.Unlink("c"), 0},
		{"unlink missing", d.Unlink("c"), experimentalsys.ENOENT},
		{"path through a file", second(open("a.txt/x", ro)), experimentalsys.ENOTDIR},
		{"links", d.Link("a.txt", "l"), experimentalsys.ENOSYS},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}

	// Directory listing, in name order, and again after a rewind.
	must(d.Mkdir("z", 0o755))
	root, errno := open(".", ro)
	must(errno)
	for range 2 {
		ents, errno := root.Readdir(-1)
		must(errno)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name)
			if (e.Name == "z") != (e.Type == fs.ModeDir) {
				t.Fatalf("entry %+v", e)
			}
		}
		if len(names) != 2 || names[0] != "a.txt" || names[1] != "z" {
			t.Fatalf("readdir = %v", names)
		}
		_, errno = root.Seek(0, io.SeekStart)
		must(errno)
	}
	if st, errno := d.Stat("z"); errno != 0 || !st.Mode.IsDir() {
		t.Fatalf("stat z: %v %v", st.Mode, errno)
	}
	if _, err := d.ReadFile("z"); !errors.Is(err, experimentalsys.EISDIR) {
		t.Fatalf("ReadFile(dir) = %v", err)
	}
}

func second[T any](_ T, errno experimentalsys.Errno) experimentalsys.Errno { return errno }
