package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/routerhq/router/internal/jsonenc"
)

var stringSeeds = []string{
	"", "plain", `quote " and \ backslash`, "controls \x00\x01\b\f\n\r\t\x1f\x7f",
	"html <b> & </b>", "line\u2028para\u2029", "invalid \xff\xfe utf-8 \xe2\x80", "ünïcödé ✓ 😀",
}

func checkString(t *testing.T, s string) {
	t.Helper()
	want, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonenc.AppendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got[1:], want)
	}
}

func TestAppendStringIsMarshal(t *testing.T) {
	for _, s := range stringSeeds {
		checkString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringSeeds {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

func TestAppendFloatIsMarshal(t *testing.T) {
	values := []float64{0, 1, -1, 0.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789.125, -3.4e38,
		math.SmallestNonzeroFloat32, math.MaxFloat32, 0.1, 2.0 / 3}
	for _, f := range values {
		want, _ := json.Marshal(f)
		if got := jsonenc.AppendFloat(nil, f, 64); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(%v, 64) = %s, encoding/json writes %s", f, got, want)
		}
		f32 := float32(f)
		want, _ = json.Marshal(f32)
		if got := jsonenc.AppendFloat(nil, float64(f32), 32); !bytes.Equal(got, want) {
			t.Errorf("AppendFloat(float32 %v, 32) = %s, encoding/json writes %s", f32, got, want)
		}
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := jsonenc.AppendFloat(nil, f, 64); string(got) != "null" {
			t.Errorf("AppendFloat(%v) = %s, want null (encoding/json refuses it)", f, got)
		}
	}
}

func TestAppendRawIsMarshal(t *testing.T) {
	raws := []string{`{"a": 1, "b": [true, null]}`, "{\n  \"s\": \"a b\\\" c <&> \u2028\"\n}", `"x"`, `  [ 1 ,2 ]  `}
	for _, r := range raws {
		want, err := json.Marshal(json.RawMessage(r))
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonenc.AppendRaw(nil, []byte(r)); !bytes.Equal(got, want) {
			t.Errorf("AppendRaw(%q) = %s, encoding/json writes %s", r, got, want)
		}
	}
	if got := jsonenc.AppendRaw(nil, nil); string(got) != "null" {
		t.Errorf("AppendRaw(nil) = %s, want null", got)
	}
}

func FuzzAppendRaw(f *testing.F) {
	f.Add(`{"a": [1, 2.5e3, "x y", true, null], "<&>": "\u2028 \"q\" \\"}`)
	f.Add(" \n[ ] ")
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return // AppendRaw writes JSON it is given; it does not validate
		}
		want, err := json.Marshal(json.RawMessage(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonenc.AppendRaw(nil, []byte(raw)); !bytes.Equal(got, want) {
			t.Errorf("AppendRaw(%q) = %s, encoding/json writes %s", raw, got, want)
		}
	})
}

func FuzzAppendFloat(f *testing.F) {
	f.Add(0.1, float32(0.1))
	f.Add(1e21, float32(1e-7))
	f.Fuzz(func(t *testing.T, f64 float64, f32 float32) {
		if want, err := json.Marshal(f64); err == nil {
			if got := jsonenc.AppendFloat(nil, f64, 64); !bytes.Equal(got, want) {
				t.Errorf("AppendFloat(%v, 64) = %s, encoding/json writes %s", f64, got, want)
			}
		}
		if want, err := json.Marshal(f32); err == nil {
			if got := jsonenc.AppendFloat(nil, float64(f32), 32); !bytes.Equal(got, want) {
				t.Errorf("AppendFloat(float32 %v, 32) = %s, encoding/json writes %s", f32, got, want)
			}
		}
	})
}
