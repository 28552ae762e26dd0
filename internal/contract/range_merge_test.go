package contract_test

import (
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/routerhq/router/internal/contract"
)

// A bound brought in by a merge key is compared as written, as one written in
// the mapping itself is: it was read as its float64 only, so max:
// 100.00000000000000001 through `<<: *lim` let 100.00000000000000002 pass. A
// key of the mapping itself wins over the merged one, as YAML reads it.
func TestRange_MergedBoundAsWritten(t *testing.T) {
	src := "limits: &lim {max: 100.00000000000000001, min: 0.30000000000000001}\n" +
		"ranges:\n  /p: {<<: *lim}\n  /q: {<<: [*lim], min: 0.1}\n"
	var doc struct {
		Limits         map[string]any `yaml:"limits"`
		contract.Rules `yaml:",inline"`
	}
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	rules := doc.Rules
	if lo, hi := rules.Ranges["/p"].Written(); lo != "0.30000000000000001" || hi != "100.00000000000000001" {
		t.Errorf("merged bounds Written() = %q, %q: want both as written", lo, hi)
	}
	if lo, hi := rules.Ranges["/q"].Written(); lo != "" || hi != "100.00000000000000001" {
		t.Errorf("Written() = %q, %q: want the mapping's own min (0.1, a float64's exact text) and the merged max", lo, hi)
	}
	val := mustValidator(t, schemaFor(`"p":{"type":"number"}`, `"q":{"type":"number"}`), rules)
	checkCase(t, val, `{"p":100.00000000000000002,"q":0.1}`, []v{{"range", "/p"}}, "value 100.00000000000000002 is above the maximum 100.00000000000000001")
	checkCase(t, val, `{"p":100.00000000000000001,"q":0.2}`, nil, "")
}
