package webhook

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

const (
	headTestPath  = "/services/T024BE7LD/B07R2K7QF/m2zXaQ9kWpLs8vT3nYcE"
	headTestQuote = "Cannot POST " + headTestPath + " and more"
)

// secretStart says which start of a secret segment of headTestPath text
// shows, if any: two bytes of one are already more than the URL shows.
func secretStart(text string) string {
	for _, s := range []string{"T0", "B0", "m2"} {
		if strings.Contains(text, s) {
			return s
		}
	}
	return ""
}

// Whatever webhooks.max_response_bytes is (config/ranges.go accepts any
// value from 1), an answer that quotes the webhook URL's path and is cut by
// that limit, or by the excerpt's own, keeps nothing of a secret path
// segment it cuts in two, and its excerpt is marked cut — whether or not the
// answer says its length.
func TestEveryMaxResponseBytesHidesTheWebhookPathItCuts(t *testing.T) {
	u, err := url.Parse("https://hooks.slack.com" + headTestPath)
	if err != nil {
		t.Fatal(err)
	}
	for limit := int64(1); limit <= answerExcerptBytes+40; limit++ {
		for pad := 0; pad <= int(limit); pad++ {
			body := strings.Repeat("x", pad) + " " + headTestQuote
			if int64(len(body)) <= limit {
				continue // not cut
			}
			for _, contentLength := range []int64{-1, int64(len(body))} {
				// As send reads it: through max_response_bytes.
				head, more := readAnswerHead(io.LimitReader(strings.NewReader(body), limit), contentLength, limit)
				got := answerText(head, more, u)
				if s := secretStart(got); s != "" {
					t.Fatalf("max_response_bytes %d, padded %d, Content-Length %d: %q shows %q of the webhook URL's secret path",
						limit, pad, contentLength, got, s)
				}
				if got != "" && !strings.HasSuffix(got, "…") {
					t.Fatalf("max_response_bytes %d, padded %d, Content-Length %d: %q, want the cut marked", limit, pad, contentLength, got)
				}
			}
		}
	}
}

// An answer that fills max_response_bytes exactly, as its Content-Length
// says, is whole: quoted as it is, not marked cut.
func TestAnswerFillingTheLimitExactlyIsNotCut(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = io.WriteString(w, "bad signature")
	}))
	t.Cleanup(srv.Close)
	w := NewWorker(nil, Config{Timeout: 5 * time.Second, MaxResponseBytes: int64(len("bad signature"))})
	_, err := w.send(context.Background(), newTryClock(time.Time{}, time.Now), srv.URL+headTestPath,
		signingKeys{owner: "acme", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "01a25039-0000-7000-8000-000000000001", "k", []byte("{}"))
	if err == nil || err.Error() != "the webhook answered 400: bad signature" {
		t.Fatalf("%v, want the whole answer, not marked cut", err)
	}
}

// An answer whose body breaks off (the receiver closes the connection short
// of its Content-Length) partway into the webhook URL's secret path it
// quotes keeps nothing of the segment it cut in two: the read's end is a cut
// as a limit's is.
func TestBrokenAnswerHidesTheWebhookPathItCuts(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		writeBroken(rw, "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 500\r\n\r\n"+
			"<pre>Cannot POST /services/T024BE7LD/B07R2K7QF/m2zXaQ9k")
	}))
	t.Cleanup(srv.Close)
	w := NewWorker(nil, Config{Timeout: 5 * time.Second, MaxResponseBytes: 65536})
	_, err := w.send(context.Background(), newTryClock(time.Time{}, time.Now), srv.URL+headTestPath,
		signingKeys{owner: "acme", secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, "01a25039-0000-7000-8000-000000000001", "k", []byte("{}"))
	if err == nil {
		t.Fatal("a broken 404 was taken for a delivery")
	}
	if s := secretStart(err.Error()); s != "" || !strings.HasPrefix(err.Error(), "the webhook answered 404") {
		t.Errorf("the try's error shows %q of the webhook URL's secret path, or is not the 404's: %q", s, err.Error())
	}
}

func writeBroken(rw *bufio.ReadWriter, s string) {
	_, _ = rw.WriteString(s)
	_ = rw.Flush()
}
