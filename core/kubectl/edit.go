package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/mergepatch"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"
)

// EditFunc is the editor `kubectl edit` opens its file in. Upstream
// (staging/src/k8s.io/kubectl/pkg/cmd/util/editor) writes the objects to a
// temporary file, runs $KUBE_EDITOR or $EDITOR (vi when neither is set) on
// it and reads the file back once the editor exits. An EditFunc does the
// same with the file in memory: it shows content under name (a
// kubectl-edit-*.yaml) and returns what the learner saved. Returning the
// content unchanged is quitting without saving; an error is an editor that
// could not start (ErrNoEditor when there is none).
type EditFunc func(ctx context.Context, name string, content []byte) ([]byte, error)

// ErrNoEditor is what `kubectl edit` says where no editor can be opened (a
// console without the page, with no $KUBE_EDITOR or $EDITOR).
var ErrNoEditor = errors.New("no editor is available: set KUBE_EDITOR or EDITOR to an editor program (in the page, kubectl edit opens the Editor tab)")

// editHeader is the comment kubectl puts at the top of the file; lines
// starting with # are dropped when the file is read back.
const editHeader = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`

// newEditCommand is `kubectl edit` (upstream pkg/cmd/edit and
// cmd/util/editor/editoptions.go). The loop:
//
//	GET the objects ──▶ YAML + header ──▶ editor ──▶ unchanged? "Edit cancelled, no changes made."
//	                                        ▲          │ empty?     "Edit cancelled, saved file was empty."
//	                                        │          ▼
//	  422: the causes go into the header ◀── PATCH each changed object (a two-way
//	  and the editor opens again            strategic merge patch from what was
//	                                         read to what was saved) ──▶ "edited"
//
// The patch holds only the fields the learner changed, so a change someone
// else made meanwhile to other fields is kept, not overwritten; only a
// resourceVersion the learner edits by hand is sent, and then the API
// server refuses a stale one with 409 Conflict, as it does upstream.
func (s *session) newEditCommand() *cobra.Command {
	var (
		sel          selection
		output       string
		outputPatch  bool
		fieldManager string
	)
	cmd := &cobra.Command{
		Use:                   "edit (RESOURCE/NAME | -f FILENAME)",
		DisableFlagsInUseLine: true,
		Short:                 "Edit a resource on the server",
		Long: `Edit a resource from the default editor.

 The edit command allows you to directly edit any API resource you can retrieve via the command-line tools. It will open the editor defined by your KUBE_EDITOR, or EDITOR environment variables, or fall back to 'vi' for Linux or 'notepad' for Windows. When attempting to open the editor, it will first attempt to use the shell that has been defined in the 'SHELL' environment variable. If this is not defined, the default shell will be used, which is '/bin/bash' for Linux or 'cmd' for Windows.

 You can edit multiple objects, although changes are applied one at a time. The command accepts file names as well as command-line arguments, although the files you point to must be previously saved versions of resources.

 Editing is done with the API version used to fetch the resource. To edit using a specific API version, fully-qualify the resource, version, and group.

 The default format is YAML. To edit in JSON, specify "-o json".

 The flag --windows-line-endings can be used to force Windows line endings, otherwise the default for your operating system will be used.

 In the event an error occurs while updating, a temporary file will be created on disk that contains your unapplied changes. The most common error when updating a resource is another editor changing the resource on the server. When this occurs, you will have to apply your changes to the newer version of the resource, or update your temporary saved copy to include the latest resource version.

 In kubetab's page, the editor is the Editor tab: Save hands the file back to kubectl edit, Cancel quits without saving.`,
		Example: `  # Edit the service named 'registry'
  kubectl edit svc/registry

  # Edit the deployment 'web' in JSON using the v1 API format
  kubectl edit deployment/web -o json

  # Edit the deployment 'web' and show the patch that is sent
  kubectl edit deployment/web --output-patch`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" && output != "yaml" && output != "json" {
				return fmt.Errorf("unable to match a printer suitable for the output format %q, allowed formats are: json,yaml", output)
			}
			if err := s.parseValidate(); err != nil {
				return err
			}
			if len(args) == 0 && len(sel.files) == 0 {
				return usageErrorf(cmd, "You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'")
			}
			// `kubectl edit deployments` edits every deployment.
			if len(args) == 1 && !strings.Contains(args[0], "/") && sel.labelSelector == "" {
				sel.all = true
			}
			objs, err := s.selectObjects("edit", &sel, args)
			if err != nil {
				return err
			}
			if len(objs) == 0 {
				return errors.New("edit cancelled, no objects found")
			}
			if s.cli.cfg.Editor == nil {
				return ErrNoEditor
			}
			e := editRun{s: s, objs: objs, json: output == "json", outputPatch: outputPatch, fieldManager: fieldManager}
			return e.run()
		},
	}
	sel.addFlags(cmd, "to use to edit the resource", "f", "l")
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "Output format. One of: (json, yaml).")
	f.BoolVar(&outputPatch, "output-patch", false, "Output the patch if the resource is edited.")
	f.StringVar(&fieldManager, "field-manager", "kubectl-edit", "Name of the manager used to track field ownership.")
	s.addValidateFlag(cmd)
	return cmd
}

