package contract_test

import (
	"net/mail"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// docs/prompts.md §3: format is asserted; "email" is checked "with such a
// domain" (an RFC 1123 hostname), and internal/contract's isEmail promises "a
// local part of at most 64 that net/mail reads, a domain that is a hostname or
// a bracketed IP address". With a bracketed IP address as the domain the local
// part is not checked at all: any text before the last '@' passes — a space,
// angle brackets, another '@', a line break — so an answer whose "email" is
// prose wins, where the same local part with a host name is refused.
func TestFormatEmailChecksTheLocalPartBesideAnAddressLiteral(t *testing.T) {
	schema := `{"type":"object","properties":{"v":{"type":"string","format":"email"}},"required":["v"]}`
	v, err := contract.NewValidator([]byte(schema), "out.json", contract.Rules{})
	if err != nil {
		t.Fatal(err)
	}
	for _, local := range []string{
		"not an address",     // spaces
		"<script>x</script>", // markup
		"a@b",                // a second '@'
		"line\\nbreak",       // a line break (JSON-escaped)
		"..",                 // dots only
	} {
		// Premise: with a host name as the domain, the router refuses it.
		if _, vs := v.Validate(`{"v":"` + local + `@example.com"}`); len(vs) == 0 {
			t.Fatalf("premise: %q@example.com passes", local)
		}
		if _, err := mail.ParseAddress(strings.ReplaceAll(local, `\n`, "\n") + "@example.com"); err == nil {
			t.Fatalf("premise: net/mail reads the local part %q", local)
		}
		for _, domain := range []string{"[127.0.0.1]", "[IPv6:::1]"} {
			value := local + "@" + domain
			if doc, vs := v.Validate(`{"v":"` + value + `"}`); len(vs) == 0 {
				t.Errorf("format email: %q is not an email address (its local part is not one), yet the answer passes the contract and wins: %s", value, doc)
			}
		}
	}
}
