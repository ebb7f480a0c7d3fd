package stream

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/pki"
)

// authority is a CA made for one test, and the certificates it signs.
type authority struct {
	ca   *pki.CA
	pool *x509.CertPool
}

func newAuthority(t testing.TB, name string) *authority {
	t.Helper()
	ca, err := pki.NewCA(name, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return &authority{ca: ca, pool: ca.Pool()}
}

// issue signs a server certificate for the given IP addresses.
func (a *authority) issue(t testing.TB, node string, ips ...net.IP) tls.Certificate {
	t.Helper()
	leaf, err := a.ca.Issue(node, pki.Names{DNS: []string{node}, IPs: ips})
	if err != nil {
		t.Fatal(err)
	}
	return leaf.TLS
}

var loopback = net.ParseIP("127.0.0.1")
