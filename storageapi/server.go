package storageapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storage/core"
)

// Server serves one Cluster over HTTPS. Every request carries the cluster's
// secret as a bearer token: none is 401, another one 403 (the caller holds a
// token, just not this cluster's). Errors are RFC 9457 problem documents whose
// kind names the storage/core sentinel.
type Server struct {
	cluster    Cluster
	secretHash [sha256.Size]byte
	log        logr.Logger
	mux        *http.ServeMux
}

// handle serves one route: the request, its body (already size-limited), and
// the value to answer (nil: 204).
type handle func(r *http.Request, body []byte) (any, error)

// NewServer serves cluster, admitting requests that carry secret. The logger
// gets one line per request, never a header or a body.
func NewServer(cluster Cluster, secret string, log logr.Logger) (*Server, error) {
	if strings.TrimSpace(secret) == "" {
		return nil, errors.New("storage API server: the cluster secret is empty")
	}
	s := &Server{cluster: cluster, secretHash: sha256.Sum256([]byte(secret)), log: log, mux: http.NewServeMux()}
	for pattern, h := range s.routes() {
		s.mux.Handle(pattern, s.serve(h))
	}
	s.mux.Handle("/", s.serve(func(r *http.Request, _ []byte) (any, error) {
		return nil, errNoRoute
	}))
	return s, nil
}

var errNoRoute = errors.New("no such operation in storage API v1")

func (s *Server) routes() map[string]handle {
	return map[string]handle{
		"POST /v1/volumes":                  withBody(s.createVolume),
		"GET /v1/volumes/{ref}":             withRef(s.volume),
		"DELETE /v1/volumes/{ref}":          withRef(s.deleteVolume),
		"POST /v1/volumes/{ref}/expand":     withRefBody(s.expand),
		"POST /v1/volumes/{ref}/attach":     withRefBody(s.attach),
		"POST /v1/volumes/{ref}/filesystem": withRefBody(s.filesystem),
		"POST /v1/volumes/{ref}/enable":     withRefBody(s.enable),
		"POST /v1/volumes/{ref}/disable":    withRef(s.disable),
		"POST /v1/volumes/{ref}/failover":   withRefBody(s.failover),
		"POST /v1/volumes/{ref}/demote":     withRef(s.demote),
		"POST /v1/volumes/{ref}/resync":     withRefBody(s.resync),
		"GET /v1/volumes/{ref}/status":      withRef(s.status),
		"GET /v1/volumes/{ref}/handover":    withRef(s.handover),
		"POST /v1/volumes/{ref}/successor":  withRefBody(s.successor),
		"GET /v1/chains/{ref}/members":      withRef(s.members),
		"GET /v1/chains/{ref}/holdings":     withRef(s.holdings),
		"POST /v1/replicas":                 withBody(s.prepareReceive),
		"POST /v1/snapshots":                withBody(s.createSnapshot),
		"GET /v1/snapshots":                 s.listSnapshots,
		"DELETE /v1/snapshots/{id}":         s.deleteSnapshot,
		"GET /v1/capacity":                  s.capacity,
		"GET /v1/nodes/{node}/spec":         s.spec,
		"POST /v1/nodes/{node}/report":      withBody(s.report),
	}
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// serve wraps a route with authentication, the body limit, encoding and the
// request log.
func (s *Server) serve(h handle) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started := time.Now()
		status, err := s.answer(w, r, h)
		log := s.log.WithValues("method", r.Method, "path", r.URL.Path, "status", status, "latency", time.Since(started))
		if err != nil && status >= 500 {
			log.Error(err, "storage API request failed")
			return
		}
		log.V(1).Info("storage API request")
	})
}

