package jsonfast

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

type panicky struct{}

func (*panicky) UnmarshalJSON([]byte) error { panic("a decoder that breaks") }

type failing struct{}

func (*failing) UnmarshalJSON([]byte) error { return errors.New("no") }

// A panic inside the decode is a failed attempt, not a crash; an error is a
// failed attempt; a value decodes.
func TestUnmarshal(t *testing.T) {
	if Unmarshal([]byte(`{"a":1}`), &panicky{}) {
		t.Error("a panicking decode reported success")
	}
	if Unmarshal([]byte(`{"a":1}`), &failing{}) {
		t.Error("a failing decode reported success")
	}
	if Unmarshal([]byte(`{"a":`), new(map[string]int)) {
		t.Error("truncated JSON reported success")
	}
	var m map[string]int
	if !Unmarshal([]byte(`{"a":1}`), &m) || m["a"] != 1 {
		t.Errorf("a valid object: %v", m)
	}
}

// Value decodes numbers as json.Number with their written form.
func TestValueNumbers(t *testing.T) {
	if !goccyUseNumber {
		t.Fatal("goccy does not decode numbers as json.Number with useNumber")
	}
	v, ok := Value([]byte(`[1e400,-0,0.10]`))
	if want := []any{json.Number("1e400"), json.Number("-0"), json.Number("0.10")}; !ok || !reflect.DeepEqual(v, want) {
		t.Errorf("numbers: got %#v (%v), want %#v", v, ok, want)
	}
}
