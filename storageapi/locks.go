package storageapi

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/baton-dr/baton/storage/chain"
)

// Need is what one call into the core locks while it decides and writes: its
// chains' records, the site's allocation (DRBD ports and minors, capacity,
// the uniqueness of names), or the whole site (a node's report and the
// tick, which touch every chain). No lock is held while a peer is asked or
// told anything.
type Need struct {
	Site       bool
	Chains     []chain.Ref
	Allocation bool
}

func (n Need) String() string {
	return fmt.Sprintf("site=%v chains=%v allocation=%v", n.Site, n.Chains, n.Allocation)
}

// Locks serialises the calls into one site's core whose records overlap.
// Lock takes what need names -- the site (shared, or exclusive with
// need.Site), then each chain in order of its root, then the allocation --
// and returns the function that releases it all; ctx bounds the wait.
type Locks interface {
	Lock(ctx context.Context, need Need) (release func(), err error)
}

// siteReaders bounds the calls holding the site shared at once: an
// exclusive holder takes all of them.
const siteReaders = 1 << 20

// MutexLocks are Locks of sync primitives, for a process with goroutines.
type MutexLocks struct {
	site       *semaphore.Weighted // FIFO: a waiting exclusive holder goes before later shared ones
	allocation *semaphore.Weighted
	mu         sync.Mutex
	chains     map[chain.Ref]*chainLock
}

// chainLock is one chain's lock and the count of calls holding or awaiting it.
type chainLock struct {
	held  *semaphore.Weighted
	users int
}

// NewMutexLocks returns locks with nothing held.
func NewMutexLocks() *MutexLocks {
	return &MutexLocks{site: semaphore.NewWeighted(siteReaders), allocation: semaphore.NewWeighted(1),
		chains: map[chain.Ref]*chainLock{}}
}

var _ Locks = (*MutexLocks)(nil)

func (l *MutexLocks) Lock(ctx context.Context, need Need) (func(), error) {
	var releases []func()
	release := func() {
		for i := len(releases) - 1; i >= 0; i-- {
			releases[i]()
		}
	}
	weight := int64(1)
	if need.Site {
		weight = siteReaders
	}
	if err := l.site.Acquire(ctx, weight); err != nil {
		return nil, fmt.Errorf("%w: waiting for the site's lock: %w", chain.ErrUnreachable, err)
	}
	releases = append(releases, func() { l.site.Release(weight) })
	for _, root := range sortedRoots(need.Chains) {
		c := l.chain(root)
		if err := c.held.Acquire(ctx, 1); err != nil {
			l.drop(root)
			release()
			return nil, fmt.Errorf("%w: waiting for the lock of chain %s: %w", chain.ErrUnreachable, root, err)
		}
		releases = append(releases, func() { c.held.Release(1); l.drop(root) })
	}
	if need.Allocation {
		if err := l.allocation.Acquire(ctx, 1); err != nil {
			release()
			return nil, fmt.Errorf("%w: waiting for the allocation's lock: %w", chain.ErrUnreachable, err)
		}
		releases = append(releases, func() { l.allocation.Release(1) })
	}
	return release, nil
}

// chain returns root's lock, counting the caller as one of its users.
func (l *MutexLocks) chain(root chain.Ref) *chainLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.chains[root]
	if !ok {
		c = &chainLock{held: semaphore.NewWeighted(1)}
		l.chains[root] = c
	}
	c.users++
	return c
}

// drop ends one user of root's lock; the last one forgets it, so the map
// holds only the chains in use.
func (l *MutexLocks) drop(root chain.Ref) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.chains[root]; c != nil {
		if c.users--; c.users == 0 {
			delete(l.chains, root)
		}
	}
}

// sortedRoots orders and deduplicates roots: every caller takes chains in
// one order, so two callers never wait for each other in a circle.
func sortedRoots(roots []chain.Ref) []chain.Ref {
	out := slices.Clone(roots)
	slices.SortFunc(out, func(a, b chain.Ref) int {
		if c := cmp.Compare(a.Cluster, b.Cluster); c != 0 {
			return c
		}
		return cmp.Compare(a.Volume, b.Volume)
	})
	out = slices.Compact(out)
	return slices.DeleteFunc(out, chain.Ref.IsZero)
}
