package app

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/benchline/benchline/internal/config"
)

// testCA is a throwaway CA that writes PEM files into dir.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string
}

func newTestCA(t *testing.T, dir, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &testCA{cert: cert, key: key, file: filepath.Join(dir, name+".crt")}
	writeTestPEM(t, ca.file, "CERTIFICATE", der)
	return ca
}

// leaf writes a certificate for name (a server's when dns) and its key.
func (ca *testCA) leaf(t *testing.T, dir, name string, usage x509.ExtKeyUsage, dns bool) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	if dns {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	writeTestPEM(t, certFile, "CERTIFICATE", der)
	writeTestPEM(t, keyFile, "PRIVATE KEY", keyDER)
	return certFile, keyFile
}

func writeTestPEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDialMutualTLS dials a gRPC server that requires a client certificate
// its CA signed (as a Temporal frontend with requireClientAuth; its
// WorkflowService implements no method, which the SDK's dial accepts as an
// old server): the
// right certificate connects, and every client the server or the client
// itself refuses gets an error naming the TLS setting to look at.
func TestDialMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, dir, "ca")
	other := newTestCA(t, dir, "other-ca")
	srvCert, srvKey := ca.leaf(t, dir, "temporal.test", x509.ExtKeyUsageServerAuth, true)
	cliCert, cliKey := ca.leaf(t, dir, "benchline", x509.ExtKeyUsageClientAuth, false)
	strangerCert, strangerKey := other.leaf(t, dir, "stranger", x509.ExtKeyUsageClientAuth, false)

	pair, err := tls.LoadX509KeyPair(srvCert, srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{pair},
		ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12})))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	workflowservice.RegisterWorkflowServiceServer(srv, workflowservice.UnimplementedWorkflowServiceServer{})
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)

	for _, tc := range []struct {
		name string
		tls  config.TemporalTLS
		want string // "" connects
	}{
		{"its client certificate", config.TemporalTLS{CertFile: cliCert, KeyFile: cliKey, CAFile: ca.file, ServerName: "temporal.test"}, ""},
		{"plain text", config.TemporalTLS{}, "does it require TLS? set temporal.tls_ca_file"},
		{"TLS without a certificate", config.TemporalTLS{CAFile: ca.file, ServerName: "temporal.test"}, "requires mutual TLS; set temporal.tls_cert_file"},
		{"a certificate of another CA", config.TemporalTLS{CertFile: strangerCert, KeyFile: strangerKey, CAFile: ca.file, ServerName: "temporal.test"},
			"refused the TLS client certificate temporal.tls_cert_file " + strangerCert},
		{"trusting another CA", config.TemporalTLS{CertFile: cliCert, KeyFile: cliKey, CAFile: other.file, ServerName: "temporal.test"},
			"the server's TLS certificate is not trusted: temporal.tls_ca_file"},
		{"trusting the system's roots", config.TemporalTLS{CertFile: cliCert, KeyFile: cliKey, ServerName: "temporal.test"},
			"temporal.tls_ca_file (TEMPORAL_TLS_CA; unset: the system's roots) must name the CA"},
		{"another server name", config.TemporalTLS{CertFile: cliCert, KeyFile: cliKey, CAFile: ca.file, ServerName: "elsewhere.test"},
			"temporal.tls_server_name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			cfg.Temporal.Address, cfg.Temporal.Namespace = ln.Addr().String(), "default"
			cfg.Temporal.TLS = tc.tls
			c, err := Dial(cfg, nil)
			if err == nil {
				c.Close()
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Dial: %v", err)
			case tc.want != "" && err == nil:
				t.Fatalf("Dial connected; want refused with %q", tc.want)
			case tc.want != "" && !strings.Contains(err.Error(), tc.want):
				t.Fatalf("Dial: %v\nwant it to say %q", err, tc.want)
			}
		})
	}
}
