package storageapi

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Local is the Cluster of the site this process runs: the control plane itself,
// served by Server and called directly by the simulation. It is the shell of
// the site's core (core.Decisions), in etcd/raft's shape: each call decides
// one operation under the locks of the records it touches -- its chain's,
// and the allocation's when it places anything (Need); a node's report and
// the tick, chain by chain -- writes the
// operation's records and releases them, then hands the requests the
// operation leaves for the peers to its Courier, whose answers come back as
// decisions of their own. A question an operation needs a peer's answer to
// (a planned fail-over's Handover, Holdings before a pairing is aimed) is
// asked with no lock held, within the courier's question budget, and the
// operation decided again with the answer. So no call waits for a peer while
// it holds a lock, and a peer that is cut off costs a call at most that
// budget: two sites asking each other never wait for each other.
type Local struct {
	API
	acquire Acquire
	id      func() chain.ClusterID
	locks   Locks
	courier Courier
	commit  func(core.Store, []core.Write) error
	failed  func(error)

	mu sync.Mutex
	// inflight are the requests sent and not answered yet: the next tick
	// leaves them again, and they are not sent twice.
	inflight map[core.Request]bool
	// roots caches the chain of each member and replica source looked up:
	// exact, as a member's root never changes.
	roots map[chain.Ref]chain.Ref
	// versions count the commits made under each chain's lock, and under
	// the whole site's: a copy of the store read at some versions is
	// current for a chain whose count has not moved since (chainwise).
	versions versions
}

type versions struct {
	site   uint64
	chains map[chain.Ref]uint64
}

// rootsCached bounds Local.roots; past it the cache starts again.
const rootsCached = 1 << 14

// Acquire hands out the site (the operator's, built from its StorageCluster
// if need be) with a function Local calls as soon as it has it; an error
// when there is no site to serve yet.
type Acquire func(ctx context.Context) (s *core.Site, release func(), err error)

// LocalOption shapes a Local.
type LocalOption func(*Local)

// WithLocks replaces the locks (MutexLocks by default): the simulation's
// take simulated time.
func WithLocks(l Locks) LocalOption { return func(local *Local) { local.locks = l } }

// WithCourier replaces how the site reaches its peers (InlineCourier by
// default): the operator's is a GoCourier, the simulation's its network.
func WithCourier(c Courier) LocalOption { return func(local *Local) { local.courier = c } }

// WithCommit replaces how an operation's writes reach the store (core.Commit
// by default): the simulation's store-fault class fails the k-th of them.
func WithCommit(commit func(core.Store, []core.Write) error) LocalOption {
	return func(local *Local) { local.commit = commit }
}

// WithFailures is told of every failure no caller waits for: an answer of a
// peer that could not be taken in. By default they are dropped.
func WithFailures(f func(error)) LocalOption { return func(local *Local) { local.failed = f } }

// NewLocal serves s.
func NewLocal(s *core.Site, options ...LocalOption) *Local {
	return NewLocalWith(func(context.Context) (*core.Site, func(), error) { return s, func() {}, nil }, s.Cluster, options...)
}

// NewLocalWith serves the site acquire hands out. id names the cluster while
// there is no site yet.
func NewLocalWith(acquire Acquire, id func() chain.ClusterID, options ...LocalOption) *Local {
	l := &Local{acquire: acquire, id: id, locks: NewMutexLocks(), courier: InlineCourier{}, commit: core.Commit, failed: func(error) {},
		inflight: map[core.Request]bool{}, roots: map[chain.Ref]chain.Ref{}, versions: versions{chains: map[chain.Ref]uint64{}}}
	for _, option := range options {
		option(l)
	}
	l.API = API{l}
	return l
}

var _ Cluster = (*Local)(nil)

func (l *Local) ID() chain.ClusterID { return l.id() }

// Carry makes op on the site, deciding it in the core.
func (l *Local) Carry(ctx context.Context, op Operation, request any) (any, error) {
	return op.local(ctx, l, request)
}

func (l *Local) site(ctx context.Context) (*core.Site, error) {
	s, release, err := l.acquire(ctx)
	if err != nil {
		return nil, err
	}
	release()
	return s, nil
}

