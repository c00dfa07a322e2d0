package console

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// Limits of a Files: a manifest is a few KiB, `kubectl get pods -o yaml >
// all.yaml` of two hundred pods under a MiB, so these only stop a runaway
// `yes`-style loop from filling the tab's memory.
const (
	// MaxFileSize is the most one file holds.
	MaxFileSize = 4 << 20
	// MaxTotalSize is the most all the files hold together.
	MaxTotalSize = 32 << 20
)

// Errors of a Files, wrapped in an *fs.PathError that names the operation
// and the file. A missing file is fs.ErrNotExist.
var (
	ErrIsDir    = errors.New("is a directory")
	ErrNotDir   = errors.New("not a directory")
	ErrTooLarge = fmt.Errorf("file too large: a file holds at most %d MiB here", MaxFileSize>>20)
	ErrNoSpace  = fmt.Errorf("no space left: the console's files hold at most %d MiB in all (rm some)", MaxTotalSize>>20)
)

// Files is the console's working directory: the files that `cat <<EOF >
// web.yaml` writes, `ls` lists and `kubectl apply -f web.yaml` reads. It
// lives in memory (in the browser, in the worker, beside the cluster), so
// it is empty after a reload, as a lab machine is after a reset.
//
// Names are slash-separated paths relative to the working directory
// ("web.yaml", "app/web.yaml", "./app/../web.yaml" is "web.yaml"). There is
// nothing outside it: an absolute path or one that climbs out with ".."
// does not exist. Directories are implicit, as in git: a directory exists
// while a file is in it, writing app/web.yaml makes app, and removing its
// last file removes it. "." (the working directory) always exists.
//
// Files is safe for concurrent use: a pipeline's commands run at once.
type Files struct {
	mu    sync.RWMutex // guards files and total
	files map[string]file
	total int
}

type file struct {
	data    []byte
	modTime time.Time
}

// NewFiles returns an empty working directory.
func NewFiles() *Files { return &Files{files: map[string]file{}} }

