package csi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"github.com/csi-addons/spec/lib/go/identity"
	"github.com/csi-addons/spec/lib/go/replication"
	"github.com/go-logr/logr"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// MaxRequestBytes bounds one request; CSI and csi-addons requests are a few
// kilobytes, the clusters secret included. gRPC answers ResourceExhausted
// above it.
const MaxRequestBytes = 1 << 20

// Services are the servers one process runs; a nil one is not served.
type Services struct {
	Identity       *Identity
	Controller     *Controller
	Node           *Node
	Replication    *Replication
	AddonsIdentity *AddonsIdentity
}

// NewCSIServer serves CSI Identity and whichever of Controller and Node are set.
func NewCSIServer(s Services, log logr.Logger) *grpc.Server {
	server := newGRPCServer(log)
	csi.RegisterIdentityServer(server, s.Identity)
	if s.Controller != nil {
		csi.RegisterControllerServer(server, s.Controller)
	}
	if s.Node != nil {
		csi.RegisterNodeServer(server, s.Node)
	}
	return server
}

// NewAddonsServer serves the csi-addons Identity and Replication services.
func NewAddonsServer(s Services, log logr.Logger) *grpc.Server {
	server := newGRPCServer(log)
	identity.RegisterIdentityServer(server, s.AddonsIdentity)
	replication.RegisterControllerServer(server, s.Replication)
	return server
}

func newGRPCServer(log logr.Logger) *grpc.Server {
	return grpc.NewServer(grpc.MaxRecvMsgSize(MaxRequestBytes), grpc.ChainUnaryInterceptor(logCalls(log)))
}

// logCalls logs every call's method, code and latency -- never its request,
// which carries secrets.
func logCalls(log logr.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		started := time.Now()
		resp, err := handler(ctx, req)
		st := status.Convert(err)
		line := log.WithValues("method", info.FullMethod, "code", st.Code().String(), "latency", time.Since(started))
		if err != nil {
			line.Info("call failed", "message", st.Message())
		} else {
			line.V(1).Info("call")
		}
		return resp, err
	}
}

// ListenUnix listens on a unix socket endpoint, "unix:///path", "unix:path"
// or "/path", replacing a stale socket file left by an earlier run.
func ListenUnix(endpoint string) (net.Listener, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(endpoint, "unix://"), "unix:")
	if path == "" || !strings.HasPrefix(endpoint, "unix:") && !filepath.IsAbs(path) {
		return nil, fmt.Errorf("endpoint %q is not a unix socket (unix:///path)", endpoint)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, err
	}
	if info, err := os.Stat(path); err == nil && info.Mode()&fs.ModeSocket != 0 {
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("failed to remove the stale socket %s: %w", path, err)
		}
	}
	return net.Listen("unix", path)
}

// Serve runs each server on its listener until ctx ends or one fails, then
// stops them all gracefully.
func Serve(ctx context.Context, servers map[net.Listener]*grpc.Server) error {
	failed := make(chan error, len(servers))
	for listener, server := range servers {
		go func() { failed <- server.Serve(listener) }()
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-failed:
	}
	for _, server := range servers {
		server.GracefulStop()
	}
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return err
}
