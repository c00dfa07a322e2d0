package kubectl

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
)

// Resources the create generators write to. Like upstream's typed clients
// they need no discovery.
var (
	deploymentsResource = apiResource{Group: "apps", Version: "v1", Name: "deployments", Kind: "Deployment", Namespaced: true}
	namespacesResource  = apiResource{Version: "v1", Name: "namespaces", Kind: "Namespace"}
)

// dryRun is the --dry-run flag: none, client (print, send nothing) or
// server (the server runs everything but the write).
type dryRun string

func parseDryRun(v string) (dryRun, error) {
	switch v {
	case "", "none", "false":
		return "none", nil
	case "client", "true":
		return "client", nil
	case "server":
		return "server", nil
	}
	return "", fmt.Errorf("Invalid dry-run value (%v). Must be \"none\", \"server\", or \"client\".", v)
}

// suffix is what the printed operation gets: "created (dry run)".
func (d dryRun) suffix() string {
	switch d {
	case "client":
		return " (dry run)"
	case "server":
		return " (server dry run)"
	}
	return ""
}

// printFlags are -o and --dry-run of the create commands.
type printFlags struct {
	output string
	dryRun string
}

func (p *printFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&p.output, "output", "o", "", "Output format. One of: (json, yaml, name, go-template, go-template-file, template, templatefile, jsonpath, jsonpath-as-json, jsonpath-file).")
	cmd.Flags().StringVar(&p.dryRun, "dry-run", "none", `Must be "none", "server", or "client". If client strategy, only print the object that would be sent, without sending it. If server strategy, submit server-side request without persisting the resource.`)
	cmd.Flags().Lookup("dry-run").NoOptDefVal = "client"
}

func (s *session) newCreateCommand() *cobra.Command {
	var files []string
	pf := &printFlags{}
	cmd := &cobra.Command{
		Use:                   "create -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Create a resource from a file or from stdin",
		Long: `Create a resource from a file or from stdin.

 JSON and YAML formats are accepted. Each object is POSTed to its collection.`,
		Example: `  # Create a deployment using the data in web.yaml
  kubectl create -f web.yaml

  # Create a deployment named web that runs the hello image with 3 replicas
  kubectl create deployment web --image=hello --replicas=3`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) == 0 {
				if len(args) > 0 {
					return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
				}
				return usageErrorf(cmd, "must specify one of -f and -k")
			}
			if err := s.parseValidate(); err != nil {
				return err
			}
			return s.runCreateFiles(files, pf)
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "Filename, directory, or URL to files to use to create the resource")
	s.addRecursiveFlag(cmd)
	s.addValidateFlag(cmd)
	pf.add(cmd)
	cmd.AddCommand(s.newCreateDeploymentCommand(), s.newCreateNamespaceCommand(), s.newCreateConfigMapCommand(),
		s.newCreateSecretCommand(), s.newCreateServiceCommand(), s.newCreateJobCommand(), s.newCreateCronJobCommand(),
		s.newCreateServiceAccountCommand(), s.newCreatePDBCommand(), s.newCreatePriorityClassCommand(),
		s.newCreateRoleCommand(), s.newCreateClusterRoleCommand(), s.newCreateRoleBindingCommand(false), s.newCreateRoleBindingCommand(true),
		s.newCreateQuotaCommand())
	return cmd
}

func (s *session) runCreateFiles(files []string, pf *printFlags) error {
	if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
		return err
	}
	dr, err := parseDryRun(pf.dryRun)
	if err != nil {
		return err
	}
	objs, err := s.readManifests("create", files)
	if err != nil {
		return err
	}
	var errs multiError
	for _, m := range objs {
		body, _ := json.Marshal(m.obj)
		out, err := s.create(m.res, m.namespace, body, dr)
		if err != nil {
			errs = append(errs, sourceErr("creating", m.source, err))
			continue
		}
		if out == nil {
			out = m.obj
		}
		if err := s.printCreated(m.res, out, pf.output, "created"+dr.suffix()); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// create POSTs an object; with a client dry run it sends nothing and
// returns nil.
func (s *session) create(res apiResource, namespace string, body []byte, dr dryRun) (map[string]any, error) {
	return s.createAs("kubectl-create", res, namespace, body, dr)
}

// createAs is create with the field manager the server records for the
// write (managedFields): kubectl run and expose name themselves
// "kubectl-run" and "kubectl-expose", as upstream.
func (s *session) createAs(fieldManager string, res apiResource, namespace string, body []byte, dr dryRun) (map[string]any, error) {
	if dr == "client" {
		return nil, nil
	}
	q := s.writeQuery(fieldManager)
	if dr == "server" {
		q.Set("dryRun", "All")
	}
	out := map[string]any{}
	err := s.client.into(s.ctx, request{method: http.MethodPost, path: res.path(namespace, "", ""), query: q, body: body, contentType: "application/json"}, &out)
	if err != nil {
		return nil, err
	}
	setTypeMeta(out, res)
	return out, nil
}

// printCreated prints "deployment.apps/web created", or the object for -o.
func (s *session) printCreated(res apiResource, obj map[string]any, output, op string) error {
	if output == "" {
		_, err := fmt.Fprintf(s.out(), "%s/%s %s\n", res.kindName(), nestedString(obj, "metadata", "name"), op)
		return err
	}
	setTypeMeta(obj, res)
	return printObject(s.out(), output, obj)
}

// toMap encodes a typed object as the JSON map the printers take.
func toMap(obj any) (map[string]any, []byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, nil, err
	}
	m := map[string]any{}
	return m, data, decodeJSON(data, &m)
}

