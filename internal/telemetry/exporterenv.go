package telemetry

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The OTLP exporter reads its TLS files, its timeout and its compression
// itself (otlpconfig.getOptionsFromEnv in the exporters' internal packages),
// and drops what it cannot use: a CA file it cannot read or that holds no PEM
// certificate (the exporter then trusts the system's roots only, and every
// export to a collector of a private CA fails), a client certificate or key
// it cannot read or that do not make a pair, or half a pair (the exporter
// then sends every batch without a client certificate), a timeout that is no
// whole number of milliseconds (its default, 10 s, is kept), a compression
// other than gzip (it sends spans uncompressed). It says so, when it does,
// only on OpenTelemetry's internal logger. exporterFileProblems refuses what
// it would lose a TLS file to, before it reads them, as otlpEnvProblems
// refuses an unreadable header; exporterEnvWarnings warns of a timeout or a
// compression it would replace, as sdkEnvWarnings does of an OTEL_BSP_*.

// Both variables of each pair are read by the exporter, the traces one
// (second) applied after the generic one.
var (
	otlpCAKeys         = [...]string{"OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"}
	otlpClientCertKeys = [...][2]string{
		{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY"},
	}
	otlpTimeoutKeys     = [...]string{"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"}
	otlpCompressionKeys = [...]string{"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"}
)

// otlpDefaultTimeout is the exporter's timeout when neither timeout
// variable holds an integer (otlpconfig.DefaultTimeout).
const otlpDefaultTimeout = 10 * time.Second

// exporterFileProblems refuses each TLS file variable set (values without
// the spaces around them, as the exporter reads them) that the exporter
// could not use: a CA file it cannot read or holding no PEM certificate, a
// client certificate without its key or a key without its certificate, a
// pair it cannot read or that does not match. Every one set is checked, the
// overridden generic one too: the exporter reads both, and a path the router
// cannot read is a mistake in its deployment either way. Paths are named;
// the files' contents never are.
func exporterFileProblems(getenv func(string) string) error {
	var errs []error
	for _, key := range otlpCAKeys {
		path := strings.TrimSpace(getenv(key))
		if path == "" {
			continue
		}
		pem, err := os.ReadFile(path)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("telemetry: %s: the CA certificate file cannot be read (%v), so the OTLP exporter would trust the system's roots only and every export to a collector whose certificate they do not sign would fail; "+
				"make it the path of a readable PEM file holding the collector's CA certificate (where the secret is mounted), or unset it to use the system's roots", key, err))
		case !x509.NewCertPool().AppendCertsFromPEM(pem):
			errs = append(errs, fmt.Errorf("telemetry: %s: %s holds no PEM certificate (-----BEGIN CERTIFICATE-----), so the OTLP exporter would ignore it and trust the system's roots only; "+
				"point it at the collector's CA certificate in PEM form, or unset it", key, path))
		}
	}
	for _, pair := range otlpClientCertKeys {
		certKey, keyKey := pair[0], pair[1]
		certPath, keyPath := strings.TrimSpace(getenv(certKey)), strings.TrimSpace(getenv(keyKey))
		switch {
		case certPath == "" && keyPath == "":
			continue
		case keyPath == "" || certPath == "":
			set, unset := certKey, keyKey
			if certPath == "" {
				set, unset = keyKey, certKey
			}
			errs = append(errs, fmt.Errorf("telemetry: %s is set without %s, so the OTLP exporter would ignore it and send spans without a client certificate; set both (PEM files) or neither", set, unset))
			continue
		}
		cert, certErr := os.ReadFile(certPath)
		key, keyErr := os.ReadFile(keyPath)
		if certErr != nil || keyErr != nil {
			for _, e := range []struct {
				key string
				err error
			}{{certKey, certErr}, {keyKey, keyErr}} {
				if e.err != nil {
					errs = append(errs, fmt.Errorf("telemetry: %s: the file cannot be read (%v), so the OTLP exporter would send spans without a client certificate; "+
						"make it the path of a readable PEM file (where the secret is mounted), or unset %s and %s", e.key, e.err, certKey, keyKey))
				}
			}
			continue
		}
		if _, err := tls.X509KeyPair(cert, key); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: %s and %s do not make a client certificate (%v), so the OTLP exporter would send spans without one; "+
				"point them at the PEM certificate and its own private key", certKey, keyKey, err))
		}
	}
	return errors.Join(errs...)
}

// exporterEnvWarnings are the warnings of each OTLP timeout variable that is
// not an integer (the exporter's strconv.Atoi of the value without the
// spaces around it) and each compression variable that is neither gzip
// (which the exporter reads as written, lower case) nor none, naming the
// variable, what it holds, what the exporter does instead and how to write
// it.
func exporterEnvWarnings(getenv func(string) string) []Warning {
	var warnings []Warning
	for _, key := range otlpTimeoutKeys {
		raw := strings.TrimSpace(getenv(key))
		if raw == "" {
			continue
		}
		if _, err := strconv.Atoi(raw); err == nil {
			continue
		}
		how := "write a whole number of milliseconds, without a unit"
		if d, err := time.ParseDuration(raw); err == nil {
			how += " (" + strconv.FormatInt(d.Milliseconds(), 10) + " for " + raw + ")"
		}
		warnings = append(warnings, Warning{Msg: key + " is not an integer, so the OTLP exporter ignores it and keeps the other timeout variable's value or its default; " + how,
			Attrs: []any{"variable", key, "value", raw, "default", strconv.FormatInt(otlpDefaultTimeout.Milliseconds(), 10) + " ms"}})
	}
	for _, key := range otlpCompressionKeys {
		raw := strings.TrimSpace(getenv(key))
		if raw == "" || raw == "gzip" || strings.EqualFold(raw, "none") {
			continue
		}
		warnings = append(warnings, Warning{Msg: key + " is neither gzip nor none, so the OTLP exporter reads it as none (no compression); write gzip (lower case) to compress them, or none",
			Attrs: []any{"variable", key, "value", raw}})
	}
	return warnings
}
