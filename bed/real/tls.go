package real

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certLife is how long the bed's certificates hold: a bed lives days.
const certLife = 30 * 24 * time.Hour

// bedCA is the one CA of the bed: it signs every site's storage API and
// stream certificates, so each site trusts the other's.
type bedCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	CertPEM string
}

// loadOrMakeCA reads the bed's CA from the run directory, or makes it
// there: a redeployment keeps the CA the running sites trust.
func loadOrMakeCA(paths Paths) (*bedCA, error) {
	certFile, keyFile := filepath.Join(paths.Run(), "ca.crt"), filepath.Join(paths.Run(), "ca.key")
	certPEM, certErr := os.ReadFile(certFile)
	keyPEM, keyErr := os.ReadFile(keyFile)
	if certErr == nil && keyErr == nil {
		ca, err := parseCA(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("the bed's CA in %s: %w (make realbed-down removes it)", paths.Run(), err)
		}
		if time.Until(ca.cert.NotAfter) > 24*time.Hour {
			return ca, nil
		}
	} else if !errors.Is(certErr, os.ErrNotExist) && certErr != nil {
		return nil, certErr
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	template := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: "baton-realbed-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(certLife), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM = pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	return parseCA(certPEM, keyPEM)
}

func parseCA(certPEM, keyPEM []byte) (*bedCA, error) {
	certBlock, _ := pem.Decode(certPEM)
	keyBlock, _ := pem.Decode(keyPEM)
	if certBlock == nil || keyBlock == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(certBlock.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(keyBlock.Bytes)
	if err != nil {
		return nil, err
	}
	return &bedCA{cert: cert, key: key, CertPEM: string(certPEM)}, nil
}

// issue makes a server certificate and key signed by the CA, naming the
// DNS names and addresses given.
func (ca *bedCA) issue(commonName string, dnsNames []string, addresses []net.IP) (certPEM, keyPEM string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	template := &x509.Certificate{SerialNumber: serial(), Subject: pkix.Name{CommonName: commonName},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: ca.cert.NotAfter, DNSNames: dnsNames, IPAddresses: addresses,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, template, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})), nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		panic(err) // crypto/rand does not fail
	}
	return n
}

// issueOnce issues the certificate into run/<name>.crt and .key, or reads
// it from there when it names the same addresses and outlives a day: a
// redeployment of an unchanged bed hands the chart the same values, so
// nothing restarts.
func (ca *bedCA) issueOnce(paths Paths, name, commonName string, dnsNames []string, addresses []net.IP) (certPEM, keyPEM string, err error) {
	certFile, keyFile := filepath.Join(paths.Run(), name+".crt"), filepath.Join(paths.Run(), name+".key")
	if c, k, err := readPair(certFile, keyFile); err == nil {
		if block, _ := pem.Decode([]byte(c)); block != nil {
			if cert, err := x509.ParseCertificate(block.Bytes); err == nil && sameNames(cert, dnsNames, addresses) &&
				cert.CheckSignatureFrom(ca.cert) == nil && time.Until(cert.NotAfter) > 24*time.Hour {
				return c, k, nil
			}
		}
	}
	if certPEM, keyPEM, err = ca.issue(commonName, dnsNames, addresses); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, []byte(keyPEM), 0o600); err != nil {
		return "", "", err
	}
	return certPEM, keyPEM, os.WriteFile(certFile, []byte(certPEM), 0o644)
}

func readPair(certFile, keyFile string) (string, string, error) {
	c, err := os.ReadFile(certFile)
	if err != nil {
		return "", "", err
	}
	k, err := os.ReadFile(keyFile)
	return string(c), string(k), err
}

func sameNames(cert *x509.Certificate, dnsNames []string, addresses []net.IP) bool {
	if len(cert.DNSNames) != len(dnsNames) || len(cert.IPAddresses) != len(addresses) {
		return false
	}
	for i := range dnsNames {
		if cert.DNSNames[i] != dnsNames[i] {
			return false
		}
	}
	for i := range addresses {
		if !cert.IPAddresses[i].Equal(addresses[i]) {
			return false
		}
	}
	return true
}
