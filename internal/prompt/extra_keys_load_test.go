package prompt_test

import (
	"strings"
	"testing"
)

// An output schema that requires a key it does not declare loaded with
// no_extra_keys on (the default), and every answer was refused; a tagged
// union (oneOf branches each declaring and requiring their own key) too. The
// first is refused at load, naming the field and the fix; the second loads
// and its answers pass. Found by review.
func TestNoExtraKeysAndSchemaAgreeAtLoad(t *testing.T) {
	_, file, err := loadOne(t, manifestWith(""), map[string]string{"out.json": `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer","confidence"]}`})
	if err == nil || !strings.Contains(err.Error(), file+`: rules.no_extra_keys: the output schema requires the key "confidence" but does not declare it`) {
		t.Fatalf("LoadDir = %v", err)
	}

	set, _, err := loadOne(t, manifestWith(""), map[string]string{"out.json": `{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"oneOf":[{"properties":{"confidence":{"type":"number"}},"required":["confidence"]},{"properties":{"reason":{"type":"string"}},"required":["reason"]}]}`})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := set.Get("p", "")
	for _, answer := range []string{`{"answer":"a","confidence":0.9}`, `{"answer":"a","reason":"r"}`} {
		if doc, vs := p.Validator().Validate(answer); doc == nil {
			t.Errorf("%s refused: %v", answer, vs)
		}
	}
}
