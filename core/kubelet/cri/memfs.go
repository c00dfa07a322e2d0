package cri

import (
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// MemDir is a writable directory tree held in memory: an emptyDir for a host
// without a file system (a browser tab has none), or with medium: Memory
// (upstream: a tmpfs). Mount it with Mount.Mem; the containers of a pod that
// mount the same MemDir share its files, as they share an emptyDir. It is
// safe for concurrent use.
//
// It implements wazero's experimental sys.FS (files and directories; no
// links), which wazero's WASI serves to the guest at the mount path. Written
// by hand because wazero ships no writable in-memory file system and none of
// the Go in-memory file systems speaks sys.FS.
type MemDir struct {
	experimentalsys.UnimplementedFS // Link, Symlink, Readlink: ENOSYS

	t    *memTree
	root *memNode // the tree's root, or a directory of it (Sub)
}

// memTree is what the MemDirs of one tree share: Sub makes another MemDir
// over a directory of the same tree.
type memTree struct {
	mu      sync.Mutex // guards every node of the tree
	nextIno uint64
	size    int64 // bytes in regular files
}

// memNode is a file or a directory.
type memNode struct {
	ino              uint64
	mode             fs.FileMode // type bits and permissions
	data             []byte      // a file's content
	shared           bool        // data belongs to an image layer: copy it before the first write
	digest           string      // Digest(data), computed when the file is first executed; "" after a write
	children         map[string]*memNode
	atim, mtim, ctim int64
}

var _ experimentalsys.FS = (*MemDir)(nil)

// NewMemDir returns an empty directory.
func NewMemDir() *MemDir {
	d := &MemDir{t: &memTree{nextIno: 1}}
	d.root = d.newNode(fs.ModeDir | 0o777)
	return d
}

// Size is the number of bytes in its files: what upstream's eviction manager
// compares with an emptyDir's sizeLimit.
func (d *MemDir) Size() int64 {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	return d.t.size
}

// ReadFile returns a copy of the content of the file at name ("a/b.txt"),
// for the host's side (tests, a kubelet that shows a volume).
func (d *MemDir) ReadFile(name string) ([]byte, error) {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(name)
	if errno == experimentalsys.ENOENT {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
	}
	if errno != 0 {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errno}
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: experimentalsys.EISDIR}
	}
	return append([]byte(nil), n.data...), nil
}

func (d *MemDir) newNode(mode fs.FileMode) *memNode {
	now := time.Now().UnixNano()
	n := &memNode{ino: d.t.nextIno, mode: mode, atim: now, mtim: now, ctim: now}
	d.t.nextIno++
	if mode.IsDir() {
		n.children = map[string]*memNode{}
	}
	return n
}

// split cleans a path relative to the root into its parts ("" is the root).
func split(p string) []string {
	p = strings.TrimPrefix(path.Clean("/"+p), "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// lookup finds a node. d.mu is held.
func (d *MemDir) lookup(p string) (*memNode, experimentalsys.Errno) {
	n := d.root
	for _, part := range split(p) {
		if !n.mode.IsDir() {
			return nil, experimentalsys.ENOTDIR
		}
		c := n.children[part]
		if c == nil {
			return nil, experimentalsys.ENOENT
		}
		n = c
	}
	return n, 0
}

// parent finds the directory that holds p, and p's base name. d.mu is held.
func (d *MemDir) parent(p string) (*memNode, string, experimentalsys.Errno) {
	parts := split(p)
	if len(parts) == 0 {
		return nil, "", experimentalsys.EINVAL // the root has no parent
	}
	dir, errno := d.lookup(strings.Join(parts[:len(parts)-1], "/"))
	if errno != 0 {
		return nil, "", errno
	}
	if !dir.mode.IsDir() {
		return nil, "", experimentalsys.ENOTDIR
	}
	return dir, parts[len(parts)-1], 0
}

// own makes a file's data its own before a write: an image layer's bytes
// are shared by every container of the image (copy-up, as overlayfs copies a
// lower layer's file into the container's upper layer on its first write).
// d.mu is held.
func (n *memNode) own() {
	if n.shared {
		n.data = append([]byte(nil), n.data...)
		n.shared = false
	}
	n.digest = ""
}

func (n *memNode) stat() sys.Stat_t {
	st := sys.Stat_t{Ino: n.ino, Mode: n.mode, Nlink: 1, Size: int64(len(n.data)), Atim: n.atim, Mtim: n.mtim, Ctim: n.ctim}
	if n.mode.IsDir() {
		st.Nlink, st.Size = 2, 0
	}
	return st
}

// OpenFile implements sys.FS.
func (d *MemDir) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	writable := flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY) != 0
	n, errno := d.lookup(p)
	switch {
	case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
		dir, name, errno := d.parent(p)
		if errno != 0 {
			return nil, errno
		}
		n = d.newNode(perm.Perm())
		dir.children[name] = n
		dir.mtim = n.mtim
	case errno != 0:
		return nil, errno
	case flag&experimentalsys.O_CREAT != 0 && flag&experimentalsys.O_EXCL != 0:
		return nil, experimentalsys.EEXIST
	}
	if n.mode.IsDir() && writable {
		return nil, experimentalsys.EISDIR
	}
	if !n.mode.IsDir() && flag&experimentalsys.O_DIRECTORY != 0 {
		return nil, experimentalsys.ENOTDIR
	}
	if writable && flag&experimentalsys.O_TRUNC != 0 && len(n.data) > 0 {
		d.t.size -= int64(len(n.data))
		n.data, n.shared, n.digest = nil, false, ""
		n.mtim = time.Now().UnixNano()
	}
	return &memFile{
		d:        d,
		n:        n,
		readable: flag&experimentalsys.O_WRONLY == 0,
		writable: writable,
		append:   flag&experimentalsys.O_APPEND != 0,
	}, 0
}

