package kubectl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// manifest is one object read from a -f file, mapped to its resource.
type manifest struct {
	source    string // the file name, or "STDIN"
	obj       map[string]any
	res       apiResource
	namespace string // where it goes ("" for cluster-scoped resources)
	name      string
}

// readManifests reads every object (verb names the command in errors) of the -f files ("-" is standard input):
// YAML with "---" between documents, or JSON; a v1 List counts as its items.
// Everything is parsed, checked and mapped to a served resource before the
// caller sends anything, so a typo in the third document leaves the cluster
// untouched, as with upstream kubectl.
func (s *session) readManifests(verb string, files []string) ([]manifest, error) {
	files, err := s.expandPaths(files)
	if err != nil {
		return nil, err
	}
	var out []manifest
	for _, file := range files {
		data, source, err := s.readFile(file)
		if err != nil {
			return nil, err
		}
		objs, err := decodeManifests(data, source)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			m, err := s.mapManifest(obj, source)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 && len(files) > 0 {
		return nil, fmt.Errorf("no objects passed to %s", verb)
	}
	return out, nil
}

// fileExtensions are the files -f DIR reads (upstream:
// resource.FileExtensions); a file named on its own is read whatever its name.
var fileExtensions = []string{".json", ".yaml", ".yml"}

// recursiveUsage is -R's help, upstream's.
const recursiveUsage = "Process the directory used in -f, --filename recursively. Useful when you want to manage related manifests organized within the same directory."

// addRecursiveFlag adds -R, --recursive beside a command's -f.
func (s *session) addRecursiveFlag(cmd *cobra.Command) {
	cmd.Flags().BoolVarP(&s.recursive, "recursive", "R", false, recursiveUsage)
}

// expandPaths replaces each directory among the -f paths by the files in
// it that end in .json, .yaml or .yml, in name order, and with -R
// (s.recursive) by those of its subdirectories too, depth first, as
// upstream's resource builder walks them (ExpandPathsToFileVisitors). Files
// and "-" stay as they are; a missing path is reported when it is read.
func (s *session) expandPaths(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if p == "-" {
			out = append(out, p)
			continue
		}
		entries, err := s.cli.cfg.ReadDir(p)
		if err != nil {
			out = append(out, p) // a file, or missing: readFile says which
			continue
		}
		before := len(out)
		if out, err = s.walkDir(p, p, entries, out); err != nil {
			return nil, err
		}
		if len(out) == before && before == 0 {
			return nil, fmt.Errorf("error reading %v: recognized file extensions are %v", []string{p}, fileExtensions)
		}
	}
	return out, nil
}

func (s *session) walkDir(root, dir string, entries []fs.DirEntry, out []string) ([]string, error) {
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			if !s.recursive {
				continue
			}
			sub, err := s.cli.cfg.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("error reading %q: %v", root, err)
			}
			if out, err = s.walkDir(root, p, sub, out); err != nil {
				return nil, err
			}
			continue
		}
		if slices.Contains(fileExtensions, filepath.Ext(p)) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *session) readFile(file string) ([]byte, string, error) {
	if file == "-" {
		data, err := io.ReadAll(s.streams.In)
		return data, "STDIN", err
	}
	data, err := s.cli.cfg.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, file, fmt.Errorf("the path %q does not exist", file)
	}
	if err != nil {
		return nil, file, fmt.Errorf("error reading %s: %w", file, err)
	}
	return data, file, nil
}

// decodeManifests splits a file into objects.
func decodeManifests(data []byte, source string) ([]map[string]any, error) {
	var docs [][]byte
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err == io.EOF {
				break
			} else if err != nil {
				return nil, fmt.Errorf("error parsing %s: %v", source, err)
			}
			docs = append(docs, raw)
		}
	} else {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := r.Read()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("error parsing %s: %v", source, err)
			}
			docs = append(docs, doc)
		}
	}
	var out []map[string]any
	for _, doc := range docs {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "error converting YAML to JSON") {
				msg = "error converting YAML to JSON: " + msg
			}
			return nil, fmt.Errorf("error parsing %s: %s", source, msg)
		}
		if t := bytes.TrimSpace(j); len(t) == 0 || string(t) == "null" {
			continue // an empty document, or only comments
		}
		obj := map[string]any{}
		if err := decodeJSON(j, &obj); err != nil {
			return nil, fmt.Errorf("unable to decode %q: %v", source, err)
		}
		if obj["kind"] == "List" {
			items, _ := obj["items"].([]any)
			for _, it := range items {
				if m, ok := it.(map[string]any); ok {
					out = append(out, m)
				}
			}
			continue
		}
		out = append(out, obj)
	}
	return out, nil
}

// mapManifest checks an object's apiVersion, kind, name and namespace and
// finds the resource that serves it.
func (s *session) mapManifest(obj map[string]any, source string) (manifest, error) {
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	var missing []string
	if apiVersion == "" {
		missing = append(missing, "apiVersion not set")
	}
	if kind == "" {
		missing = append(missing, "kind not set")
	}
	if len(missing) > 0 {
		detail := missing[0]
		if len(missing) > 1 {
			detail = "[" + strings.Join(missing, ", ") + "]"
		}
		return manifest{}, fmt.Errorf("error validating %q: error validating data: %s; if you choose to ignore these errors, turn validation off with --validate=false", source, detail)
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return manifest{}, fmt.Errorf("unable to decode %q: %v", source, err)
	}
	name := nestedString(obj, "metadata", "name")
	ns := nestedString(obj, "metadata", "namespace")
	res, ok, err := s.forKind(gv.WithKind(kind))
	if err != nil {
		return manifest{}, err
	}
	if !ok {
		return manifest{}, fmt.Errorf("resource mapping not found for name: %q namespace: %q from %q: no matches for kind %q in version %q\nensure CRDs are installed first", name, ns, source, kind, apiVersion)
	}
	m := manifest{source: source, obj: obj, res: res, name: name}
	if res.Namespaced {
		switch {
		case ns == "":
			m.namespace = s.namespace
		case s.explicitNamespace() && ns != s.namespace:
			return manifest{}, fmt.Errorf("the namespace from the provided object %q does not match the namespace %q. You must pass '--namespace=%s' to perform this operation.", ns, s.namespace, ns)
		default:
			m.namespace = ns
		}
	}
	return m, nil
}

// sourceErr is kubectl's cmdutil.AddSourceToErr: an API error keeps its
// reason, and its message names the file ("error when creating "web.yaml": ...").
func sourceErr(verb, source string, err error) error {
	if source == "" {
		return err
	}
	var se *apierrors.StatusError
	if errors.As(err, &se) && se == err {
		st := se.Status()
		st.Message = fmt.Sprintf("error when %s %q: %v", verb, source, st.Message)
		return &apierrors.StatusError{ErrStatus: st}
	}
	return fmt.Errorf("error when %s %q: %v", verb, source, err)
}
