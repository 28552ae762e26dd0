package netredact

import (
	"net/url"
	"testing"
)

// A URL is shown without user information and without query values that
// may be secrets; short values and API versions stay.
func TestURLHidesWhatMayBeASecret(t *testing.T) {
	for raw, want := range map[string]string{
		"https://u:p@gw.example/v1?key=AIzaSyROUTERSECRET&api-version=2024-10-21&tenant=a": "https://gw.example/v1?key=…&api-version=2024-10-21&tenant=a",
		"https://api.openai.com/v1":      "https://api.openai.com/v1",
		"http://h/v1?flag&code=12345678": "http://h/v1?flag&code=…",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := URL(u); got != want {
			t.Errorf("URL(%s) = %s, want %s", raw, got, want)
		}
	}
}
