// Package images is kubetab's image registry: the catalog of guest "container
// images" a pod can name in spec.containers[].image, each a WASI preview1
// module embedded in the binary.
//
// Upstream counterpart: a container registry (registry.k8s.io, Docker Hub)
// and the resolver side of containerd's pull (core/remotes/docker): a name and
// tag resolve to content identified by its sha256 digest. Here the content is
// one .wasm file and there is no network: Fetch is a lookup. Catalog
// implements cri.ImageSource; package core/kubelet/cri does the rest of a pull.
//
// The modules are built from the C sources next to them by build.sh (clang +
// wasi-libc) and checked in; README.md says what each does and how it was
// built.
//
// A learner can add their own module (Add): it must be a WASI preview1
// command of at most MaxModuleBytes, and it is checked before it is listed.
//
// # How guests serve HTTP
//
// WASI preview1 has no sockets, so a guest cannot listen on a port. The web
// image is served CGI-style: the runtime starts one instance of the
// container's image per request, with the request's method, path and
// headers in the environment (CGI/1.1, RFC 3875) and its body on stdin, and
// reads the response from stdout (cri.Runtime.HTTPHandler). We chose this
// over a long-lived instance with a host-function accept loop because it
// needs no kubetab-specific imports (any WASI language can write a CGI
// program, and the module stays a plain WASI command), because an instance
// per request is cheap for a small C module (~2 ms from a compiled module in
// a tab), and because a request that loops or crashes takes down only
// itself. The cost is that the guest keeps no state in memory between
// requests: web keeps its counter in a file on an emptyDir at /data, so a
// lesson shows that state belongs on a volume.
package images

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

//go:embed */*.wasm
var modules embed.FS

// digestTable is each module's sha256, as sha256sum printed it when
// build.sh built them ("<hex>  hello/hello-1.0.wasm"): New records these
// with cri.KnownDigest rather than hashing the modules again at every
// start (a third of a second of the tab's). TestDigestTable checks it.
//
//go:embed digests.txt
var digestTable string

// knownDigests parses digestTable: file → "sha256:<hex>".
func knownDigests() map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(digestTable, "\n") {
		sum, file, ok := strings.Cut(line, "  ")
		if ok && len(sum) == 64 {
			m[file] = "sha256:" + sum
		}
	}
	return m
}

// userlandFile is the userland every image has in /bin (busybox/busybox.c).
const userlandFile = "busybox/busybox-1.36.1.wasm"

// Applets are the programs of the userland, each a link to /bin/busybox in
// every image, as BusyBox installs itself (busybox --install). The list is
// the C program's own (TestApplets checks).
var Applets = []string{
	"[", "basename", "cat", "cp", "date", "dirname", "echo", "env", "false", "grep", "head",
	"hostname", "id", "kill", "ln", "ls", "mkdir", "mv", "nslookup", "printenv", "ps", "pwd", "rm",
	"rmdir", "seq", "sh", "sleep", "tail", "tar", "test", "touch", "true", "uname", "wc", "wget",
	"which", "whoami",
}

// etcFiles are the users and groups of every image, BusyBox's.
var etcFiles = []cri.File{
	{Path: "/etc/passwd", Data: []byte("root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\n")},
	{Path: "/etc/group", Data: []byte("root:x:0:\ndaemon:x:1:\nwheel:x:10:root\nnobody:x:65534:\n")},
}

// defaultEnv is every image's Env, as Docker images set PATH.
var defaultEnv = []string{"PATH=" + cri.DefaultPath}

