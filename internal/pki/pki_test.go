package pki_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/baton-dr/baton/internal/pki"
)

// A certificate the CA issues is trusted by a client that trusts the CA
// alone, over a real TLS handshake, for the names it was issued for.
func TestAnIssuedCertificateServesTLSToAClientOfTheCA(t *testing.T) {
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue("server", pki.Names{DNS: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if !leaf.Cert.NotAfter.Equal(ca.Cert.NotAfter) {
		t.Errorf("the leaf holds until %s, the CA until %s", leaf.Cert.NotAfter, ca.Cert.NotAfter)
	}
	// The PEM pair loads as the server's own pair would.
	pair, err := tls.X509KeyPair(leaf.CertPEM, leaf.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	go func() {
		conn, err := listener.Accept()
		if err == nil {
			_, _ = conn.Write([]byte("hello"))
			_ = conn.Close()
		}
	}()
	conn, err := tls.Dial("tcp", listener.Addr().String(), &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("a client of the CA refuses its certificate: %v", err)
	}
	defer conn.Close()
	if got, err := io.ReadAll(conn); err != nil || string(got) != "hello" {
		t.Errorf("read %q, %v", got, err)
	}

	// Another CA's client refuses it.
	other, err := pki.NewCA("other CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: other.Pool(), DNSName: "localhost"}); err == nil {
		t.Error("a client of another CA trusts the certificate")
	}
	if _, err := leaf.Cert.Verify(x509.VerifyOptions{Roots: ca.Pool(), DNSName: "elsewhere"}); err == nil {
		t.Error("the certificate is trusted for a name it was not issued for")
	}
}

// A CA written as PEM reads back as the same CA, and signs as it did.
func TestACAReadsBackFromItsPEM(t *testing.T) {
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	back, err := pki.ParseCA(ca.CertPEM, ca.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Cert.Equal(ca.Cert) || !back.Key.Equal(ca.Key) {
		t.Fatal("the CA read back is another")
	}
	leaf, err := back.Issue("server", pki.Names{DNS: []string{"site-a"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.Cert.CheckSignatureFrom(ca.Cert); err != nil {
		t.Errorf("the CA read back signs as another: %v", err)
	}
}

func TestBadInputIsRefused(t *testing.T) {
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := ca.Issue("server", pki.Names{})
	if err != nil {
		t.Fatal(err)
	}
	for name, pems := range map[string][2][]byte{
		"not PEM":       {[]byte("junk"), ca.KeyPEM},
		"no key":        {ca.CertPEM, nil},
		"a leaf, no CA": {leaf.CertPEM, leaf.KeyPEM},
	} {
		if _, err := pki.ParseCA(pems[0], pems[1]); err == nil {
			t.Errorf("%s: read as a CA", name)
		}
	}
	if _, err := pki.NewCA("dead", 0); err == nil {
		t.Error("a CA with no life was made")
	}
	if _, err := pki.IPs("127.0.0.1", "site-a"); err == nil || !strings.Contains(err.Error(), `"site-a"`) {
		t.Errorf("a name parsed as an IP address: %v", err)
	}
}

func TestSameNames(t *testing.T) {
	ca, err := pki.NewCA("test CA", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	names := pki.Names{DNS: []string{"a", "b"}, IPs: []net.IP{net.IPv4(10, 0, 0, 1)}}
	leaf, err := ca.Issue("server", names)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		names pki.Names
		same  bool
	}{
		{names, true},
		{pki.Names{DNS: []string{"a", "b"}, IPs: []net.IP{net.ParseIP("10.0.0.1")}}, true},
		{pki.Names{DNS: []string{"b", "a"}, IPs: names.IPs}, false},
		{pki.Names{DNS: []string{"a"}, IPs: names.IPs}, false},
		{pki.Names{DNS: names.DNS, IPs: []net.IP{net.IPv4(10, 0, 0, 2)}}, false},
		{pki.Names{DNS: names.DNS}, false},
	} {
		if got := pki.SameNames(leaf.Cert, c.names); got != c.same {
			t.Errorf("SameNames(%v) = %t", c.names, got)
		}
	}
}