func (s *session) newCreateDeploymentCommand() *cobra.Command {
	var (
		images   []string
		replicas int32
		port     int32
	)
	pf := &printFlags{}
	cmd := &cobra.Command{
		Use:                   "deployment NAME --image=image -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"deploy"},
		Short:                 "Create a deployment with the specified name",
		Long:                  "Create a deployment with the specified name.",
		Example: `  # Create a deployment named web that runs the hello image
  kubectl create deployment web --image=hello

  # Create a deployment named web with 3 replicas
  kubectl create deployment web --image=hello --replicas=3

  # Create a deployment named web that runs the hello image and expose port 8080
  kubectl create deployment web --image=hello --port=8080`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			var command []string
			if len(args) > 1 {
				command = args[1:]
			}
			if len(images) > 1 && len(command) > 0 {
				return fmt.Errorf("cannot specify multiple --image options and command")
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			deploy := newDeployment(name, images, replicas, port, command)
			if s.explicitNamespace() {
				deploy.Namespace = s.namespace
			}
			obj, body, err := toMap(deploy)
			if err != nil {
				return err
			}
			out, err := s.create(deploymentsResource, s.namespace, body, dr)
			if err != nil {
				return fmt.Errorf("failed to create deployment: %v", err)
			}
			if out == nil {
				out = obj
			}
			return s.printCreated(deploymentsResource, out, pf.output, "created"+dr.suffix())
		},
	}
	cmd.Flags().StringSliceVar(&images, "image", nil, "Image names to run. A deployment can have multiple images set for multi-container pod.")
	_ = cmd.MarkFlagRequired("image")
	cmd.Flags().Int32Var(&port, "port", -1, "The containerPort that this deployment exposes.")
	cmd.Flags().Int32VarP(&replicas, "replicas", "r", 1, "Number of replicas to create. Default is 1.")
	pf.add(cmd)
	return cmd
}

// newDeployment is upstream's `create deployment` generator: labels and
// selector app=NAME, one container per image, named after the image without
// registry path, tag or digest ("example.com/hello:1.0" runs as "hello").
func newDeployment(name string, images []string, replicas, port int32, command []string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{}},
			},
		},
	}
	for _, image := range images {
		parts := strings.Split(image, "/")
		cname := parts[len(parts)-1]
		cname, _, _ = strings.Cut(cname, ":")
		cname, _, _ = strings.Cut(cname, "@")
		if strings.ContainsAny(cname, "_.") {
			cname = strings.NewReplacer("_", "-", ".", "-").Replace(cname) + "-" + utilrand.String(5)
		}
		d.Spec.Template.Spec.Containers = append(d.Spec.Template.Spec.Containers, corev1.Container{Name: cname, Image: image, Command: command})
	}
	if port >= 0 && len(d.Spec.Template.Spec.Containers) > 0 {
		d.Spec.Template.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: port}}
	}
	return d
}

func (s *session) newCreateNamespaceCommand() *cobra.Command {
	pf := &printFlags{}
	cmd := &cobra.Command{
		Use:                   "namespace NAME [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"ns"},
		Short:                 "Create a namespace with the specified name",
		Long:                  "Create a namespace with the specified name.",
		Example: `  # Create a new namespace named my-namespace
  kubectl create namespace my-namespace`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
				return err
			}
			dr, err := parseDryRun(pf.dryRun)
			if err != nil {
				return err
			}
			ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			obj, body, err := toMap(ns)
			if err != nil {
				return err
			}
			out, err := s.create(namespacesResource, "", body, dr)
			if err != nil {
				return err
			}
			if out == nil {
				out = obj
			}
			return s.printCreated(namespacesResource, out, pf.output, "created"+dr.suffix())
		},
	}
	pf.add(cmd)
	return cmd
}

// nameFromArgs is upstream's NameFromCommandArgs: exactly one NAME before
// any "--".
func nameFromArgs(cmd *cobra.Command, args []string) (string, error) {
	n := cmd.ArgsLenAtDash()
	if n == -1 {
		n = len(args)
	}
	if n != 1 {
		return "", usageErrorf(cmd, "exactly one NAME is required, got %d", n)
	}
	return args[0], nil
}