// catalog lists every image, one line each: reference, module, what it does,
// and its config. Each image's ":latest" is its 1.0, unless it lists its tags.
var catalog = []struct {
	ref, file, about string
	config           cri.ImageConfig
	modulePath       string   // "" for /usr/local/bin/<name>
	alsoTags         []string // more tags of the same image
}{
	{"hello:1.0", "hello/hello-1.0.wasm", "prints 'Hello from <pod>! (hello:1.0) args: ...', then 'hello: tick N' every second", cri.ImageConfig{}, "", nil},
	{"hello:2.0", "hello/hello-2.0.wasm", "the same program greeting 'Hi again from <pod>!', for rolling updates", cri.ImageConfig{}, "", nil},
	{"web:1.0", "web/web-1.0.wasm", "HTTP, one instance per request (CGI): pod name and IP, a request counter in /data, /healthz that /fail makes fail", cri.ImageConfig{}, "", nil},
	{"crash:1.0", "crash/crash-1.0.wasm", "exits 1 after 5 s (--after=N, --code=N): CrashLoopBackOff", cri.ImageConfig{}, "", nil},
	{"oom:1.0", "oom/oom-1.0.wasm", "allocates 1 MiB every 100 ms until its memory limit kills it (OOMKilled)", cri.ImageConfig{}, "", nil},
	{"cpu:1.0", "cpu/cpu-1.0.wasm", "busy loop that never sleeps, reporting its rate every second: CPU limits, kubectl top", cri.ImageConfig{}, "", nil},
	{"sleep:1.0", "sleep/sleep-1.0.wasm", "waits until stopped (or N seconds, given as an argument)", cri.ImageConfig{}, "", nil},
	{"config:1.0", "config/config-1.0.wasm", "prints its env and the files under /etc/config (or its args), again when they change", cri.ImageConfig{}, "", nil},
	{"job:1.0", "job/job-1.0.wasm", "counts down from 5 (or N) once a second and exits 0 (--fail: 1): Jobs", cri.ImageConfig{}, "", nil},
	{"busybox:1.36.1", userlandFile, "BusyBox-style userland: sh, ls, cat, wget, nslookup ... for debugging pods (default command: sh)",
		cri.ImageConfig{Cmd: []string{"sh"}}, "/bin/busybox", []string{"1.36", "latest"}},
}

// configs are the image configs beyond Entrypoint [name] and PATH.
var configs = map[string]cri.ImageConfig{
	"web": {ExposedPorts: []string{"8080/tcp"}},
}

// MaxModuleBytes is the largest module Add accepts. Every node compiles what
// it runs, and a tab's memory is not a server's: a C guest is ~30 KB, a Go
// one ~2.6 MB.
const MaxModuleBytes = 8 << 20

// Errors of Add.
var (
	// ErrTooLarge is a module above MaxModuleBytes.
	ErrTooLarge = errors.New("images: module too large")
	// ErrBuiltin is an Add that would replace a built-in image.
	ErrBuiltin = errors.New("images: built-in images cannot be replaced")
)

// Entry describes one image of the catalog.
type Entry struct {
	Ref    string // normalized reference: "hello:1.0"
	Digest string // "sha256:..."
	Size   int    // bytes: the program and the userland
	// Config is what runs: Entrypoint, Cmd, Env, WorkingDir, ExposedPorts.
	Config cri.ImageConfig
	About  string // one line for humans
	// Builtin is true for the images that ship with kubetab, false for those
	// a learner added.
	Builtin bool
}

// Catalog is the set of images kubetab ships, plus those a learner added.
// It is safe for concurrent use.
type Catalog struct {
	// builtin is the references that ship with kubetab, userland the
	// userland's module. Written only by New, so they are read without the
	// lock.
	builtin  map[string]bool
	userland []byte

	mu       sync.RWMutex         // guards the fields below
	byRef    map[string]cri.Image // by normalized reference
	byDigest map[string]cri.Image // by digest (Ref is the first tag listed)
	entries  []Entry
}

var _ cri.ImageSource = (*Catalog)(nil)

