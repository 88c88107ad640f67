//go:build deploytest

package realstack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// Mutual TLS of the test's Temporal server (docs/DEPLOY.md, "Temporal over
// mutual TLS"): a throwaway CA signs the frontend's certificate (for
// serverName only: clients dial 127.0.0.1 and must check that name, as
// temporal.tls_server_name says), the certificate benchline's workers and
// CLI present (it goes into the chart's tlsSecret) and the one the server's
// own system workers present to its frontend. A second, unrelated CA and a
// client certificate it signed are what a stranger would bring.

// tlsServerName is the only name on the frontend's certificate.
const tlsServerName = "temporal.realstack.test"

// A pki is the PEM files of one run, in dir.
type pki struct {
	ca                    string // the CA the server and the clients trust
	serverCert, serverKey string
	clientCert, clientKey string // benchline's (the tlsSecret's tls.crt, tls.key)
	sysCert, sysKey       string // the Temporal server's system workers'
	rogueCA               string // another CA
	rogueCert, rogueKey   string // a client certificate the other CA signed
}

// newPKI writes the certificates and keys under dir (keys 0600).
func newPKI(t *testing.T, dir string) *pki {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &pki{}
	ca, caKey := newCA(t, "benchline realstack CA")
	rogue, rogueKey := newCA(t, "some other CA")
	p.ca = writePEM(t, dir, "ca.crt", "CERTIFICATE", ca.Raw, 0o644)
	p.rogueCA = writePEM(t, dir, "rogue-ca.crt", "CERTIFICATE", rogue.Raw, 0o644)
	for _, c := range []struct {
		name      string
		dns       []string
		usage     x509.ExtKeyUsage
		parent    *x509.Certificate
		parentKey *ecdsa.PrivateKey
		cert, key *string
	}{
		{"server", []string{tlsServerName}, x509.ExtKeyUsageServerAuth, ca, caKey, &p.serverCert, &p.serverKey},
		{"benchline", nil, x509.ExtKeyUsageClientAuth, ca, caKey, &p.clientCert, &p.clientKey},
		{"temporal-system-worker", nil, x509.ExtKeyUsageClientAuth, ca, caKey, &p.sysCert, &p.sysKey},
		{"stranger", nil, x509.ExtKeyUsageClientAuth, rogue, rogueKey, &p.rogueCert, &p.rogueKey},
	} {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(t),
			Subject:      pkix.Name{CommonName: c.name},
			DNSNames:     c.dns,
			NotBefore:    time.Now().Add(-time.Hour),
			NotAfter:     time.Now().Add(24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{c.usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, c.parent, &key.PublicKey, c.parentKey)
		if err != nil {
			t.Fatalf("realstack: certificate %s: %v", c.name, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		*c.cert = writePEM(t, dir, c.name+".crt", "CERTIFICATE", der, 0o644)
		*c.key = writePEM(t, dir, c.name+".key", "PRIVATE KEY", keyDER, 0o600)
	}
	return p
}

func newCA(t *testing.T, name string) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(t),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("realstack: CA %s: %v", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key
}

func serial(t *testing.T) *big.Int {
	t.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func writePEM(t *testing.T, dir, name, typ string, der []byte, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// serverTLS is the global.tls section of the server's configuration (two
// spaces in, under global:): the frontend serves TLS with requireClientAuth
// and trusts the CA for clients; the server's system workers, which reach
// the frontend through membership, present their own certificate and check
// the frontend's name. Internode traffic (history, matching) stays on
// loopback in clear, as in the module's development configuration.
func (p *pki) serverTLS() string {
	return fmt.Sprintf(`  tls:
    frontend:
      server:
        certFile: %[1]q
        keyFile: %[2]q
        requireClientAuth: true
        clientCaFiles: [%[3]q]
      client:
        serverName: %[4]q
        rootCaFiles: [%[3]q]
    systemWorker:
      certFile: %[5]q
      keyFile: %[6]q
      client:
        serverName: %[4]q
        rootCaFiles: [%[3]q]
`, p.serverCert, p.serverKey, p.ca, tlsServerName, p.sysCert, p.sysKey)
}

// cliTLS are the temporal CLI's flags for the same client identity as
// benchline's.
func (p *pki) cliTLS() []string {
	return []string{"--tls-cert-path", p.clientCert, "--tls-key-path", p.clientKey, "--tls-ca-path", p.ca, "--tls-server-name", tlsServerName}
}

// A cliRunner runs a benchline command with env (in container mode, in a
// container).
type cliRunner func(ctx context.Context, env []string, args ...string) (string, error)

// refusedClients runs `benchline runs ls` (it opens the store and then
// dials Temporal) as clients the server must refuse: configured from
// cfgPath (the chart's configuration) with the TLS settings edited, and
// env(file, extra...) the worker's environment with BENCHLINE_CONFIG=file.
// Each must fail within its deadline, with an error naming TLS or the
// certificate; the chart's configuration itself must succeed.
func refusedClients(ctx context.Context, t *testing.T, root, cfgPath string, p *pki, run cliRunner, env func(string, ...string) []string) {
	t.Helper()
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	noTLS := func(tm map[string]any) {
		for _, k := range []string{"tls_cert_file", "tls_key_file", "tls_ca_file", "tls_server_name"} {
			delete(tm, k)
		}
	}
	for i, c := range []struct {
		name  string
		edit  func(tm map[string]any)
		extra []string
		want  string // a regular expression the error must match
		ok    bool
	}{
		{name: "the chart's configuration", edit: func(map[string]any) {}, ok: true},
		{name: "plain text (no TLS setting)", edit: noTLS, want: `does it require TLS\? set temporal\.tls_ca_file`},
		{name: "TLS with the CA (TEMPORAL_TLS_CA, TEMPORAL_TLS_SERVER_NAME) but no client certificate", edit: noTLS,
			extra: []string{"TEMPORAL_TLS_CA=" + p.ca, "TEMPORAL_TLS_SERVER_NAME=" + tlsServerName},
			want:  `refused a TLS client without a certificate: it requires mutual TLS; set temporal\.tls_cert_file`},
		{name: "a client certificate another CA signed", edit: func(tm map[string]any) {
			tm["tls_cert_file"], tm["tls_key_file"] = p.rogueCert, p.rogueKey
		}, want: `refused the TLS client certificate temporal\.tls_cert_file ` + regexp.QuoteMeta(p.rogueCert)},
		{name: "trusting another CA than the server's", edit: func(tm map[string]any) {
			tm["tls_ca_file"] = p.rogueCA
		}, want: `x509: certificate signed by unknown authority.*TLS certificate is not trusted: temporal\.tls_ca_file`},
	} {
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("realstack: %s: %v", cfgPath, err)
		}
		tm, _ := doc["temporal"].(map[string]any)
		if tm == nil {
			t.Fatalf("realstack: %s has no temporal section", cfgPath)
		}
		c.edit(tm)
		out, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(root, "etc", fmt.Sprintf("client-%d.yaml", i))
		if err := os.WriteFile(f, out, 0o644); err != nil {
			t.Fatal(err)
		}
		// A deadline, not a measure: a refused client must not hang.
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		_, err = run(cctx, env(f, c.extra...), "runs", "ls")
		hung := cctx.Err() != nil
		cancel()
		switch {
		case hung:
			t.Errorf("realstack: client with %s: no answer within its deadline", c.name)
		case c.ok && err != nil:
			t.Errorf("realstack: client with %s: %v", c.name, err)
		case !c.ok && err == nil:
			t.Errorf("realstack: client with %s: the Temporal server let it in (want refused)", c.name)
		case !c.ok && !regexp.MustCompile(c.want).MatchString(err.Error()):
			t.Errorf("realstack: client with %s: refused, but the error does not say why (want %s): %v", c.name, c.want, err)
		case !c.ok:
			t.Logf("realstack: client with %s: refused: %s", c.name, lastLines(err.Error(), 1))
		}
	}
}
