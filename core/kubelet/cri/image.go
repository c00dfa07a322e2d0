package cri

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unsafe"
	"weak"
)

// Errors about images.
var (
	// ErrImageNotFound is what an ImageSource returns (wrapped, with upstream's
	// wording) for a reference it does not have; the kubelet turns it into
	// ErrImagePull and then ImagePullBackOff.
	ErrImageNotFound = errors.New("cri: image not found")
	// ErrInvalidReference is a reference that is not an image name
	// (the kubelet's InvalidImageName). Docker's wording.
	ErrInvalidReference = errors.New("cri: invalid reference format")
	// ErrInvalidImage is a module that is not a runnable WASI command.
	ErrInvalidImage = errors.New("cri: image is not a runnable WASI command")
	// ErrImageNotPresent is a CreateContainer for an image this node has not
	// pulled. The kubelet always pulls (or checks ImageStatus) first.
	ErrImageNotPresent = errors.New("cri: image not present on this node")
)

// ImageSource resolves an image reference to the module's bytes: the
// registry. Package wasm/images is the one kubetab ships (every image embedded
// in the binary).
//
// Fetch gets a normalized reference ("hello:latest", "hello@sha256:...", see
// NormalizeRef). An unknown name or tag is an error wrapping ErrImageNotFound.
type ImageSource interface {
	Fetch(ctx context.Context, ref string) (Image, error)
}

// Image is one image as the registry serves it: a program (Module), the
// other files of its file system, and its config.
type Image struct {
	// Ref is the normalized reference it was fetched by: "hello:1.0".
	Ref string
	// Digest is the image's identity, ImageDigest of the rest: for a plain
	// module (no Config, no Files) the sha256 of Module, otherwise of its
	// manifest. Two tags with the same content have the same digest.
	Digest string
	// Module is the image's own program, a WebAssembly binary, placed at
	// ModulePath. Callers must not modify it.
	Module []byte
	// ModulePath is where Module is in the container's file system; ""
	// means /usr/local/bin/<name>.
	ModulePath string
	// Files are the image's other files (its userland: /bin/sh, /bin/ls ...).
	// Callers must not modify them.
	Files []File
	// Config is what runs and how, as an OCI image config says it; a zero
	// Config runs the program by its name: Entrypoint [<name>].
	Config ImageConfig
}

// ImageConfig is an OCI image's config (the part a runtime uses): upstream's
// "config" object of application/vnd.oci.image.config.v1+json, which
// `docker inspect` shows.
type ImageConfig struct {
	// Entrypoint and Cmd make the process's argv, Entrypoint+Cmd; a pod's
	// command replaces Entrypoint (and drops Cmd), its args replace Cmd.
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	// Env is "NAME=value" entries, under the container's own env.
	Env []string `json:"Env,omitempty"`
	// WorkingDir is the process's directory unless the pod sets workingDir.
	WorkingDir string `json:"WorkingDir,omitempty"`
	// ExposedPorts are the ports the program listens on: "8080/tcp".
	ExposedPorts []string `json:"ExposedPorts,omitempty"`
}

func (c ImageConfig) isZero() bool {
	return c.Entrypoint == nil && c.Cmd == nil && c.Env == nil && c.WorkingDir == "" && c.ExposedPorts == nil
}

