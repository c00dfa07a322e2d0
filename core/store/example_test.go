package store_test

import (
	"context"
	"fmt"

	"github.com/kubetab/kubetab/core/store"
)

// kube-apiserver's guaranteed update: write only if nobody wrote since we
// read, otherwise read what is there now and try again.
func ExampleStore_Txn() {
	s := store.New(store.Config{})
	s.Create("/registry/pods/default/web", []byte(`{"phase":"Pending"}`)) // revision 2
	s.Update("/registry/pods/default/web", []byte(`{"phase":"Running"}`), 0)

	// A client still holding resourceVersion 2 tries to write.
	key := "/registry/pods/default/web"
	resp, _ := s.Txn(store.TxnRequest{
		If:   []store.Compare{store.ModRevision(key, store.Equal, 2)},
		Then: []store.Op{store.OpPut(key, []byte(`{"phase":"Failed"}`))},
		Else: []store.Op{store.OpGet(key)},
	})
	cur := resp.Responses[0].Range.KVs[0]
	fmt.Printf("succeeded=%v; the key is at %d: %s\n", resp.Succeeded, cur.ModRevision, cur.Value)

	// It retries from what it just read.
	resp, _ = s.Txn(store.TxnRequest{
		If:   []store.Compare{store.ModRevision(key, store.Equal, cur.ModRevision)},
		Then: []store.Op{store.OpPut(key, []byte(`{"phase":"Failed"}`))},
	})
	fmt.Printf("succeeded=%v at revision %d\n", resp.Succeeded, resp.Revision)
	// Output:
	// succeeded=false; the key is at 3: {"phase":"Running"}
	// succeeded=true at revision 4
}

// A reflector lists at a revision, then watches from it: nothing is missed
// and nothing is seen twice.
func ExampleStore_ListAt() {
	s := store.New(store.Config{})
	s.Create("/registry/pods/default/a", nil)
	s.Create("/registry/pods/default/b", nil)
	kvs, rev, _ := s.ListAt("/registry/pods/", 0)
	fmt.Println("listed", len(kvs), "pods at revision", rev)

	s.Delete("/registry/pods/default/a", 0) // happens between the list and the watch

	w, _ := s.Watch(context.Background(), "/registry/pods/", rev)
	defer w.Stop()
	ev := <-w.ResultChan()
	fmt.Println(ev.Type, ev.KV.Key, "at", ev.Revision())

	// The past is still readable until it is compacted.
	old, _ := s.GetAt("/registry/pods/default/a", rev)
	fmt.Println("a at", rev, "was created at", old.CreateRevision)
	s.Compact(s.Revision())
	_, err := s.GetAt("/registry/pods/default/a", rev)
	fmt.Println(err)
	// Output:
	// listed 2 pods at revision 3
	// DELETE /registry/pods/default/a at 4
	// a at 3 was created at 2
	// store: required revision has been compacted
}

// A bookmark: the Progress event comes after every event up to its revision.
func ExampleWatcher_RequestProgress() {
	s := store.New(store.Config{})
	w, _ := s.Watch(context.Background(), "/registry/pods/", 0)
	defer w.Stop()
	s.Create("/registry/pods/default/a", nil) // revision 2, watched
	s.Create("/registry/nodes/node-1", nil)   // revision 3, not watched
	w.RequestProgress()
	for i := 0; i < 2; i++ {
		ev := <-w.ResultChan()
		fmt.Println(ev.Type, ev.Revision())
	}
	// Output:
	// PUT 2
	// PROGRESS 3
}
