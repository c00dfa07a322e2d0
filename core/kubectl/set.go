package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// newSetCommand is `kubectl set` with its `image` subcommand (upstream
// pkg/cmd/set/set_image.go). Changing a Deployment's pod template is what
// starts a rollout: the deployment controller sees a new template hash and
// creates a new ReplicaSet for it.
func (s *session) newSetCommand() *cobra.Command {
	set := &cobra.Command{
		Use:   "set SUBCOMMAND",
		Short: "Set specific features on objects",
		Long:  "Configure application resources.\n\n These commands help you make changes to existing application resources.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	set.AddCommand(s.newSetImageCommand())
	return set
}

func (s *session) newSetImageCommand() *cobra.Command {
	var sel selection
	var dryRunFlag string
	cmd := &cobra.Command{
		Use:                   "image (-f FILENAME | TYPE NAME) CONTAINER_NAME_1=CONTAINER_IMAGE_1 ... CONTAINER_NAME_N=CONTAINER_IMAGE_N",
		DisableFlagsInUseLine: true,
		Short:                 "Update the image of a pod template",
		Long: `Update existing container image(s) of resources.

 Possible resources include (case insensitive):

        pod (po), replicationcontroller (rc), deployment (deploy), daemonset (ds), statefulset (sts), cronjob (cj), replicaset (rs)`,
		Example: `  # Set a deployment's hello container image to 'hello:2.0'
  kubectl set image deployment/web hello=hello:2.0

  # Update the image of all containers of deployment web to 'hello:2.0'
  kubectl set image deployment web *=hello:2.0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			dr, err := parseDryRun(dryRunFlag)
			if err != nil {
				return err
			}
			var targets []string
			images := map[string]string{}
			var order []string
			for _, a := range args {
				name, image, ok := strings.Cut(a, "=")
				if !ok {
					targets = append(targets, a)
					continue
				}
				if name == "" || image == "" {
					return usageErrorf(cmd, "invalid image update %q: expected CONTAINER_NAME=IMAGE", a)
				}
				if _, dup := images[name]; !dup {
					order = append(order, name)
				}
				images[name] = image
			}
			if len(images) == 0 {
				return usageErrorf(cmd, "at least one image update is required")
			}
			if len(targets) == 0 && len(sel.files) == 0 && sel.labelSelector == "" && !sel.all {
				return usageErrorf(cmd, "one or more resources must be specified as <resource> <name> or <resource>/<name>")
			}
			objs, selErr := s.selectObjects("set image", &sel, targets)
			if selErr != nil && objs == nil {
				return selErr
			}
			var errs multiError
			for _, o := range objs {
				patch, changed, err := imagePatch(o, images, order)
				if err != nil {
					errs = append(errs, err)
					continue
				}
				if !changed {
					continue // upstream prints nothing when nothing changes
				}
				if dr != "client" {
					if _, err := s.patchObject(o.res, o.namespace, o.name, "", "application/strategic-merge-patch+json", patch, dr, "kubectl-set"); err != nil {
						errs = append(errs, err)
						continue
					}
				}
				fmt.Fprintf(s.out(), "%s/%s image updated%s\n", o.res.kindName(), o.name, dr.suffix())
			}
			if selErr != nil {
				errs = append(errs, selErr)
			}
			if len(errs) > 0 {
				return errs
			}
			return nil
		},
	}
	sel.addFlags(cmd, "", "l")
	cmd.Flags().StringVar(&dryRunFlag, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
	return cmd
}

// imagePatch builds the strategic merge patch that sets the images of the
// named containers ("*" for all) of an object's pod spec, wherever it is:
// spec (pods), spec.template.spec (workloads), spec.jobTemplate.spec.template.spec
// (cronjobs). Containers merge by name, so the patch names only what changes.
func imagePatch(o selected, images map[string]string, order []string) ([]byte, bool, error) {
	path := []string{"spec", "template", "spec"}
	switch o.res.Kind {
	case "Pod":
		path = []string{"spec"}
	case "CronJob":
		path = []string{"spec", "jobTemplate", "spec", "template", "spec"}
	}
	podSpec := nestedMap(o.obj, path...)
	if podSpec == nil {
		return nil, false, fmt.Errorf("%s/%s has no pod template", o.res.kindName(), o.name)
	}
	patchSpec := map[string]any{}
	changed := false
	found := map[string]bool{}
	for _, list := range []string{"initContainers", "containers"} {
		cs, _ := podSpec[list].([]any)
		var patches []any
		for _, c := range cs {
			cm, _ := c.(map[string]any)
			name, _ := cm["name"].(string)
			image, ok := images[name]
			if !ok {
				image, ok = images["*"]
			}
			if !ok {
				continue
			}
			found[name] = true
			if cm["image"] != image {
				changed = true
				patches = append(patches, map[string]any{"name": name, "image": image})
			}
		}
		if len(patches) > 0 {
			patchSpec[list] = patches
		}
	}
	for _, name := range order {
		if name != "*" && !found[name] {
			return nil, false, fmt.Errorf("unable to find container named %q", name)
		}
	}
	if !changed {
		return nil, false, nil
	}
	var patch any = patchSpec
	for i := len(path) - 1; i >= 0; i-- {
		patch = map[string]any{path[i]: patch}
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return nil, false, errors.New("encode patch: " + err.Error())
	}
	return data, true, nil
}