func (s *Server) answer(w http.ResponseWriter, r *http.Request, h handle) (int, error) {
	if err := s.authenticate(r); err != nil {
		writeProblem(w, err)
		return problemOf(err).Status, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		err = fmt.Errorf("%w (limit %d bytes)", errTooLarge, MaxBodyBytes)
	}
	var value any
	if err == nil {
		value, err = h(r, body)
	}
	if err != nil {
		writeProblem(w, err)
		return problemOf(err).Status, err
	}
	if value == nil {
		w.WriteHeader(http.StatusNoContent)
		return http.StatusNoContent, nil
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(value); err != nil {
		return http.StatusOK, fmt.Errorf("failed to write the answer: %w", err)
	}
	return http.StatusOK, nil
}

// authenticate compares the bearer token with the secret in constant time
// (over hashes, so the secret's length does not leak either).
func (s *Server) authenticate(r *http.Request) error {
	scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return ErrUnauthorized
	}
	hash := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if subtle.ConstantTimeCompare(hash[:], s.secretHash[:]) != 1 {
		return ErrForbidden
	}
	return nil
}

// NewHTTPServer returns an HTTPS server for handler: TLS 1.2 at least, header
// and idle timeouts set. Serve it with ServeTLS(listener, "", "").
func NewHTTPServer(handler http.Handler, certificate tls.Certificate) *http.Server {
	return &http.Server{
		Handler:           handler,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

func pathRef(r *http.Request) (chain.Ref, error) { return chain.ParseRef(r.PathValue("ref")) }

// withRef serves an operation on the member or chain named in the path: a
// reference that does not parse is refused before the operation runs.
func withRef(op func(r *http.Request, ref chain.Ref) (any, error)) handle {
	return func(r *http.Request, _ []byte) (any, error) {
		ref, err := pathRef(r)
		if err != nil {
			return nil, err
		}
		return op(r, ref)
	}
}

// withBody serves an operation whose request is a body of type T, decoded
// strictly before the operation runs.
func withBody[T any](op func(r *http.Request, body T) (any, error)) handle {
	return func(r *http.Request, body []byte) (any, error) {
		b, err := decodeStrict[T](body)
		if err != nil {
			return nil, err
		}
		return op(r, b)
	}
}

// withRefBody serves an operation on the path's member that also takes a body
// of type T: the reference is checked first, then the body.
func withRefBody[T any](op func(r *http.Request, ref chain.Ref, body T) (any, error)) handle {
	return func(r *http.Request, body []byte) (any, error) {
		ref, err := pathRef(r)
		if err != nil {
			return nil, err
		}
		b, err := decodeStrict[T](body)
		if err != nil {
			return nil, err
		}
		return op(r, ref, b)
	}
}

func (s *Server) createVolume(r *http.Request, b CreateVolumeBody) (any, error) {
	if b.Source == nil {
		return s.cluster.CreateVolume(r.Context(), b.Request)
	}
	if !b.Source.Volume.IsZero() {
		if err := validRef("source volume", b.Source.Volume); err != nil {
			return nil, err
		}
	}
	if !b.Source.Snapshot.Member.IsZero() {
		if _, err := core.ParseSnapshotRef(b.Source.Snapshot.String()); err != nil {
			return nil, err
		}
	}
	return s.cluster.CreateVolumeFrom(r.Context(), b.Request, *b.Source)
}

func (s *Server) volume(r *http.Request, ref chain.Ref) (any, error) {
	return s.cluster.Volume(r.Context(), ref)
}

func (s *Server) deleteVolume(r *http.Request, ref chain.Ref) (any, error) {
	return nil, s.cluster.DeleteVolume(r.Context(), ref)
}

func (s *Server) expand(r *http.Request, ref chain.Ref, b expandBody) (any, error) {
	return s.cluster.ExpandVolume(r.Context(), ref, b.SizeBytes)
}

func (s *Server) attach(r *http.Request, ref chain.Ref, b attachBody) (any, error) {
	return s.cluster.Attach(r.Context(), ref, b.Node)
}

func (s *Server) filesystem(r *http.Request, ref chain.Ref, b filesystemBody) (any, error) {
	return nil, s.cluster.RecordFilesystem(r.Context(), ref, b.FsType)
}

func (s *Server) enable(r *http.Request, ref chain.Ref, b enableBody) (any, error) {
	if err := validCluster("target", b.Target); err != nil {
		return nil, err
	}
	return nil, s.cluster.Enable(r.Context(), ref, b.Target)
}

func (s *Server) disable(r *http.Request, ref chain.Ref) (any, error) {
	return nil, s.cluster.Disable(r.Context(), ref)
}

func (s *Server) failover(r *http.Request, ref chain.Ref, b failoverBody) (any, error) {
	return s.cluster.Failover(r.Context(), ref, b.Force)
}

func (s *Server) demote(r *http.Request, ref chain.Ref) (any, error) {
	return nil, s.cluster.Demote(r.Context(), ref)
}

func (s *Server) resync(r *http.Request, ref chain.Ref, b resyncBody) (any, error) {
	if err := validCluster("fail-back source", b.FailbackSource); err != nil {
		return nil, err
	}
	ready, err := s.cluster.Resync(r.Context(), ref, b.FailbackSource)
	return resyncAnswer{Ready: ready}, err
}

func (s *Server) status(r *http.Request, ref chain.Ref) (any, error) {
	return s.cluster.Status(r.Context(), ref)
}

func (s *Server) handover(r *http.Request, ref chain.Ref) (any, error) {
	return s.cluster.Handover(r.Context(), ref)
}

func (s *Server) successor(r *http.Request, ref chain.Ref, b successorBody) (any, error) {
	if err := validRef("successor", b.Successor); err != nil {
		return nil, err
	}
	return nil, s.cluster.LearnSuccessor(r.Context(), ref, b.Successor)
}

func (s *Server) members(r *http.Request, ref chain.Ref) (any, error) {
	members, err := s.cluster.Members(r.Context(), ref)
	return nonNil(members), err
}

func (s *Server) holdings(r *http.Request, ref chain.Ref) (any, error) {
	guids, err := s.cluster.Holdings(r.Context(), ref)
	return nonNil(guids), err
}

func (s *Server) prepareReceive(r *http.Request, b core.ReceiveRequest) (any, error) {
	if err := errors.Join(validRef("source", b.Source), validRef("root", b.Root)); err != nil {
		return nil, err
	}
	receivers, err := s.cluster.PrepareReceive(r.Context(), b)
	return nonNil(receivers), err
}

func (s *Server) createSnapshot(r *http.Request, b snapshotBody) (any, error) {
	if err := validRef("member", b.Member); err != nil {
		return nil, err
	}
	return s.cluster.CreateSnapshot(r.Context(), b.Member, b.Name)
}

func (s *Server) listSnapshots(r *http.Request, _ []byte) (any, error) {
	snapshots, err := s.cluster.ListSnapshots(r.Context())
	return nonNil(snapshots), err
}

func (s *Server) deleteSnapshot(r *http.Request, _ []byte) (any, error) {
	ref, err := core.ParseSnapshotRef(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return nil, s.cluster.DeleteSnapshot(r.Context(), ref)
}

func (s *Server) capacity(r *http.Request, _ []byte) (any, error) {
	placeCount, err := strconv.Atoi(r.URL.Query().Get("place_count"))
	if err != nil {
		return nil, fmt.Errorf("%w: place_count must be an integer", core.ErrInvalid)
	}
	bytes, err := s.cluster.Capacity(r.Context(), placeCount)
	return capacityAnswer{Bytes: bytes}, err
}

func (s *Server) spec(r *http.Request, _ []byte) (any, error) {
	return s.cluster.Spec(r.Context(), r.PathValue("node"))
}

func (s *Server) report(r *http.Request, b core.NodeStatus) (any, error) {
	if b.Node != r.PathValue("node") {
		return nil, fmt.Errorf("%w: the report of node %q was sent for node %q", core.ErrInvalid, clip(b.Node, 60), clip(r.PathValue("node"), 60))
	}
	return nil, s.cluster.Report(r.Context(), b)
}

// nonNil makes an empty list encode as [] rather than null.
func nonNil[T any](list []T) []T {
	if list == nil {
		return []T{}
	}
	return list
}
