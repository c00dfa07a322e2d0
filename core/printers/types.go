package printers

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// listElem returns a zero pointer to the item type of a typed list
// (*v1.Pod for a *v1.PodList).
func listElem(list runtime.Object) runtime.Object {
	v := reflect.ValueOf(list)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	items := v.FieldByName("Items")
	if !items.IsValid() || items.Kind() != reflect.Slice {
		return list
	}
	elem := items.Type().Elem()
	if elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if obj, ok := reflect.New(elem).Interface().(runtime.Object); ok {
		return obj
	}
	return list
}