// clean turns a name into its key ("" for the working directory itself),
// or reports that it is outside.
func clean(op, name string) (string, error) {
	p := path.Clean(name)
	if name == "" || strings.HasPrefix(p, "/") || p == ".." || strings.HasPrefix(p, "../") {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if p == "." {
		return "", nil
	}
	return p, nil
}

// isDirLocked reports whether key is a directory: the working directory, or
// the parent of some file.
func (f *Files) isDirLocked(key string) bool {
	if key == "" {
		return true
	}
	prefix := key + "/"
	for k := range f.files {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// WriteFile replaces the contents of name, making it (and its directories)
// if needed. It fails, changing nothing, when name is a directory, when
// one of its parents is a file, or past MaxFileSize or MaxTotalSize.
func (f *Files) WriteFile(name string, data []byte) error {
	return f.write("open", name, data, false)
}

// AppendFile adds data at the end of name, making it if needed (a shell's
// >>). Its failures are WriteFile's.
func (f *Files) AppendFile(name string, data []byte) error {
	return f.write("open", name, data, true)
}

func (f *Files) write(op, name string, data []byte, appending bool) error {
	key, err := clean(op, name)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.isDirLocked(key) || strings.HasSuffix(name, "/") {
		return &fs.PathError{Op: op, Path: name, Err: ErrIsDir}
	}
	for dir := path.Dir(key); dir != "."; dir = path.Dir(dir) {
		if _, ok := f.files[dir]; ok {
			return &fs.PathError{Op: op, Path: name, Err: ErrNotDir}
		}
	}
	old := f.files[key]
	size := len(data)
	if appending {
		size += len(old.data)
	}
	if size > MaxFileSize {
		return &fs.PathError{Op: "write", Path: name, Err: ErrTooLarge}
	}
	if f.total-len(old.data)+size > MaxTotalSize {
		return &fs.PathError{Op: "write", Path: name, Err: ErrNoSpace}
	}
	buf := make([]byte, 0, size)
	if appending {
		buf = append(buf, old.data...)
	}
	buf = append(buf, data...)
	f.files[key] = file{data: buf, modTime: time.Now()}
	f.total += size - len(old.data)
	return nil
}

// ReadFile returns a copy of the contents of name. A missing name is an
// error wrapping fs.ErrNotExist; a directory is ErrIsDir.
func (f *Files) ReadFile(name string) ([]byte, error) {
	key, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if fl, ok := f.files[key]; ok {
		return append([]byte(nil), fl.data...), nil
	}
	if f.isDirLocked(key) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: ErrIsDir}
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// Stat describes name: a file, or a directory.
func (f *Files) Stat(name string) (fs.FileInfo, error) {
	key, err := clean("stat", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if fl, ok := f.files[key]; ok {
		return entry{name: path.Base(key), size: int64(len(fl.data)), modTime: fl.modTime}, nil
	}
	if f.isDirLocked(key) {
		return entry{name: path.Base(path.Clean(name)), dir: true}, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// ReadDir lists a directory's entries sorted by name, as os.ReadDir does.
// A file is ErrNotDir; a missing name wraps fs.ErrNotExist.
func (f *Files) ReadDir(name string) ([]fs.DirEntry, error) {
	key, err := clean("open", name)
	if err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	if _, ok := f.files[key]; ok {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: ErrNotDir}
	}
	prefix := ""
	if key != "" {
		prefix = key + "/"
	}
	seen := map[string]entry{}
	for k, fl := range f.files {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok {
			continue
		}
		if child, _, isDir := strings.Cut(rest, "/"); isDir {
			seen[child] = entry{name: child, dir: true}
		} else {
			seen[child] = entry{name: child, size: int64(len(fl.data)), modTime: fl.modTime}
		}
	}
	if len(seen) == 0 && key != "" {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	out := make([]fs.DirEntry, 0, len(seen))
	for _, e := range seen {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// Remove deletes the file name. A directory is ErrIsDir (see RemoveAll);
// a missing name wraps fs.ErrNotExist.
func (f *Files) Remove(name string) error {
	key, err := clean("remove", name)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.files[key]; ok {
		delete(f.files, key)
		f.total -= len(fl.data)
		return nil
	}
	if f.isDirLocked(key) {
		return &fs.PathError{Op: "remove", Path: name, Err: ErrIsDir}
	}
	return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
}

// RemoveAll deletes name and, for a directory, everything in it ("." is
// everything). A missing name is not an error, as with os.RemoveAll.
func (f *Files) RemoveAll(name string) error {
	key, err := clean("remove", name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for k, fl := range f.files {
		if key == "" || k == key || strings.HasPrefix(k, key+"/") {
			delete(f.files, k)
			f.total -= len(fl.data)
		}
	}
	return nil
}

// List returns every file's name (with its directories: app/web.yaml),
// sorted.
func (f *Files) List() []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	names := make([]string, 0, len(f.files))
	for k := range f.files {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Clear removes every file.
func (f *Files) Clear() { _ = f.RemoveAll(".") }

// entry is a file or directory, as fs.FileInfo and fs.DirEntry.
type entry struct {
	name    string
	size    int64
	dir     bool
	modTime time.Time
}

var (
	_ fs.FileInfo = entry{}
	_ fs.DirEntry = entry{}
)

func (e entry) Name() string { return e.name }
func (e entry) Size() int64  { return e.size }
func (e entry) Mode() fs.FileMode {
	if e.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (e entry) ModTime() time.Time         { return e.modTime }
func (e entry) IsDir() bool                { return e.dir }
func (e entry) Sys() any                   { return nil }
func (e entry) Type() fs.FileMode          { return e.Mode().Type() }
func (e entry) Info() (fs.FileInfo, error) { return e, nil }

// Glob returns the names that match pattern, sorted, as a shell's pathname
// expansion does (`kubectl apply -f *.yaml`, `rm app/*`): path.Match
// syntax (* ? [a-z], \ quotes), one path segment at a time, directories
// included, names starting with "." only for a pattern segment that does
// too. A pattern ending in / matches directories only, and a leading ./
// stays on the names.
func (f *Files) Glob(pattern string) ([]string, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, err
	}
	lead := ""
	for strings.HasPrefix(pattern, "./") {
		lead, pattern = "./", strings.TrimLeft(pattern[2:], "/")
	}
	dirOnly := strings.HasSuffix(pattern, "/")
	pattern = strings.TrimRight(pattern, "/")
	if pattern == "" {
		return nil, nil
	}
	f.mu.RLock()
	candidates := map[string]bool{} // name: is a directory
	for k := range f.files {
		candidates[k] = false
		for dir := path.Dir(k); dir != "."; dir = path.Dir(dir) {
			candidates[dir] = true
		}
	}
	f.mu.RUnlock()
	segs := strings.Split(pattern, "/")
	var out []string
	for name, isDir := range candidates {
		if dirOnly && !isDir {
			continue
		}
		parts := strings.Split(name, "/")
		if len(parts) != len(segs) {
			continue
		}
		ok := true
		for i, p := range parts {
			if m, _ := path.Match(segs[i], p); !m || strings.HasPrefix(p, ".") && !strings.HasPrefix(segs[i], ".") {
				ok = false
				break
			}
		}
		if ok {
			if dirOnly {
				name += "/"
			}
			out = append(out, lead+name)
		}
	}
	sort.Strings(out)
	return out, nil
}
