package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/baton-dr/baton/reports"
	"github.com/baton-dr/baton/storage/core"
	"github.com/baton-dr/baton/storageapi"
)

// The API-errors fault: an endpoint's APIs answer a share of calls with the
// transient errors a loaded server, or a proxy in front of it, answers. Every
// failure is drawn from the endpoint's own random stream, so a seed replays
// the same failures.

// apiFault is one failing endpoint.
type apiFault struct {
	rate float64
	rng  *rand.Rand
}

// FailAPI makes the endpoint's storage API and API server fail a share of
// calls until HealAPI.
func (w *World) FailAPI(endpoint string, rate float64) {
	if endpoint == "hub" && w.hub == nil {
		return // a world of memory records has no hub, so no API of it to fail
	}
	w.event(endpoint, reports.EventAPIError, "%s's APIs fail %.0f%% of calls (500, 503, 429, 409, lost answers)",
		endpoint, 100*rate)
	w.apiFaults[endpoint] = &apiFault{rate: rate, rng: w.Sim.Rand("api-errors/" + endpoint)}
}

// HealAPI ends the endpoint's failures.
func (w *World) HealAPI(endpoint string) {
	if _, ok := w.apiFaults[endpoint]; !ok {
		return
	}
	w.event(endpoint, reports.EventAPIError, "%s's APIs answer again", endpoint)
	delete(w.apiFaults, endpoint)
}

// failure is how one call fails: before the server acted, or after it acted
// and the answer was lost on the way back.
type failure struct {
	err   error
	after bool
}

// unfaulted lifts the fault for the bed's own omniscient reads -- the
// invariant checkers, the chains it draws, its bookkeeping of where a pod
// attached -- which stand for no component and must not fail; the returned
// function puts it back.
func (w *World) unfaulted() func() {
	w.observing++
	return func() { w.observing-- }
}

// draw decides whether the endpoint fails a call.
func (w *World) draw(endpoint string) (*apiFault, bool) {
	if w.observing > 0 {
		return nil, false
	}
	f, ok := w.apiFaults[endpoint]
	if !ok || f.rng.Float64() >= f.rate {
		return nil, false
	}
	return f, true
}

// storageAPIFailure is how the site's storage API fails a call, as the
// storage API client reports each answer: a proxy's 503 and 429 and the
// server's 500 and 409 come before anything happened; a 502 is the proxy
// losing the server's answer after the call took effect.
func (w *World) storageAPIFailure(target *Site, operation string) (failure, bool) {
	f, ok := w.draw(target.Name)
	if !ok {
		return failure{}, false
	}
	answer := func(status int, contentType string, body []byte) error {
		return storageapi.AnswerError(target.Cluster, "CALL", operation, status, contentType, body)
	}
	problem := func(err error) error {
		status, contentType, body := storageapi.ProblemAnswer(err)
		return answer(status, contentType, body)
	}
	switch f.rng.IntN(5) {
	case 0:
		return failure{err: answer(statusServiceUnavailable, "text/plain", []byte("upstream connect error"))}, true
	case 1:
		return failure{err: answer(statusTooManyRequests, "text/plain", []byte("rate limited"))}, true
	case 2:
		return failure{err: problem(errors.New("the record store timed out"))}, true
	case 3:
		return failure{err: problem(fmt.Errorf("%w: a concurrent change won", core.ErrConflict))}, true
	default:
		return failure{err: answer(statusBadGateway, "text/plain", []byte("upstream reset")), after: true}, true
	}
}

// kubeFailure is how an API server fails a request of verb on a resource:
// 500 (etcd timed out), 503, 429 before anything happened, a 409 conflict on
// a write, and -- on a write -- a 500 after etcd committed it, which the
// real server answers when etcd's answer comes too late.
//
// client-go retries an answer that carries Retry-After -- the 429 of the
// server's priority and fairness -- up to ten times before its caller sees
// it, so a 429 reaches the caller only when eleven draws in a row fail.
func (w *World) kubeFailure(endpoint, verb string, resource schema.GroupResource, name string) (failure, bool) {
	const clientGoRetries = 10
	for attempt := 0; ; attempt++ {
		f, ok := w.draw(endpoint)
		if !ok {
			return failure{}, false
		}
		failed := kubeAnswer(f.rng, verb, resource, name)
		if !apierrors.IsTooManyRequests(failed.err) || attempt == clientGoRetries {
			return failed, true
		}
	}
}

// kubeAnswer draws one failed answer of an API server.
func kubeAnswer(rng *rand.Rand, verb string, resource schema.GroupResource, name string) failure {
	write := verb != "get" && verb != "list"
	kinds := 3
	if write {
		kinds = 5
	}
	switch rng.IntN(kinds) {
	case 0:
		return failure{err: apierrors.NewInternalError(errors.New("etcdserver: request timed out"))}
	case 1:
		return failure{err: apierrors.NewServiceUnavailable("the server is currently unable to handle the request")}
	case 2:
		return failure{err: apierrors.NewTooManyRequests("the server has received too many requests and has asked us to try again later", 1)}
	case 3:
		return failure{err: apierrors.NewConflict(resource, name,
			errors.New("the object has been modified; please apply your changes to the latest version and try again"))}
	default:
		return failure{err: apierrors.NewInternalError(errors.New("etcdserver: request timed out, possibly due to previous leader failure")), after: true}
	}
}

// failAPIServers lets the API-errors fault reach every simulated API server.
func (w *World) failAPIServers() {
	servers := map[string]*apiServer{}
	for _, s := range w.sites {
		if s.api != nil {
			servers[s.Name] = s.api
		}
	}
	if w.hub != nil {
		servers["hub"] = w.hub.api
	}
	for endpoint, server := range servers {
		server.fails = func(verb string, resource schema.GroupResource, name string) (failure, bool) {
			return w.kubeFailure(endpoint, verb, resource, name)
		}
	}
}

// transientAPIError is an API server's answer a controller retries: its
// manager requeues the request, its informer lists again.
func transientAPIError(err error) bool {
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsConflict(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// The HTTP statuses the faulted API answers with, spelled out: the
// simulation bed imports no network package (ci/tidy).
const (
	statusTooManyRequests    = 429
	statusBadGateway         = 502
	statusServiceUnavailable = 503
)
