package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// YAMLValue decodes a rule's value (an enum value) from YAML as written, not
// by YAML's own type rules: a number becomes a json.Number holding its
// decimal text (123456789012345678901234567 is not rounded to a float64;
// 0x1F is 31, 1_000 is 1000), and a date or time (2024-01-01, which YAML
// reads as a timestamp) is the string as written, since an output's date is
// a JSON string. Other values decode as yaml.v3 decodes them into any. It
// refuses .inf, .nan and an integer with a leading zero (010, which YAML 1.1
// reads as octal 8), saying how to write them.
func YAMLValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias != nil {
			return YAMLValue(n.Alias)
		}
	case yaml.DocumentNode:
		if len(n.Content) == 1 {
			return YAMLValue(n.Content[0])
		}
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := YAMLValue(c)
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
				break // a merge key or a complex key: decode as YAML does
			}
			v, err := YAMLValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		if len(m) == len(n.Content)/2 {
			return m, nil
		}
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!int", "!!float":
			s, err := YAMLNumber(n.Value)
			if err != nil {
				return nil, fmt.Errorf("line %d: value `%s` %w", n.Line, n.Value, err)
			}
			return json.Number(canonicalNumber(s)), nil
		case "!!timestamp":
			return n.Value, nil
		}
	}
	var v any
	err := n.Decode(&v)
	return v, err
}

// canonicalNumber is the text JSON gives the number YAML decoded from lit
// (an int64 or uint64 in decimal, a float64 as encoding/json writes it:
// 1.50 is 1.5, 1e6 is 1000000) when that number is exactly lit's value, and
// lit otherwise. A prompt's digest holds its enum values as this text, so
// one whose values a float64 holds exactly keeps the digest it had when
// they were decoded as float64s, whichever way they are written.
func canonicalNumber(lit string) string {
	if i, err := strconv.ParseInt(lit, 10, 64); err == nil {
		return strconv.FormatInt(i, 10)
	}
	if u, err := strconv.ParseUint(lit, 10, 64); err == nil {
		return strconv.FormatUint(u, 10)
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	b, err := json.Marshal(f)
	if err != nil || !decimalEqual(string(b), lit) {
		return lit
	}
	return string(b)
}

// yamlDecimalRE is a decimal as YAML writes it (after sign and underscores
// are removed): digits, a point, digits, an exponent; ".5" and "5." too.
var yamlDecimalRE = regexp.MustCompile(`^([0-9]*)(?:\.([0-9]*))?([eE][-+]?[0-9]+)?$`)

// YAMLNumber returns the JSON decimal text of a YAML number literal (a scalar
// YAML resolves as !!int or !!float): the sign "+" and underscores dropped,
// 0x, 0o and 0b integers in decimal, ".5" as 0.5. It refuses .inf and .nan
// (a rule compares finite numbers), an integer with a leading zero (YAML 1.1
// reads 010 as octal 8; the reader likely meant 10 or the string "010"), and
// an exponent beyond ±10^15.
func YAMLNumber(s string) (string, error) {
	t := strings.ReplaceAll(s, "_", "")
	neg := false
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	var lit string
	switch lower := strings.ToLower(t); {
	case lower == ".inf":
		return "", errors.New("is infinite; rules compare finite numbers")
	case lower == ".nan":
		return "", errors.New("is not a number; write a finite number")
	case strings.HasPrefix(lower, "0x"), strings.HasPrefix(lower, "0o"), strings.HasPrefix(lower, "0b"):
		base := map[byte]int{'x': 16, 'o': 8, 'b': 2}[lower[1]]
		b, ok := new(big.Int).SetString(t[2:], base)
		if !ok {
			return "", errors.New("is not a number; write it in decimal")
		}
		lit = b.String()
	default:
		m := yamlDecimalRE.FindStringSubmatch(t)
		if m == nil || m[1] == "" && m[2] == "" {
			return "", errors.New("is not a number; write it in decimal")
		}
		ip, fp, exp := m[1], m[2], m[3]
		if len(ip) > 1 && ip[0] == '0' && !strings.Contains(t, ".") && exp == "" {
			return "", errors.New(`has a leading zero, which YAML reads as octal (010 is 8): write the number without it, or quote it ("010") for a string`)
		}
		if ip == "" {
			ip = "0"
		}
		lit = ip
		if fp != "" {
			lit += "." + fp
		}
		lit += exp
	}
	if neg {
		lit = "-" + lit
	}
	if _, ok := CompareNumbers(json.Number(lit), 0); !ok {
		return "", errors.New("has an exponent beyond ±10^15; a rule cannot compare it")
	}
	return lit, nil
}
