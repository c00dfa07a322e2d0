package etcdctl

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
)

func (s *session) newEndpointCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "endpoint <subcommand>",
		Short: "Endpoint related commands",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Prints out the status of the store",
		Long: `Prints out the status of the store: its revision, the oldest revision it can
still read (compact revision), how many keys exist, the bytes of keys and
values it holds for all retained revisions (db size) and for the current
keys only (in use), and how many watches are open.

When --write-out is set to simple, this command prints out comma-separated
status lists for each endpoint.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return s.endpointStatus() },
	})
	return cmd
}

type statusJSON struct {
	Header          headerJSON `json:"header"`
	DBSize          int64      `json:"dbSize"`
	DBSizeInUse     int64      `json:"dbSizeInUse"`
	CompactRevision int64      `json:"compactRevision"`
	Keys            int        `json:"keys"`
	Watchers        int        `json:"watchers"`
}

type epStatusJSON struct {
	Endpoint string     `json:"Endpoint"`
	Status   statusJSON `json:"Status"`
}

func (s *session) endpointStatus() error {
	if err := s.checkOutput("simple", "json", "table"); err != nil {
		return err
	}
	st := s.store.Status()
	if s.writeOut == "json" {
		var out []epStatusJSON
		for _, ep := range s.endpoints {
			out = append(out, epStatusJSON{Endpoint: ep, Status: statusJSON{
				Header: headerJSON{Revision: st.Revision}, DBSize: st.Size, DBSizeInUse: st.SizeInUse,
				CompactRevision: st.CompactRevision, Keys: st.Keys, Watchers: st.Watchers,
			}})
		}
		return printJSON(s.streams.Out, out)
	}
	notInUse := 0
	if st.Size > 0 {
		notInUse = int(100 - st.SizeInUse*100/st.Size)
	}
	header := []string{"endpoint", "revision", "compact revision", "keys", "db size", "in use", "percentage not in use", "watchers"}
	var rows [][]string
	for _, ep := range s.endpoints {
		rows = append(rows, []string{
			ep,
			strconv.FormatInt(st.Revision, 10),
			strconv.FormatInt(st.CompactRevision, 10),
			strconv.Itoa(st.Keys),
			humanize.Bytes(uint64(st.Size)),
			humanize.Bytes(uint64(st.SizeInUse)),
			fmt.Sprintf("%d%%", notInUse),
			strconv.Itoa(st.Watchers),
		})
	}
	if s.writeOut == "table" {
		printTable(s.streams.Out, header, rows)
		return nil
	}
	for _, row := range rows {
		fmt.Fprintln(s.streams.Out, strings.Join(row, ", "))
	}
	return nil
}

func (s *session) newCompactionCommand() *cobra.Command {
	var physical bool
	cmd := &cobra.Command{
		Use:   "compaction [options] <revision>",
		Short: "Compacts the event history in etcd",
		Long: `Compacts the event history: the store forgets the revisions older than the
given one. Afterwards get --rev and watch --rev older than it fail with
"required revision has been compacted", and a Kubernetes watch from an older
resourceVersion gets 410 Gone, after which the client lists again.
kube-apiserver compacts every 5 minutes; kubetab's store also compacts by
itself to keep a bounded history.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fail(ExitBadArgs, "compaction command needs 1 argument")
			}
			rev, err := strconv.ParseInt(args[0], 10, 64)
			if err != nil {
				return fail(ExitError, "%v", err)
			}
			if err := s.store.Compact(rev); err != nil {
				return fail(ExitError, "%v", rpcError(err))
			}
			fmt.Fprintln(s.streams.Out, "compacted revision", rev)
			return nil
		},
	}
	// The store frees old revisions at once, so --physical has nothing to wait for.
	cmd.Flags().BoolVar(&physical, "physical", false, "'true' to wait for compaction to physically remove all old revisions")
	return cmd
}
