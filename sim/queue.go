package sim

import "time"

// event is one scheduled callback.
type event struct {
	at    time.Duration // simulated time since the epoch
	seq   uint64        // scheduling order: breaks ties between equal times
	label string
	f     func()
	index int // position in the queue; -1 once run or cancelled
}

// eventQueue is a min-heap of events by (at, seq), driven by container/heap.
// (at, seq) is a total order, so the heap's internal layout never decides which
// of two events runs first.
type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }

func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q eventQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index = i
	q[j].index = j
}

func (q *eventQueue) Push(x any) {
	e := x.(*event)
	e.index = len(*q)
	*q = append(*q, e)
}

func (q *eventQueue) Pop() any {
	old := *q
	last := len(old) - 1
	e := old[last]
	old[last] = nil // let the collector take the event once it has run
	e.index = -1
	*q = old[:last]
	return e
}
