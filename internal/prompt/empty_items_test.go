package prompt_test

import (
	"strings"
	"testing"
)

// A list item written as null is refused, naming it: yaml.v3 dropped it
// without a word, so `custom: [~]` loaded with no custom rule at all. A null
// among an enum's values is a value, and stays allowed where the schema
// allows it.
func TestLoad_EmptyListItemsRefused(t *testing.T) {
	for extra, want := range map[string]string{
		"rules:\n  custom: [~]\n":                           "rules.custom[0]: line 9: the item is empty",
		"rules:\n  equal:\n    -\n":                         "rules.equal[0]: line 10: the item is empty",
		"rules:\n  custom: [invoice.dates_ordered, null]\n": "rules.custom[1]: line 9: the item is empty",
	} {
		_, file, err := loadOne(t, manifestWith(extra), nil)
		if err == nil || !strings.Contains(err.Error(), file+": "+want) {
			t.Errorf("%q: error %v, want %q", extra, err, want)
		}
	}
	messages := strings.Replace(manifestWith(""), "messages:\n", "messages:\n  - ~\n", 1)
	if _, file, err := loadOne(t, messages, nil); err == nil || !strings.Contains(err.Error(), file+": messages[0]: line 6: the item is empty") {
		t.Errorf("a null message: error %v", err)
	}
	nullable := map[string]string{"out.json": `{"type":"object","properties":{"answer":{"type":["string","null"]}},"required":["answer"]}`}
	if _, _, err := loadOne(t, manifestWith("rules:\n  enums: {/answer: [yes, ~]}\n"), nullable); err != nil {
		t.Errorf("a null enum value refused: %v", err)
	}
}
