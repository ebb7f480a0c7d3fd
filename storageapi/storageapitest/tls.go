// Package storageapitest serves a storage API over real HTTPS for tests and
// benchmarks: a throw-away certificate authority, a server certificate for
// 127.0.0.1, and an httptest server that can be cut off like a partitioned
// site.
package storageapitest

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/baton-dr/baton/internal/pki"
	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// CA is a self-signed certificate authority.
type CA struct {
	ca   *pki.CA
	Pool *x509.CertPool
}

// NewCA makes a CA valid for a day.
func NewCA() (*CA, error) {
	ca, err := pki.NewCA("baton test CA", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	return &CA{ca: ca, Pool: ca.Pool()}, nil
}

// ServerCertificate issues a certificate for 127.0.0.1 and localhost.
func (ca *CA) ServerCertificate() (tls.Certificate, error) {
	leaf, err := ca.ca.Issue("baton storage API",
		pki.Names{DNS: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}})
	if err != nil {
		return tls.Certificate{}, err
	}
	return leaf.TLS, nil
}

// ClientTLS verifies servers against the CA.
func (ca *CA) ClientTLS() *tls.Config {
	return &tls.Config{RootCAs: ca.Pool, MinVersion: tls.VersionTLS12}
}

// Server is one cluster's storage API on a loopback HTTPS port.
type Server struct {
	*httptest.Server
	Secret string
	ID     chain.ClusterID
	cut    atomic.Bool
}

// Serve starts cluster's API over HTTPS with a certificate of ca.
func Serve(ca *CA, cluster storageapi.Cluster, secret string) (*Server, error) {
	handler, err := storageapi.NewServer(cluster, secret, logr.Discard())
	if err != nil {
		return nil, err
	}
	cert, err := ca.ServerCertificate()
	if err != nil {
		return nil, err
	}
	s := &Server{Secret: secret, ID: cluster.ID()}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cut.Load() {
			drop(w)
			return
		}
		handler.ServeHTTP(w, r)
	}))
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes refused on purpose by tests
	s.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	s.EnableHTTP2 = true // as storageapi.NewHTTPServer serves it
	s.StartTLS()
	return s, nil
}

// Cut makes the server drop every connection, like a partitioned site; Heal
// undoes it.
func (s *Server) Cut()  { s.cut.Store(true); s.CloseClientConnections() }
func (s *Server) Heal() { s.cut.Store(false) }

// Entry is the server's clusters-secret entry.
func (s *Server) Entry(local bool) storageapi.ClusterEntry {
	return storageapi.ClusterEntry{ID: s.ID, Endpoint: s.URL, Secret: s.Secret, Local: local}
}

// Client dials the server.
func (s *Server) Client(ca *CA) (*storageapi.Client, error) {
	return storageapi.NewClient(storageapi.ClientConfig{ID: s.ID, Endpoint: s.URL, Secret: s.Secret,
		TLS: ca.ClientTLS(), CallTimeout: 5 * time.Second})
}

// drop ends the call without an answer: over HTTP/1.1 it closes the
// connection, over HTTP/2 it resets the stream.
func drop(w http.ResponseWriter) {
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hijacker.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
