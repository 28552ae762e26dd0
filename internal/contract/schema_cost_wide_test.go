package contract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// A wide schema whose members refer back to the root (a tree with 2,000
// kinds of child) is checked in one pass over its members: each member leads
// to what the root leads to, which is explored once. It used to be explored
// again below every member, 2,000 × 2,000 steps, and the schema refused as
// too complex to check.
func TestRequestSchemaCostExploresWhatRecursionLeadsToOnce(t *testing.T) {
	var props []string
	for i := range 2000 {
		props = append(props, fmt.Sprintf(`"c%d":{"$ref":"#"}`, i))
	}
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
	if _, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatal(err)
	}
}

// A place that leads to what an earlier one does is still checked itself:
// here /a applies the root again and 2^14 more subschemas that lead nowhere.
func TestRequestSchemaCostChecksEveryPlace(t *testing.T) {
	chain := strings.TrimSuffix(strings.TrimPrefix(chainSchema(14, "true"), `{"$ref":"#/$defs/d0","$defs":{`), "}}")
	schema := `{"type":"object","properties":{"a":{"allOf":[{"$ref":"#"},{"$ref":"#/$defs/d0"}]}},"$defs":{` + chain + `}}`
	_, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema")
	if err == nil || !strings.Contains(err.Error(), "more than 10000 of its subschemas") || !strings.Contains(err.Error(), "the answer's /a;") {
		t.Fatalf("%v: want it refused at the answer's /a", err)
	}
}
