package images

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kubetab/kubetab/core/kubelet/cri"
)

// WriteTable writes the catalog the way the console's `images` command shows
// it: the columns of `crictl images` (IMAGE ID is the digest's first 13 hex
// digits, SIZE in kB as crictl prints it) and what each image does.
//
//	IMAGE   TAG     IMAGE ID        SIZE     ABOUT
//	hello   1.0     0e1f5c1b2d3a4   14.2kB   prints 'Hello from <pod>! ...
func (c *Catalog) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "IMAGE\tTAG\tIMAGE ID\tSIZE\tCOMMAND\tPORTS\tABOUT")
	for _, e := range c.List() {
		r, err := cri.ParseRef(e.Ref)
		if err != nil {
			return fmt.Errorf("images: listed reference %q: %w", e.Ref, err) // Add and New list parsed references only
		}
		id := strings.TrimPrefix(e.Digest, "sha256:")
		if len(id) > 13 {
			id = id[:13]
		}
		cmd := strings.Join(append(append([]string(nil), e.Config.Entrypoint...), e.Config.Cmd...), " ")
		ports := strings.Join(e.Config.ExposedPorts, ",")
		if ports == "" {
			ports = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1fkB\t%q\t%s\t%s\n", r.Name, r.Tag, id, float64(e.Size)/1000, cmd, ports, e.About)
	}
	return tw.Flush()
}
