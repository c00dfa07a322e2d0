package cri

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// A container's root file system, as a runtime lays it out:
//
//	/                      the container's own layer: a MemDir, writable,
//	                       new for every container (a restart starts clean)
//	├── bin/sh, bin/ls …   the image's files, shared with every container of
//	├── usr/local/bin/web  the image until written (copied up on the first write)
//	├── etc/hostname       files the kubelet places (ContainerConfig.Files):
//	├── etc/hosts          the pod's name, its hosts file, its resolv.conf,
//	├── etc/resolv.conf    the termination log
//	├── dev/termination-log
//	├── proc/              the container's processes (read-only, generated)
//	└── data/, var/run/secrets/kubernetes.io/serviceaccount/ …
//	                       volumes (Mounts), each its own file system
//
// Everything is in memory, natively as in a tab: no guest path leads to a
// host file. (Upstream the layers are overlayfs directories on the node and
// the kubelet's files are bind mounts; a container escape through a symlink
// is what runtimes guard against there. Here a MemDir has no symlinks at
// all: WASI's path_symlink answers ENOSYS.)
//
// WASI preview1 gives a module preopened directories; wazero preopens the
// root at "/" and every mount at its path, and wasi-libc resolves a path
// against the longest preopen that prefixes it, as a kernel's mount table
// does.

// File is one file of an image or one the kubelet places in a container.
type File struct {
	// Path is absolute and clean: "/bin/sh".
	Path string
	// Mode is the permission bits (0o755 for programs); 0 means 0o644.
	Mode fs.FileMode
	// Data is the content. An image's files are shared by its containers and
	// must not be modified.
	Data []byte
	// Link, when set, makes the file a hard link to another file of the
	// image (an absolute path listed before it): BusyBox's applets are
	// links to /bin/busybox. Data and Mode are then the target's.
	Link string

	digest string // Digest(Data), filled in by PullImage for the image's programs
}

// The default search path of a container whose image sets no PATH: the one
// containerd and Docker use.
const DefaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// rootDirs are made in every container's root.
var rootDirs = []string{"bin", "dev", "etc", "home", "proc", "root", "tmp", "usr/bin", "usr/local/bin", "var/run"}

// newRootFS lays out a container's root: the directories every root has,
// the image's files (shared, copy on write), the kubelet's files, and a
// directory at every mount path, so that `ls /` lists the mounts.
func newRootFS(imageFiles []File, files []File, mounts []Mount) *MemDir {
	return newImageLayer(imageFiles).rootFS(files, mounts)
}

// imageLayer is an image's files laid out once, with the directories every
// root has: the lower layer an overlay snapshotter unpacks once per image
// and node, which every container of the image starts from. Each
// container's root is a copy of its tree (nodes and directories of its
// own, the files' bytes shared until written: see memNode.own), made in a
// walk instead of laying out some fifty paths again at every start. An
// imageLayer is never modified after newImageLayer.
type imageLayer struct {
	root    *memNode
	nextIno uint64 // the tree's next inode number: a container's own files follow
	size    int64
}

func newImageLayer(imageFiles []File) *imageLayer {
	d := NewMemDir()
	for _, dir := range rootDirs {
		d.mkdirAll(dir, 0o755)
	}
	d.root.children["tmp"].mode = fs.ModeDir | 0o777
	byPath := map[string]File{}
	for _, f := range imageFiles {
		if f.Link != "" {
			t, ok := byPath[f.Link]
			if !ok {
				continue // PullImage checked the links
			}
			f.Data, f.Mode = t.Data, t.Mode
		}
		byPath[f.Path] = f
		d.putFile(f, true)
	}
	return &imageLayer{root: d.root, nextIno: d.t.nextIno, size: d.t.size}
}

// rootFS returns a new container root: a copy of the layer, then the
// kubelet's files and the mount points. The inode numbers are the ones a
// root laid out from scratch would have.
func (l *imageLayer) rootFS(files []File, mounts []Mount) *MemDir {
	d := &MemDir{t: &memTree{nextIno: l.nextIno, size: l.size}}
	d.root = l.root.clone(time.Now().UnixNano())
	for _, f := range files {
		d.putFile(f, false)
	}
	for _, m := range mounts {
		d.mkdirAll(m.ContainerPath, 0o755)
	}
	return d
}

