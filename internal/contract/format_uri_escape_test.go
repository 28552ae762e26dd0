package contract_test

import (
	neturl "net/url"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// docs/prompts.md §3: "uri" is checked "as an absolute URI net/url reads with
// no character RFC 3986 does not allow". A '%' is allowed only as the start of
// a percent-encoding, '%' HEXDIG HEXDIG (RFC 3986 §2.1), and net/url checks
// that in the path and the fragment but not in the query, which it keeps raw.
// So a model's "https://shop.example/?discount=50%" passes format uri and
// wins, and the caller's own reader refuses it: Go's url.ParseQuery (and
// u.Query(), which drops the pair silently), Java's java.net.URI ("Malformed
// escape pair"). The same '%' in the path is refused, as it should be.
func TestFormatURIRefusesAMalformedPercentEscapeInTheQuery(t *testing.T) {
	schema := `{"type":"object","properties":{"v":{"type":"string","format":"uri"}},"required":["v"]}`
	v, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	// Premise: in the path, the router refuses it.
	if _, vs := v.Validate(`{"v":"https://shop.example/50%"}`); len(vs) == 0 {
		t.Fatal("premise: a lone % in the path passes")
	}
	for _, value := range []string{"https://shop.example/?discount=50%", "https://shop.example/?q=%zz"} {
		u, err := neturl.Parse(value)
		if err != nil {
			t.Fatalf("premise: net/url refuses %q: %v", value, err)
		}
		if _, err := neturl.ParseQuery(u.RawQuery); err == nil {
			t.Fatalf("premise: the query of %q parses", value)
		}
		if doc, vs := v.Validate(`{"v":"` + value + `"}`); len(vs) == 0 {
			t.Errorf("format uri: %q holds a '%%' that starts no percent-encoding (RFC 3986 §2.1), yet the answer passes the contract and wins: %s", value, doc)
		}
	}
}