// editRun is one `kubectl edit`: the objects as read, and what the rounds
// of editing found.
type editRun struct {
	s            *session
	objs         []selected
	json         bool
	outputPatch  bool
	fieldManager string
}

// editReason is a reason the file is opened again, written into its
// header: a head line and its causes ("* spec.replicas: Invalid value ...").
type editReason struct {
	head  string
	other []string
}

func (e *editRun) run() error {
	s := e.s
	name := "kubectl-edit-" + randomSuffix() + ".yaml"
	if e.json {
		name = strings.TrimSuffix(name, ".yaml") + ".json"
	}
	var doc any
	if len(e.objs) == 1 {
		doc = cleanForEdit(e.objs[0].obj)
	} else {
		items := make([]any, len(e.objs))
		for i, o := range e.objs {
			items[i] = cleanForEdit(o.obj)
		}
		doc = map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{}, "items": items}
	}
	body, err := e.encode(doc)
	if err != nil {
		return err
	}
	original := body
	var reasons []editReason
	var edited []byte // what the last round saved; nil before the first
	for {
		var buf bytes.Buffer
		if !e.json {
			writeEditHeader(&buf, reasons)
		}
		if edited == nil {
			buf.Write(original)
		} else {
			buf.Write(stripHeader(edited))
		}
		previous := edited
		edited, err = s.cli.cfg.Editor(s.ctx, name, buf.Bytes())
		if err != nil {
			return err
		}
		if previous != nil && bytes.Equal(stripComments(previous), stripComments(edited)) {
			return errors.New("Edit cancelled, no valid changes were saved.")
		}
		if bytes.Equal(stripComments(original), stripComments(edited)) {
			fmt.Fprintln(s.errOut(), "Edit cancelled, no changes made.")
			return nil
		}
		if !hasLines(edited) {
			fmt.Fprintln(s.errOut(), "Edit cancelled, saved file was empty.")
			return nil
		}
		updated, err := parseEdited(stripComments(edited))
		if err != nil {
			reasons = []editReason{{head: fmt.Sprintf("The edited file had a syntax error: %v", err)}}
			continue
		}
		reasons = nil
		retry, failed := false, false
		for _, u := range updated {
			r, err := e.patch(u)
			switch {
			case err != nil:
				return err
			case r.reason != nil:
				reasons = append(reasons, *r.reason)
				retry = true
			case r.failed:
				failed = true
			}
		}
		if failed {
			return errExit
		}
		if !retry {
			return nil
		}
	}
}

// patchResult is what patching one edited object gave: done, a 422 to edit
// again (reason), or a failure already printed (failed).
type patchResult struct {
	reason *editReason
	failed bool
}

// patch sends one edited object as a two-way patch from the object it was
// read as (matched by UID, as upstream does).
func (e *editRun) patch(edited map[string]any) (patchResult, error) {
	s := e.s
	uid := nestedString(edited, "metadata", "uid")
	var orig *selected
	for i := range e.objs {
		if nestedString(e.objs[i].obj, "metadata", "uid") == uid {
			orig = &e.objs[i]
			break
		}
	}
	if orig == nil {
		return patchResult{}, fmt.Errorf("no original object found for %s %q", nestedString(edited, "kind"), nestedString(edited, "metadata", "name"))
	}
	if ns := nestedString(edited, "metadata", "namespace"); orig.res.Namespaced && ns != orig.namespace {
		return patchResult{}, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, orig.namespace, ns)
	}
	originalJS, err := json.Marshal(cleanForEdit(orig.obj))
	if err != nil {
		return patchResult{}, err
	}
	editedJS, err := json.Marshal(edited)
	if err != nil {
		return patchResult{}, err
	}
	resource := orig.res.groupResource().String()
	if reflect.DeepEqual(cleanForEdit(orig.obj), edited) {
		fmt.Fprintf(s.out(), "%s/%s skipped\n", orig.res.kindName(), orig.name)
		return patchResult{}, nil
	}
	preconditions := []mergepatch.PreconditionFunc{
		mergepatch.RequireKeyUnchanged("apiVersion"),
		mergepatch.RequireKeyUnchanged("kind"),
		mergepatch.RequireMetadataKeyUnchanged("name"),
		mergepatch.RequireKeyUnchanged("managedFields"),
	}
	var patch []byte
	var patchType types.PatchType
	if typed, terr := patchScheme.New(orig.res.GroupVersion().WithKind(orig.res.Kind)); terr == nil {
		patchType = types.StrategicMergePatchType
		patch, err = strategicpatch.CreateTwoWayMergePatch(originalJS, editedJS, typed, preconditions...)
		if err != nil {
			if mergepatch.IsPreconditionFailed(err) {
				return patchResult{}, errors.New("At least one of apiVersion, kind and name was changed")
			}
			return patchResult{}, err
		}
	} else {
		patchType = types.MergePatchType
		patch, err = jsonpatch.CreateMergePatch(originalJS, editedJS)
		if err != nil {
			return patchResult{}, err
		}
		var pm map[string]any
		if err := json.Unmarshal(patch, &pm); err != nil {
			return patchResult{}, err
		}
		for _, p := range preconditions {
			if !p(pm) {
				return patchResult{}, errors.New("At least one of apiVersion, kind and name was changed")
			}
		}
	}
	if e.outputPatch {
		fmt.Fprintf(s.out(), "Patch: %s\n", patch)
	}
	err = s.client.into(s.ctx, request{method: http.MethodPatch, path: orig.res.path(orig.namespace, orig.name, ""), query: s.writeQuery(e.fieldManager), body: patch, contentType: string(patchType)}, &map[string]any{})
	switch {
	case err == nil:
		fmt.Fprintf(s.out(), "%s/%s edited\n", orig.res.kindName(), orig.name)
		return patchResult{}, nil
	case apierrors.IsInvalid(err):
		r := editReason{head: fmt.Sprintf("%s %q was not valid", resource, orig.name)}
		var se apierrors.APIStatus
		if errors.As(err, &se) && se.Status().Details != nil {
			for _, c := range se.Status().Details.Causes {
				r.other = append(r.other, fmt.Sprintf("%s: %s", c.Field, c.Message))
			}
		}
		fmt.Fprintf(s.errOut(), "error: %s %q is invalid\n", resource, orig.name)
		return patchResult{reason: &r}, nil
	case apierrors.IsNotFound(err):
		fmt.Fprintf(s.errOut(), "error: %s %q could not be found on the server\n", resource, orig.name)
		return patchResult{failed: true}, nil
	case s.ctx.Err() != nil:
		return patchResult{}, err
	default:
		fmt.Fprintf(s.errOut(), "error: %s %q could not be patched: %v\n", resource, orig.name, err)
		return patchResult{failed: true}, nil
	}
}