// clone copies the tree under n, every node stamped with now; files keep
// sharing their bytes (a shared file stays shared: the copy's first write
// copies it up).
func (n *memNode) clone(now int64) *memNode {
	c := *n
	c.atim, c.mtim, c.ctim = now, now, now
	if n.children != nil {
		c.children = make(map[string]*memNode, len(n.children))
		for name, child := range n.children {
			c.children[name] = child.clone(now)
		}
	}
	return &c
}

// mkdirAll makes p and its parents; a file in the way is replaced by a
// directory (only the runtime calls it, while building a root).
func (d *MemDir) mkdirAll(p string, perm fs.FileMode) *memNode {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	return d.mkdirAllLocked(split(p), perm)
}

func (d *MemDir) mkdirAllLocked(parts []string, perm fs.FileMode) *memNode {
	n := d.root
	for _, part := range parts {
		c := n.children[part]
		if c == nil || !c.mode.IsDir() {
			if c != nil {
				d.t.size -= int64(len(c.data))
			}
			c = d.newNode(fs.ModeDir | perm)
			n.children[part] = c
		}
		n = c
	}
	return n
}

// putFile writes f into the tree, making its parents. shared keeps f.Data
// as is (an image layer's bytes); otherwise the tree keeps a copy.
func (d *MemDir) putFile(f File, shared bool) {
	parts := split(f.Path)
	if len(parts) == 0 {
		return
	}
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	dir := d.mkdirAllLocked(parts[:len(parts)-1], 0o755)
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	n := d.newNode(mode)
	if shared {
		n.data, n.shared, n.digest = f.Data, true, f.digest
	} else {
		n.data = append([]byte(nil), f.Data...)
	}
	if old := dir.children[parts[len(parts)-1]]; old != nil {
		d.t.size -= int64(len(old.data))
	}
	dir.children[parts[len(parts)-1]] = n
	d.t.size += int64(len(n.data))
}

// WriteFile creates or replaces the file at name with a copy of data, making
// its parents: the host's side, for tests and for files a host places.
func (d *MemDir) WriteFile(name string, data []byte, perm fs.FileMode) {
	d.putFile(File{Path: "/" + name, Mode: perm, Data: data}, false)
}

// Sub returns the directory dir of d, created if missing, as a MemDir of its
// own that shares d's files: what a volumeMount's subPath mounts. Size is
// still the whole tree's. A file in the way is an error.
func (d *MemDir) Sub(dir string) (*MemDir, error) {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n := d.root
	for _, part := range split(dir) {
		c := n.children[part]
		switch {
		case c == nil:
			c = d.newNode(fs.ModeDir | 0o777)
			n.children[part] = c
		case !c.mode.IsDir():
			return nil, fmt.Errorf("%s: not a directory", dir)
		}
		n = c
	}
	return &MemDir{t: d.t, root: n}, nil
}

// executable reads the file at p for running it: its bytes (shared, not to
// be modified: the caller gets a snapshot) and their digest, computed once
// per content.
func (d *MemDir) executable(p string) (data []byte, digest string, errno experimentalsys.Errno) {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(p)
	switch {
	case errno != 0:
		return nil, "", errno
	case n.mode.IsDir():
		return nil, "", experimentalsys.EISDIR
	case !n.runnable():
		return nil, "", experimentalsys.EACCES
	}
	if n.digest == "" {
		n.digest = Digest(n.data)
	}
	if !n.shared {
		// A guest may write the file while it runs; the module being
		// compiled must not change under it. From now on the file's
		// bytes are shared: the next write copies them.
		n.shared = true
	}
	return n.data, n.digest, 0
}

// runnable reports whether a file may be run: an execute bit, or a
// WebAssembly module. WASI preview1 has no chmod, so a program a guest wrote
// (tar -x, cp, kubectl cp) can never get an execute bit; its content says
// what it is.
func (n *memNode) runnable() bool {
	return !n.mode.IsDir() && (n.mode&0o111 != 0 || strings.HasPrefix(string(n.data[:min(len(n.data), 4)]), "\x00asm"))
}

