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
	"strings"
	"time"

	"github.com/go-logr/logr"
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
	for _, op := range operations {
		s.mux.Handle(op.route(), s.serve(func(r *http.Request, body []byte) (any, error) { return op.serve(r, body, s.cluster) }))
	}
	s.mux.Handle("/", s.serve(func(r *http.Request, _ []byte) (any, error) {
		return nil, errNoRoute
	}))
	return s, nil
}

var errNoRoute = errors.New("no such operation in storage API v1")

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
