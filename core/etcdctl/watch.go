package etcdctl

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/store"
)

type watchOptions struct {
	prefix, prevKV bool
	rev            int64
}

func (s *session) newWatchCommand() *cobra.Command {
	o := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch [options] [key or prefix] [range_end]",
		Short: "Watches events stream on keys or prefixes",
		Long: `Watches events stream on keys or prefixes, until Ctrl-C.

Each event prints its type (PUT or DELETE), then the key and the value on
lines of their own; a DELETE has no value. With --rev, the watch starts at
that revision and first replays what happened since, as long as the store
has not compacted it: this is how an informer catches up after a relist.`,
		Example: `  etcdctl watch /registry/pods --prefix
  etcdctl watch /registry/deployments/default/web --rev 1 --prev-kv`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.watch(o, args) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.prefix, "prefix", false, "Watch on a prefix if prefix is set")
	f.Int64Var(&o.rev, "rev", 0, "Revision to start watching")
	f.BoolVar(&o.prevKV, "prev-kv", false, "get the previous key-value pair before the event happens")
	return cmd
}

// watch is watchCommandFunc, getWatchChan and printWatchCh of etcdctl.
func (s *session) watch(o *watchOptions, args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fail(ExitBadArgs, "bad number of arguments")
	}
	if err := s.checkOutput("simple", "json"); err != nil {
		return err
	}
	key, end := args[0], ""
	if len(args) == 2 {
		if o.prefix {
			return fail(ExitBadArgs, "`range_end` and `--prefix` are mutually exclusive")
		}
		end = args[1]
	}
	if o.prefix {
		end = store.PrefixEnd(key)
	}

	// etcd's --rev N means "events from revision N on"; the store's watch
	// takes "after revision N-1". Revision 1 is the empty store's, which no
	// write ever has, so "from 1" is "after 1".
	after := int64(0)
	if o.rev > 0 {
		after = max(o.rev-1, 1)
	}
	w, err := s.store.WatchRange(s.ctx, key, end, after)
	if errors.Is(err, store.ErrFuture) {
		// etcd waits for a future start revision; so do we, by watching
		// from now and skipping what comes before it.
		w, err = s.store.WatchRange(s.ctx, key, end, 0)
	}
	if err != nil {
		return s.watchCanceled(err)
	}
	defer w.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return nil // Ctrl-C
		case ev, ok := <-w.ResultChan():
			if !ok {
				if s.ctx.Err() != nil || w.Err() == nil {
					return nil
				}
				return s.watchCanceled(w.Err())
			}
			if ev.Type == store.Progress || ev.Revision() < o.rev {
				continue
			}
			if err := s.printEvent(ev, o.prevKV); err != nil {
				return err
			}
		}
	}
}

// watchCanceled prints what etcdctl prints when the server cancels a watch
// (a compacted start revision, or a watcher dropped for being too slow).
func (s *session) watchCanceled(err error) error {
	fmt.Fprintf(s.streams.ErrOut, "watch was canceled (%v)\n", rpcError(err))
	return fail(ExitInterrupted, "watch is canceled by the server")
}

func (s *session) printEvent(ev store.Event, withPrev bool) error {
	kv := ev.KV
	if ev.Type == store.Delete {
		kv.Value = nil // etcd's delete event holds the key, not the value
		kv.CreateRevision, kv.Version = 0, 0
	}
	if s.writeOut == "json" {
		e := &eventJSON{KV: kvJSON(kv)}
		if ev.Type == store.Delete {
			e.Type = 1
		}
		if withPrev && ev.PrevKV != nil {
			e.PrevKV = kvJSON(*ev.PrevKV)
		}
		return printJSON(s.streams.Out, watchResponseJSON{Header: headerJSON{Revision: ev.Revision()}, Events: []*eventJSON{e}})
	}
	fmt.Fprintln(s.streams.Out, ev.Type)
	if withPrev && ev.PrevKV != nil {
		printKV(s.streams.Out, false, ev.PrevKV.Key, ev.PrevKV.Value)
	}
	printKV(s.streams.Out, false, kv.Key, kv.Value)
	return nil
}
