package kubectl

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// exitCodeError ends a command with a given exit code after it printed
// what it had to (kubectl diff: 1 means "there are differences").
type exitCodeError struct {
	code int
	err  error // printed first, if set
}

func (e *exitCodeError) Error() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("exit status %d", e.code)
}

// newDiffCommand is `kubectl diff -f FILE` (upstream pkg/cmd/diff): for each
// object in the file, ask the server what applying it would give (the same
// PATCH or POST as `kubectl apply`, with dryRun=All, so defaulting,
// admission and validation all run), and print a unified diff of the live
// object against that result. Exit status 0: no differences; 1: some; 2 or
// more: kubectl failed. Upstream runs the system's `diff -u -N` over two
// temporary directories; in a browser tab there is no such program, so the
// diff is computed here (github.com/pmezard/go-difflib) in the same shape.
func (s *session) newDiffCommand() *cobra.Command {
	var (
		files        []string
		fieldManager string
	)
	cmd := &cobra.Command{
		Use:                   "diff -f FILENAME",
		DisableFlagsInUseLine: true,
		Short:                 "Diff the live version against a would-be applied version",
		Long: `Diff configurations specified by file name or stdin between the current online configuration, and the configuration as it would be if applied.

 The output is always YAML.

 Exit status:
 0 No differences were found. 1 Differences were found. >1 Kubectl or diff failed with an error.`,
		Example: `  # Diff resources included in web.yaml
  kubectl diff -f web.yaml

  # Diff file read from stdin
  cat web.yaml | kubectl diff -f -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(files) == 0 {
				return &exitCodeError{code: 2, err: usageErrorf(cmd, "must specify one of -f and -k")}
			}
			if len(args) > 0 {
				return &exitCodeError{code: 2, err: fmt.Errorf("unexpected args: %v", args)}
			}
			differ, err := s.runDiff(files, fieldManager)
			if err != nil {
				return &exitCodeError{code: 2, err: err}
			}
			if differ {
				return &exitCodeError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "Filename, directory, or URL to files contains the configuration to diff")
	s.addRecursiveFlag(cmd)
	cmd.Flags().StringVar(&fieldManager, "field-manager", "kubectl-client-side-apply", "Name of the manager used to track field ownership.")
	return cmd
}

func (s *session) runDiff(files []string, fieldManager string) (bool, error) {
	objs, err := s.readManifests("diff", files)
	if err != nil {
		return false, err
	}
	differ := false
	for _, m := range objs {
		if m.name == "" {
			return false, fmt.Errorf("from %s: cannot use generate name with diff", m.source)
		}
		live, err := s.getObject(m.res, m.namespace, m.name)
		if apierrors.IsNotFound(err) {
			live = nil
		} else if err != nil {
			return false, err
		}
		merged, err := s.dryRunApply(m, live, fieldManager)
		if err != nil {
			return false, err
		}
		name := fmt.Sprintf("%s.%s.%s", strings.ReplaceAll(m.res.GroupVersion().String(), "/", "."), m.res.Kind, m.name)
		if m.namespace != "" {
			name = fmt.Sprintf("%s.%s.%s.%s", strings.ReplaceAll(m.res.GroupVersion().String(), "/", "."), m.res.Kind, m.namespace, m.name)
		}
		a, err := diffYAML(live)
		if err != nil {
			return false, err
		}
		b, err := diffYAML(merged)
		if err != nil {
			return false, err
		}
		if a == b {
			continue
		}
		differ = true
		from, to := "LIVE/"+name, "MERGED/"+name
		text, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
			A: diffLines(a), B: diffLines(b), FromFile: from, ToFile: to, Context: 3,
		})
		if err != nil {
			return false, err
		}
		fmt.Fprintf(s.out(), "diff -u -N %s %s\n%s", from, to, text)
	}
	return differ, nil
}

// diffLines splits text into lines for difflib; no text is no lines (an
// object that does not exist yet is diffed as an empty file, like diff -N).
func diffLines(text string) []string {
	if text == "" {
		return nil
	}
	return difflib.SplitLines(strings.TrimSuffix(text, "\n"))
}

// dryRunApply returns the object the server would store if the manifest
// were applied: a POST when it does not exist, else the three-way patch
// `kubectl apply` would send, both with dryRun=All.
func (s *session) dryRunApply(m manifest, live map[string]any, fieldManager string) (map[string]any, error) {
	q := url.Values{"dryRun": {"All"}, "fieldManager": {fieldManager}}
	out := map[string]any{}
	if live == nil {
		body, err := modifiedConfiguration(m.obj, true)
		if err != nil {
			return nil, err
		}
		if err := s.client.into(s.ctx, request{method: http.MethodPost, path: m.res.path(m.namespace, "", ""), query: q, body: body, contentType: "application/json"}, &out); err != nil {
			return nil, err
		}
		setTypeMeta(out, m.res)
		return out, nil
	}
	modified, err := modifiedConfiguration(m.obj, false)
	if err != nil {
		return nil, err
	}
	var original []byte
	if a, ok := nestedMap(live, "metadata", "annotations")[lastAppliedAnnotation].(string); ok {
		original = []byte(a)
	}
	current, err := json.Marshal(live)
	if err != nil {
		return nil, err
	}
	patch, pt, err := threeWayPatch(m.res, original, modified, current)
	if err != nil {
		return nil, err
	}
	if string(patch) == "{}" {
		return live, nil
	}
	if err := s.client.into(s.ctx, request{method: http.MethodPatch, path: m.res.path(m.namespace, m.name, ""), query: q, body: patch, contentType: string(pt)}, &out); err != nil {
		return nil, err
	}
	setTypeMeta(out, m.res)
	return out, nil
}

// diffYAML is an object as the diff shows it: YAML, without
// managedFields; nothing for an object that does not exist.
func diffYAML(obj map[string]any) (string, error) {
	if obj == nil {
		return "", nil
	}
	obj = deepCopyMap(obj)
	stripManagedFields(obj)
	data, err := yaml.Marshal(obj)
	if err != nil {
		return "", errors.New("marshalling for diff: " + err.Error())
	}
	return string(data), nil
}