// Digest returns the content digest of a module, in the "sha256:<hex>" form
// that Image.Digest and ImageStatus.ID use.
func Digest(module []byte) string {
	sum := sha256.Sum256(module)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// An image's contents are immutable (Image and File say callers must not
// modify them), so their digests are worked out once per content and kept
// by its identity (a weak pointer to the allocation it is in, which does
// not keep it alive, with its address and length in it): a pull checks the image's digest, and SHA-256
// under js/wasm runs at a few MB/s, so hashing every program and the
// userland again at each pull and at each start made the tab wait.
var contentDigests sync.Map // contentKey → "sha256:..."

type contentKey struct {
	obj  weak.Pointer[byte] // equal for any two pointers into one allocation
	addr uintptr            // so the offset too (Go's heap does not move)
	n    int
}

func keyOf(data []byte) contentKey {
	return contentKey{weak.Make(&data[0]), uintptr(unsafe.Pointer(&data[0])), len(data)}
}

// contentDigest is Digest(data) for an image's immutable content.
func contentDigest(data []byte) string {
	if len(data) == 0 {
		return Digest(data)
	}
	k := keyOf(data)
	if d, ok := contentDigests.Load(k); ok {
		return d.(string)
	}
	d := Digest(data)
	contentDigests.Store(k, d)
	return d
}

// KnownDigest records digest ("sha256:<hex>") as Digest(data) for an
// image's content whose digest was worked out ahead: the built-in images'
// table, written when they were built (wasm/images, whose tests check it
// against the content). data must never change.
func KnownDigest(data []byte, digest string) {
	if len(data) > 0 {
		contentDigests.Store(keyOf(data), digest)
	}
}

// ImageDigest is the digest an Image must carry: Digest(Module) for a plain
// module, or the digest of a manifest naming the config, the program and
// every file by its own digest, as an OCI manifest names its config and
// layers.
func ImageDigest(img Image) string {
	if img.Config.isZero() && len(img.Files) == 0 && img.ModulePath == "" {
		return contentDigest(img.Module)
	}
	type entry struct {
		Path   string `json:"path"`
		Mode   uint32 `json:"mode"`
		Digest string `json:"digest"`
	}
	type link struct {
		Path string `json:"path"`
		Link string `json:"link"`
	}
	files := []entry{{Path: img.ModulePath, Mode: 0o755, Digest: contentDigest(img.Module)}}
	var links []link
	for _, f := range img.Files {
		if f.Link != "" {
			links = append(links, link{f.Path, f.Link})
			continue
		}
		d := f.digest
		if d == "" {
			d = contentDigest(f.Data)
		}
		files = append(files, entry{Path: f.Path, Mode: uint32(f.Mode.Perm()), Digest: d})
	}
	b, _ := json.Marshal(struct {
		Config ImageConfig `json:"config"`
		Files  []entry     `json:"files"`
		Links  []link      `json:"links,omitempty"`
	}{img.Config, files, links}) // plain structs of strings: Marshal cannot fail
	return Digest(b)
}

// ImageStatus is one image on a node: upstream's Image message.
type ImageStatus struct {
	// ID is the image's digest, "sha256:...".
	ID string
	// RepoTags are the references this node pulled it by, sorted:
	// ["hello:1.0", "hello:latest"].
	RepoTags []string
	// RepoDigests are name@digest references: ["hello@sha256:..."].
	RepoDigests []string
	// Size is the image's size in bytes: its program and files.
	Size uint64
	// Config is the image's config, with the defaults filled in.
	Config ImageConfig
}

// Reference grammar, a subset of the distribution project's
// (github.com/distribution/reference, regexp.go): lowercase path components
// separated by "/", an optional ":tag" and an optional "@sha256:<64 hex>".
// Written by hand because that package would be the only user of its
// dependency tree here; it is three regular expressions.
var (
	refNameRE   = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$`)
	refTagRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	refDigestRE = regexp.MustCompile(`^sha256:[a-f0-9]{64}$`)
)

// Reference is a parsed image reference.
type Reference struct {
	Name   string // "hello"
	Tag    string // "1.0"; "latest" when neither tag nor digest was given
	Digest string // "sha256:..." or ""
}

// String is the normalized form: "hello:1.0", "hello@sha256:...",
// or "hello:1.0@sha256:..." when both were given.
func (r Reference) String() string {
	s := r.Name
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// ParseRef parses an image reference the way a container runtime does:
// "hello" means "hello:latest". A bad reference wraps ErrInvalidReference.
func ParseRef(ref string) (Reference, error) {
	bad := func(why string) (Reference, error) {
		return Reference{}, fmt.Errorf("%w: %q: %s", ErrInvalidReference, ref, why)
	}
	if ref == "" {
		return bad("empty")
	}
	var r Reference
	rest := ref
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		r.Digest = rest[i+1:]
		rest = rest[:i]
		if !refDigestRE.MatchString(r.Digest) {
			return bad("digest must be sha256: and 64 lowercase hex digits")
		}
	}
	// A ':' after the last '/' starts the tag (one before it would be a
	// registry port, which no ImageSource here uses but the grammar allows).
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && i > strings.LastIndexByte(rest, '/') {
		r.Tag = rest[i+1:]
		rest = rest[:i]
		if !refTagRE.MatchString(r.Tag) {
			return bad("bad tag")
		}
	}
	r.Name = rest
	if !refNameRE.MatchString(r.Name) {
		return bad("name must be lowercase letters, digits and separators")
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	return r, nil
}

// NormalizeRef returns ParseRef(ref).String(): "hello" → "hello:latest".
func NormalizeRef(ref string) (string, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return "", err
	}
	return r.String(), nil
}

// nodeImage is one pulled image in a node's image list.
type nodeImage struct {
	status ImageStatus
	module *cachedModule // the image's program, compiled
	files  []File        // every file of the image, the program included

	layerOnce sync.Once
	layer     *imageLayer // files laid out (rootfs.go), on the first container's creation
}

// rootFS returns a new root for a container of the image.
func (ni *nodeImage) rootFS(files []File, mounts []Mount) *MemDir {
	ni.layerOnce.Do(func() { ni.layer = newImageLayer(ni.files) })
	return ni.layer.rootFS(files, mounts)
}

// PullImage makes an image present on this node: it resolves ref through the
// ImageSource (every call, so a moved tag is seen, as with imagePullPolicy:
// Always), compiles the module unless the process already has it (see
// CompileCache), and records it in the node's image list under ref.
//
// Errors: ErrInvalidReference, the ImageSource's error (wrapping
// ErrImageNotFound for an unknown image), or ErrInvalidImage.
func (r *Runtime) PullImage(ctx context.Context, ref string) (ImageStatus, error) {
	parsed, err := ParseRef(ref)
	if err != nil {
		return ImageStatus{}, err
	}
	norm := parsed.String()
	img, err := r.source.Fetch(ctx, norm)
	if err != nil {
		return ImageStatus{}, err
	}
	// The node holds that digest already (the tag did not move, as on
	// most pulls under imagePullPolicy Always): like containerd, whose
	// content store has every blob, nothing is fetched, checked or
	// unpacked again; the tag is recorded on the image it names.
	r.mu.Lock()
	if ni := r.images[img.Digest]; ni != nil {
		defer r.mu.Unlock()
		return r.tagLocked(ni, parsed, norm, img.Digest), nil
	}
	r.mu.Unlock()
	// Content addressing: what the registry sent must hash to the digest
	// it named, or the image is not what the pod asked for.
	if got := ImageDigest(img); got != img.Digest {
		return ImageStatus{}, fmt.Errorf("cri: image %q: digest mismatch: registry says %s, content is %s", img.Ref, img.Digest, got)
	}
	mod, err := r.cache.compile(ctx, img.Ref, img.Module)
	if err != nil {
		return ImageStatus{}, fmt.Errorf("failed to pull and unpack image %q: %w", norm, err)
	}
	cfg, files := img.Config, img.Files
	modulePath := img.ModulePath
	if modulePath == "" {
		modulePath = "/usr/local/bin/" + path.Base(parsed.Name)
	}
	if cfg.isZero() {
		cfg.Entrypoint = []string{path.Base(parsed.Name)}
	}
	all := append([]File{{Path: modulePath, Mode: 0o755, Data: img.Module}}, files...)
	size := 0
	seen := map[string]bool{}
	for _, f := range all {
		switch {
		case !path.IsAbs(f.Path) || path.Clean(f.Path) != f.Path || f.Path == "/":
			return ImageStatus{}, fmt.Errorf("%w: %s: file path %q must be a clean absolute path", ErrInvalidImage, norm, f.Path)
		case f.Link != "" && !seen[f.Link]:
			return ImageStatus{}, fmt.Errorf("%w: %s: %s links to %q, which is not an earlier file of the image", ErrInvalidImage, norm, f.Path, f.Link)
		}
		seen[f.Path] = true
		if f.Link == "" {
			size += len(f.Data)
		}
	}
	// Each program's digest once per pull, not at every container's start.
	for i := range all {
		if all[i].Link == "" && all[i].digest == "" && strings.HasPrefix(string(all[i].Data[:min(len(all[i].Data), 4)]), "\x00asm") {
			all[i].digest = contentDigest(all[i].Data)
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	ni := r.images[img.Digest]
	if ni == nil {
		ni = &nodeImage{
			status: ImageStatus{
				ID:          img.Digest,
				RepoDigests: []string{parsed.Name + "@" + img.Digest},
				Size:        uint64(size),
				Config:      cfg,
			},
			module: mod,
			files:  all,
		}
		r.images[img.Digest] = ni
	}
	return r.tagLocked(ni, parsed, norm, img.Digest), nil
}

// tagLocked records that ref (normalized: norm) names the pulled image ni
// of digest and returns ni's status. r.mu is held.
func (r *Runtime) tagLocked(ni *nodeImage, parsed Reference, norm, digest string) ImageStatus {
	if parsed.Digest == "" { // pulled by tag: the tag now names this image
		// A tag names one image: if it pointed at another digest before
		// (the tag moved in the registry), take it off the old one, as
		// containerd does.
		if old, ok := r.tags[norm]; ok && old != digest {
			if oi := r.images[old]; oi != nil {
				oi.status.RepoTags = slices.DeleteFunc(oi.status.RepoTags, func(t string) bool { return t == norm })
			}
		}
		if !slices.Contains(ni.status.RepoTags, norm) {
			ni.status.RepoTags = append(ni.status.RepoTags, norm)
			sort.Strings(ni.status.RepoTags)
		}
		r.tags[norm] = digest
	}
	if d := parsed.Name + "@" + digest; !slices.Contains(ni.status.RepoDigests, d) {
		ni.status.RepoDigests = append(ni.status.RepoDigests, d)
		sort.Strings(ni.status.RepoDigests)
	}
	return ni.status.clone()
}

// ImageStatus reports whether the image ref is present on this node. ref may
// be a reference ("hello", "hello:1.0", "hello@sha256:...") or an image ID
// ("sha256:..."). An invalid reference is simply not present.
func (r *Runtime) ImageStatus(ref string) (ImageStatus, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ni := r.lookupImageLocked(ref)
	if ni == nil {
		return ImageStatus{}, false
	}
	return ni.status.clone(), true
}

// lookupImageLocked finds a pulled image by reference or ID. r.mu is held.
func (r *Runtime) lookupImageLocked(ref string) *nodeImage {
	if refDigestRE.MatchString(ref) {
		return r.images[ref]
	}
	parsed, err := ParseRef(ref)
	if err != nil {
		return nil
	}
	if parsed.Digest != "" {
		ni := r.images[parsed.Digest]
		if ni == nil || !slices.Contains(ni.status.RepoDigests, parsed.Name+"@"+parsed.Digest) {
			return nil
		}
		return ni
	}
	return r.images[r.tags[parsed.String()]]
}

// ListImages lists the images on this node, sorted by ID.
func (r *Runtime) ListImages() []ImageStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]ImageStatus, 0, len(r.images))
	for _, ni := range r.images {
		out = append(out, ni.status.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// RemoveImage removes an image (all its tags) from this node's list, as the
// kubelet's image garbage collector does. Containers already created from it
// keep running. Removing an image that is not present is not an error
// (the CRI asks for RemoveImage to be idempotent). The compiled module stays
// in the process-wide CompileCache for other nodes.
func (r *Runtime) RemoveImage(ref string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ni := r.lookupImageLocked(ref)
	if ni == nil {
		return
	}
	delete(r.images, ni.status.ID)
	for tag, d := range r.tags {
		if d == ni.status.ID {
			delete(r.tags, tag)
		}
	}
}

func (s ImageStatus) clone() ImageStatus {
	s.RepoTags = append([]string(nil), s.RepoTags...)
	s.RepoDigests = append([]string(nil), s.RepoDigests...)
	s.Config.Entrypoint = append([]string(nil), s.Config.Entrypoint...)
	s.Config.Cmd = append([]string(nil), s.Config.Cmd...)
	s.Config.Env = append([]string(nil), s.Config.Env...)
	s.Config.ExposedPorts = append([]string(nil), s.Config.ExposedPorts...)
	return s
}
