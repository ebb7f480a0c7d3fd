package sim

import (
	"context"
	"fmt"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// courier carries a site operator's calls to its peers across the simulated
// network (storageapi.Courier). A question is a synchronous call within the
// question budget. A request travels as a message to the peer's operator,
// which acts on it when it arrives and answers with a message of its own;
// the answer is taken in when it arrives, or a timeout answers in its place
// at the client's deadline. Both meet the API-errors fault as every call does.
type courier struct{ site *Site }

var _ storageapi.Courier = courier{}

// peerMessageBytes is the size of a request or an answer on the wire.
const peerMessageBytes = 1024

func (c courier) peer(cluster chain.ClusterID) *Site {
	for _, s := range c.site.world.sites {
		if s.Cluster == cluster && s != c.site {
			return s
		}
	}
	return nil
}

func (c courier) Ask(ctx context.Context, _ core.Peers, q core.Question) core.Told {
	cluster := q.Cluster
	if q.Kind == core.AskHandover {
		cluster = q.Member.Cluster
	}
	target := c.peer(cluster)
	if target == nil {
		return core.Told{Question: q, Err: fmt.Errorf("no site serves %s: %w", cluster, chain.ErrUnreachable)}
	}
	a := api{from: c.site.Operator(), target: target, timeout: storageapi.DefaultQuestionTimeout}
	return core.Ask(storageapi.Peers{Clusters: map[chain.ClusterID]storageapi.Cluster{cluster: a}}, q)
}

func (c courier) Send(_ core.Peers, request core.Request, answered func(core.Answer)) {
	w, from := c.site.world, c.site.Operator()
	target := c.peer(request.Cluster())
	if target == nil {
		answered(core.Answer{Request: request, Err: fmt.Errorf("no site serves %s: %w", request.Cluster(), chain.ErrUnreachable)})
		return
	}
	label := request.Kind.String() + " " + request.Local().String()
	finished := false
	finish := func(a core.Answer) {
		if !finished {
			finished = true
			answered(a)
		}
	}
	w.Sim.After(callTimeout, "peer timeout "+label, func() {
		finish(core.Answer{Request: request, Err: fmt.Errorf("%s -> %s %s: %w: no answer within %s", from,
			target.Operator(), request.Kind, chain.ErrUnreachable, callTimeout)})
	})
	w.Net.Send(from, target.Operator(), peerMessageBytes, "peer "+label, func() {
		if finished || !target.ControllerUp {
			return // a crashed operator answers nothing: the timeout does
		}
		var answer core.Answer
		took := w.Timed(func() { answer = target.serveRequest(request) })
		w.Sim.After(took, "peer serves "+label, func() {
			w.Net.Send(target.Operator(), from, peerMessageBytes, "answer "+label, func() { finish(answer) })
		})
	})
}

// serveRequest acts on a peer's request as the operator's storage API does,
// through its API-errors fault.
func (s *Site) serveRequest(request core.Request) core.Answer {
	operation := "LearnSuccessor"
	if request.Kind == core.AskReceivers {
		operation = "PrepareReceive"
	}
	failed, faulted := s.world.storageAPIFailure(s, operation)
	var answer core.Answer
	if !faulted || failed.after {
		answer = core.Deliver(storageapi.Peers{Clusters: map[chain.ClusterID]storageapi.Cluster{s.Cluster: s.API}}, request)
	}
	if faulted {
		s.world.Sim.Logf("api-error", "%s %s: %v", s.Operator(), operation, failed.err)
		answer = core.Answer{Request: request, Err: failed.err}
	}
	return answer
}
