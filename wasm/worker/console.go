//go:build js && wasm

package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hack-pad/safejs"

	"github.com/kubetab/kubetab/core/console"
)

// consoleDoor is the console's other calls besides running a line:
//
//	context.binding.tabComplete(id, before)
//	    Tab: completes the last word of before (the text up to the cursor)
//	    with console.Shell.Tab, which asks the live cluster as kubectl's
//	    bash completion does; answered by kubetabHost.tab(id, json
//	    {word, insert, candidates}).
//	context.binding.setLang(code)
//	    the page's language ("en" or "ja"): help and kubetab's own commands
//	    speak it from the next line on.
//	context.binding.dumpFiles() → json [{name, content}]
//	    the console's files, for the page to keep across a reload (it puts
//	    them back with putFiles).
type consoleDoor struct {
	h     *host
	shell *console.Shell
	files *console.Files
}

// tabTimeout bounds one Tab: a completion lists objects in-process, a few
// milliseconds; a stuck one must not leave the terminal waiting.
const tabTimeout = 5 * time.Second

func (d *consoleDoor) tab(args []safejs.Value) any {
	if len(args) < 2 {
		panic(fmt.Sprintf("tabComplete(id, before) called with %d arguments", len(args)))
	}
	id, err := args[0].Int()
	if err != nil {
		panic(fmt.Sprintf("tabComplete: id: %v", err))
	}
	before, err := args[1].String()
	if err != nil {
		panic(fmt.Sprintf("tabComplete: before: %v", err))
	}
	go func() {
		res := console.TabResult{}
		defer func() {
			b, _ := json.Marshal(res)
			d.h.call("tab", id, string(b))
		}()
		defer d.h.recoverTo("tab completion")
		ctx, cancel := context.WithTimeout(context.Background(), tabTimeout)
		defer cancel()
		res = d.shell.Tab(ctx, before)
	}()
	return nil
}

func (d *consoleDoor) setLang(args []safejs.Value) any {
	if len(args) > 0 {
		if l, err := args[0].String(); err == nil {
			d.shell.SetLang(l)
		}
	}
	return nil
}

func (d *consoleDoor) dumpFiles(args []safejs.Value) any {
	var out []fileJSON
	for _, name := range d.files.List() {
		data, err := d.files.ReadFile(name)
		if err != nil {
			continue
		}
		out = append(out, fileJSON{Name: name, Content: string(data)})
	}
	b, _ := json.Marshal(out)
	return string(b)
}
