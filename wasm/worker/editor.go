//go:build js && wasm

package worker

import (
	"context"
	"encoding/json"
	"io/fs"
	"sync"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/core/console"
	"github.com/kubetab/kubetab/core/kubectl"
)

// The editor's door (site/src/views/editor):
//
//	context.binding.listFiles(id)         → kubetabHost.fileList(id, json [{name, size}])
//	context.binding.readFile(id, name)    → kubetabHost.fileRead(id, content, error)
//	context.binding.removeFile(id, name)  → kubetabHost.fileRemoved(id, error)
//	    the console's working directory (console.Files), which the
//	    editor's tabs show; writes go through putFiles (lessons.go).
//	kubetabHost.openEditor(id, name, content) / context.binding.editDone(id, saved, content)
//	    kubectl edit's editor: Edit posts the file to the page and waits
//	    until the learner saves (saved true, the new content) or cancels
//	    (saved false: quitting without saving, the content unchanged).
//	    kubetabHost.closeEditor(id) tells the page that kubectl edit is gone
//	    (Ctrl-C in the console).

// editors is the worker's kubectl edit door; Serve connects it to the page.
var editors = &editorDoor{waiting: map[int]chan editReply{}}

type editReply struct {
	saved   bool
	content []byte
}

type editorDoor struct {
	mu      sync.Mutex // guards h, next and waiting
	h       *host
	next    int
	waiting map[int]chan editReply
}

// Edit is kubectl.EditFunc over the page's Editor tab: session.Config's
// Editor in the browser. Before Serve (no page yet) there is no editor.
func Edit(ctx context.Context, name string, content []byte) ([]byte, error) {
	return editors.edit(ctx, name, content)
}

var _ kubectl.EditFunc = Edit

func (d *editorDoor) edit(ctx context.Context, name string, content []byte) ([]byte, error) {
	d.mu.Lock()
	h := d.h
	if h == nil {
		d.mu.Unlock()
		return nil, kubectl.ErrNoEditor
	}
	d.next++
	id := d.next
	ch := make(chan editReply, 1)
	d.waiting[id] = ch
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.waiting, id)
		d.mu.Unlock()
	}()
	h.call("openEditor", id, name, string(content))
	select {
	case r := <-ch:
		if !r.saved {
			return content, nil
		}
		return r.content, nil
	case <-ctx.Done():
		h.call("closeEditor", id)
		return nil, ctx.Err()
	}
}

// done is editDone(id, saved, content).
func (d *editorDoor) done(args []safejs.Value) any {
	id := idArg(args, "editDone")
	saved := false
	if len(args) > 1 {
		saved, _ = args[1].Truthy()
	}
	var content string
	if saved && len(args) > 2 {
		content, _ = args[2].String()
	}
	d.mu.Lock()
	ch := d.waiting[id]
	d.mu.Unlock()
	if ch != nil {
		select {
		case ch <- editReply{saved: saved, content: []byte(content)}:
		default: // answered twice; the first answer counts
		}
	}
	return nil
}

// filesDoor is the page's view of the console's files.
type filesDoor struct {
	h     *host
	files *console.Files
}

type fileInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

func (d *filesDoor) list(args []safejs.Value) any {
	id := idArg(args, "listFiles")
	out := []fileInfo{}
	for _, name := range d.files.List() {
		if st, err := d.files.Stat(name); err == nil && !st.IsDir() {
			out = append(out, fileInfo{Name: name, Size: st.Size()})
		}
	}
	b, _ := json.Marshal(out)
	d.h.call("fileList", id, string(b))
	return nil
}

func (d *filesDoor) read(args []safejs.Value) any {
	id := idArg(args, "readFile")
	var name string
	if len(args) > 1 {
		name, _ = args[1].String()
	}
	data, err := d.files.ReadFile(name)
	msg := ""
	if err != nil {
		msg = fileError(err)
	}
	d.h.call("fileRead", id, string(data), msg)
	return nil
}

func (d *filesDoor) remove(args []safejs.Value) any {
	id := idArg(args, "removeFile")
	var name string
	if len(args) > 1 {
		name, _ = args[1].String()
	}
	msg := ""
	if err := d.files.Remove(name); err != nil {
		msg = fileError(err)
	}
	d.h.call("fileRemoved", id, msg)
	return nil
}

// fileError is an error as the console prints it: "web.yaml: No such
// file or directory".
func fileError(err error) string {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Path + ": " + console.ErrorText(err)
	}
	return console.ErrorText(err)
}
