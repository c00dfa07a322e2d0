package kubectl

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	utilsnet "k8s.io/utils/net"
)

// More of upstream's `kubectl create` generators (pkg/cmd/create): each
// builds one object from flags and POSTs it, like `create deployment`.
var (
	configMapsResource = apiResource{Version: "v1", Name: "configmaps", Kind: "ConfigMap", Namespaced: true}
	secretsResource    = apiResource{Version: "v1", Name: "secrets", Kind: "Secret", Namespaced: true}
	servicesResource   = apiResource{Version: "v1", Name: "services", Kind: "Service", Namespaced: true}
	jobsResource       = apiResource{Group: "batch", Version: "v1", Name: "jobs", Kind: "Job", Namespaced: true}
	cronJobsResource   = apiResource{Group: "batch", Version: "v1", Name: "cronjobs", Kind: "CronJob", Namespaced: true}
)

// createGenerated POSTs a generated object (or, with --dry-run=client,
// only prints it) and prints "configmap/settings created". failure wraps
// a server error the way each upstream generator does.
func (s *session) createGenerated(res apiResource, obj metav1.Object, pf *printFlags, failure func(error) error) error {
	if err := checkOutputFormat(pf.output, objectOutputFormats...); err != nil {
		return err
	}
	dr, err := parseDryRun(pf.dryRun)
	if err != nil {
		return err
	}
	if s.explicitNamespace() && res.Namespaced {
		obj.SetNamespace(s.namespace)
	}
	m, body, err := toMap(obj)
	if err != nil {
		return err
	}
	out, err := s.create(res, s.namespace, body, dr)
	if err != nil {
		return failure(err)
	}
	if out == nil {
		out = m
	}
	return s.printCreated(res, out, pf.output, "created"+dr.suffix())
}

// dataSources are --from-literal, --from-file and --from-env-file of
// `create configmap` and `create secret generic`.
type dataSources struct {
	literals, files, envFiles []string
}

func (d *dataSources) add(cmd *cobra.Command, what string) {
	f := cmd.Flags()
	f.StringSliceVar(&d.files, "from-file", nil, "Key file can be specified using its file path, in which case file basename will be used as "+what+" key, or optionally with a key and file path, in which case the given key will be used.  Specifying a directory will iterate each named file in the directory whose basename is a valid "+what+" key.")
	f.StringArrayVar(&d.literals, "from-literal", nil, "Specify a key and literal value to insert in "+what+" (i.e. mykey=somevalue)")
	f.StringSliceVar(&d.envFiles, "from-env-file", nil, "Specify the path to a file to read lines of key=val pairs to create a "+what+".")
}