// Lstat implements sys.FS (there are no links: it is Stat).
func (d *MemDir) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) { return d.Stat(p) }

// Stat implements sys.FS.
func (d *MemDir) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(p)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	return n.stat(), 0
}

// Mkdir implements sys.FS.
func (d *MemDir) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	dir, name, errno := d.parent(p)
	if errno != 0 {
		return errno
	}
	if c := dir.children[name]; c != nil {
		if c.mode.IsDir() {
			return experimentalsys.EEXIST
		}
		return experimentalsys.ENOTDIR
	}
	n := d.newNode(fs.ModeDir | perm.Perm())
	dir.children[name] = n
	dir.mtim = n.mtim
	return 0
}

// Chmod implements sys.FS.
func (d *MemDir) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(p)
	if errno != 0 {
		return errno
	}
	n.mode = n.mode.Type() | perm.Perm()
	n.ctim = time.Now().UnixNano()
	return 0
}

// Rename implements sys.FS.
func (d *MemDir) Rename(from, to string) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	fdir, fname, errno := d.parent(from)
	if errno != 0 {
		return errno
	}
	n := fdir.children[fname]
	if n == nil {
		return experimentalsys.ENOENT
	}
	tdir, tname, errno := d.parent(to)
	if errno != 0 {
		return errno
	}
	if n.mode.IsDir() {
		fp, tp := strings.Join(split(from), "/")+"/", strings.Join(split(to), "/")+"/"
		if tp != fp && strings.HasPrefix(tp, fp) {
			return experimentalsys.EINVAL // into itself
		}
	}
	if old := tdir.children[tname]; old != nil && old != n {
		switch {
		case n.mode.IsDir() && !old.mode.IsDir():
			return experimentalsys.ENOTDIR
		case !n.mode.IsDir() && old.mode.IsDir():
			return experimentalsys.EISDIR
		case old.mode.IsDir() && len(old.children) > 0:
			return experimentalsys.ENOTEMPTY
		}
		d.t.size -= int64(len(old.data))
	}
	delete(fdir.children, fname)
	tdir.children[tname] = n
	now := time.Now().UnixNano()
	fdir.mtim, tdir.mtim, n.ctim = now, now, now
	return 0
}

// Rmdir implements sys.FS.
func (d *MemDir) Rmdir(p string) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	dir, name, errno := d.parent(p)
	if errno != 0 {
		return errno
	}
	n := dir.children[name]
	switch {
	case n == nil:
		return experimentalsys.ENOENT
	case !n.mode.IsDir():
		return experimentalsys.ENOTDIR
	case len(n.children) > 0:
		return experimentalsys.ENOTEMPTY
	}
	delete(dir.children, name)
	dir.mtim = time.Now().UnixNano()
	return 0
}

// Unlink implements sys.FS.
func (d *MemDir) Unlink(p string) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	dir, name, errno := d.parent(p)
	if errno != 0 {
		return errno
	}
	n := dir.children[name]
	switch {
	case n == nil:
		return experimentalsys.ENOENT
	case n.mode.IsDir():
		return experimentalsys.EISDIR
	}
	delete(dir.children, name)
	d.t.size -= int64(len(n.data))
	dir.mtim = time.Now().UnixNano()
	return 0
}

// Utimens implements sys.FS.
func (d *MemDir) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(p)
	if errno != 0 {
		return errno
	}
	n.utimens(atim, mtim)
	return 0
}

func (n *memNode) utimens(atim, mtim int64) {
	if atim != experimentalsys.UTIME_OMIT {
		n.atim = atim
	}
	if mtim != experimentalsys.UTIME_OMIT {
		n.mtim = mtim
	}
	n.ctim = time.Now().UnixNano()
}

// memFile is an open file or directory of a MemDir.
type memFile struct {
	experimentalsys.UnimplementedFile

	d                  *MemDir
	n                  *memNode
	readable, writable bool
	append, closed     bool
	off                int64
	dirents            []experimentalsys.Dirent // a directory's entries not yet read; nil before the first Readdir
}

func (f *memFile) check() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return 0
}

func (f *memFile) Ino() (sys.Inode, experimentalsys.Errno) { return f.n.ino, 0 }
func (f *memFile) IsDir() (bool, experimentalsys.Errno)    { return f.n.mode.IsDir(), 0 }
func (f *memFile) IsAppend() bool                          { return f.append }