// decision is one operation of core.Decisions, told what it asked.
type decision[T any] func(d core.Decisions, told *core.Told) (T, core.Effects, error)

// run makes one operation: lock what need names, decide, write, release;
// a question is asked with nothing held and the operation decided again
// with its answer; the requests go out last.
func run[T any](ctx context.Context, l *Local, need func(*core.Site) (Need, error), decide decision[T]) (T, error) {
	s, err := l.site(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return runOn(ctx, l, s, need, decide)
}

// runOn is run on a site the caller has (a site is built from its
// StorageCluster, which handing it out reads).
func runOn[T any](ctx context.Context, l *Local, s *core.Site, need func(*core.Site) (Need, error), decide decision[T]) (T, error) {
	var zero T
	n, err := need(s)
	if err != nil {
		return zero, err
	}
	var told *core.Told
	for round := 0; ; round++ {
		result, effects, err := locked(ctx, l, s, n, decide, told)
		if err != nil {
			return zero, err
		}
		if effects.Ask == nil {
			l.send(s, effects.Requests)
			return result, nil
		}
		if round > 0 {
			panic(fmt.Sprintf("storageapi: an operation asked %s again after it was told", effects.Ask))
		}
		answer := l.courier.Ask(ctx, s.Peers(), *effects.Ask)
		told = &answer
	}
}

// locked decides and writes under the locks of need.
func locked[T any](ctx context.Context, l *Local, s *core.Site, need Need, decide decision[T], told *core.Told) (T, core.Effects, error) {
	var zero T
	release, err := l.locks.Lock(ctx, need)
	if err != nil {
		return zero, core.Effects{}, err
	}
	defer release()
	result, effects, err := decide(s.Decide(), told)
	if err != nil {
		return zero, core.Effects{}, err
	}
	err = l.commit(s.Store(), effects.Writes)
	if len(effects.Writes) > 0 {
		l.bump(need) // a failed commit may have made some of its writes
	}
	if err != nil {
		return zero, core.Effects{}, err
	}
	return result, effects, nil
}

// bump counts a commit made under the locks of need.
func (l *Local) bump(need Need) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if need.Site {
		l.versions.site++
	}
	for _, root := range need.Chains {
		l.versions.chains[root]++
	}
}

// stamp copies the versions now.
func (l *Local) stamp() versions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return versions{site: l.versions.site, chains: maps.Clone(l.versions.chains)}
}

// current tells whether nothing was committed under root's lock, or the
// whole site's, since stamp.
func (l *Local) current(root chain.Ref, stamp versions) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.versions.site == stamp.site && l.versions.chains[root] == stamp.chains[root]
}

// chainwise makes an operation that touches every chain -- a node's report,
// the tick -- in two steps. It decides the whole operation once (all), on
// the store as it is and with no lock held, then commits it chain by chain,
// each under its own lock alone: a chain nothing was committed to since the
// decision began takes the decision's part for it, and one something was
// committed to is decided again alone (one), on the store, under its lock.
// So the operation reads the store once, and holds one chain at a time.
func chainwise(ctx context.Context, l *Local, s *core.Site, all func(d core.Decisions) (struct{}, core.Effects, error),
	one func(d core.Decisions, root chain.Ref) (struct{}, core.Effects, error)) error {
	stamp := l.stamp()
	_, effects, err := all(s.Decide())
	if err != nil {
		return err
	}
	parts := effects.ByChain()
	if p, ok := parts[chain.Ref{}]; ok {
		panic(fmt.Sprintf("storageapi: an operation decided chain by chain wrote a record of no chain: %+v", p))
	}
	roots := slices.Collect(maps.Keys(parts))
	roots = append(roots, l.changedSince(stamp)...)
	var errs []error
	for _, root := range sortedRoots(roots) {
		_, err := runOn(ctx, l, s, need(Need{Chains: []chain.Ref{root}}), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
			if l.current(root, stamp) {
				return struct{}{}, parts[root], nil
			}
			return one(d, root)
		}))
		if err != nil {
			errs = append(errs, fmt.Errorf("chain %s: %w", root, err))
		}
	}
	return errors.Join(errs...)
}

// changedSince lists the chains committed to since stamp.
func (l *Local) changedSince(stamp versions) []chain.Ref {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []chain.Ref
	for root, v := range l.versions.chains {
		if stamp.chains[root] != v {
			out = append(out, root)
		}
	}
	return out
}

