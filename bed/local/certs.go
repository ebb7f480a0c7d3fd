package local

import (
	"os"
	"path/filepath"
	"time"

	"github.com/baton-dr/baton/internal/pki"
)

// authority is the bed's throw-away CA: it signs the storage APIs' and the
// stream servers' certificates, and every process trusts it alone.
type authority struct {
	ca   *pki.CA
	file string // the CA's PEM
}

func newAuthority(dir string) (*authority, error) {
	ca, err := pki.NewCA("baton local bed CA", 24*time.Hour)
	if err != nil {
		return nil, err
	}
	a := &authority{ca: ca, file: filepath.Join(dir, "ca.pem")}
	return a, os.WriteFile(a.file, ca.CertPEM, 0o600)
}

// issue makes a server certificate for ip and returns it and its key as PEM.
func (a *authority) issue(name, ip string) (certPEM, keyPEM []byte, err error) {
	ips, err := pki.IPs(ip)
	if err != nil {
		return nil, nil, err
	}
	leaf, err := a.ca.Issue(name, pki.Names{IPs: ips})
	if err != nil {
		return nil, nil, err
	}
	return leaf.CertPEM, leaf.KeyPEM, nil
}

// issueFiles writes a certificate for ip and its key into dir.
func (a *authority) issueFiles(dir, name, ip string) (certFile, keyFile string, err error) {
	certPEM, keyPEM, err := a.issue(name, ip)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, keyPEM, 0o600)
}