func (f *memFile) SetAppend(enable bool) experimentalsys.Errno {
	if errno := f.check(); errno != 0 {
		return errno
	}
	f.append = enable
	return 0
}

func (f *memFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if errno := f.check(); errno != 0 {
		return sys.Stat_t{}, errno
	}
	f.d.t.mu.Lock()
	defer f.d.t.mu.Unlock()
	return f.n.stat(), 0
}

func (f *memFile) Read(buf []byte) (int, experimentalsys.Errno) {
	n, errno := f.Pread(buf, f.off)
	f.off += int64(n)
	return n, errno
}

func (f *memFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	switch {
	case f.closed || !f.readable:
		return 0, experimentalsys.EBADF
	case f.n.mode.IsDir():
		return 0, experimentalsys.EISDIR
	case off < 0:
		return 0, experimentalsys.EINVAL
	}
	f.d.t.mu.Lock()
	defer f.d.t.mu.Unlock()
	if off >= int64(len(f.n.data)) {
		return 0, 0
	}
	return copy(buf, f.n.data[off:]), 0
}

// seekOffset is int64. Spelling it with an alias keeps go vet's stdmethods
// check, which wants io.Seeker's (int64, error) results from any method
// named Seek, from flagging sys.File's Seek, which returns an Errno.
type seekOffset = int64

func (f *memFile) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	if errno := f.check(); errno != 0 {
		return 0, errno
	}
	if f.n.mode.IsDir() {
		if offset != 0 || whence != io.SeekStart {
			return 0, experimentalsys.EINVAL
		}
		f.dirents = nil // read the directory again
		return 0, 0
	}
	f.d.t.mu.Lock()
	size := int64(len(f.n.data))
	f.d.t.mu.Unlock()
	switch whence {
	case io.SeekCurrent:
		offset += f.off
	case io.SeekEnd:
		offset += size
	case io.SeekStart:
	default:
		return 0, experimentalsys.EINVAL
	}
	if offset < 0 {
		return 0, experimentalsys.EINVAL
	}
	f.off = offset
	return offset, 0
}

func (f *memFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed || !f.n.mode.IsDir() {
		return nil, experimentalsys.EBADF
	}
	if f.dirents == nil {
		f.d.t.mu.Lock()
		names := make([]string, 0, len(f.n.children))
		for name := range f.n.children {
			names = append(names, name)
		}
		sort.Strings(names)
		f.dirents = make([]experimentalsys.Dirent, 0, len(names))
		for _, name := range names {
			c := f.n.children[name]
			f.dirents = append(f.dirents, experimentalsys.Dirent{Ino: c.ino, Name: name, Type: c.mode.Type()})
		}
		f.d.t.mu.Unlock()
	}
	if n <= 0 || n > len(f.dirents) {
		n = len(f.dirents)
	}
	out := f.dirents[:n:n]
	f.dirents = f.dirents[n:]
	return out, 0
}

func (f *memFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.append {
		f.d.t.mu.Lock()
		f.off = int64(len(f.n.data))
		f.d.t.mu.Unlock()
	}
	n, errno := f.Pwrite(buf, f.off)
	f.off += int64(n)
	return n, errno
}

func (f *memFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	switch {
	case f.closed || !f.writable:
		return 0, experimentalsys.EBADF
	case f.n.mode.IsDir():
		return 0, experimentalsys.EISDIR
	case off < 0:
		return 0, experimentalsys.EINVAL
	}
	f.d.t.mu.Lock()
	defer f.d.t.mu.Unlock()
	f.n.own()
	end := off + int64(len(buf))
	if grow := end - int64(len(f.n.data)); grow > 0 {
		f.n.data = append(f.n.data, make([]byte, grow)...)
		f.d.t.size += grow
	}
	copy(f.n.data[off:], buf)
	f.n.mtim = time.Now().UnixNano()
	return len(buf), 0
}

func (f *memFile) Truncate(size int64) experimentalsys.Errno {
	switch {
	case f.closed || !f.writable:
		return experimentalsys.EBADF
	case f.n.mode.IsDir():
		return experimentalsys.EISDIR
	case size < 0:
		return experimentalsys.EINVAL
	}
	f.d.t.mu.Lock()
	defer f.d.t.mu.Unlock()
	f.n.own()
	old := int64(len(f.n.data))
	if size <= old {
		f.n.data = f.n.data[:size:size]
	} else {
		f.n.data = append(f.n.data, make([]byte, size-old)...)
	}
	f.d.t.size += size - old
	f.n.mtim = time.Now().UnixNano()
	return 0
}

func (f *memFile) Sync() experimentalsys.Errno     { return f.check() }
func (f *memFile) Datasync() experimentalsys.Errno { return f.check() }

func (f *memFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if errno := f.check(); errno != 0 {
		return errno
	}
	f.d.t.mu.Lock()
	defer f.d.t.mu.Unlock()
	f.n.utimens(atim, mtim)
	return 0
}

func (f *memFile) Close() experimentalsys.Errno {
	f.closed = true
	return 0
}
