// Package storageapitest serves a storage API over real HTTPS for tests and
// benchmarks: a throw-away certificate authority, a server certificate for
// 127.0.0.1, and an httptest server that can be cut off like a partitioned
// site.
package storageapitest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"

	"github.com/baton-dr/baton/storage/chain"
	"github.com/baton-dr/baton/storageapi"
)

// CA is a self-signed certificate authority.
type CA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	Pool *x509.CertPool
}

// NewCA makes a CA valid for a day.
func NewCA() (*CA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "baton test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &CA{cert: cert, key: key, Pool: pool}, nil
}

// ServerCertificate issues a certificate for 127.0.0.1 and localhost.
func (ca *CA) ServerCertificate() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "baton storage API"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
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

// drop closes the connection without an answer.
func drop(w http.ResponseWriter) {
	hijacker, ok := w.(http.Hijacker)
	if !ok {
		panic(fmt.Sprintf("storageapitest: %T cannot hijack", w))
	}
	conn, _, err := hijacker.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}
