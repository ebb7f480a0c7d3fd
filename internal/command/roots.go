package command

import (
	"crypto/x509"
	"fmt"
	"os"
)

// ReadRoots reads the PEM bundle of CA certificates that flagName names.
func ReadRoots(file, flagName string) (*x509.CertPool, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s %s holds no PEM certificate", flagName, file)
	}
	return pool, nil
}
