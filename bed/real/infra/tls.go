package infra

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dr/baton/internal/pki"
)

// certLife is how long the bed's certificates hold: a bed lives days.
const certLife = 30 * 24 * time.Hour

// bedCA is the one CA of the bed: it signs every site's storage API and
// stream certificates, so each site trusts the other's.
type bedCA struct {
	ca      *pki.CA
	CertPEM string
}

// loadOrMakeCA reads the bed's CA from the run directory, or makes it
// there: a redeployment keeps the CA the running sites trust.
func loadOrMakeCA(paths Paths) (*bedCA, error) {
	certFile, keyFile := filepath.Join(paths.Run(), "ca.crt"), filepath.Join(paths.Run(), "ca.key")
	certPEM, certErr := os.ReadFile(certFile)
	keyPEM, keyErr := os.ReadFile(keyFile)
	if certErr == nil && keyErr == nil {
		ca, err := pki.ParseCA(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("the bed's CA in %s: %w (make realbed-down removes it)", paths.Run(), err)
		}
		if time.Until(ca.Cert.NotAfter) > 24*time.Hour {
			return &bedCA{ca: ca, CertPEM: string(ca.CertPEM)}, nil
		}
	} else if !errors.Is(certErr, os.ErrNotExist) && certErr != nil {
		return nil, certErr
	}
	ca, err := pki.NewCA("baton-realbed-ca", certLife)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(keyFile, ca.KeyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, ca.CertPEM, 0o644); err != nil {
		return nil, err
	}
	return &bedCA{ca: ca, CertPEM: string(ca.CertPEM)}, nil
}

// issueOnce issues the certificate into run/<name>.crt and .key, or reads
// it from there when it names the same addresses and outlives a day: a
// redeployment of an unchanged bed hands the chart the same values, so
// nothing restarts.
func (ca *bedCA) issueOnce(paths Paths, name, commonName string, dnsNames []string, addresses []net.IP) (certPEM, keyPEM string, err error) {
	names := pki.Names{DNS: dnsNames, IPs: addresses}
	certFile, keyFile := filepath.Join(paths.Run(), name+".crt"), filepath.Join(paths.Run(), name+".key")
	if c, k, err := readPair(certFile, keyFile); err == nil {
		if cert, err := pki.ParseCertificate([]byte(c)); err == nil && pki.SameNames(cert, names) &&
			cert.CheckSignatureFrom(ca.ca.Cert) == nil && time.Until(cert.NotAfter) > 24*time.Hour {
			return c, k, nil
		}
	}
	leaf, err := ca.ca.Issue(commonName, names)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, leaf.KeyPEM, 0o600); err != nil {
		return "", "", err
	}
	return string(leaf.CertPEM), string(leaf.KeyPEM), os.WriteFile(certFile, leaf.CertPEM, 0o644)
}

func readPair(certFile, keyFile string) (string, string, error) {
	c, err := os.ReadFile(certFile)
	if err != nil {
		return "", "", err
	}
	k, err := os.ReadFile(keyFile)
	return string(c), string(k), err
}