// New returns the catalog of the embedded images.
func New() *Catalog {
	c := &Catalog{byRef: map[string]cri.Image{}, byDigest: map[string]cri.Image{}, builtin: map[string]bool{}}
	userland, err := modules.ReadFile(userlandFile)
	if err != nil {
		panic(fmt.Sprintf("images: %s is not embedded: %v", userlandFile, err)) // broken build
	}
	c.userland = userland
	known := knownDigests()
	if d, ok := known[userlandFile]; ok {
		cri.KnownDigest(userland, d)
	}
	for _, e := range catalog {
		mod, err := modules.ReadFile(e.file)
		if err != nil {
			panic(fmt.Sprintf("images: %s is listed but not embedded: %v", e.file, err)) // broken build
		}
		if d, ok := known[e.file]; ok {
			cri.KnownDigest(mod, d)
		}
		r, _ := cri.ParseRef(e.ref)
		cfg := e.config
		if cfg.Entrypoint == nil && cfg.Cmd == nil {
			cfg = configs[r.Name]
			cfg.Entrypoint = []string{r.Name}
		}
		cfg.Env = append(append([]string(nil), defaultEnv...), cfg.Env...)
		img := c.image(e.ref, mod, e.modulePath, cfg)
		c.builtin[e.ref] = true
		c.addLocked(e.ref, img, e.about)
		tags := e.alsoTags
		if r.Tag == "1.0" {
			tags = []string{"latest"}
		}
		for _, tag := range tags {
			ref := r.Name + ":" + tag
			c.builtin[ref] = true
			what := fmt.Sprintf("the same image (and digest) as %s", e.ref)
			if tag == "latest" {
				what += fmt.Sprintf("; what plain '%s' means", r.Name)
			}
			c.addLocked(ref, img, what)
		}
	}
	return c
}

// image makes an image of a program: the program at modulePath ("" for
// /usr/local/bin/<name>), the userland in /bin (/bin/busybox and a link per
// applet), /etc/passwd and /etc/group, and cfg.
func (c *Catalog) image(ref string, mod []byte, modulePath string, cfg cri.ImageConfig) cri.Image {
	r, _ := cri.ParseRef(ref)
	if modulePath == "" {
		modulePath = "/usr/local/bin/" + path.Base(r.Name)
	}
	img := cri.Image{Ref: ref, Module: mod, ModulePath: modulePath, Config: cfg}
	if modulePath != "/bin/busybox" {
		img.Files = append(img.Files, cri.File{Path: "/bin/busybox", Mode: 0o755, Data: c.userland})
	}
	for _, a := range Applets {
		if p := "/bin/" + a; p != modulePath {
			img.Files = append(img.Files, cri.File{Path: p, Link: "/bin/busybox"})
		}
	}
	img.Files = append(img.Files, etcFiles...)
	img.Digest = cri.ImageDigest(img)
	return img
}

// addLocked lists an image under a normalized reference, replacing what the
// reference named before. c.mu is held (or c is not shared yet).
func (c *Catalog) addLocked(ref string, img cri.Image, about string) {
	img.Ref = ref
	if old, ok := c.byRef[ref]; ok {
		c.entries = slicesDeleteRef(c.entries, ref)
		if !c.digestListedLocked(old.Digest) {
			delete(c.byDigest, old.Digest)
		}
	}
	c.byRef[ref] = img
	if _, ok := c.byDigest[img.Digest]; !ok {
		c.byDigest[img.Digest] = img
	}
	size := len(img.Module)
	for _, f := range img.Files {
		size += len(f.Data)
	}
	c.entries = append(c.entries, Entry{Ref: ref, Digest: img.Digest, Size: size, Config: img.Config, About: about, Builtin: c.builtin[ref]})
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Ref < c.entries[j].Ref })
}

func (c *Catalog) digestListedLocked(digest string) bool {
	for _, e := range c.entries {
		if e.Digest == digest {
			return true
		}
	}
	return false
}

func slicesDeleteRef(entries []Entry, ref string) []Entry {
	out := entries[:0]
	for _, e := range entries {
		if e.Ref != ref {
			out = append(out, e)
		}
	}
	return out
}

// Add lists a learner's own module as the image name:tag (tag "" means
// "latest"), replacing an image they added before under that reference.
// The module must be a WASI preview1 command (cri.CheckCommand) of at most
// MaxModuleBytes; built-in images cannot be replaced. Errors: ErrTooLarge,
// ErrBuiltin, cri.ErrInvalidReference, cri.ErrInvalidImage, each with a
// message that says what to do. The catalog keeps its own copy of module.
//
// Nodes pull it like any image; a pod that already runs the old module under
// this tag keeps running it, as with a moved tag in a real registry.
func (c *Catalog) Add(name, tag string, module []byte) error {
	ref, err := c.CheckAdd(name, tag, len(module))
	if err != nil {
		return err
	}
	if err := cri.CheckCommand(module); err != nil {
		return fmt.Errorf("images: add %s: %w", ref, err)
	}
	mod := append([]byte(nil), module...)
	r, _ := cri.ParseRef(ref)
	img := c.image(ref, mod, "", cri.ImageConfig{Entrypoint: []string{path.Base(r.Name)}, Env: defaultEnv})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(ref, img, fmt.Sprintf("added by you (%d bytes)", len(mod)))
	return nil
}

