package store

import "sort"

// eventLog is the history: every event with a revision after the compacted
// revision, oldest first. Watches that start in the past replay from it.
//
// etcd reads these from its bbolt backend, where every revision of every key
// is stored under its revision number, and a compaction deletes the old
// ones. Revisions only grow, so an in-memory slice in revision order does
// the same job: append at the end, binary search to seek, cut from the front
// to compact. Cutting moves a head index; the slice is copied down only when
// the dead front has grown as large as the live part, so compaction costs
// O(1) per event, amortized.
type eventLog struct {
	events []Event // events[head:] are the history
	head   int
}

func (l *eventLog) append(ev Event) { l.events = append(l.events, ev) }

// len is how many events the history holds.
func (l *eventLog) len() int { return len(l.events) - l.head }

// at is the i-th event of the history, 0 being the oldest.
func (l *eventLog) at(i int) Event { return l.events[l.head+i] }

// after returns the events with a revision greater than rev, oldest first.
// The slice aliases the log: read it only while holding the store's lock.
func (l *eventLog) after(rev int64) []Event {
	live := l.events[l.head:]
	i := sort.Search(len(live), func(i int) bool { return live[i].Revision() > rev })
	return live[i:]
}

// dropThrough removes the events with a revision up to and including rev
// and calls fn with each of them, oldest first.
func (l *eventLog) dropThrough(rev int64, fn func(Event)) {
	for l.head < len(l.events) && l.events[l.head].Revision() <= rev {
		fn(l.events[l.head])
		l.events[l.head] = Event{} // let its values go
		l.head++
	}
	if l.head == len(l.events) {
		l.events, l.head = l.events[:0], 0
	} else if l.head >= 1024 && l.head >= len(l.events)-l.head {
		l.events = append([]Event(nil), l.events[l.head:]...)
		l.head = 0
	}
}
