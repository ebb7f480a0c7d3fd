package storageapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Errors of the API itself, beside the storage/core sentinels.
var (
	// ErrUnauthorized: the request carried no bearer token (401).
	ErrUnauthorized = errors.New("no bearer token")
	// ErrForbidden: the token is not this cluster's secret (403).
	ErrForbidden = errors.New("token is not this cluster's secret")
	// ErrInternal: the server failed in a way no sentinel names (500).
	ErrInternal = errors.New("storage API internal error")
)

// kinds maps every sentinel that crosses the wire to a machine-readable kind
// and an HTTP status. The server writes the kind of the first sentinel the
// error wraps; the client maps the kind back to the sentinel, so errors.Is
// works the same on both sides. The first match wins: an error wrapping two
// sentinels gets the earlier kind.
var kinds = []struct {
	kind   string
	err    error
	status int
}{
	{"not-found", core.ErrNotFound, http.StatusNotFound},
	{"exists", core.ErrExists, http.StatusConflict},
	{"too-large", errTooLarge, http.StatusRequestEntityTooLarge}, // before "invalid": it wraps core.ErrInvalid
	{"invalid", core.ErrInvalid, http.StatusBadRequest},
	{"malformed-ref", chain.ErrMalformedRef, http.StatusBadRequest},
	{"malformed-snapshot", core.ErrMalformedSnapshotRef, http.StatusBadRequest},
	{"not-local", core.ErrNotLocal, http.StatusMisdirectedRequest},
	{"peer-unreachable", core.ErrPeerUnreachable, http.StatusConflict},
	{"peer-primary", core.ErrPeerPrimary, http.StatusConflict},
	{"final-sync-pending", core.ErrFinalSyncPending, http.StatusConflict},
	{"no-replica", core.ErrNoReplica, http.StatusConflict},
	{"no-snapshot", core.ErrNoSnapshot, http.StatusConflict},
	{"superseded", core.ErrSuperseded, http.StatusConflict},
	{"replicated", core.ErrReplicated, http.StatusConflict},
	{"no-capacity", core.ErrNoCapacity, http.StatusInsufficientStorage},
	{"conflict", core.ErrConflict, http.StatusConflict},
	{"not-active", core.ErrNotActive, http.StatusConflict},
	{"not-placed", core.ErrNotPlaced, http.StatusConflict},
	{"adopting", core.ErrAdopting, http.StatusServiceUnavailable},
	// A server that could not reach a third site answers; it is not itself
	// unreachable.
	{"peer-unreachable", chain.ErrUnreachable, http.StatusConflict},
	{"unauthorized", ErrUnauthorized, http.StatusUnauthorized},
	{"forbidden", ErrForbidden, http.StatusForbidden},
	{"no-route", errNoRoute, http.StatusNotFound},
}

// errTooLarge is a request body over the limit; the client sees core.ErrInvalid.
var errTooLarge = fmt.Errorf("%w: request body too large", core.ErrInvalid)

// Problem is an RFC 9457 problem document with baton's machine-readable kind.
type Problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
	Kind   string `json:"kind"`
}

const problemType = "application/problem+json"

// problemOf renders err for the wire.
func problemOf(err error) Problem {
	p := Problem{Kind: "internal", Status: http.StatusInternalServerError, Detail: err.Error()}
	for _, k := range kinds {
		if errors.Is(err, k.err) {
			p.Kind, p.Status = k.kind, k.status
			break
		}
	}
	p.Type = "urn:baton-dr:storageapi:" + p.Kind
	p.Title = http.StatusText(p.Status)
	return p
}

// ProblemAnswer is what the server answers for err: its status, Content-Type
// and problem document.
func ProblemAnswer(err error) (status int, contentType string, body []byte) {
	p := problemOf(err)
	body, _ = json.Marshal(p) // a Problem always encodes
	return p.Status, problemType, body
}

func writeProblem(w http.ResponseWriter, err error) {
	p := problemOf(err)
	w.Header().Set("Content-Type", problemType)
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="baton storage API"`)
	}
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// ProblemError is a problem document the server answered, as a Go error that
// wraps the sentinel its kind names.
type ProblemError struct {
	Problem
	sentinel error
}

func (e *ProblemError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	return fmt.Sprintf("%s (%d %s)", e.Kind, e.Status, e.Title)
}

func (e *ProblemError) Unwrap() error { return e.sentinel }

// errorOf maps a problem document back to its sentinel: the first entry of
// kinds with its kind (errTooLarge wraps core.ErrInvalid).
func errorOf(p Problem) error {
	e := &ProblemError{Problem: p, sentinel: ErrInternal}
	for _, k := range kinds {
		if k.kind == p.Kind {
			e.sentinel = k.err
			break
		}
	}
	return e
}
