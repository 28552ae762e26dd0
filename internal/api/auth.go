package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"unicode"

	"github.com/routerhq/router/internal/store"
)

// Authenticator maps a bearer API key to its owner. ok=false: no such key.
type Authenticator interface {
	Owner(ctx context.Context, key string) (owner string, ok bool, err error)
}

// KeyAuth checks keys from the configuration first, then keys stored in the
// database by `router keys create` — only a key of their shape
// (storedKeyShape) is looked up there.
type KeyAuth struct {
	Static map[string]string // key -> owner; not changed once Owner has been called
	Store  *store.Store

	// digests is Static's keys' SHA-256 digests with their owners, computed
	// once (on the first Owner call): an unknown token costs one hash, not
	// one per configured key.
	digestsOnce sync.Once
	digests     []keyDigest
}

// keyDigest is a configured key's SHA-256 digest and its owner.
type keyDigest struct {
	sum   [sha256.Size]byte
	owner string
}

// staticDigests returns Static's digests, computing them on the first call.
func (a *KeyAuth) staticDigests() []keyDigest {
	a.digestsOnce.Do(func() {
		a.digests = make([]keyDigest, 0, len(a.Static))
		for k, owner := range a.Static {
			a.digests = append(a.digests, keyDigest{sha256.Sum256([]byte(k)), owner})
		}
	})
	return a.digests
}

var _ Authenticator = (*KeyAuth)(nil)

// Owner implements Authenticator.
func (a *KeyAuth) Owner(ctx context.Context, key string) (string, bool, error) {
	// Compared as SHA-256 digests: ConstantTimeCompare returns at once on
	// different lengths, which would tell a prober a configured key's length.
	// Every key is compared, whatever matched.
	given := sha256.Sum256([]byte(key))
	found, match := "", 0
	for _, d := range a.staticDigests() {
		if subtle.ConstantTimeCompare(d.sum[:], given[:]) == 1 {
			found, match = d.owner, 1
		}
	}
	if match == 1 {
		return found, true, nil
	}
	if a.Store == nil || !storedKeyShape(key) {
		// Not a key `router keys create` makes: no stored key can match, so
		// the database is not asked (a random key would cost a query each
		// time, past the cache). The answer is an unknown key's.
		return "", false, nil
	}
	owner, err := a.Store.OwnerForAPIKey(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil
	}
	return owner, err == nil, err
}

type ownerKey struct{}

func ownerFrom(ctx context.Context) string { s, _ := ctx.Value(ownerKey{}).(string); return s }

// authed wraps h so it runs only for a valid API key, with the owner in context.
func (s *Server) authed(h http.HandlerFunc) http.HandlerFunc {
	return s.withOwner(h, func(w http.ResponseWriter, r *http.Request, status int, title, detail string) {
		writeProblem(w, r, problem{Status: status, Type: authProblemType(status), Title: title, Detail: detail})
	})
}

func authProblemType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "unauthenticated"
	case http.StatusTooManyRequests:
		return "rate-limited"
	}
	return "unavailable"
}

// authFail reports a request refused before its endpoint ran (a missing or
// unknown key, a key that could not be checked, a rate limit), in the
// endpoint's shape.
type authFail func(w http.ResponseWriter, r *http.Request, status int, title, detail string)

// keyedRoute is an endpoint that takes an API key: next runs once the key is
// valid, with the owner in context.
type keyedRoute struct{ next http.Handler }