// collect reads the sources into key/value pairs, calling put for each.
func (s *session) collectData(d *dataSources, put func(key string, value []byte) error) error {
	if len(d.envFiles) > 0 && (len(d.files) > 0 || len(d.literals) > 0) {
		return errors.New("from-env-file cannot be combined with from-file or from-literal")
	}
	for _, src := range d.files {
		key, file, hasKey := strings.Cut(src, "=")
		if !hasKey {
			key, file = path.Base(src), src
		} else if key == "" {
			return fmt.Errorf("key name for file path %v missing", file)
		} else if file == "" {
			return fmt.Errorf("file path for key name %v missing", key)
		}
		data, err := s.cli.cfg.ReadFile(file)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return fmt.Errorf("error reading %s: %v", file, pe.Err)
			}
			return fmt.Errorf("error reading %s: %v", file, err)
		}
		if err := put(key, data); err != nil {
			return err
		}
	}
	for _, lit := range d.literals {
		if strings.HasPrefix(lit, "=") || !strings.Contains(lit, "=") {
			return fmt.Errorf("invalid literal source %v, expected key=value", lit)
		}
		k, v, _ := strings.Cut(lit, "=")
		if err := put(k, []byte(v)); err != nil {
			return err
		}
	}
	for _, file := range d.envFiles {
		data, err := s.cli.cfg.ReadFile(file)
		if err != nil {
			return fmt.Errorf("error reading %s: %v", file, err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(strings.TrimPrefix(line, "\ufeff"))
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			k, v, hasValue := strings.Cut(line, "=")
			if errs := validation.IsEnvVarName(k); len(errs) != 0 {
				return fmt.Errorf("%q is not a valid key name: %s", k, strings.Join(errs, ";"))
			}
			if !hasValue {
				v = os.Getenv(k)
			}
			if !utf8.ValidString(v) {
				return fmt.Errorf("env file %s contains invalid utf8 bytes at line %d: %v", file, i+1, []byte(line))
			}
			if err := put(k, []byte(v)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *session) newCreateConfigMapCommand() *cobra.Command {
	pf := &printFlags{}
	d := &dataSources{}
	cmd := &cobra.Command{
		Use:                   "configmap NAME [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cm"},
		Short:                 "Create a config map from a local file, directory or literal value",
		Long: `Create a config map based on a file, directory, or specified literal value.

 A single config map may package one or more key/value pairs.

 When creating a config map based on a file, the key will default to the basename of the file, and the value will default to the file content.  If the basename is an invalid key, you may specify an alternate key.`,
		Example: `  # Create a new config map named my-config with key1=config1 and key2=config2
  kubectl create configmap my-config --from-literal=key1=config1 --from-literal=key2=config2

  # Create a new config map named my-config from the key=value pairs in the file
  kubectl create configmap my-config --from-file=path/to/bar`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			cm := &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
			err = s.collectData(d, func(k string, v []byte) error {
				if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
					return fmt.Errorf("%q is not a valid key name for a ConfigMap: %s", k, strings.Join(errs, ","))
				}
				if _, ok := cm.Data[k]; ok {
					return fmt.Errorf("cannot add key %q, another key by that name already exists in Data for ConfigMap %q", k, name)
				}
				if _, ok := cm.BinaryData[k]; ok {
					return fmt.Errorf("cannot add key %q, another key by that name already exists in BinaryData for ConfigMap %q", k, name)
				}
				if utf8.Valid(v) {
					if cm.Data == nil {
						cm.Data = map[string]string{}
					}
					cm.Data[k] = string(v)
				} else {
					if cm.BinaryData == nil {
						cm.BinaryData = map[string][]byte{}
					}
					cm.BinaryData[k] = v
				}
				return nil
			})
			if err != nil {
				return err
			}
			return s.createGenerated(configMapsResource, cm, pf, func(err error) error { return fmt.Errorf("failed to create configmap: %v", err) })
		},
	}
	d.add(cmd, "the configmap")
	pf.add(cmd)
	return cmd
}

func (s *session) newCreateSecretCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret (docker-registry | generic | tls)",
		Short: "Create a secret using a specified subcommand",
		Long:  "Create a secret with specified type.\n\n A generic secret holds key/value pairs, base64-encoded in .data.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	pf := &printFlags{}
	d := &dataSources{}
	var secretType string
	generic := &cobra.Command{
		Use:                   "generic NAME [--type=string] [--from-file=[key=]source] [--from-literal=key1=value1] [--dry-run=server|client|none]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a secret from a local file, directory, or literal value",
		Long: `Create a secret based on a file, directory, or specified literal value.

 A single secret may package one or more key/value pairs.`,
		Example: `  # Create a new secret named my-secret with keys for each file in folder bar
  kubectl create secret generic my-secret --from-file=path/to/bar

  # Create a new secret named my-secret with key1=supersecret and key2=topsecret
  kubectl create secret generic my-secret --from-literal=key1=supersecret --from-literal=key2=topsecret`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			sec := &corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"}, ObjectMeta: metav1.ObjectMeta{Name: name}, Type: corev1.SecretType(secretType)}
			err = s.collectData(d, func(k string, v []byte) error {
				if errs := validation.IsConfigMapKey(k); len(errs) > 0 {
					return fmt.Errorf("%q is not valid key name for a Secret %s", k, strings.Join(errs, ";"))
				}
				if _, ok := sec.Data[k]; ok {
					return fmt.Errorf("cannot add key %s, another key by that name already exists", k)
				}
				if sec.Data == nil {
					sec.Data = map[string][]byte{}
				}
				sec.Data[k] = v
				return nil
			})
			if err != nil {
				return err
			}
			return s.createGenerated(secretsResource, sec, pf, func(err error) error { return fmt.Errorf("failed to create secret %v", err) })
		},
	}
	d.add(generic, "the secret")
	generic.Flags().StringVar(&secretType, "type", "", "The type of secret to create")
	pf.add(generic)
	cmd.AddCommand(generic)
	return cmd
}

