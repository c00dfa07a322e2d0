// Package yield lets the scheduler's long loops hand the thread back.
//
// Natively the Go runtime preempts goroutines, and yielding only keeps
// latency even. In a browser tab (GOOS=js) the Go program is single-threaded
// and is never preempted: a loop that filters 5,000 nodes for 1,000 pods
// would freeze the informers, the API server and the page until it ends. So
// the scheduler calls Now between pods and Maybe inside per-node loops.
package yield

// Every is how many iterations of a per-node loop pass between yields.
const Every = 64

// Maybe yields on every Every-th iteration; pass the loop index.
func Maybe(i int) {
	if i%Every == Every-1 {
		Now()
	}
}
