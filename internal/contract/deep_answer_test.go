package contract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// An answer is judged alone, and encoding/json (ParseJSON's fallback) reads
// up to 10,000 levels of nesting, so an answer nested 10,000 deep passes the
// contract and wins. But it never reaches a caller alone: GET /v1/jobs/{id},
// the webhook event and the wait answer hold it one level down ("result"),
// and the resolution endpoint takes it the same way. One level more than
// encoding/json reads: a Go caller cannot decode the job the router says
// succeeded ("exceeded max depth", even into a json.RawMessage), and the
// router itself refuses the same result sent to
// POST /v1/jobs/{id}/attempts/{seq}/resolve (decodeBody: 400 invalid-json).
// (Python's json.loads already fails at 1,000 levels.) The only schema
// needed is one that leaves a value's shape open, as {"data": {}} does.
func TestDeepAnswerIsReadableWhereItIsDelivered(t *testing.T) {
	noExtra := false
	v, err := contract.NewValidator([]byte(`{"type":"object","properties":{"data":{}},"required":["data"]}`), "out.json",
		contract.Rules{NoExtraKeys: &noExtra})
	if err != nil {
		t.Fatal(err)
	}
	const depth = 9999 // with the answer's own object: 10,000 levels
	answer := `{"data":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	doc, vs := v.Validate(answer)
	if len(vs) > 0 {
		return // refused as too deep: what the test asks for
	}
	// What GET /v1/jobs/{id} (and the webhook, and a resolution) carries.
	job := `{"id":"j","state":"succeeded","result":` + string(doc) + `}`
	var got struct {
		ID     string          `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(job), &got); err != nil {
		t.Errorf("an answer of %d bytes nested %d deep passed the contract and wins, but the job that carries it cannot be decoded: %v", len(doc), depth+1, err)
	}
}
