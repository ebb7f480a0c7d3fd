package core

import (
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
)

// Decisions is the site as a shell that performs effects sees it: each
// method decides one operation against the store as it is and returns the
// operation's effects, writing nothing and calling no peer. The shell holds
// the locks of the records the operation touches (storageapi.Local: the
// chain's, and the allocation's for placement) from the decision until its
// writes are committed, and none while it asks a question or sends a request.
//
// Site's own methods of the same names are the synchronous shell over it,
// for tests (the operator and the simulation go through storageapi.Local):
// they commit the writes, ask and send through the site's Peers at once,
// and feed the answers back.
type Decisions struct{ s *Site }

// Decide returns the site's decisions, taken on its store.
func (s *Site) Decide() Decisions { return Decisions{s: s} }

// view is the site deciding one operation: its reads and writes go through
// tx.
func (s *Site) view() *Site {
	if s.tx != nil {
		panic("core: an operation began inside another")
	}
	v := *s
	v.tx = &txn{base: s.store}
	v.store = v.tx
	return &v
}

// send leaves a request for the shell to make once the writes are in.
func (s *Site) send(r Request) { s.tx.requests = append(s.tx.requests, r) }

// ask records that the operation cannot decide without q.
func (s *Site) ask(q Question) { s.tx.ask = &q }

// decide runs one operation on a view of s and returns its result and its
// effects; an operation that failed, or that asks a question, leaves no
// writes and no requests.
func decide[T any](s *Site, operation func(op *Site) (T, error)) (T, Effects, error) {
	op := s.view()
	result, err := operation(op)
	if err != nil {
		var zero T
		return zero, Effects{}, err
	}
	if op.tx.ask != nil {
		var zero T
		return zero, Effects{Ask: op.tx.ask}, nil
	}
	op.tx.root()
	if invariantsChecked {
		if err := op.checkInvariants(); err != nil {
			panic(fmt.Sprintf("core: site %s after %d writes: %v", s.config.Cluster, len(op.tx.writes), err))
		}
	}
	return result, Effects{Writes: op.tx.writes, Requests: op.tx.requests}, nil
}

// perform is the synchronous shell: decide, ask what the operation needs and
// decide again, commit the writes, then make the requests through the
// site's peers and take in their answers.
func perform[T any](s *Site, operation func(d Decisions, told *Told) (T, Effects, error)) (T, error) {
	var told *Told
	for round := 0; ; round++ {
		result, effects, err := operation(s.Decide(), told)
		if err != nil {
			return result, err
		}
		if effects.Ask != nil {
			if round > 0 {
				panic(fmt.Sprintf("core: an operation asked %s again after it was told", effects.Ask))
			}
			answer := Ask(s.peers, *effects.Ask)
			told = &answer
			continue
		}
		if err := Commit(s.store, effects.Writes); err != nil {
			return result, err
		}
		return result, s.deliver(effects.Requests)
	}
}

// deliver makes requests through the site's peers and takes in each answer;
// a failed request is not an error (Tick sends it again), a failed write of
// its answer is.
func (s *Site) deliver(requests []Request) error {
	for _, r := range requests {
		_, effects, err := s.Decide().Answer(Deliver(s.peers, r))
		if err != nil {
			return err
		}
		if err := Commit(s.store, effects.Writes); err != nil {
			return err
		}
	}
	return nil
}

// Answer takes in a peer's answer to a request: a successor announced, or
// the receivers of a pairing. A failed request changes nothing but a
// pairing's last error; Tick sends it again.
func (d Decisions) Answer(a Answer) (struct{}, Effects, error) {
	return decide(d.s, func(op *Site) (struct{}, error) { return struct{}{}, op.answer(a) })
}

func (s *Site) answer(a Answer) error {
	switch a.Kind {
	case AnnounceSuccessor:
		return s.announced(a)
	case AskReceivers:
		return s.receiversAnswered(a)
	}
	panic(fmt.Sprintf("core: answer to a request of unknown kind %s", a.Kind))
}

// RootOf is the chain a local member or a replica's source belongs to, for
// the shell's lock: read without one, which is exact, as a member's root
// never changes. Unknown refs have none.
func (s *Site) RootOf(ref chain.Ref) (chain.Ref, bool, error) {
	if ref.Cluster == s.config.Cluster {
		v, err := s.Volume(ref)
		if err != nil {
			return chain.Ref{}, false, ignoreNotFound(err)
		}
		return v.Root, true, nil
	}
	r, found, err := s.replica(ref)
	return r.Root, found, err
}