// encode writes the document as the editor shows it: YAML, or JSON with -o json.
func (e *editRun) encode(doc any) ([]byte, error) {
	if e.json {
		b, err := json.MarshalIndent(doc, "", "    ")
		return append(b, '\n'), err
	}
	return yaml.Marshal(doc)
}

// cleanForEdit is the object as the editor shows it: a copy without
// metadata.managedFields (upstream keeps them aside and puts them back).
func cleanForEdit(obj map[string]any) map[string]any {
	c := deepCopyMap(obj)
	stripManagedFields(c)
	return c
}

// parseEdited reads the saved file back: one object, or a List's items.
// Anything that is not an object with apiVersion, kind and a name is a
// syntax error, which reopens the editor.
func parseEdited(data []byte) ([]map[string]any, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		return nil, err
	}
	var objs []map[string]any
	if nestedString(doc, "kind") == "List" {
		items, _ := doc["items"].([]any)
		for _, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return nil, errors.New("a List's items must be objects")
			}
			objs = append(objs, m)
		}
	} else {
		objs = []map[string]any{doc}
	}
	for _, o := range objs {
		if nestedString(o, "apiVersion") == "" || nestedString(o, "kind") == "" {
			return nil, fmt.Errorf("Object 'Kind' is missing in '%s'", strings.TrimSpace(string(data)))
		}
	}
	return objs, nil
}

// writeEditHeader writes the header and, after a failed save, why.
func writeEditHeader(w io.Writer, reasons []editReason) {
	io.WriteString(w, editHeader)
	for _, r := range reasons {
		if len(r.other) > 0 {
			fmt.Fprintf(w, "# %s:\n", commentLines(r.head))
		} else {
			fmt.Fprintf(w, "# %s\n", commentLines(r.head))
		}
		for _, o := range r.other {
			fmt.Fprintf(w, "# * %s\n", commentLines(o))
		}
		io.WriteString(w, "#\n")
	}
}

// commentLines keeps a multi-line message inside the comment.
func commentLines(s string) string { return strings.ReplaceAll(s, "\n", "\n# ") }

// stripComments drops the lines that are comments (upstream's
// cmdutil.StripComments: a line whose first non-blank byte is #).
func stripComments(file []byte) []byte {
	var out bytes.Buffer
	for _, line := range bytes.SplitAfter(file, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '#' {
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}

// stripHeader drops the comment lines at the top of the file (upstream's
// cmdutil.ManualStrip), so that the next round's header replaces them.
func stripHeader(file []byte) []byte {
	lines := bytes.SplitAfter(file, []byte("\n"))
	i := 0
	for i < len(lines) {
		if t := bytes.TrimSpace(lines[i]); len(t) > 0 && t[0] == '#' {
			i++
			continue
		}
		break
	}
	return bytes.Join(lines[i:], nil)
}

// hasLines reports whether a line holds something besides blanks and comments.
func hasLines(file []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(file))
	for sc.Scan() {
		if t := strings.TrimSpace(sc.Text()); t != "" && t[0] != '#' {
			return true
		}
	}
	return false
}

// randomSuffix is the random part of the file's name, as upstream's
// tempFile picks five letters or digits.
func randomSuffix() string {
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 5)
	for i := range b {
		b[i] = letters[rand.IntN(len(letters))]
	}
	return string(b)
}
