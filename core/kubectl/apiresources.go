package kubectl

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

func (s *session) newAPIResourcesCommand() *cobra.Command {
	var (
		output     string
		apiGroup   string
		namespaced bool
		noHeaders  bool
		sortBy     string
		verbs      []string
	)
	cmd := &cobra.Command{
		Use:   "api-resources",
		Short: "Print the supported API resources on the server",
		Long:  "Print the supported API resources on the server, as discovery reports them (GET /api, /api/v1, /apis, /apis/GROUP/VERSION).",
		Example: `  # Print the supported API resources
  kubectl api-resources

  # Print the supported API resources with more information
  kubectl api-resources -o wide

  # Print the supported namespaced resources
  kubectl api-resources --namespaced=true`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputFormat(output, "wide", "name"); err != nil {
				return err
			}
			if sortBy != "" && sortBy != "name" && sortBy != "kind" {
				return fmt.Errorf("--sort-by accepts only name or kind")
			}
			all, err := s.discover()
			if err != nil {
				return err
			}
			var rs []apiResource
			for _, r := range all {
				if cmd.Flags().Changed("api-group") && r.Group != apiGroup {
					continue
				}
				if cmd.Flags().Changed("namespaced") && r.Namespaced != namespaced {
					continue
				}
				if len(verbs) > 0 && !hasAll(r.Verbs, verbs) {
					continue
				}
				rs = append(rs, r)
			}
			key := func(r apiResource) string {
				switch sortBy {
				case "name":
					return r.Name
				case "kind":
					return r.Kind
				}
				return r.Group
			}
			sort.SliceStable(rs, func(i, j int) bool {
				if c := strings.Compare(key(rs[i]), key(rs[j])); c != 0 {
					return c < 0
				}
				return rs[i].Name < rs[j].Name
			})
			if output == "name" {
				for _, r := range rs {
					name := r.Name
					if r.Group != "" {
						name += "." + r.Group
					}
					fmt.Fprintln(s.out(), name)
				}
				return nil
			}
			tw := newTabWriter(s.out())
			defer tw.Flush()
			if !noHeaders {
				header := "NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND"
				if output == "wide" {
					header += "\tVERBS\tCATEGORIES"
				}
				fmt.Fprintln(tw, header)
			}
			for _, r := range rs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%s", r.Name, strings.Join(r.ShortNames, ","), r.GroupVersion().String(), r.Namespaced, r.Kind)
				if output == "wide" {
					fmt.Fprintf(tw, "\t%s\t%s", strings.Join(r.Verbs, ","), strings.Join(r.Categories, ","))
				}
				fmt.Fprintln(tw)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "Output format. One of: (wide, name).")
	f.StringVar(&apiGroup, "api-group", "", "Limit to resources in the specified API group.")
	f.BoolVar(&namespaced, "namespaced", true, "If false, non-namespaced resources will be returned, otherwise returning namespaced resources by default.")
	f.BoolVar(&noHeaders, "no-headers", false, "When using the default or custom-column output format, don't print headers (default print headers).")
	f.StringVar(&sortBy, "sort-by", "", "If non-empty, sort list of resources using specified field. The field can be either 'name' or 'kind'.")
	f.StringSliceVar(&verbs, "verbs", nil, "Limit to resources that support the specified verbs.")
	return cmd
}

func hasAll(have, want []string) bool {
	for _, w := range want {
		if !contains(have, w) {
			return false
		}
	}
	return true
}
