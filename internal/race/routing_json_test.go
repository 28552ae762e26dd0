package race

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func checkDecisionsJSON(t *testing.T, ds []Decision) {
	t.Helper()
	want, err := json.Marshal(ds)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendDecisions([]byte("x"), ds); !bytes.Equal(got[1:], want) {
		t.Errorf("appendDecisions(%+v) = %s\njson.Marshal writes %s", ds, got[1:], want)
	}
}

func TestDecisionsJSONIsMarshal(t *testing.T) {
	// Every field set: a field added to Decision and not to appendDecisions
	// makes this fail (the struct is filled by reflection).
	var full Decision
	v := reflect.ValueOf(&full).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("<v\"" + v.Type().Field(i).Name + "\u2028\xff>")
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(-42)
		default:
			t.Fatalf("Decision.%s is a %s: teach appendDecisions and this test to write it", v.Type().Field(i).Name, f.Kind())
		}
	}
	checkDecisionsJSON(t, nil)
	checkDecisionsJSON(t, []Decision{})
	checkDecisionsJSON(t, []Decision{full})
	checkDecisionsJSON(t, []Decision{{Provider: "a", Eligible: true, PromptTokens: 12, Encoding: "o200k_base"}, {Provider: "b", Reason: "breaker open"}, {}})
}

func FuzzDecisionsJSON(f *testing.F) {
	f.Add("openai", "skipped", true, "ok", 7, "cl100k_base")
	f.Fuzz(func(t *testing.T, provider, event string, eligible bool, reason string, tokens int, encoding string) {
		checkDecisionsJSON(t, []Decision{{Provider: provider, Event: event, Eligible: eligible, Reason: reason, PromptTokens: tokens, Encoding: encoding}, {Provider: reason}})
	})
}
