package prompt

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// text/template reads a key by name only when the name is letters, digits
// and '_': {{ .customer-tier }} is .customer then a '-' the lexer cannot
// place, and the parser says only "bad character U+002D '-'". JSON keys are
// often written with hyphens, so hyphenKeyHint finds the read and says how
// to write it ({{ index . "customer-tier" }}).

var (
	// hyphenErrRE is the parser's error for such a read; its number is the
	// content's line the '-' is on.
	hyphenErrRE = regexp.MustCompile(`:(\d+): bad character U\+002D '-'$`)
	// hyphenChainRE is a read of a key chain (.a.b, $.a, $x.a) whose names
	// may hold hyphens; hyphenKeyHint keeps those that do.
	hyphenChainRE = regexp.MustCompile(`\$?[\p{L}\p{N}_]*(?:\.[\p{L}\p{N}_-]+)+`)
)

// hyphenKeyHint returns, for err, the error of parsing src, a message naming
// the read of a key with a hyphen that caused it, where it is in the content
// and how to write it; "" when err is not such an error or the read is not
// found.
func hyphenKeyHint(src string, err error) string {
	m := hyphenErrRE.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	line, _ := strconv.Atoi(m[1])
	for _, loc := range hyphenChainRE.FindAllStringIndex(src, -1) {
		at := loc[0]
		l, col := position([]byte(src), at)
		if l != line || !inAction(src, at) || at > 0 && strings.ContainsAny(src[at-1:at], ")]") {
			continue // (pipeline).a-b: its base is not a name
		}
		chain := src[at:loc[1]]
		key, call, ok := indexForm(chain)
		if !ok {
			continue
		}
		return fmt.Sprintf(`%s (content line %d, column %d) reads the key %q, but a template reads a key by name only when the name is letters, digits and '_': it stops at the '-' (text/template: bad character U+002D '-'); write {{ %s }}`,
			chain, l, col, key, call)
	}
	return ""
}

// indexForm rewrites chain (.customer.first-name) as an index call (index
// .customer "first-name") and returns the first name with a hyphen. ok is
// false when no name holds one, or one starts or ends with it ({{ .a-}},
// meant as .a -}}).
func indexForm(chain string) (key, call string, ok bool) {
	head, path, _ := strings.Cut(chain, ".")
	if head != "" && !strings.HasPrefix(head, "$") {
		return "", "", false // 1.5-2, a number, not a read
	}
	names := strings.Split(path, ".")
	k := -1
	for i, n := range names {
		if n == "" || strings.HasPrefix(n, "-") || strings.HasSuffix(n, "-") {
			return "", "", false
		}
		if k < 0 && strings.Contains(n, "-") {
			k = i
		}
	}
	if k < 0 {
		return "", "", false
	}
	from := head
	switch {
	case k > 0:
		from = head + "." + strings.Join(names[:k], ".")
	case head == "":
		from = "."
	}
	args := make([]string, 0, len(names)-k)
	for _, n := range names[k:] {
		args = append(args, strconv.Quote(n))
	}
	return names[k], "index " + from + " " + strings.Join(args, " "), true
}

// inAction reports whether src[at] is inside an action ({{ ... }}), outside
// its string literals and comments.
func inAction(src string, at int) bool {
	open := strings.LastIndex(src[:at], "{{")
	if open < 0 || strings.Contains(src[open:at], "}}") {
		return false
	}
	inside := strings.TrimLeftFunc(strings.TrimPrefix(src[open+2:at], "-"), unicode.IsSpace)
	if strings.HasPrefix(inside, "/*") {
		return false
	}
	quote := rune(0)
	escaped := false
	for _, r := range src[open+2 : at] {
		switch {
		case escaped:
			escaped = false
		case quote == '"' && r == '\\':
			escaped = true
		case quote != 0 && r == quote:
			quote = 0
		case quote == 0 && (r == '"' || r == '`' || r == '\''):
			quote = r
		}
	}
	return quote == 0
}
