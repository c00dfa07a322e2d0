package controller

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"

	"github.com/davecgh/go-spew/spew"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
)

// ComputeHash is the pod-template-hash: a short name for a pod template, so
// that a Deployment's ReplicaSet for one template is "web-5d9c7b8f6" and a
// changed template gets a different one. collisionCount (the Deployment's
// status.collisionCount) is mixed in when it is set, so that a hash that
// collides with an unrelated ReplicaSet can be moved aside.
//
// It is computed as upstream does (pkg/controller/controller_utils.go
// ComputeHash with pkg/util/hash.DeepHashObject): the template is printed
// with go-spew (sorted map keys, pointers followed, no String methods), the
// text goes through FNV-32a, the collision count is appended as 8
// little-endian bytes, and the decimal sum is re-encoded with
// rand.SafeEncodeString (consonants and digits only, so no words appear).
// With the same k8s.io/api version, a template hashes as in a real cluster.
func ComputeHash(template *corev1.PodTemplateSpec, collisionCount *int32) string {
	hasher := fnv.New32a()
	printer := spew.ConfigState{Indent: " ", SortKeys: true, DisableMethods: true, SpewKeys: true}
	printer.Fprintf(hasher, "%#v", *template)
	if collisionCount != nil {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, uint32(*collisionCount))
		hasher.Write(b)
	}
	return rand.SafeEncodeString(fmt.Sprint(hasher.Sum32()))
}
