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

	"github.com/baton-dr/baton/storageapi"
)

// secretPoll is how often the server looks for its bearer token while the
// CSI secret does not carry it yet (the secret writer adds it at start).
const secretPoll = 2 * time.Second

// storageAPIHandler is the storage API over the operator's site: bearer token
// = this cluster's secret, as the CSI secret's local entry carries it.
func storageAPIHandler(cluster storageapi.Cluster, secret string, log logr.Logger) (http.Handler, error) {
	server, err := storageapi.NewServer(cluster, secret, log)
	if err != nil {
		return nil, err
	}
	return server, nil
}

// storageAPIServer serves the storage API over HTTPS while this replica
// leads: the core behind it is the leader's.
type storageAPIServer struct {
	address   string
	cluster   storageapi.Cluster
	reader    client.Reader
	namespace string
	tlsSecret string
	csiSecret string
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
	secret, err := s.bearer(ctx)
	if err != nil {
		return err
	}
	handler, err := storageAPIHandler(s.cluster, secret, s.log)
	if err != nil {
		return err
	}
	listener, err := net.Listen("tcp", s.address)
	if err != nil {
		return fmt.Errorf("failed to listen for the storage API on %s: %w", s.address, err)
	}
	server := storageapi.NewHTTPServer(handler, certificate)
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

// bearer waits for this cluster's entry in the CSI secret and returns its
// secret: the token every caller of the storage API presents. It is never
// logged.
func (s *storageAPIServer) bearer(ctx context.Context) (string, error) {
	for {
		var secret corev1.Secret
		err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.namespace, Name: s.csiSecret}, &secret)
		if err == nil {
			clusters, err := storageapi.ParseClusters(secret.Data[storageapi.SecretKey])
			if err != nil {
				return "", fmt.Errorf("the CSI secret %s/%s: %w", s.namespace, s.csiSecret, err)
			}
			for _, e := range clusters.Entries {
				if e.Local && e.ID == s.cluster.ID() {
					return e.Secret, nil
				}
			}
		}
		s.log.Info("waiting for this cluster's entry in the CSI secret", "secret", s.csiSecret, "cluster", s.cluster.ID())
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(secretPoll):
		}
	}
}
