package config

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"

	"github.com/benchline/benchline/internal/limits"
)

// ClientTLS builds the TLS configuration for a Temporal client: nil when
// neither mutual TLS nor an API key asks for TLS. Each file is read whole,
// at most limits.FileBytes, and an error names the file and the setting.
// The server's name is ServerName, else address's host.
func (t Temporal) ClientTLS() (*tls.Config, error) {
	if !t.TLS.Enabled() && t.APIKey.IsZero() {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.TLS.ServerName}
	if c.ServerName == "" && t.TLS.Enabled() {
		if host, _, err := net.SplitHostPort(t.Address); err == nil {
			c.ServerName = host
		}
	}
	if t.TLS.CertFile != "" || t.TLS.KeyFile != "" {
		certPEM, err := readPEM(t.TLS.CertFile, "temporal.tls_cert_file")
		if err != nil {
			return nil, err
		}
		keyPEM, err := readPEM(t.TLS.KeyFile, "temporal.tls_key_file")
		if err != nil {
			return nil, err
		}
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			// X509KeyPair's errors never quote the key.
			return nil, fmt.Errorf("config: temporal.tls_cert_file %s and temporal.tls_key_file %s: %w", t.TLS.CertFile, t.TLS.KeyFile, err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	if t.TLS.CAFile != "" {
		caPEM, err := readPEM(t.TLS.CAFile, "temporal.tls_ca_file")
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("config: temporal.tls_ca_file %s: no PEM certificate in it", t.TLS.CAFile)
		}
		c.RootCAs = pool
	}
	return c, nil
}

// readPEM reads a TLS file of the setting key, bounded by limits.FileBytes.
func readPEM(path, key string) ([]byte, error) {
	if path == "" {
		return nil, fmt.Errorf("config: %s is not set (the certificate and its key go together)", key)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", key, err)
	}
	defer f.Close()
	b, err := limits.ReadFile(f, path, limits.FileBytes)
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", key, err)
	}
	return b, nil
}
