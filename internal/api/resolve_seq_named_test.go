package api_test

import (
	"net/http"
	"strings"
	"testing"
)

// An attempt number too large for any integer is a 404 that names the number
// as it was sent, not the number it was clamped to for the lookup. Found by
// review: 99999999999999999999 was named as attempt 2147483648.
func TestHugeSeqIsNamedAsSent(t *testing.T) {
	b := setup(t, options{})
	job := b.create(t, acmeKey, "seq-named", triageBody("seq"), "Prefer", "wait=30")
	for _, seq := range []string{"99999999999999999999", "2147483648"} {
		r := b.do(t, "POST", "/v1/jobs/"+job.job()+"/attempts/"+seq+"/resolve", acmeKey, `{"outcome":"failed"}`)
		if d, _ := r.body["detail"].(string); r.status != http.StatusNotFound || !strings.Contains(d, "no attempt "+seq+";") {
			t.Errorf("resolve attempt %s: %d %q, want 404 naming attempt %s", seq, r.status, d, seq)
		}
	}
}
