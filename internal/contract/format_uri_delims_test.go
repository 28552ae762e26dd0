package contract_test

import (
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// RFC 3986 §3.2.2 allows '[' and ']' only around an IP-literal host, and §3.5
// ends a URI at its one fragment, which holds no '#' (gen-delims are not in
// pchar). net/url reads "https://a/p[1]" and "https://a/#a#b" without
// complaint, so format uri checks them itself. A bracketed IPv6 host, an
// encoded bracket or '#', and a single fragment still pass.
func TestFormatURIRefusesBracketsOutsideTheHostAndASecondHash(t *testing.T) {
	schema := `{"type":"object","properties":{"v":{"type":"string","format":"uri"}},"required":["v"]}`
	v, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, value := range []string{
		"https://shop.example/p[1]",
		"https://shop.example/?a[]=1",
		"https://shop.example/#a[1]",
		"urn:x:[1]",
		"https://shop.example/#a#b",
		"https://shop.example/?q=1#a#",
		"https://shop.example/50%2",
	} {
		if doc, vs := v.Validate(`{"v":"` + value + `"}`); len(vs) == 0 {
			t.Errorf("format uri: %q is not a URI RFC 3986 allows, yet the answer passes: %s", value, doc)
		}
	}
	for _, value := range []string{
		"http://[::1]:80/p",
		"http://[2001:db8::1]",
		"https://shop.example/p%5B1%5D?a%5B%5D=1#a%23b",
		"https://shop.example/?discount=50%25#top",
		"https://user@shop.example?q#f",
	} {
		if _, vs := v.Validate(`{"v":"` + value + `"}`); len(vs) != 0 {
			t.Errorf("format uri: %q is a URI, yet it is refused: %v", value, vs)
		}
	}
}
