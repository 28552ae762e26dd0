package webhook

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	hostileSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	hostileID     = "01a2380f-36ed-703b-b582-c30406978704"
)

// hugeHeaders is a raw HTTP/1.1 receiver that reads each request's head and
// answers 500 with about n bytes of header lines (and no body).
func hugeHeaders(t *testing.T, n int) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
				}
				bw := bufio.NewWriterSize(c, 1<<16)
				_, _ = bw.WriteString("HTTP/1.1 500 Internal Server Error\r\n")
				line := "X-A: " + strings.Repeat("b", 40) + "\r\n"
				for range n / len(line) {
					if _, err := bw.WriteString(line); err != nil {
						return // the sender gave up reading
					}
				}
				_, _ = bw.WriteString("Content-Length: 0\r\n\r\n")
				_ = bw.Flush()
			}(c)
		}
	}()
	return "http://" + ln.Addr().String() + "/hook"
}

// An answer's headers are read up to maxResponseHeaderBytes, like its body
// up to MaxResponseBytes: net/http's own bound is 10 MiB, and a receiver
// sending that much in header lines cost 30 MiB of allocations per try, times
// the tries in flight. Such an answer is a failed try that says why — not
// "the webhook answered 500", as if its status had been read in the ordinary
// way.
func TestAnswerWithHugeHeadersIsAFailedTryOverHTTP1(t *testing.T) {
	w := NewWorker(nil, Config{Timeout: 30 * time.Second, MaxResponseBytes: 64 << 10})
	// Just under net/http's own bound of 10 MiB.
	code, err := w.send(context.Background(), newTryClock(time.Time{}, time.Now), hugeHeaders(t, 10<<20-1<<10), signingKeys{secret: hostileSecret}, hostileID, hostileID+".1.0123abcd", []byte(`{}`))
	const want = "the webhook's response headers exceed 64 KiB, more than a try reads"
	if err == nil || err.Error() != want || code != 0 {
		t.Fatalf("an answer with 10 MiB of headers: status %d, error %v; want no status and %q", code, err, want)
	}

	// Headers within the bound are read as ever.
	code, err = w.send(context.Background(), newTryClock(time.Time{}, time.Now), hugeHeaders(t, 32<<10), signingKeys{secret: hostileSecret}, hostileID, hostileID+".1.0123abcd", []byte(`{}`))
	if code != http.StatusInternalServerError || err == nil || err.Error() != "the webhook answered 500" {
		t.Fatalf("an answer with 32 KiB of headers: status %d, error %v; want 500, \"the webhook answered 500\"", code, err)
	}
}

// Over HTTP/2 the bound is the client's SETTINGS_MAX_HEADER_LIST_SIZE, which
// net/http derives from the same Transport.MaxResponseHeaderBytes. Headers
// that pass it with their last field make the same failed try as over
// HTTP/1; far over it, net/http stops decoding them and ends the connection
// (PROTOCOL_ERROR) rather than reading on: a failed try too, with no status
// read.
func TestAnswerWithHugeHeadersIsAFailedTryOverHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor != 2 {
			w.WriteHeader(http.StatusHTTPVersionNotSupported)
			return
		}
		// n fields of 1,040 bytes as HTTP/2 counts them (name, value, 32).
		n, _ := strconv.Atoi(r.URL.Query().Get("fields"))
		v := strings.Repeat("b", 1000)
		for i := range n {
			w.Header().Set(fmt.Sprintf("X-A-%04d", i), v)
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	client := newHTTPClient(4)
	client.Transport.(*http.Transport).TLSClientConfig = &tls.Config{RootCAs: roots}
	w := NewWorker(nil, Config{Timeout: 30 * time.Second, Client: client})
	send := func(fields int) (int, error) {
		return w.send(context.Background(), newTryClock(time.Time{}, time.Now), fmt.Sprintf("%s/hook?fields=%d", srv.URL, fields), signingKeys{secret: hostileSecret}, hostileID, hostileID+".1.0123abcd", []byte(`{}`))
	}

	// The fewest fields over the bound: its last field passes it, so the
	// rest has been decoded when net/http finds the list too large. What
	// net/http adds of its own (:status, date, content-length) decides
	// which count that is; 1,000 fields (1 MiB) are over it for sure.
	const want = "the webhook's response headers exceed 64 KiB, more than a try reads"
	for fields := 56; ; fields++ {
		code, err := send(fields)
		if code == http.StatusInternalServerError && err != nil && err.Error() == "the webhook answered 500" {
			if fields == 1000 {
				t.Fatal("an HTTP/2 answer with 1 MiB of headers was read")
			}
			continue
		}
		if fields == 56 {
			t.Fatalf("an HTTP/2 answer with %d fields (58 KiB): status %d, error %v; want 500, \"the webhook answered 500\"", fields, code, err)
		}
		if err == nil || err.Error() != want || code != 0 {
			t.Fatalf("an HTTP/2 answer with %d fields of headers, the first count over the bound: status %d, error %v; want no status and %q",
				fields, code, err, want)
		}
		break
	}
	code, err := send(1000)
	if err == nil || code != 0 || !strings.Contains(err.Error(), "PROTOCOL_ERROR") {
		t.Fatalf("an HTTP/2 answer with 1 MiB of headers: status %d, error %v; want no status and net/http's PROTOCOL_ERROR", code, err)
	}
}
