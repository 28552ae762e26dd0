package contract_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/routerhq/router/internal/contract"
)

// Patterns ordinary schemas use for a value, with the instructions each
// compiles to: far inside MaxSchemaPatternWork.
var ordinaryPatterns = []string{
	`^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$`,               // email, 13
	`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, // UUID, 49
	`^\d{4}-\d{2}-\d{2}$`, // ISO date
	`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$`, // date-time, 59
	`^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$`,                                 // IBAN, 70
	`^\+?[1-9]\d{1,14}$`,                                               // E.164 phone
}

// Larger ones: HTML's email (272), a URL (558), a length (514, 1,004).
const (
	htmlEmail = `^[a-zA-Z0-9.!#$%&'*+/=?^_{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$`
	url       = `^https?:\/\/(www\.)?[-a-zA-Z0-9@:%._\+~#=]{1,256}\.[a-zA-Z0-9()]{1,6}\b([-a-zA-Z0-9()@:%_\+.~#?&//=]*)$`
)

// ipv6 is the common IPv6-address pattern, about 1,250 instructions: among
// the largest a schema uses for a value. (Anchored with ^ it counts its
// classes' runes once per repetition against MaxSchemaPatternSize, 73,000.)
const ipv6 = `(([0-9a-fA-F]{1,4}:){7,7}[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,7}:|([0-9a-fA-F]{1,4}:){1,6}:[0-9a-fA-F]{1,4}|([0-9a-fA-F]{1,4}:){1,5}(:[0-9a-fA-F]{1,4}){1,2}|([0-9a-fA-F]{1,4}:){1,4}(:[0-9a-fA-F]{1,4}){1,3}|([0-9a-fA-F]{1,4}:){1,3}(:[0-9a-fA-F]{1,4}){1,4}|([0-9a-fA-F]{1,4}:){1,2}(:[0-9a-fA-F]{1,4}){1,5}|[0-9a-fA-F]{1,4}:((:[0-9a-fA-F]{1,4}){1,6})|:((:[0-9a-fA-F]{1,4}){1,7}|:)|fe80:(:[0-9a-fA-F]{0,4}){0,4}%[0-9a-zA-Z]{1,}|::(ffff(:0{1,4}){0,1}:){0,1}((25[0-5]|(2[0-4]|1{0,1}[0-9]){0,1}[0-9])\.){3,3}(25[0-5]|(2[0-4]|1{0,1}[0-9]){0,1}[0-9])|([0-9a-fA-F]{1,4}:){1,4}:((25[0-5]|(2[0-4]|1{0,1}[0-9]){0,1}[0-9])\.){3,3}(25[0-5]|(2[0-4]|1{0,1}[0-9]){0,1}[0-9]))$`

func jsonString(s string) string { return fmt.Sprintf("%q", s) }

// Ordinary schemas keep compiling under the bound on pattern matching: a
// few hundred properties each with its pattern (each applies to its own
// value), an address that is IPv4 or IPv6 (anyOf: both patterns apply to
// one value), a string with a format pattern and a length pattern (allOf),
// an array of patterned strings, a map whose keys are matched by a few
// patternProperties names, and propertyNames with a pattern.
func TestCallerSchemaWithOrdinaryPatternsIsAccepted(t *testing.T) {
	var props []string
	for i := range 300 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string","pattern":%s}`, i, jsonString(ordinaryPatterns[i%len(ordinaryPatterns)])))
	}
	props = append(props,
		`"address":{"type":"string","anyOf":[{"pattern":"^((25[0-5]|2[0-4]\\d|1?\\d?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1?\\d?\\d)$"},{"pattern":`+jsonString(ipv6)+`}]}`,
		`"homepage":{"type":"string","allOf":[{"pattern":`+jsonString(url)+`},{"pattern":"^.{1,255}$"}]}`,
		`"contact":{"type":"string","pattern":`+jsonString(htmlEmail)+`}`,
		`"title":{"type":"string","pattern":"^[a-zA-Z0-9 ]{1,500}$"}`,
		`"emails":{"type":"array","items":{"type":"string","pattern":`+jsonString(ordinaryPatterns[0])+`}}`,
		`"labels":{"type":"object","propertyNames":{"pattern":"^[a-z][a-z0-9_]{0,62}$"},"patternProperties":{"^x-":{"type":"string"},"^[a-z]+_id$":{"type":"string","pattern":`+jsonString(ordinaryPatterns[2])+`},"^tag_[0-9]+$":{"type":"string"}}}`,
	)
	schema := `{"type":"object","properties":{` + strings.Join(props, ",") + `},"additionalProperties":false}`
	if _, err := contract.CompileRequestSchema([]byte(schema), "response_format.json_schema"); err != nil {
		t.Fatalf("a %d-byte schema of 300 patterned properties and ordinary combinations: %v", len(schema), err)
	}
}