func (s *session) newCreateServiceCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "service",
		Aliases: []string{"svc"},
		Short:   "Create a service using a specified subcommand",
		Long:    "Create a service using a specified subcommand.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmd.Help()
		},
	}
	for _, typ := range []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName} {
		cmd.AddCommand(s.newCreateServiceTypeCommand(typ))
	}
	return cmd
}

func (s *session) newCreateServiceTypeCommand(typ corev1.ServiceType) *cobra.Command {
	pf := &printFlags{}
	var (
		tcp                     []string
		clusterIP, externalName string
		nodePort                int
	)
	lower := strings.ToLower(string(typ))
	use := lower + " NAME [--tcp=<port>:<targetPort>] [--dry-run=server|client|none]"
	if typ == corev1.ServiceTypeExternalName {
		use = lower + " NAME --external-name external.name [--dry-run=server|client|none]"
	}
	cmd := &cobra.Command{
		Use:                   use,
		DisableFlagsInUseLine: true,
		Short:                 fmt.Sprintf("Create a %s service", typ),
		Long:                  fmt.Sprintf("Create a %s service with the specified name.", typ),
		Example: fmt.Sprintf(`  # Create a new %[1]s service named my-svc
  kubectl create service %[2]s my-svc --tcp=5678:8080`, typ, lower),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			if clusterIP == corev1.ClusterIPNone && typ != corev1.ServiceTypeClusterIP {
				return errors.New("ClusterIP=None can only be used with ClusterIP service type")
			}
			if clusterIP != corev1.ClusterIPNone && len(tcp) == 0 && typ != corev1.ServiceTypeExternalName {
				return errors.New("at least one tcp port specifier must be provided")
			}
			if typ == corev1.ServiceTypeExternalName {
				if errs := validation.IsDNS1123Subdomain(externalName); len(errs) != 0 {
					return fmt.Errorf("invalid service external name %s", externalName)
				}
			}
			svc := &corev1.Service{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
				ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
				Spec:       corev1.ServiceSpec{Type: typ, Selector: map[string]string{"app": name}, ExternalName: externalName, ClusterIP: clusterIP},
			}
			for _, spec := range tcp {
				port, target, err := parseServicePorts(spec)
				if err != nil {
					return err
				}
				svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
					Name: strings.ReplaceAll(spec, ":", "-"), Port: port, TargetPort: target,
					Protocol: corev1.ProtocolTCP, NodePort: int32(nodePort),
				})
			}
			return s.createGenerated(servicesResource, svc, pf, func(err error) error { return fmt.Errorf("failed to create %s service: %v", typ, err) })
		},
	}
	f := cmd.Flags()
	if typ != corev1.ServiceTypeExternalName {
		f.StringSliceVar(&tcp, "tcp", nil, "Port pairs can be specified as '<port>:<targetPort>'.")
	}
	switch typ {
	case corev1.ServiceTypeClusterIP:
		f.StringVar(&clusterIP, "clusterip", "", `Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing).`)
	case corev1.ServiceTypeNodePort:
		f.IntVar(&nodePort, "node-port", 0, "Port used to expose the service on each node in a cluster.")
	case corev1.ServiceTypeExternalName:
		f.StringVar(&externalName, "external-name", "", "External name of service")
		_ = cmd.MarkFlagRequired("external-name")
	}
	pf.add(cmd)
	return cmd
}

// parseServicePorts reads "80" or "80:8080" or "80:http".
func parseServicePorts(spec string) (int32, intstr.IntOrString, error) {
	parts := strings.Split(spec, ":")
	port, err := utilsnet.ParsePort(parts[0], true)
	if err != nil {
		return 0, intstr.IntOrString{}, err
	}
	if len(parts) == 1 {
		return int32(port), intstr.FromInt32(int32(port)), nil
	}
	if n, err := strconv.Atoi(parts[1]); err == nil {
		if errs := validation.IsValidPortNum(n); len(errs) != 0 {
			return 0, intstr.IntOrString{}, errors.New(strings.Join(errs, ","))
		}
		return int32(port), intstr.FromInt32(int32(n)), nil
	}
	if errs := validation.IsValidPortName(parts[1]); len(errs) != 0 {
		return 0, intstr.IntOrString{}, errors.New(strings.Join(errs, ","))
	}
	return int32(port), intstr.FromString(parts[1]), nil
}

