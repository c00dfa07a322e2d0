package console

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"sync"
	"testing"
)

func TestFiles(t *testing.T) {
	f := NewFiles()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.WriteFile("web.yaml", []byte("kind: Pod\n")))
	must(f.WriteFile("./app/../app/svc.yaml", []byte("kind: Service\n")))
	must(f.WriteFile("app/sub/deep.yaml", []byte("x")))
	must(f.AppendFile("web.yaml", []byte("---\n")))

	if got, want := f.List(), []string{"app/sub/deep.yaml", "app/svc.yaml", "web.yaml"}; !reflect.DeepEqual(got, want) {
		t.Errorf("List() = %q, want %q", got, want)
	}
	data, err := f.ReadFile("web.yaml")
	if err != nil || string(data) != "kind: Pod\n---\n" {
		t.Errorf("ReadFile(web.yaml) = %q, %v", data, err)
	}
	data[0] = 'X' // a copy: the file does not change
	if again, _ := f.ReadFile("web.yaml"); again[0] != 'k' {
		t.Error("ReadFile returned the stored slice itself")
	}

	errTests := []struct {
		name string
		op   func() error
		want error
	}{
		{"read missing", func() error { _, err := f.ReadFile("nope.yaml"); return err }, fs.ErrNotExist},
		{"read a dir", func() error { _, err := f.ReadFile("app"); return err }, ErrIsDir},
		{"read the working dir", func() error { _, err := f.ReadFile("."); return err }, ErrIsDir},
		{"read outside", func() error { _, err := f.ReadFile("../etc/passwd"); return err }, fs.ErrNotExist},
		{"read absolute", func() error { _, err := f.ReadFile("/etc/passwd"); return err }, fs.ErrNotExist},
		{"read empty name", func() error { _, err := f.ReadFile(""); return err }, fs.ErrNotExist},
		{"write over a dir", func() error { return f.WriteFile("app", nil) }, ErrIsDir},
		{"write under a file", func() error { return f.WriteFile("web.yaml/x", nil) }, ErrNotDir},
		{"write outside", func() error { return f.WriteFile("/tmp/x", nil) }, fs.ErrNotExist},
		{"remove a dir", func() error { return f.Remove("app") }, ErrIsDir},
		{"remove missing", func() error { return f.Remove("nope") }, fs.ErrNotExist},
		{"readdir a file", func() error { _, err := f.ReadDir("web.yaml"); return err }, ErrNotDir},
		{"readdir missing", func() error { _, err := f.ReadDir("nope"); return err }, fs.ErrNotExist},
		{"stat missing", func() error { _, err := f.Stat("nope"); return err }, fs.ErrNotExist},
	}
	for _, tt := range errTests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.op()
			var pe *fs.PathError
			if !errors.Is(err, tt.want) || !errors.As(err, &pe) {
				t.Errorf("got %v, want an *fs.PathError wrapping %v", err, tt.want)
			}
		})
	}
	if got := f.List(); len(got) != 3 {
		t.Errorf("failed operations changed the files: %q", got)
	}

	names := func(es []fs.DirEntry) (out []string) {
		for _, e := range es {
			n := e.Name()
			if e.IsDir() {
				n += "/"
			}
			out = append(out, n)
		}
		return out
	}
	root, err := f.ReadDir(".")
	if got, want := names(root), []string{"app/", "web.yaml"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadDir(.) = %q, %v; want %q", got, err, want)
	}
	app, err := f.ReadDir("app/")
	if got, want := names(app), []string{"sub/", "svc.yaml"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadDir(app/) = %q, %v; want %q", got, err, want)
	}
	if fi, err := f.Stat("app"); err != nil || !fi.IsDir() {
		t.Errorf("Stat(app) = %v, %v; want a directory", fi, err)
	}
	if fi, err := f.Stat("web.yaml"); err != nil || fi.IsDir() || fi.Size() != 14 {
		t.Errorf("Stat(web.yaml) = %v, %v; want a 14-byte file", fi, err)
	}

	must(f.Remove("app/sub/deep.yaml"))
	if _, err := f.Stat("app/sub"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("app/sub outlived its last file: %v", err)
	}
	must(f.RemoveAll("app"))
	must(f.RemoveAll("app")) // missing: not an error
	if got := f.List(); !reflect.DeepEqual(got, []string{"web.yaml"}) {
		t.Errorf("after RemoveAll(app): %q", got)
	}
	f.Clear()
	if got := f.List(); len(got) != 0 {
		t.Errorf("after Clear: %q", got)
	}
}

func TestFilesLimits(t *testing.T) {
	f := NewFiles()
	big := bytes.Repeat([]byte("x"), MaxFileSize)
	if err := f.WriteFile("max", big); err != nil {
		t.Fatalf("a file of exactly MaxFileSize: %v", err)
	}
	if err := f.AppendFile("max", []byte("y")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one byte past MaxFileSize: %v, want ErrTooLarge", err)
	}
	if err := f.WriteFile("over", append(big, 'y')); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a file over MaxFileSize: %v, want ErrTooLarge", err)
	}
	for i := 1; i < MaxTotalSize/MaxFileSize; i++ {
		if err := f.WriteFile(fmt.Sprintf("f%d", i), big); err != nil {
			t.Fatalf("file %d: %v", i, err)
		}
	}
	if err := f.WriteFile("one-more", []byte("y")); !errors.Is(err, ErrNoSpace) {
		t.Errorf("a byte past MaxTotalSize: %v, want ErrNoSpace", err)
	}
	// Replacing a file counts its new size, not both.
	if err := f.WriteFile("max", []byte("small")); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteFile("one-more", []byte("y")); err != nil {
		t.Errorf("after shrinking a file: %v", err)
	}
	if _, err := f.ReadFile("over"); !errors.Is(err, fs.ErrNotExist) {
		t.Error("a refused write left a file")
	}
}

// Run with -race: the shell's pipelines use one Files from several goroutines.
func TestFilesConcurrent(t *testing.T) {
	f := NewFiles()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("d%d/f.yaml", i%3)
			for range 100 {
				_ = f.AppendFile(name, []byte("x"))
				_, _ = f.ReadFile(name)
				_, _ = f.ReadDir(".")
				_ = f.List()
			}
		}()
	}
	wg.Wait()
	total := 0
	for _, n := range f.List() {
		data, _ := f.ReadFile(n)
		total += len(data)
	}
	if total != 800 {
		t.Errorf("%d bytes written, want 800", total)
	}
}
