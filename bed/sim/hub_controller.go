package sim

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	simworld "github.com/baton-dr/baton/sim"
)

// watchDelay is how long a write takes to reach a controller's watch.
const watchDelay = 100 * time.Millisecond

// Error backoff, as controller-runtime's default per-item rate limiter: 5 ms
// doubling with every consecutive failure of a request, at most 1000 s.
const (
	backoffBase = 5 * time.Millisecond
	backoffMax  = 1000 * time.Second
)

// hotLoopRuns is how many reconciles of one request within a simulated minute
// make a hot loop: a reconciler that keeps triggering itself.
const hotLoopRuns = 600

// controller is a controller-runtime controller as the simulation runs it:
// one reconciler and a work queue of requests, fed by watch events (enqueue)
// and by the reconciler's own results -- RequeueAfter in simulated time, an
// error with backoff -- and run by the world's scheduler, never by a manager
// or a goroutine. Like the real queue it holds a request once: an earlier
// wake replaces a later one, a later one is dropped.
type controller struct {
	world      *World
	name       string
	reconciler reconcile.Reconciler
	// up says whether the controller's process runs; nil: always. A wake
	// while it is down is lost, as a crashed manager loses its queue.
	up func() bool
	// after runs after every reconcile (the invariants of its objects).
	after    func(key types.NamespacedName)
	queue    map[types.NamespacedName]queued
	failures map[types.NamespacedName]int
	runs     map[types.NamespacedName]minuteCount
	hot      map[types.NamespacedName]bool
}

type queued struct {
	at    time.Duration
	timer simworld.Timer
}

type minuteCount struct {
	minute int64
	runs   int
}

func newController(w *World, name string, r reconcile.Reconciler, up func() bool) *controller {
	return &controller{world: w, name: name, reconciler: r, up: up, queue: map[types.NamespacedName]queued{},
		failures: map[types.NamespacedName]int{}, runs: map[types.NamespacedName]minuteCount{}, hot: map[types.NamespacedName]bool{}}
}

// enqueue wakes the controller for key after d.
func (c *controller) enqueue(key types.NamespacedName, d time.Duration) {
	at := c.world.Sim.Elapsed() + d
	if q, ok := c.queue[key]; ok {
		if q.at <= at {
			return
		}
		q.timer.Cancel()
	}
	timer := c.world.Sim.Schedule(d, c.name+" reconcile "+key.String(), func() {
		delete(c.queue, key)
		c.run(key)
	})
	c.queue[key] = queued{at: at, timer: timer}
}

func (c *controller) run(key types.NamespacedName) {
	if c.up != nil && !c.up() {
		return
	}
	c.count(key)
	result, err := c.reconciler.Reconcile(context.Background(), reconcile.Request{NamespacedName: key})
	if c.after != nil {
		c.after(key)
	}
	switch {
	case err != nil:
		c.failures[key]++
		backoff := backoffMax
		if n := c.failures[key]; n < 30 {
			backoff = min(backoffBase<<(n-1), backoffMax)
		}
		c.world.Sim.Logf("controller", "%s %s: %v (again in %s)", c.name, key, err, backoff)
		c.enqueue(key, backoff)
	case result.RequeueAfter > 0:
		delete(c.failures, key)
		c.enqueue(key, result.RequeueAfter)
	default:
		delete(c.failures, key)
	}
}

// count reports a request reconciled too often within a simulated minute.
func (c *controller) count(key types.NamespacedName) {
	minute := int64(c.world.Sim.Elapsed() / time.Minute)
	n := c.runs[key]
	if n.minute != minute {
		n = minuteCount{minute: minute}
	}
	n.runs++
	c.runs[key] = n
	if n.runs > hotLoopRuns && !c.hot[key] {
		c.hot[key] = true
		c.world.violate("controller: a hot loop", c.name+" reconciled "+key.String()+" more than 600 times in a minute")
	}
}

// keys are the requests a controller should see after a restart: what its
// informers list.
func (c *controller) resync(keys []types.NamespacedName) {
	for _, key := range keys {
		c.enqueue(key, watchDelay)
	}
}
