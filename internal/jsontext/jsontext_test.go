package jsontext

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestCheck(t *testing.T) {
	for in, bad := range map[string]bool{
		`{"a":"b"}`: false, `{"a":"\ud83d\ude00"}`: false, `{"a":"\\u0000"}`: false, `"\u00e9 \n \"`: false,
		`{"a":"\u0000"}`: true, `{"a":"\ud800"}`: true, `{"a":"\udc00"}`: true, `{"a":"\ud800\u0041"}`: true,
		"{\"a\":\"\xff\"}": true, `{"a":"x\\\u0000"}`: true,
	} {
		if got := Check([]byte(in)) != nil; got != bad {
			t.Errorf("Check(%q) unstorable=%v, want %v", in, got, bad)
		}
	}
	if e := Check([]byte(`{"ab":"\u0000"}`)); e == nil || e.Offset != 7 {
		t.Fatalf("offset: %+v", e)
	}
}

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"b"}`:                  `{"a":"b"}`,
		`{"a":"x\u0000y"}`:           `{"a":"x\ufffdy"}`,
		`{"a":"\\u0000 \u0000"}`:     `{"a":"\\u0000 \ufffd"}`,
		`{"a":"\ud800\u0041"}`:       `{"a":"\ufffd\u0041"}`,
		`{"a":"\ud83d\ude00\udc00"}`: `{"a":"\ud83d\ude00\ufffd"}`,
		"{\"a\":\"\xff\"}":           "{\"a\":\"\uFFFD\"}",
	} {
		if got := string(Sanitize([]byte(in))); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := SanitizeString("a\x00b\xff"); got != "a\uFFFDb\uFFFD" {
		t.Fatalf("SanitizeString: %q", got)
	}
}

// FuzzSanitize: whatever the text, Sanitize's result is storable, keeps valid
// JSON valid, and leaves storable text alone.
func FuzzSanitize(f *testing.F) {
	for _, s := range []string{`{"a":"\u0000"}`, `"\ud800\udc00\ud800"`, "\"\xff\\u0000\"", `"\\\u0000"`, `"\u12"`, `\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		out := Sanitize(b)
		if Check(out) != nil {
			t.Fatalf("Sanitize(%q) = %q is still unstorable: %v", b, out, Check(out))
		}
		if Check(b) == nil && !bytes.Equal(out, b) {
			t.Fatalf("storable %q changed to %q", b, out)
		}
		if json.Valid(b) && !json.Valid(out) {
			t.Fatalf("valid JSON %q became invalid: %q", b, out)
		}
	})
}
