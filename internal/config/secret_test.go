package config

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCredentialsNeverPrint loads every credential setting with a sentinel
// and prints the whole Config every way a log line or error could.
func TestCredentialsNeverPrint(t *testing.T) {
	const apiKey, s3Key = "sentinel-temporal-key-81f3", "sentinel-s3-secret-27ac"
	env := map[string]string{"TEMPORAL_API_KEY": apiKey}
	file := "s3:\n  bucket: evals\n  access_key_id: id\n  secret_access_key: " + s3Key + "\n"
	cfg, err := Read(strings.NewReader(file), "c.yaml", func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Temporal.APIKey.Reveal() != apiKey || cfg.S3.SecretAccessKey.Reveal() != s3Key {
		t.Fatalf("credentials not loaded: %q %q", cfg.Temporal.APIKey.Reveal(), cfg.S3.SecretAccessKey.Reveal())
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", cfg, "temporal", cfg.Temporal, "s3", cfg.S3)
	for name, out := range map[string]string{
		"%v": fmt.Sprintf("%v", cfg), "%+v": fmt.Sprintf("%+v", cfg), "%#v": fmt.Sprintf("%#v", cfg),
		"slog": logged.String(), "error": fmt.Errorf("x: %v", cfg.Temporal).Error(),
	} {
		if strings.Contains(out, apiKey) || strings.Contains(out, s3Key) {
			t.Errorf("%s shows a credential: %s", name, out)
		}
	}
}

func TestTemporalTLSSettings(t *testing.T) {
	dir := t.TempDir()
	cert, key := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	for _, f := range []string{cert, key} {
		if err := os.WriteFile(f, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string // "" means no error
	}{
		{"both", map[string]string{"TEMPORAL_TLS_CERT": cert, "TEMPORAL_TLS_KEY": key, "TEMPORAL_TLS_SERVER_NAME": "temporal"}, ""},
		{"cert without key", map[string]string{"TEMPORAL_TLS_CERT": cert}, "go together"},
		{"missing file", map[string]string{"TEMPORAL_TLS_CA": filepath.Join(dir, "none.pem")}, "TEMPORAL_TLS_CA"},
		{"server name alone", map[string]string{"TEMPORAL_TLS_SERVER_NAME": "temporal"}, "needs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(nil, "", func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
			if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// pki writes a CA, a server certificate for "temporal" and a client
// certificate, all signed by the CA, into dir.
func pki(t *testing.T, dir string) (ca *x509.CertPool, server tls.Certificate) {
	t.Helper()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	caKey := newKey()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write("ca.pem", "CERTIFICATE", caDER)
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) tls.Certificate {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(k)
		write(name+".pem", "CERTIFICATE", der)
		write(name+"-key.pem", "PRIVATE KEY", kder)
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
	}
	server = leaf("temporal", 2, x509.ExtKeyUsageServerAuth)
	leaf("worker", 3, x509.ExtKeyUsageClientAuth)
	ca = x509.NewCertPool()
	ca.AddCert(caCert)
	return ca, server
}

// TestClientTLSMutual: the client configuration ClientTLS builds completes a
// handshake with a server that requires a client certificate of its CA,
// and a client without the certificate is refused.
func TestClientTLSMutual(t *testing.T) {
	dir := t.TempDir()
	ca, serverCert := pki(t, dir)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: ca,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(time.Minute))
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("ok"))
				}
			}()
		}
	}()
	dial := func(tc TemporalTLS) error {
		cfg, err := Temporal{Address: ln.Addr().String(), TLS: tc}.ClientTLS()
		if err != nil {
			return err
		}
		c, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Minute}, "tcp", ln.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(time.Minute))
		b := make([]byte, 2)
		if _, err := c.Read(b); err != nil {
			return err
		}
		return nil
	}
	p := func(n string) string { return filepath.Join(dir, n) }
	if err := dial(TemporalTLS{CertFile: p("worker.pem"), KeyFile: p("worker-key.pem"), CAFile: p("ca.pem"), ServerName: "temporal"}); err != nil {
		t.Fatalf("with the client certificate: %v", err)
	}
	if err := dial(TemporalTLS{CAFile: p("ca.pem"), ServerName: "temporal"}); err == nil {
		t.Fatal("a client without a certificate was let in")
	}
	if err := dial(TemporalTLS{CertFile: p("worker.pem"), KeyFile: p("worker-key.pem"), ServerName: "temporal"}); err == nil {
		t.Fatal("a server of an unknown CA was trusted")
	}
}

func TestClientTLSBadFiles(t *testing.T) {
	dir := t.TempDir()
	pki(t, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	big := p("big.pem")
	if err := os.WriteFile(big, bytes.Repeat([]byte("a"), 1<<20+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		tls  TemporalTLS
		want string
	}{
		{"oversized CA", TemporalTLS{CAFile: big}, "temporal.tls_ca_file: " + big + " is larger than"},
		{"CA not PEM", TemporalTLS{CAFile: p("worker-key.pem")}, "temporal.tls_ca_file " + p("worker-key.pem") + ": no PEM certificate"},
		{"key of another cert", TemporalTLS{CertFile: p("worker.pem"), KeyFile: p("temporal-key.pem")}, "temporal.tls_cert_file " + p("worker.pem")},
		{"missing key", TemporalTLS{CertFile: p("worker.pem"), KeyFile: p("none.pem")}, "temporal.tls_key_file: open " + p("none.pem")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Temporal{Address: "h:7233", TLS: tc.tls}.ClientTLS()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
