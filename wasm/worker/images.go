//go:build js && wasm

package worker

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/wasm/images"
)

// Images is the image registry as the page sees it (package images' Catalog):
// the list the page shows, and a learner's own module added to it.
type Images interface {
	List() []images.Entry
	CheckAdd(name, tag string, size int) (ref string, err error)
	Add(name, tag string, module []byte) error
}

var _ Images = (*images.Catalog)(nil)

// imageDoor serves the page's image messages (site/src/worker.js):
//
//	context.binding.listImages() → JSON [{ref, digest, size, about, builtin}]
//	context.binding.addImage(id, name, tag, u8)
//	    returns at once; then kubetabHost.imageAdded(id, ref) or
//	    kubetabHost.imageError(id, message), the message being the Go error's
//	    text (images.ErrTooLarge, ErrBuiltin, cri.ErrInvalidReference,
//	    cri.ErrInvalidImage).
type imageDoor struct {
	h      *host
	images Images
}

// imageJSON is one catalog entry as the page gets it.
type imageJSON struct {
	Ref     string `json:"ref"`
	Digest  string `json:"digest"`
	Size    int    `json:"size"`
	About   string `json:"about"`
	Builtin bool   `json:"builtin"`
}

func (d *imageDoor) list([]safejs.Value) any {
	entries := d.images.List()
	out := make([]imageJSON, len(entries))
	for i, e := range entries {
		out[i] = imageJSON{Ref: e.Ref, Digest: e.Digest, Size: e.Size, About: e.About, Builtin: e.Builtin}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic(fmt.Sprintf("listImages: %v", err)) // plain strings, ints and bools always encode
	}
	return string(b)
}

// add is addImage(id, name, tag, u8). The reference and the size are checked
// before the bytes are copied into Go, so an oversized file costs nothing;
// the module itself is checked (and listed) in a goroutine, as a JS callback
// must not block.
func (d *imageDoor) add(args []safejs.Value) any {
	if len(args) < 4 {
		panic(fmt.Sprintf("addImage(id, name, tag, u8) called with %d arguments", len(args)))
	}
	id, err := args[0].Int()
	if err != nil {
		panic(fmt.Sprintf("addImage: id: %v", err))
	}
	name, err := args[1].String()
	if err != nil {
		panic(fmt.Sprintf("addImage: name: %v", err))
	}
	tag, err := args[2].String()
	if err != nil {
		panic(fmt.Sprintf("addImage: tag: %v", err))
	}
	size, err := args[3].Length()
	if err != nil {
		panic(fmt.Sprintf("addImage: module: %v", err))
	}
	ref, err := d.images.CheckAdd(name, tag, size)
	if err != nil {
		d.h.call("imageError", id, err.Error())
		return nil
	}
	module := make([]byte, size)
	if _, err := safejs.CopyBytesToGo(module, args[3]); err != nil {
		panic(fmt.Sprintf("addImage: module is not a Uint8Array: %v", err))
	}
	go func() {
		defer func() {
			if v := recover(); v != nil {
				d.h.reportPanic("addImage "+ref, v, debug.Stack())
				d.h.call("imageError", id, fmt.Sprintf("internal error: %v", v))
			}
		}()
		if err := d.images.Add(name, tag, module); err != nil {
			d.h.call("imageError", id, err.Error())
			return
		}
		d.h.call("imageAdded", id, ref)
	}()
	return nil
}

// RestoreImages adds to the registry the learner's images worker.js found
// saved in IndexedDB (globalThis.kubetabSavedImages = [{name, tag, module:
// Uint8Array}], each module already checked against its content digest),
// so that the saved cluster's pods pull them again after a reload. Call it
// before the session starts. It returns what it could not add (an image
// the catalog now refuses), each error naming the image; the rest are
// added.
func RestoreImages(cat Images) []error {
	v, err := safejs.Global().Get("kubetabSavedImages")
	if err != nil || v.IsUndefined() || v.IsNull() {
		return nil
	}
	n, err := v.Length()
	if err != nil {
		return []error{fmt.Errorf("the saved images are not a list: %v", err)}
	}
	var errs []error
	for i := 0; i < n; i++ {
		e, err := v.Index(i)
		if err != nil {
			continue
		}
		name, tag := jsString(e, "name"), jsString(e, "tag")
		m, err := e.Get("module")
		if err != nil {
			errs = append(errs, fmt.Errorf("saved image %s:%s has no module", name, tag))
			continue
		}
		size, err := m.Length()
		if err != nil {
			errs = append(errs, fmt.Errorf("saved image %s:%s: the module is not bytes", name, tag))
			continue
		}
		if _, err := cat.CheckAdd(name, tag, size); err != nil {
			errs = append(errs, fmt.Errorf("saved image %s:%s: %w", name, tag, err))
			continue
		}
		module := make([]byte, size)
		if _, err := safejs.CopyBytesToGo(module, m); err != nil {
			errs = append(errs, fmt.Errorf("saved image %s:%s: the module is not bytes", name, tag))
			continue
		}
		if err := cat.Add(name, tag, module); err != nil {
			errs = append(errs, fmt.Errorf("saved image %s:%s: %w", name, tag, err))
		}
	}
	return errs
}

// jsString is v[key] as a string ("" when it is not one).
func jsString(v safejs.Value, key string) string {
	s, err := v.Get(key)
	if err != nil || s.Type() != safejs.TypeString {
		return ""
	}
	out, _ := s.String()
	return out
}
