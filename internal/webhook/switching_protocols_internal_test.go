package webhook

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/routerhq/router/internal/store"
	"github.com/routerhq/router/internal/testdb"
)

// docs/configuration.md: webhooks.timeout is "one delivery try, connection to
// last byte"; docs/api.md: a slow or silent endpoint "does not hold up other
// owners' events". A receiver that answers the POST with
// "101 Switching Protocols" (Connection: Upgrade) and then keeps the
// connection open held the try forever: net/http hands a protocol switch's
// connection to the caller as the response body and detaches it from the
// request's context, so the try's deadline and River's job timeout no longer
// reached it, and send's read of the answer's start never returned. The
// worker goroutine, its River worker, its connection and its owner's slot
// were held until the receiver closed the connection (found by review).
func TestSwitchingProtocolsAnswerIsBoundedByTimeout(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	answered := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				_, _ = io.WriteString(c, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: anything\r\n\r\n")
				answered <- struct{}{}
				_, _ = io.Copy(io.Discard, c) // hold the connection until the router closes it
			}()
		}
	}()
	ctx := context.Background()
	db := testdb.New(t, store.Options{})
	// Runs before the database is dropped: lets a stuck try end.
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	if err := db.Store.SyncConfigWebhooks(ctx, map[string]string{"acme": "http://" + ln.Addr().String() + "/hook"}); err != nil {
		t.Fatal(err)
	}
	evID := cancelledJobEvent(t, db, "acme", "k1")
	w := NewWorker(db.Store, Config{Timeout: time.Second, Secrets: map[string]string{"acme": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}})
	// River runs the job with its timeout (Worker.Timeout: 11 s here).
	jctx, cancel := context.WithTimeout(ctx, w.Timeout(nil))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- w.Work(jctx, &river.Job[DeliverArgs]{JobRow: &rivertype.JobRow{ID: 1, Attempt: 1, MaxAttempts: 10000},
			Args: DeliverArgs{EventID: evID, Owner: "acme"}})
	}()
	<-answered
	// A watchdog, not a synchronisation: three times the job's whole time.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a try answered 101 Switching Protocols returned no error: it is no 2xx, so a failed try")
		}
		var lastError *string
		var code *int
		if err := db.Pool.QueryRow(ctx, `SELECT last_error, (SELECT status_code FROM webhook_deliveries d WHERE d.event_id = e.id ORDER BY try DESC LIMIT 1)
			FROM job_events e WHERE id = $1`, evID).Scan(&lastError, &code); err != nil {
			t.Fatal(err)
		}
		if want := AnsweredPrefix + "101" + InterimNote; lastError == nil || *lastError != want || code == nil || *code != 101 {
			t.Fatalf("the try is recorded with status %v and error %v, want 101 and %q", code, lastError, want)
		}
	case <-time.After(3 * w.Timeout(nil)):
		t.Fatalf("a try answered 101 Switching Protocols is still running %s after it began: webhooks.timeout (%s) and River's job timeout (%s) "+
			"do not bound it, and it holds its worker, connection and owner slot until the receiver closes the connection",
			3*w.Timeout(nil), time.Second, w.Timeout(nil))
	}
}