func (s *session) newCreateJobCommand() *cobra.Command {
	pf := &printFlags{}
	var image, from string
	cmd := &cobra.Command{
		Use:                   "job NAME --image=image [--from=cronjob/name] -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Short:                 "Create a job with the specified name",
		Long:                  "Create a job with the specified name.",
		Example: `  # Create a job
  kubectl create job my-job --image=hello

  # Create a job with a command
  kubectl create job my-job --image=hello -- date

  # Create a job from a cron job named "a-cronjob"
  kubectl create job test-job --from=cronjob/a-cronjob`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			var command []string
			if len(args) > 1 {
				command = args[1:]
			}
			if image == "" && from == "" {
				return errors.New("either --image or --from must be specified")
			}
			if from != "" && len(command) > 0 {
				return errors.New("cannot specify --from and command")
			}
			job := &batchv1.Job{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers:    []corev1.Container{{Name: name, Image: image, Command: command}},
					RestartPolicy: corev1.RestartPolicyNever,
				}}},
			}
			if from != "" {
				typ, cjName, _ := strings.Cut(from, "/")
				res, err := s.resolve(typ)
				if err != nil {
					return err
				}
				if res.Kind != "CronJob" || cjName == "" {
					return errors.New("from must be an existing cronjob")
				}
				var cj batchv1.CronJob
				if err := s.client.into(s.ctx, request{method: http.MethodGet, path: res.path(s.namespace, cjName, "")}, &cj); err != nil {
					return err
				}
				annotations := map[string]string{"cronjob.kubernetes.io/instantiate": "manual"}
				for k, v := range cj.Spec.JobTemplate.Annotations {
					annotations[k] = v
				}
				job.ObjectMeta = metav1.ObjectMeta{
					Name: name, Annotations: annotations, Labels: cj.Spec.JobTemplate.Labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: cj.Name, UID: cj.UID, Controller: ptrTo(true)}},
				}
				job.Spec = cj.Spec.JobTemplate.Spec
			}
			return s.createGenerated(jobsResource, job, pf, func(err error) error { return fmt.Errorf("failed to create job: %v", err) })
		},
	}
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&from, "from", "", "The name of the resource to create a Job from (only cronjob is supported).")
	pf.add(cmd)
	return cmd
}

// newCreateCronJobCommand is upstream's create_cronjob.go: a CronJob
// whose Jobs run one container of image (with the command after --); the
// restart policy defaults to OnFailure, and the API server judges the
// schedule and the policy.
func (s *session) newCreateCronJobCommand() *cobra.Command {
	pf := &printFlags{}
	var image, schedule, restart string
	cmd := &cobra.Command{
		Use:                   "cronjob NAME --image=image --schedule='0/5 * * * ?' -- [COMMAND] [args...]",
		DisableFlagsInUseLine: true,
		Aliases:               []string{"cj"},
		Short:                 "Create a cron job with the specified name",
		Long:                  "Create a cron job with the specified name.",
		Example: `  # Create a cron job
  kubectl create cronjob my-job --image=busybox --schedule="*/1 * * * *"

  # Create a cron job with a command
  kubectl create cronjob my-job --image=busybox --schedule="*/1 * * * *" -- date`,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := nameFromArgs(cmd, args)
			if err != nil {
				return err
			}
			var command []string
			if len(args) > 1 {
				command = args[1:]
			}
			if image == "" {
				return errors.New("--image must be specified")
			}
			if schedule == "" {
				return errors.New("--schedule must be specified")
			}
			if restart == "" {
				restart = string(corev1.RestartPolicyOnFailure)
			}
			cj := &batchv1.CronJob{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: batchv1.CronJobSpec{
					Schedule: schedule,
					JobTemplate: batchv1.JobTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Name: name},
						Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
							Containers:    []corev1.Container{{Name: name, Image: image, Command: command}},
							RestartPolicy: corev1.RestartPolicy(restart),
						}}},
					},
				},
			}
			return s.createGenerated(cronJobsResource, cj, pf, func(err error) error { return fmt.Errorf("failed to create cronjob: %v", err) })
		},
	}
	cmd.Flags().StringVar(&image, "image", "", "Image name to run.")
	cmd.Flags().StringVar(&schedule, "schedule", "", "A schedule in the Cron format the job should be run with.")
	cmd.Flags().StringVar(&restart, "restart", "", "job's restart policy. supported values: OnFailure, Never")
	_ = cmd.MarkFlagRequired("image")
	_ = cmd.MarkFlagRequired("schedule")
	pf.add(cmd)
	return cmd
}

func ptrTo[T any](v T) *T { return &v }
