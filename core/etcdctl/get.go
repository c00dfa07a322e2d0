package etcdctl

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kubetab/kubetab/core/store"
)

// getOptions are get's flags.
type getOptions struct {
	prefix, fromKey, keysOnly, valueOnly bool
	decode                               bool // kubetab's --decode
	rev, limit                           int64
}

func (s *session) newGetCommand() *cobra.Command {
	o := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get [options] <key> [range_end]",
		Short: "Gets the key or a range of keys",
		Long: `Gets the key or a range of keys.

With --rev, reads the keys as they were at that revision, as long as the
store has not compacted it. Each object's metadata.resourceVersion is the
mod revision of its key.`,
		Example: `  etcdctl get /registry/pods --prefix --keys-only
  etcdctl get /registry/pods/default/web-1 -w json
  etcdctl get /registry/pods/default/web-1 --rev 42

  # kubetab only: the value decoded from protobuf to the object's YAML
  etcdctl get /registry/deployments/default/web --decode`,
		RunE: func(cmd *cobra.Command, args []string) error { return s.get(o, args) },
	}
	f := cmd.Flags()
	f.BoolVar(&o.prefix, "prefix", false, "Get keys with matching prefix")
	f.BoolVar(&o.fromKey, "from-key", false, "Get keys that are greater than or equal to the given key using byte compare")
	f.Int64Var(&o.rev, "rev", 0, "Specify the kv revision")
	f.BoolVar(&o.keysOnly, "keys-only", false, "Get only the keys")
	f.BoolVar(&o.valueOnly, "print-value-only", false, `Only write values when using the "simple" output format`)
	f.Int64Var(&o.limit, "limit", 0, "Maximum number of results")
	f.BoolVar(&o.decode, "decode", false, decodeUsage)
	return cmd
}

// get is getCommandFunc and getGetOp of etcdctl, in their order of checks.
func (s *session) get(o *getOptions, args []string) error {
	if len(args) == 0 {
		return fail(ExitBadArgs, "get command needs one argument as key and an optional argument as range_end")
	}
	if o.prefix && o.fromKey {
		return fail(ExitBadArgs, "`--prefix` and `--from-key` cannot be set at the same time, choose one")
	}
	if err := s.checkOutput("simple", "json"); err != nil {
		return err
	}
	key, end := args[0], ""
	if len(args) > 1 {
		if o.prefix || o.fromKey {
			return fail(ExitBadArgs, "too many arguments, only accept one argument when `--prefix` or `--from-key` is set")
		}
		end = args[1]
	}
	switch {
	case o.prefix && key == "", o.fromKey:
		// etcdctl asks for everything from "\x00" (or from the key) on.
		if key == "" {
			key = "\x00"
		}
		end = "\x00"
	case o.prefix:
		end = store.PrefixEnd(key)
	}
	if key == "" {
		return fail(ExitError, "%v", rpcError(store.ErrEmptyKey))
	}

	kvs, rev, err := s.store.Range(key, end, o.rev)
	if err != nil {
		return fail(ExitError, "%v", rpcError(err))
	}
	if o.valueOnly && s.writeOut != "simple" {
		return fail(ExitBadArgs, "print-value-only is only for `--write-out=simple`")
	}
	if err := s.checkDecode(o.decode, o.keysOnly); err != nil {
		return err
	}
	count := int64(len(kvs))
	more := false
	if o.limit > 0 && count > o.limit {
		kvs, more = kvs[:o.limit], true
	}
	if o.keysOnly {
		for i := range kvs {
			kvs[i].Value = nil
		}
	}
	if s.writeOut == "json" {
		return printJSON(s.streams.Out, rangeResponseJSON{
			Header: &headerJSON{Revision: rev},
			KVs:    kvsJSON(kvs),
			More:   more,
			Count:  count,
		})
	}
	for _, kv := range kvs {
		if o.decode && !o.keysOnly {
			if err := s.printDecoded(o.valueOnly, kv); err != nil {
				return err
			}
			continue
		}
		printKV(s.streams.Out, o.valueOnly, kv.Key, kv.Value)
	}
	return nil
}

const decodeUsage = "kubetab only: print each value decoded from kube-apiserver's protobuf to the object's YAML (the real etcdctl prints the bytes)"

// checkDecode refuses --decode where it cannot apply.
func (s *session) checkDecode(decode, keysOnly bool) error {
	switch {
	case !decode:
		return nil
	case s.writeOut != "simple":
		return fail(ExitBadArgs, "--decode is only for `--write-out=simple`")
	case s.decode == nil:
		return fail(ExitBadFeature, "--decode is not available: this etcdctl has no decoder for the API server's values")
	}
	return nil
}

// printDecoded prints a key and, on the lines after it, its value as YAML.
func (s *session) printDecoded(valueOnly bool, kv store.KeyValue) error {
	out, err := s.decode(kv)
	if err != nil {
		return fail(ExitError, "decode %s: %v", kv.Key, err)
	}
	if !valueOnly {
		fmt.Fprintln(s.streams.Out, kv.Key)
	}
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	s.streams.Out.Write(out)
	return nil
}
