// Package pki makes the certificates of the beds and the tests: a CA of their
// own and the server certificates it signs, as PEM and as a tls.Certificate.
// A real site's certificates come from its operator (the chart takes them as
// values); the beds and tests play that operator. Keys are ECDSA P-256,
// encoded as "EC PRIVATE KEY" PEM, which every baton binary reads.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// backdate is how long before now a certificate becomes valid, so that a
// peer whose clock runs a little behind accepts it.
const backdate = time.Hour

// CA is a certificate authority: its certificate and key, parsed and as PEM.
type CA struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// NewCA makes a self-signed CA named commonName that holds for life.
func NewCA(commonName string, life time.Duration) (*CA, error) {
	if life <= 0 {
		return nil, fmt.Errorf("a CA's life must be positive, not %s", life)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-backdate), NotAfter: time.Now().Add(life), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return ParseCA(encode("CERTIFICATE", der), encode("EC PRIVATE KEY", keyDER))
}

// ParseCA reads a CA from its certificate's and key's PEM.
func ParseCA(certPEM, keyPEM []byte) (*CA, error) {
	cert, err := ParseCertificate(certPEM)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%q is no CA", cert.Subject.CommonName)
	}
	keyBlock, _ := pem.Decode(keyPEM)
	if keyBlock == nil {
		return nil, errors.New("no PEM key")
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, err
	}
	return &CA{Cert: cert, Key: key, CertPEM: certPEM, KeyPEM: keyPEM}, nil
}

// Pool is a pool that trusts the CA alone.
func (ca *CA) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	return pool
}

// Names are what a server certificate is valid for.
type Names struct {
	DNS []string
	IPs []net.IP
}

// Leaf is a certificate the CA signed and its key.
type Leaf struct {
	Cert    *x509.Certificate
	CertPEM []byte
	KeyPEM  []byte
	// TLS is the pair as a server presents it.
	TLS tls.Certificate
}

// Issue signs a server certificate named commonName for names, valid as
// long as the CA is.
func (ca *CA) Issue(commonName string, names Names) (*Leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-backdate), NotAfter: ca.Cert.NotAfter, DNSNames: names.DNS, IPAddresses: names.IPs,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &Leaf{Cert: cert, CertPEM: encode("CERTIFICATE", der), KeyPEM: encode("EC PRIVATE KEY", keyDER),
		TLS: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}, nil
}

// ParseCertificate reads one certificate from its PEM.
func ParseCertificate(certPEM []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// SameNames tells whether cert is valid for exactly names, in their order.
func SameNames(cert *x509.Certificate, names Names) bool {
	if len(cert.DNSNames) != len(names.DNS) || len(cert.IPAddresses) != len(names.IPs) {
		return false
	}
	for i := range names.DNS {
		if cert.DNSNames[i] != names.DNS[i] {
			return false
		}
	}
	for i := range names.IPs {
		if !cert.IPAddresses[i].Equal(names.IPs[i]) {
			return false
		}
	}
	return true
}

// IPs parses addresses; one that is no IP address is an error.
func IPs(addresses ...string) ([]net.IP, error) {
	out := make([]net.IP, 0, len(addresses))
	for _, a := range addresses {
		ip := net.ParseIP(a)
		if ip == nil {
			return nil, fmt.Errorf("%q is no IP address", a)
		}
		out = append(out, ip)
	}
	return out, nil
}

func encode(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

// serial is a random serial number: RFC 5280 allows up to 20 octets, and
// two certificates of one CA must never share one.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}
