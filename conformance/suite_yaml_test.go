package conformance_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/routerhq/router/conformance"
)

// Unquoted dates and numbers with a leading zero, written the way
// docs/conformance.md writes expectations, are the text written: not a
// time.Time ("2025-03-03T00:00:00Z") nor octal (0042 is not 34). A correct
// reference then passes the check, and a correct reply every case.
func TestSuiteUnquotedDateAndLeadingZero(t *testing.T) {
	inv, err := loadPrompts(t).Get("invoice", "")
	if err != nil {
		t.Fatal(err)
	}
	const suite = `prompt: invoice
cases:
  - name: dates-unquoted
    input:
      text: "Invoice #0042. Date: 2025-03-03. Due: 2025-04-02. Hosting 1 @ $10.00. Total due (USD): $10.00"
    expect:
      equal:
        /invoice_number: "0042"
        /issue_date: 2025-03-03
    reference:
      invoice_number: "0042"
      currency: USD
      issue_date: 2025-03-03
      due_date: 2025-04-02
      line_items:
        - {description: Hosting, quantity: 1, unit_price: 10.00, amount: 10.00}
      total: 10.00
  - name: number-leading-zero
    input:
      text: "Invoice 0042. Date: 2025-03-03. Due: 2025-04-02. Hosting 1 @ $10.00. Total due (USD): $10.00"
    expect:
      equal:
        /invoice_number: 0042
`
	s, problems := conformance.ParseSuite("suite.yaml", []byte(suite))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	if err := s.Check(inv); err != nil {
		t.Errorf("a correct reference with an unquoted date is refused:\n%v", err)
	}
	// A provider that answers exactly what the invoice says:
	reply := []byte(`{"invoice_number":"0042","currency":"USD","issue_date":"2025-03-03","due_date":"2025-04-02",` +
		`"line_items":[{"description":"Hosting","quantity":1,"unit_price":10.00,"amount":10.00}],"total":10.00}`)
	for _, c := range s.Cases {
		if vs := c.Expect.Check(reply); len(vs) > 0 {
			t.Errorf("case %s fails a correct reply: %v", c.Name, vs)
		}
	}
}

// The job input and reference are the JSON of what is written: dates, times
// and leading-zero integers as text (also behind anchors and merges, and as
// keys), other numbers as the numbers written (10.50, 1e3); a quoted or
// explicitly tagged value as YAML reads it.
func TestSuiteYAMLValuesAreWhatIsWritten(t *testing.T) {
	const suite = `prompt: x
cases:
  - name: a
    input: &in
      date: 2025-03-03
      at: 2025-03-03T10:00:00Z
      zip: 01234
      also: 0049
      negative: -007
      zero: 0
      count: 12
      price: 10.50
      exp: 1e3
      yes: yes
      octal: !!int 010
      quoted: '2025-03-03'
      list: [2025-03-03, 0042, 7]
      2025-03-03: date key
      1: int key
    reference:
      <<: *in
      extra: 0042
    expect:
      one_of:
        /date: [2025-03-03, 0042]
`
	s, problems := conformance.ParseSuite("suite.yaml", []byte(suite))
	if s == nil {
		t.Fatalf("parse: %v", problems)
	}
	c := s.Cases[0]
	const in = `{"1":"int key","2025-03-03":"date key","also":"0049","at":"2025-03-03T10:00:00Z","count":12,"date":"2025-03-03",` +
		`"exp":1e3,"list":["2025-03-03","0042",7],"negative":"-007","octal":8,"price":10.50,"quoted":"2025-03-03","yes":"yes","zero":0,"zip":"01234"}`
	if got := string(c.InputJSON()); got != in {
		t.Errorf("input:\n got %s\nwant %s", got, in)
	}
	ref := strings.Replace(in, `"exp":1e3,`, `"exp":1e3,"extra":"0042",`, 1)
	if got := c.ReferenceJSON(); got != ref {
		t.Errorf("reference:\n got %s\nwant %s", got, ref)
	}
	for _, reply := range []string{`{"date":"2025-03-03"}`, `{"date":"0042"}`} {
		if vs := c.Expect.Check([]byte(reply)); len(vs) > 0 {
			t.Errorf("one_of refuses %s: %v", reply, vs)
		}
	}
	if vs := c.Expect.Check([]byte(`{"date":34}`)); len(vs) == 0 {
		t.Error("one_of [.., 0042] accepts 34 (0042 read as octal)")
	}
}

// A number in a notation JSON has not (hex, octal, binary, digit groups) or
// one JSON cannot hold is refused, naming the field and line and saying to
// quote it or write it in decimal; LoadDir names the file.
func TestSuiteYAMLRefusesNumbersJSONWritesDifferently(t *testing.T) {
	const suite = `prompt: x
cases:
  - name: a
    input:
      id: 0x2A
      mode: 0o17
      flags: 0b101
      total: 1_000
      limit: .inf
      ok: "0x2A"
    expect:
      equal:
        /id: 0X2a
`
	_, problems := conformance.ParseSuite("suite.yaml", []byte(suite))
	all := strings.Join(problems, "\n")
	for _, want := range []string{
		"cases[0] (a).input.id, line 5: 0x2A is read as the number 42: quote it (\"0x2A\")",
		"input.mode, line 6: 0o17 is read as the number 15",
		"input.flags, line 7: 0b101 is read as the number 5",
		"input.total, line 8: 1_000 is read as the number 1000",
		"input.limit, line 9: .inf is read as a number JSON cannot hold: quote it",
		"cases[0] (a).expect.equal[/id], line 13: 0X2a is read as the number 42",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("problems do not say %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "input.ok") || len(problems) != 6 {
		t.Errorf("want 6 problems, none for the quoted value:\n%s", all)
	}

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "x", conformance.SuiteFile)
	if err := os.WriteFile(file, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := conformance.LoadDir(dir)
	if err == nil || !strings.Contains(err.Error(), file+": cases[0] (a).input.id, line 5: 0x2A is read as the number 42: quote it") {
		t.Fatalf("LoadDir: %v; want the file, field, line and how to fix it", err)
	}
}
