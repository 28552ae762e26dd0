package telemetry

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writePEMPair writes a self-signed certificate and its key, PEM, to dir,
// and returns their paths.
func writePEMPair(t *testing.T, dir, name string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// The OTLP exporter drops a TLS file it cannot use (the CA: every export to
// a collector of a private CA fails; the client pair: spans go without a
// client certificate) with a line on OpenTelemetry's internal logger only.
// CheckEnv (`router config check`, and SetupLogged through exportEnv)
// refuses each, naming the variable and how to fix it; files the exporter
// reads are accepted.
func TestExporterTLSFilesTheExporterCannotUseAreRefused(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePEMPair(t, dir, "client")
	otherCert, _ := writePEMPair(t, dir, "other")
	notPEM := filepath.Join(dir, "ca.der")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	const endpoint = "https://127.0.0.1:4318"
	for name, c := range map[string]struct {
		vars  map[string]string
		names []string // in the refusal
	}{
		"unreadable traces CA":     {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": missing}, []string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "readable PEM file"}},
		"CA without a certificate": {map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": notPEM}, []string{"OTEL_EXPORTER_OTLP_CERTIFICATE", "holds no PEM certificate"}},
		// The generic one overridden by the traces one is read all the same.
		"unreadable overridden CA": {map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": missing, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": cert}, []string{"OTEL_EXPORTER_OTLP_CERTIFICATE"}},
		"certificate without key":  {map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert}, []string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY", "set both"}},
		"key without certificate":  {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": key}, []string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY is set without OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE"}},
		"unreadable client key":    {map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": missing}, []string{"OTEL_EXPORTER_OTLP_CLIENT_KEY: the file cannot be read"}},
		"key of another certificate": {map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": otherCert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": key},
			[]string{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY do not make a client certificate"}},
	} {
		t.Run(name, func(t *testing.T) {
			vars := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint}
			for k, v := range c.vars {
				vars[k] = " " + v + "\n" // read without the spaces around it, as the exporter does
			}
			err := CheckEnv(env(vars))
			if err == nil {
				t.Fatalf("CheckEnv accepted %v, which the exporter cannot use", c.vars)
			}
			for _, want := range c.names {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("CheckEnv: %v; want it to say %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "BEGIN EC PRIVATE KEY") {
				t.Errorf("the refusal shows a file's contents: %v", err)
			}
		})
	}
	good := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_CERTIFICATE": cert,
		"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": key,
		"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY": key}
	if err := CheckEnv(env(good)); err != nil {
		t.Errorf("CheckEnv of files the exporter reads: %v", err)
	}
}

// A timeout that is not a whole number of milliseconds, and a compression
// the exporter reads as none, are warned of (the exporter keeps its default,
// as the batch span processor does for an OTEL_BSP_*), naming the variable
// and how to write it; values it reads are not.
func TestExporterTimeoutAndCompressionItCannotReadAreWarnedOf(t *testing.T) {
	for _, c := range []struct {
		key, value string
		want       string // in the warning; "" for none
	}{
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "30s", "(30000 for 30s)"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "1.5m", "(90000 for 1.5m)"},
		{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "ten", "whole number of milliseconds"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", " 30000 ", ""},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "GZIP", "write gzip (lower case)"},
		{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "zstd", "reads it as none"},
		{"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", " gzip ", ""},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "None", ""},
	} {
		t.Run(c.key+"="+c.value, func(t *testing.T) {
			var got []string
			for _, w := range exporterEnvWarnings(env(map[string]string{c.key: c.value})) {
				got = append(got, w.String())
			}
			if c.want == "" {
				if len(got) > 0 {
					t.Errorf("warned of a value the exporter reads: %q", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.key) || !strings.Contains(got[0], c.want) {
				t.Errorf("warnings: %q; want one naming %s and saying %q", got, c.key, c.want)
			}
		})
	}
}
