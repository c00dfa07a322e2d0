package history

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestHashAndName(t *testing.T) {
	cr := &appsv1.ControllerRevision{Data: runtime.RawExtension{Raw: []byte(`{"spec":{"template":{"$patch":"replace"}}}`)}}
	one := int32(1)
	base, probed := Hash(cr, nil), Hash(cr, &one)
	if base == probed {
		t.Errorf("collision count 1 hashes like none: %s", base)
	}
	// Pinned (FNV-32, not 32a, then SafeEncodeString): a change renames
	// every StatefulSet's revisions.
	if base != "5c7586484" {
		t.Errorf("Hash = %q", base)
	}
	if got := Name(strings.Repeat("a", 300), "h"); len(got) != 225 || !strings.HasSuffix(got, "a-h") {
		t.Errorf("Name of a long prefix = %d bytes %q", len(got), got[len(got)-5:])
	}
}

func TestTemplatePatch(t *testing.T) {
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	ss.Spec.Template.Labels = map[string]string{"b": "2", "a": "1"}
	ss.Spec.Replicas = new(int32)
	got, err := TemplatePatch(ss)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"a":"1","b":"2"}},"spec":{"containers":null}}}}`
	if string(got) != want {
		t.Errorf("TemplatePatch =\n%s\nwant\n%s", got, want)
	}
}

func TestSortAndNext(t *testing.T) {
	revs := []*appsv1.ControllerRevision{
		{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Revision: 3},
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Revision: 1},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Revision: 1},
	}
	Sort(revs)
	if revs[0].Name != "a" || revs[1].Name != "b" || revs[2].Name != "c" || Next(revs) != 4 || Next(nil) != 1 {
		t.Errorf("sorted %s %s %s, next %d", revs[0].Name, revs[1].Name, revs[2].Name, Next(revs))
	}
}
