package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/baton-dr/baton/controllers/storageapi"
)

// storageAPIHandler is the storage API over the operator's site. The server
// of controllers/storageapi has not landed yet; when it does, mounting it is
// this function's one line:
//
//	return storageapi.NewServer(cluster, ...) // its constructor, whatever it takes
//
// Until then every call but /healthz answers 503, so the CSI driver and the
// peers see an unavailable site rather than a wrong answer.
func storageAPIHandler(cluster storageapi.Cluster) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, `{"error":"the storage API server of cluster %s has not landed"}`+"\n", cluster.ID())
	})
	return mux
}

// storageAPIServer serves the storage API over HTTPS while this replica
// leads: the core behind it is the leader's.
type storageAPIServer struct {
	address   string
	handler   http.Handler
	reader    client.Reader
	namespace string
	tlsSecret string
	log       logr.Logger
}

func (s *storageAPIServer) NeedLeaderElection() bool { return true }

// Start serves until ctx ends. The certificate comes from the TLS secret once,
// at the start of the leadership.
func (s *storageAPIServer) Start(ctx context.Context) error {
	certificate, err := s.certificate(ctx)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", s.address)
	if err != nil {
		return fmt.Errorf("failed to listen for the storage API on %s: %w", s.address, err)
	}
	server := &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second,
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{certificate}, MinVersion: tls.VersionTLS12}}
	served := make(chan error, 1)
	go func() { served <- server.ServeTLS(listener, "", "") }()
	s.log.Info("serving", "address", listener.Addr().String())
	select {
	case err := <-served:
		return fmt.Errorf("the storage API stopped: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *storageAPIServer) certificate(ctx context.Context) (tls.Certificate, error) {
	var secret corev1.Secret
	if err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.tlsSecret}, &secret); err != nil {
		return tls.Certificate{}, fmt.Errorf("failed to read the storage API's TLS secret %s/%s: %w", s.namespace, s.tlsSecret, err)
	}
	certificate, err := tls.X509KeyPair(secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey])
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS secret %s/%s holds no usable key pair", s.namespace, s.tlsSecret)
	}
	return certificate, nil
}
