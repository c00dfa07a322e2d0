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
// wasi-libc) and checked in; each image folder's README.md says how.
package images

import (
	"context"
	"embed"
	"fmt"
	"sort"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

//go:embed hello/hello-1.0.wasm hello/hello-2.0.wasm
var modules embed.FS

// catalog lists every image, one line each: reference, module, what it does.
var catalog = []struct{ ref, file, about string }{
	{"hello:1.0", "hello/hello-1.0.wasm", "prints 'Hello from <pod>! (hello:1.0) args: ...', then 'hello: tick N' every second"},
	{"hello:2.0", "hello/hello-2.0.wasm", "the same program greeting 'Hi again from <pod>!', for rolling updates"},
	{"hello:latest", "hello/hello-1.0.wasm", "the same module (and digest) as hello:1.0; what plain 'hello' means"},
}

// Entry describes one image of the catalog.
type Entry struct {
	Ref    string // normalized reference: "hello:1.0"
	Digest string // "sha256:..."
	Size   int    // bytes
	About  string // one line for humans
}

// Catalog is the set of images kubetab ships. It is read-only and safe for
// concurrent use.
type Catalog struct {
	byRef    map[string]cri.Image // by normalized reference
	byDigest map[string]cri.Image // by digest (Ref is the first tag listed)
	entries  []Entry
}

var _ cri.ImageSource = (*Catalog)(nil)

// New returns the catalog of the embedded images.
func New() *Catalog {
	c := &Catalog{byRef: map[string]cri.Image{}, byDigest: map[string]cri.Image{}}
	for _, e := range catalog {
		mod, err := modules.ReadFile(e.file)
		if err != nil {
			panic(fmt.Sprintf("images: %s is listed but not embedded: %v", e.file, err)) // broken build
		}
		img := cri.Image{Ref: e.ref, Digest: cri.Digest(mod), Module: mod}
		c.byRef[e.ref] = img
		if _, ok := c.byDigest[img.Digest]; !ok {
			c.byDigest[img.Digest] = img
		}
		c.entries = append(c.entries, Entry{Ref: e.ref, Digest: img.Digest, Size: len(mod), About: e.about})
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].Ref < c.entries[j].Ref })
	return c
}

// List returns every image of the catalog, sorted by reference.
func (c *Catalog) List() []Entry {
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
