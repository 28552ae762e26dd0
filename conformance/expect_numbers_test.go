package conformance_test

import (
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// expect.equal and expect.one_of compare numbers by their exact decimal
// value: numbers that a float64 with a relative tolerance took for equal
// (12345678901 and 12345678902, 1234567.89 and 1234567.891, 2^53+1 and 2^53)
// differ, and numbers equal in value however written (1, 1.0, 1e0; 12.50 and
// 12.5) are equal.
func TestExpectComparesNumbersExactly(t *testing.T) {
	s, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: x
cases:
  - name: c
    input: {}
    expect:
      equal:
        /a: 12345678901
        /b: 1234567.89
        /c: 9007199254740993
        /d: 1
        /e: 1.0
        /f: 12.50
        /g: 123456789012345678901
        /h: [1, {x: 2.0}]
      one_of:
        /i: [12345678901, 7]
        /j: [1e0, 7]
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	exp := s.Cases[0].Expect
	same := `{"a":12345678901,"b":1234567.890,"c":9007199254740993,"d":1.0,"e":1e0,"f":12.5,"g":123456789012345678901,` +
		`"h":[1.0,{"x":2}],"i":12345678901,"j":1}`
	if vs := exp.Check([]byte(same)); len(vs) > 0 {
		t.Errorf("equal numbers are refused: %v", vs)
	}
	differ := `{"a":12345678902,"b":1234567.891,"c":9007199254740992,"d":1.0000000001,"e":1,"f":12.5,"g":123456789012345678902,` +
		`"h":[1,{"x":2.0000000001}],"i":12345678902,"j":1.0}`
	var got []string
	for _, v := range exp.Check([]byte(differ)) {
		got = append(got, v.Rule+" "+v.Path)
	}
	want := "expect.equal /a, expect.equal /b, expect.equal /c, expect.equal /d, expect.equal /g, expect.equal /h, expect.one_of /i"
	if strings.Join(got, ", ") != want {
		t.Errorf("violations %v, want %s", got, want)
	}

	// An Expect built in code compares Go numbers the same way.
	code := conformance.Expect{Equal: map[string]any{"/a": int64(12345678901), "/b": 1.5}}
	if vs := code.Check([]byte(`{"a":12345678902,"b":1.50}`)); len(vs) != 1 || vs[0].Path != "/a" {
		t.Errorf("Go values: %v, want only /a", vs)
	}
}

// A suite's input and reference become JSON as written: 12.50 stays 12.50,
// and an integer beyond a float64's precision keeps every digit.
func TestSuiteNumbersBecomeJSONAsWritten(t *testing.T) {
	s, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: x
cases:
  - name: c
    input:
      price: 12.50
      id: 123456789012345678901
      small: .5
      signed: +3
      list: [-0.0, 1E3]
    reference: {total: 12.50, id: 9007199254740993}
`))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	const in = `{"id":123456789012345678901,"list":[-0.0,1E3],"price":12.50,"signed":3,"small":0.5}`
	if got := string(s.Cases[0].InputJSON()); got != in {
		t.Errorf("input:\n got %s\nwant %s", got, in)
	}
	if got, want := s.Cases[0].ReferenceJSON(), `{"id":9007199254740993,"total":12.50}`; got != want {
		t.Errorf("reference:\n got %s\nwant %s", got, want)
	}
}

// expect.length is a whole number: 3.5 is refused naming the field and the
// line (it was truncated to 3), as is a number JSON cannot write (007.5).
func TestSuiteLengthMustBeAWholeNumber(t *testing.T) {
	_, problems := conformance.ParseSuite("suite.yaml", []byte(`prompt: invoice
cases:
  - name: c
    input: {text: t, price: 007.5}
    expect:
      length: {/line_items: 3.5, /other: 2}
`))
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"cases[0] (c).expect.length[/line_items], line 6: 3.5 is not a whole number: write how many items the array must have, like 3",
		"cases[0] (c).input.price, line 4: 007.5 is read as the number 7.5, which JSON does not write so: quote it",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems do not say %q:\n%s", want, all)
		}
	}
	if len(problems) != 2 {
		t.Errorf("want 2 problems:\n%s", all)
	}
}