// withOwner authenticates the request, takes a token of its owner's rate
// (requests_per_second, SPEC §17), and calls h with the owner in context, or
// reports the failure through fail (whose shape depends on the endpoint).
// Between the token and h runs what WrapAuthenticated added (the tenant
// listener's body reading): a body is read only for a valid key whose owner
// is within its rate.
//
// The token is taken before the body is read, not after: a request whose
// body stalls or fails (408, 400) holds a connection, a goroutine and a body
// buffer for up to http.read_body_timeout, so it counts against the owner's
// rate like any request, or an owner limited to a few requests a second could
// hold any number of such requests at once (counted, they are at most burst +
// requests_per_second × http.read_body_timeout). The body's failure is the
// caller's, and its token is spent like that of a request its endpoint
// refuses (400, 404, 409, 413). A request the rate refuses takes no token
// (allow), nor does one refused for its key: neither has its body read.
//
// A POST with a body has its key checked again once the body has been read,
// before its endpoint runs (checkKeyAfterBody): the body may take up to
// http.read_body_timeout to arrive, and a key revoked meanwhile must not
// create anything.
func (s *Server) withOwner(h http.HandlerFunc, fail authFail) http.HandlerFunc {
	route := &keyedRoute{next: s.checkKeyAfterBody(h, fail)}
	s.keyed = append(s.keyed, route)
	return func(w http.ResponseWriter, r *http.Request) {
		if len(r.Header.Values("Authorization")) > 1 {
			// Which one counts is not agreed: a proxy or an audit log may
			// take the last where this would take the first, and the
			// request would be let in or logged as one owner and run as
			// another.
			w.Header().Set("WWW-Authenticate", `Bearer realm="router", error="invalid_request"`)
			fail(w, r, http.StatusUnauthorized, "More than one Authorization header",
				"the request has more than one Authorization header: send exactly one, 'Authorization: Bearer <key>'")
			return
		}
		key, malformed := bearer(r.Header.Get("Authorization"))
		if malformed != "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="router", error="invalid_request"`)
			fail(w, r, http.StatusUnauthorized, "Malformed Authorization header", malformed)
			return
		}
		if key == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="router"`)
			fail(w, r, http.StatusUnauthorized, "Missing API key", "send your API key as 'Authorization: Bearer <key>'")
			return
		}
		if len(key) > s.maxKey {
			// Longer than any key this router accepts: refused as unknown
			// without hashing it, asking the database or filling the cache.
			w.Header().Set("WWW-Authenticate", `Bearer realm="router", error="invalid_token"`)
			fail(w, r, http.StatusUnauthorized, "Unknown API key",
				"the API key is not known to this router; create one with `router keys create --owner NAME`")
			return
		}
		owner, ok, err := s.Auth.Owner(r.Context(), key)
		if err != nil {
			if s.callerLeft(r, "look up the API key", err) {
				return
			}
			s.reqLog(r).Error("API key lookup failed", "err", err)
			w.Header().Set("Retry-After", "1")
			fail(w, r, http.StatusServiceUnavailable, "Cannot check API key",
				"the router could not reach its database to check the API key; retry shortly")
			return
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="router", error="invalid_token"`)
			fail(w, r, http.StatusUnauthorized, "Unknown API key",
				"the API key is not known to this router; create one with `router keys create --owner NAME`")
			return
		}
		noteOwner(r.Context(), owner) // for the access log, a refusal for the body or by a limit included
		if ok, wait, lim := s.limits.allow(owner); !ok {
			// Refused before the body is read (by what WrapAuthenticated
			// added): an owner past its rate costs no buffering and no wait
			// for its body. Its body stays unread, so the connection closes
			// (else net/http would read the rest before answering).
			if r.ProtoMajor == 1 && r.ContentLength != 0 {
				closeUnreadBody(w)
			}
			w.Header().Set("Retry-After", retryAfterSeconds(wait))
			fail(w, r, http.StatusTooManyRequests, "Too many requests", rateDetail(owner, lim, wait))
			return
		}
		route.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ownerKey{}, owner)))
	}
}

// checkKeyAfterBody is h, for a POST with a body, reading that body and
// checking the request's API key again before h runs (SPEC §16: a revoked key
// is refused from the next request on). withOwner checked the key before the
// body was read, and the body may take up to http.read_body_timeout to
// arrive: a key revoked in the meantime — `router keys revoke` returns once
// auth.cache_ttl has passed, saying every replica refuses the key — would
// otherwise still create a job or a chat completion. It runs inside what
// WrapAuthenticated added, so on the tenant listener the body is already read
// (readBodyFirst, a bufferedBody) and nothing more is waited for; elsewhere it
// reads the body here, as the endpoint would (up to one byte past
// MaxBodyBytes, so the endpoint still refuses an oversized one), and hands
// the endpoint what it read, a read error included.
//
// The cost is one more Owner call per POST with a body: a cache hit for a
// live key (CachedAuth), one database lookup with auth.cache_ttl 0. A GET, or
// a POST without a body (cancel, retry), has nothing to wait for between the
// check and its endpoint and is not checked again. A request its endpoint has
// already taken (answered, streaming, waiting for its job) is not affected by
// a later revocation. A body that could not be read is not checked: its
// endpoint refuses it (400, 413) without doing anything.
func (s *Server) checkKeyAfterBody(h http.HandlerFunc, fail authFail) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			h(w, r)
			return
		}
		if _, buffered := r.Body.(bufferedBody); !buffered {
			body := &readAhead{orig: r.Body}
			body.read(s.cfg.MaxBodyBytes)
			r.Body = body
			if body.err != nil {
				h(w, r) // the endpoint answers the read's failure, as it would have
				return
			}
		}
		if refused := s.recheckKey(w, r, "while this request's body was arriving"); refused != nil {
			if refused.status != 0 {
				fail(w, r, refused.status, refused.title, refused.detail)
			}
			return
		}
		h(w, r)
	}
}

// keyRefusal is recheckKey's refusal of a request: answer status with title
// and detail through the endpoint's authFail; status 0 when the caller left
// (nothing to answer).
type keyRefusal struct {
	status        int
	title, detail string
}