// CheckAdd is what Add checks before it reads the module: the reference
// (ErrBuiltin, cri.ErrInvalidReference) and the size (ErrTooLarge), with
// Add's messages. It returns the normalized reference Add would list
// ("myapp:latest"). The browser calls it before copying a learner's file
// into the Go program, so a 1 GB file is refused without 1 GB of memory.
func (c *Catalog) CheckAdd(name, tag string, size int) (ref string, err error) {
	if tag == "" {
		tag = "latest"
	}
	r, err := cri.ParseRef(name + ":" + tag)
	if err != nil || r.Digest != "" || r.Name != name {
		if err == nil {
			err = fmt.Errorf("%w: %q: name and tag only", cri.ErrInvalidReference, name+":"+tag)
		}
		return "", fmt.Errorf("images: add %s:%s: %w", name, tag, err)
	}
	ref = r.String()
	if c.builtin[ref] {
		return "", fmt.Errorf("%w: %s ships with kubetab; pick another name or tag", ErrBuiltin, ref)
	}
	if size > MaxModuleBytes {
		return "", fmt.Errorf("%w: %s is %d bytes, the limit is %d (8 MiB); build with -Os and strip it (wasm-ld --strip-all)", ErrTooLarge, ref, size, MaxModuleBytes)
	}
	return ref, nil
}

// List returns every image of the catalog, sorted by reference.
func (c *Catalog) List() []Entry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]Entry(nil), c.entries...)
}

// Fetch resolves ref ("hello", "hello:2.0", "hello@sha256:...") to its
// module. An unknown name, tag or digest is a *NotFoundError, which wraps
// cri.ErrImageNotFound; a malformed ref wraps cri.ErrInvalidReference.
func (c *Catalog) Fetch(ctx context.Context, ref string) (cri.Image, error) {
	if err := ctx.Err(); err != nil {
		return cri.Image{}, err
	}
	r, err := cri.ParseRef(ref)
	if err != nil {
		return cri.Image{}, err
	}
	norm := r.String()
	c.mu.RLock()
	defer c.mu.RUnlock()
	var img cri.Image
	var ok bool
	if r.Digest != "" {
		// A digest pins content: the tag, if any, must agree with it.
		img, ok = c.byDigest[r.Digest]
		if ok && r.Tag != "" {
			byTag, tagged := c.byRef[r.Name+":"+r.Tag]
			ok = tagged && byTag.Digest == r.Digest
		}
		if ok && c.nameOf(r.Digest, r.Name) {
			img.Ref = norm
			return img, nil
		}
	} else if img, ok = c.byRef[norm]; ok {
		return img, nil
	}
	return cri.Image{}, &NotFoundError{Ref: norm}
}

// nameOf reports whether some tag of repository name has this digest.
// c.mu is held.
func (c *Catalog) nameOf(digest, name string) bool {
	for _, e := range c.entries {
		if e.Digest == digest {
			if r, err := cri.ParseRef(e.Ref); err == nil && r.Name == name {
				return true
			}
		}
	}
	return false
}

// NotFoundError is an image the catalog does not have. Its message is
// containerd's for a tag a registry does not know, which the kubelet puts in
// the pod's ErrImagePull event: Failed to pull image "hello:9.9": <this>.
type NotFoundError struct {
	Ref string // normalized reference
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("failed to pull and unpack image %q: failed to resolve reference %q: %s: not found", e.Ref, e.Ref, e.Ref)
}

// Unwrap makes errors.Is(err, cri.ErrImageNotFound) true.
func (e *NotFoundError) Unwrap() error { return cri.ErrImageNotFound }
