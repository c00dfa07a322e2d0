package kubectl

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

// overrideFlags are --overrides and --override-type of `kubectl run` and
// `kubectl expose` (upstream cmdutil.OverrideOptions): a patch applied to
// the generated object before it is sent, for the fields no flag sets.
//
//	kubectl run web --image=hello --overrides='{"spec":{"nodeName":"node-2"}}'
type overrideFlags struct {
	overrides    string
	overrideType string
}

func (o *overrideFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.overrides, "overrides", "", "An inline JSON override for the generated object. If this is non-empty, it is used to override the generated object. Requires that the object supply a valid apiVersion field.")
	cmd.Flags().StringVar(&o.overrideType, "override-type", "merge", "The method used to override the generated object: json, merge, or strategic.")
}

// applyOverrides returns obj with the overrides applied: obj as JSON,
// patched as an RFC 7386 merge patch (the default), an RFC 6902 JSON patch
// or a strategic merge patch, and decoded again. Fields the type does not
// have are dropped, as upstream's decoder drops them.
func applyOverrides[T any](o *overrideFlags, obj *T) (*T, error) {
	if o.overrides == "" {
		return obj, nil
	}
	target, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var patched []byte
	switch o.overrideType {
	case "merge", "":
		patched, err = jsonpatch.MergePatch(target, []byte(o.overrides))
	case "json":
		var patch jsonpatch.Patch
		if patch, err = jsonpatch.DecodePatch([]byte(o.overrides)); err == nil {
			patched, err = patch.Apply(target)
		}
	case "strategic":
		patched, err = strategicpatch.StrategicMergePatch(target, []byte(o.overrides), new(T))
	default:
		return nil, fmt.Errorf("invalid override type: %v", o.overrideType)
	}
	if err != nil {
		return nil, err
	}
	out := new(T)
	if err := json.Unmarshal(patched, out); err != nil {
		return nil, err
	}
	return out, nil
}