// isRunnable is runnable for the file at p.
func (d *MemDir) isRunnable(p string) bool {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	n, errno := d.lookup(p)
	return errno == 0 && n.runnable()
}

// ErrNotFoundInPath and the others are why a command could not be started,
// in runc's words ("exec: %q: executable file not found in $PATH"); the
// runtime puts them in the container's status or an exec's output.
var (
	errNotFoundInPath = errors.New("executable file not found in $PATH")
)

// execError is a command that could not be started, as runc reports it.
type execError struct {
	name string
	err  error
	code int32 // 127: not found; 126: found but not runnable
}

func (e *execError) Error() string { return fmt.Sprintf("exec: %q: %v", e.name, e.err) }

// lookPath resolves a command's name as a runtime does before it execs it
// (runc uses Go's exec.LookPath): a name with a slash is a path, taken
// relative to dir; any other is searched in each directory of pathEnv. It
// returns the absolute path of a regular file with an execute bit.
func lookPath(root *MemDir, name, pathEnv, dir string) (string, *execError) {
	if name == "" {
		return "", &execError{name: name, err: errNotFoundInPath, code: 127}
	}
	if strings.Contains(name, "/") {
		p := name
		if !path.IsAbs(p) {
			p = path.Join(dir, p)
		}
		st, errno := root.Stat(p)
		switch {
		case errno == experimentalsys.ENOENT || errno == experimentalsys.ENOTDIR:
			return "", &execError{name: name, err: fmt.Errorf("stat %s: no such file or directory", name), code: 127}
		case errno != 0:
			return "", &execError{name: name, err: fmt.Errorf("stat %s: %v", name, errno), code: 126}
		case st.Mode.IsDir() || !root.isRunnable(p):
			return "", &execError{name: name, err: errors.New("permission denied"), code: 126}
		}
		return path.Clean(p), nil
	}
	for _, d := range strings.Split(pathEnv, ":") {
		if d == "" {
			d = "."
		}
		if !path.IsAbs(d) {
			d = path.Join(dir, d)
		}
		p := path.Join(d, name)
		if root.isRunnable(p) {
			return p, nil
		}
	}
	return "", &execError{name: name, err: errNotFoundInPath, code: 127}
}

// envValue is the last value of name in env ("" when unset).
func envValue(env []EnvVar, name string) (string, bool) {
	v, ok := "", false
	for _, e := range env {
		if e.Name == name {
			v, ok = e.Value, true
		}
	}
	return v, ok
}

// listFiles returns the paths of the regular files under dir, sorted, for
// tests and the images listing.
func (d *MemDir) listFiles() []string {
	d.t.mu.Lock()
	defer d.t.mu.Unlock()
	var out []string
	var walk func(prefix string, n *memNode)
	walk = func(prefix string, n *memNode) {
		for name, c := range n.children {
			if c.mode.IsDir() {
				walk(prefix+"/"+name, c)
			} else {
				out = append(out, prefix+"/"+name)
			}
		}
	}
	walk("", d.root)
	sort.Strings(out)
	return out
}

// ReadFile reads the file at p (absolute) as the container sees it: in one
// of its writable volumes or in its root, never on the host. It returns at
// most the last max bytes (max <= 0: all). The kubelet reads a container's
// termination message with it (upstream it reads the host file it
// bind-mounted at terminationMessagePath). The error wraps fs.ErrNotExist
// for a missing file.
func (r *Runtime) ReadFile(id, p string, max int) ([]byte, error) {
	c, err := r.get(id)
	if err != nil {
		return nil, err
	}
	p = path.Clean(p)
	if !path.IsAbs(p) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fs.ErrInvalid}
	}
	d, rel := c.root, p
	best := ""
	for _, m := range c.cfg.Mounts {
		if m.Mem == nil || len(m.ContainerPath) <= len(best) {
			continue
		}
		if r, ok := strings.CutPrefix(p, m.ContainerPath+"/"); ok {
			d, rel, best = m.Mem, r, m.ContainerPath
		}
	}
	data, err := d.ReadFile(strings.TrimPrefix(rel, "/"))
	if err != nil {
		return nil, err
	}
	if max > 0 && len(data) > max {
		data = data[len(data)-max:]
	}
	return data, nil
}