// recheckKey looks r's API key up again once something that took time since
// withOwner checked it has ended (while says what: "while this request's body
// was arriving"), and refuses the request unless the key still belongs to the
// owner withOwner found. nil: go on. The refusal's headers are set on w.
func (s *Server) recheckKey(w http.ResponseWriter, r *http.Request, while string) *keyRefusal {
	key, _ := bearer(r.Header.Get("Authorization")) // withOwner found it well formed
	owner, ok, err := s.Auth.Owner(r.Context(), key)
	if err != nil {
		if s.callerLeft(r, "check the API key again", err) {
			return &keyRefusal{}
		}
		s.reqLog(r).Error("API key lookup failed (checked again)", "err", err)
		w.Header().Set("Retry-After", "1")
		return &keyRefusal{status: http.StatusServiceUnavailable, title: "Cannot check API key",
			detail: "the router could not reach its database to check the API key again (it was valid when the request's headers came, and is checked once more " +
				"as it may have been revoked " + while + "); nothing was done: retry shortly"}
	}
	if !ok || owner != ownerFrom(r.Context()) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="router", error="invalid_token"`)
		return &keyRefusal{status: http.StatusUnauthorized, title: "API key revoked",
			detail: "the API key was revoked " + while + " (it was valid when the request's headers came): nothing was done; " +
				"send the request again with a valid key, or create one with `router keys create --owner NAME`"}
	}
	return nil
}

// bufferedBody is a request body already read into memory before the
// endpoint runs (the tenant listener's readBodyFirst, internal/server, and
// readAhead): reading it waits for nothing.
type bufferedBody interface{ BodyBuffered() }

// readAhead is a request body read before its endpoint runs
// (checkKeyAfterBody): the endpoint reads what was read, then the read's
// error, if any, as it would have from the original body.
type readAhead struct {
	data *bytes.Reader
	err  error
	orig io.ReadCloser
}

// read reads up to one byte past limit (the endpoint refuses a body over it).
func (b *readAhead) read(limit int64) {
	if limit < math.MaxInt64 {
		limit++
	}
	data, err := io.ReadAll(io.LimitReader(b.orig, limit))
	b.data, b.err = bytes.NewReader(data), err
}

func (b *readAhead) Read(p []byte) (int, error) {
	n, err := b.data.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *readAhead) Close() error { return b.orig.Close() }

// BodyBuffered implements bufferedBody.
func (*readAhead) BodyBuffered() {}

// maxBearerBytes bounds the bearer token the API looks up: a stored key
// (storedKeyShape) is at most 67 bytes, so a longer token is refused as an
// unknown key without being hashed or cached, unless a configured key is
// longer (LongestKey).
const maxBearerBytes = 512

// keyLengths is implemented by an Authenticator that can say how long the
// longest key it accepts is (a configured key may be any length).
type keyLengths interface{ LongestKey() int }

// maxKeyBytes is the longest token worth looking up with a: maxBearerBytes,
// or a's longest key when that is longer.
func maxKeyBytes(a Authenticator) int {
	if l, ok := a.(keyLengths); ok {
		return max(maxBearerBytes, l.LongestKey())
	}
	return maxBearerBytes
}

// LongestKey is the length of the longest configured key (stored keys are
// shorter than maxBearerBytes).
func (a *KeyAuth) LongestKey() int {
	n := 0
	for k := range a.Static {
		n = max(n, len(k))
	}
	return n
}

// bearer reads an "Authorization: Bearer <key>" header (RFC 6750 §2.1): the
// scheme, whose name is case-insensitive (RFC 9110 §11.1), one or more
// spaces, and the key, which holds no white space. key and malformed are
// both "" when no key was sent (no header, or "Bearer" alone); malformed says
// what is wrong with a header of another form, without quoting it (it may
// hold a key), rather than taking it for a missing or unknown key.
func bearer(h string) (key, malformed string) {
	const want = "send 'Authorization: Bearer <key>'"
	h = strings.TrimSpace(h)
	if h == "" {
		return "", ""
	}
	i := strings.IndexFunc(h, unicode.IsSpace)
	if i < 0 {
		if strings.EqualFold(h, "Bearer") {
			return "", ""
		}
		return "", "the Authorization header is a single word, without the Bearer scheme before the key: " + want
	}
	if !strings.EqualFold(h[:i], "Bearer") {
		return "", "the Authorization header's scheme is not Bearer: " + want
	}
	rest := h[i:]
	key = strings.TrimLeftFunc(rest, unicode.IsSpace)
	if strings.Trim(rest[:len(rest)-len(key)], " ") != "" {
		return "", "the key must follow 'Bearer' after a space, not a tab or other white space: " + want
	}
	if strings.IndexFunc(key, unicode.IsSpace) >= 0 {
		return "", "the key must follow 'Bearer ' with nothing after it, but the header holds more than one word after Bearer (a key holds no white space): " + want
	}
	return key, ""
}

// Stored keys are "rk_" and crypto/rand.Text(): 26 characters of the RFC 4648
// base32 alphabet (store.CreateAPIKeyWith). rand.Text may grow longer in a
// later Go to keep 128 bits of randomness, so up to 64 are taken.
const (
	storedKeyPrefix  = "rk_"
	storedKeyMinText = 26
	storedKeyMaxText = 64
)

// storedKeyShape reports whether key can be a stored key: "rk_" and 26 to 64
// characters of A–Z and 2–7. A key of another shape is refused without a
// database query.
func storedKeyShape(key string) bool {
	text, ok := strings.CutPrefix(key, storedKeyPrefix)
	if !ok || len(text) < storedKeyMinText || len(text) > storedKeyMaxText {
		return false
	}
	for i := 0; i < len(text); i++ {
		if c := text[i]; !('A' <= c && c <= 'Z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}