// A caller's schema whose patterns can cost more than MaxSchemaPatternWork
// instructions a character of one string (or of each member name of one
// object) is refused when compiled, however they come to apply there: one
// large pattern, one pattern applied many times through allOf or $ref, many
// patternProperties names. The error names the place of the answer, the
// pattern that costs most, the bound and what to do.
func TestCallerSchemaPatternMatchingBoundNamesThePlaceAndTheFix(t *testing.T) {
	big := `^(?s:.{0,1000})(?s:.{0,1000})*$` // about 4,000 instructions
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf(`"^k%d_[a-z]{0,40}$":{}`, i))
	}
	for name, c := range map[string]struct{ schema, place, pointer string }{
		"one pattern beyond the bound": {`{"type":"object","properties":{"s":{"type":"string","pattern":"^(?s:.{0,1000})(?s:.{0,1000})(?s:.{0,1000})*$"}}}`,
			"the answer's /s", "#/properties/s"},
		"allOf twice": {`{"type":"object","properties":{"s":{"allOf":[{"pattern":` + jsonString(big) + `},{"pattern":` + jsonString(big) + `}]}}}`,
			"the answer's /s", "#/properties/s/allOf/"},
		"a definition referred to twice": {`{"$defs":{"long":{"pattern":` + jsonString(big) + `}},"type":"array","items":{"allOf":[{"$ref":"#/$defs/long"},{"$ref":"#/$defs/long"}]}}`,
			"the answer's /0", "#/$defs/long, 4008 instructions, applied 2 times"},
		"patternProperties names": {`{"type":"object","properties":{"m":{"type":"object","patternProperties":{` + strings.Join(names, ",") + `}}}}`,
			"each member name of one object", "the answer's /m"},
	} {
		_, err := contract.CompileRequestSchema([]byte(c.schema), "response_format.json_schema")
		if err == nil {
			t.Errorf("%s: compiled; want it refused as too costly to validate against", name)
			continue
		}
		for _, want := range []string{"response_format.json_schema is too costly to validate against", c.place, c.pointer,
			fmt.Sprintf("more than the %d", contract.MaxSchemaPatternWork), "use maxLength for a length"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %q: want %q in it", name, err, want)
			}
		}
	}
	// The big pattern once is within the bound; a prompt's schema (the
	// router's own) is not bounded at all.
	once := `{"type":"object","properties":{"s":{"type":"string","pattern":` + jsonString(big) + `}}}`
	if _, err := contract.CompileRequestSchema([]byte(once), "response_format.json_schema"); err != nil {
		t.Errorf("one 4,000-instruction pattern on a value: %v", err)
	}
	twice := `{"type":"object","properties":{"s":{"allOf":[{"pattern":` + jsonString(big) + `},{"pattern":` + jsonString(big) + `}]}}}`
	if _, err := contract.CompileSchema([]byte(twice), ""); err != nil {
		t.Errorf("a prompt's schema: %v", err)
	}
}