// send hands requests not in flight yet to the courier.
func (l *Local) send(s *core.Site, requests []core.Request) {
	for _, r := range requests {
		l.mu.Lock()
		busy := l.inflight[r]
		l.inflight[r] = true
		l.mu.Unlock()
		if !busy {
			l.courier.Send(s.Peers(), r, func(a core.Answer) { l.answered(s, a) })
		}
	}
}

// answered takes in a peer's answer, under the lock of the chain it is about.
func (l *Local) answered(s *core.Site, a core.Answer) {
	l.mu.Lock()
	delete(l.inflight, a.Request)
	l.mu.Unlock()
	ctx := context.Background()
	n, err := Need{Chains: []chain.Ref{a.Root}}, error(nil)
	if a.Root.IsZero() {
		n, err = l.chainOf(s, a.Local())
	}
	if err == nil {
		_, err = runOn(ctx, l, s, need(n), untold(func(d core.Decisions) (struct{}, core.Effects, error) { return d.Answer(a) }))
	}
	if err != nil {
		l.failed(fmt.Errorf("failed to take in the answer to %s: %w", a.Request, err))
	}
}

// chainOf needs the chain of a local member or of a replica's source.
func (l *Local) chainOf(s *core.Site, ref chain.Ref) (Need, error) {
	l.mu.Lock()
	root, ok := l.roots[ref]
	l.mu.Unlock()
	if ok {
		return Need{Chains: []chain.Ref{root}}, nil
	}
	root, found, err := s.RootOf(ref)
	if err != nil || !found {
		return Need{}, err // an unknown member: the decision finds nothing either
	}
	l.mu.Lock()
	if len(l.roots) >= rootsCached {
		clear(l.roots)
	}
	l.roots[ref] = root
	l.mu.Unlock()
	return Need{Chains: []chain.Ref{root}}, nil
}

// onChain needs ref's chain; placing adds the allocation.
func (l *Local) onChain(ref chain.Ref, placing bool) func(*core.Site) (Need, error) {
	return func(s *core.Site) (Need, error) {
		n, err := l.chainOf(s, ref)
		n.Allocation = placing
		return n, err
	}
}

func need(n Need) func(*core.Site) (Need, error) {
	return func(*core.Site) (Need, error) { return n, nil }
}

// untold adapts a decision that asks nothing.
func untold[T any](f func(d core.Decisions) (T, core.Effects, error)) decision[T] {
	return func(d core.Decisions, _ *core.Told) (T, core.Effects, error) { return f(d) }
}

// read serves a call that only reads: no lock, as a record is read whole
// and every state between two writes of an operation is one the core reads.
func read[T any](ctx context.Context, l *Local, f func(*core.Site) (T, error)) (T, error) {
	s, err := l.site(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(s)
}

// Tick runs the site's time-driven work chain by chain, holding each chain
// while it decides and writes, and nothing while its requests go out.
func (l *Local) Tick() error {
	ctx := context.Background()
	s, err := l.site(ctx)
	if err != nil {
		return err
	}
	return chainwise(ctx, l, s, core.Decisions.Tick, core.Decisions.TickChain)
}

// Drill makes (or finds) a test fail-over's bubble (core.Decisions.Drill):
// an operation of the operator's own reconciler, not of the storage API.
// It holds the whole site, as a drill reads a chain's replica and places a
// volume apart from any chain.
func (l *Local) Drill(ctx context.Context, request core.DrillRequest) (core.Volume, error) {
	return run(ctx, l, need(Need{Site: true}), untold(func(d core.Decisions) (core.Volume, core.Effects, error) {
		return d.Drill(request)
	}))
}

// FenceNode records that a node is down, or back (core.Decisions.FenceNode):
// the operator's node-fencing reconciler's. A node's record is the
// allocation's, as a report of the node's own record is (Report).
func (l *Local) FenceNode(ctx context.Context, name string, fenced bool) error {
	_, err := run(ctx, l, need(Need{Allocation: true}), untold(func(d core.Decisions) (struct{}, core.Effects, error) {
		return d.FenceNode(name, fenced)
	}))
	return err
}
