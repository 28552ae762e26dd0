package contract

import (
	"net/mail"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The router asserts "format" (docs/prompts.md §3, docs/chat.md), so a value
// that passes one must be read by the caller's own parser of the format.
// jsonschema/v5's checkers let through values that are not: its time reads
// each field with strconv.Atoi, which takes a sign ("2024-01-01T+1:+2:+3Z");
// its ipv4 takes a sign and "00"; its hostname looks for a leading '-' in the
// first label only; its uri is url.Parse, which takes a space. The router's
// own replace them in every schema it compiles (strictFormats): date, time
// and date-time as RFC 3339 writes them (ASCII digits in fixed places, a leap
// second only at 23:59:60 UTC, as the library had it), ipv4 and ipv6 as
// netip.ParseAddr reads them (no sign, no leading zero, no zone), hostname
// by RFC 1123 labels, email with such a domain, uri as net/url reads it with
// no character RFC 3986 does not allow. Every other format is the library's.

// strictFormats registers the router's checkers on c (a compiler's own map
// wins over the package's jsonschema.Formats).
func strictFormats(c *jsonschema.Compiler) {
	for name, fn := range map[string]func(string) bool{
		"date-time": isDateTime,
		"date":      isDate,
		"time":      isTime,
		"ipv4":      isIPv4,
		"ipv6":      isIPv6,
		"hostname":  isHostname,
		"email":     isEmail,
		"uri":       isURI,
	} {
		c.Formats[name] = func(v any) bool {
			s, ok := v.(string)
			return !ok || fn(s) // a format checks strings only
		}
	}
}

// digitsAt reports whether s[at:at+n] are n ASCII digits.
func digitsAt(s string, at, n int) bool {
	if at+n > len(s) {
		return false
	}
	for _, c := range []byte(s[at : at+n]) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// num2 is the two ASCII digits at s[at:] as a number (digitsAt checked them).
func num2(s string, at int) int { return int(s[at]-'0')*10 + int(s[at+1]-'0') }

// isDate: full-date, yyyy-mm-dd, a day of its month (February 29 of a leap
// year only).
func isDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' || !digitsAt(s, 0, 4) || !digitsAt(s, 5, 2) || !digitsAt(s, 8, 2) {
		return false
	}
	_, err := time.Parse("2006-01-02", s)
	return err == nil
}

// isTime: full-time, hh:mm:ss, an optional fraction of one digit or more,
// and Z or ±hh:mm. A second of 60 (a leap second) only at 23:59 UTC.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' || !digitsAt(s, 0, 2) || !digitsAt(s, 3, 2) || !digitsAt(s, 6, 2) {
		return false
	}
	h, m, sec := num2(s, 0), num2(s, 3), num2(s, 6)
	if h > 23 || m > 59 || sec > 60 {
		return false
	}
	rest := s[8:]
	if rest != "" && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 {
			return false
		}
		rest = rest[n:]
	}
	switch {
	case rest == "z" || rest == "Z":
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':' && digitsAt(rest, 1, 2) && digitsAt(rest, 4, 2):
		zh, zm := num2(rest, 1), num2(rest, 4)
		if zh > 23 || zm > 59 {
			return false
		}
		// The time in UTC, for the leap second.
		sign := 1
		if rest[0] == '+' {
			sign = -1
		}
		hm := ((h*60+m+sign*(zh*60+zm))%(24*60) + 24*60) % (24 * 60)
		h, m = hm/60, hm%60
	default:
		return false
	}
	return sec != 60 || h == 23 && m == 59
}

// isDateTime: date-time, a full-date, T (or t) and a full-time.
func isDateTime(s string) bool {
	return len(s) >= 20 && (s[10] == 'T' || s[10] == 't') && isDate(s[:10]) && isTime(s[11:])
}

// isIPv4: dotted decimal, four parts 0 to 255 without a sign or a leading 0.
func isIPv4(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is4()
}

// isIPv6: an IPv6 address, its last 32 bits possibly dotted decimal, no zone.
func isIPv6(s string) bool {
	a, err := netip.ParseAddr(s)
	return err == nil && a.Is6() && a.Zone() == ""
}

// isHostname: RFC 1123 labels of 1 to 63 ASCII letters, digits and '-', none
// starting or ending with '-', 253 characters at most (a trailing dot aside).
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) < 1 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range []byte(label) {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isEmail: local@domain, 254 characters at most, a local part of at most 64
// that net/mail reads, a domain that is a hostname or a bracketed IP address.
// The local part is read the same way whatever the domain: beside an address
// literal it is read with a host name in the literal's place, so text that is
// no local part ("not an address", "a@b") is refused there too.
func isEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	if len(s) > 254 || at < 1 || at > 64 {
		return false
	}
	domain, address := s[at+1:], s
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			if !isIPv6(v6) {
				return false
			}
		} else if !isIPv4(ip) {
			return false
		}
		address = s[:at] + "@example.com"
	} else if !isHostname(domain) {
		return false
	}
	_, err := mail.ParseAddress(address)
	return err == nil
}

// isURI: an absolute URI that net/url reads, with no character RFC 3986 does
// not allow (a space, a control character, a non-ASCII one, or one of
// "<>\^`{|}), a '%' only as the start of a percent-encoding ('%' and two hex
// digits, RFC 3986 §2.1, in the query too, which net/url keeps unchecked), at
// most one '#', '[' and ']' only around the host, and a bracketed IPv6 host
// that is one.
func isURI(s string) bool {
	for i, c := range []byte(s) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"<>\\^`{|}", c) >= 0 {
			return false
		}
		if c == '%' && (i+2 >= len(s) || !isHexDigit(s[i+1]) || !isHexDigit(s[i+2])) {
			return false
		}
	}
	if strings.Count(s, "#") > 1 || strings.ContainsAny(outsideAuthority(s), "[]") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() {
		return false
	}
	if h := u.Hostname(); strings.IndexByte(h, ':') >= 0 {
		return strings.HasPrefix(u.Host, "[") && isIPv6(h)
	}
	return true
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// outsideAuthority is s without its authority ("//" host and the rest up to
// the first '/', '?' or '#'), the one place RFC 3986 lets '[' and ']' stand
// (around an IP literal host).
func outsideAuthority(s string) string {
	colon := strings.IndexByte(s, ':')
	if colon < 0 || !strings.HasPrefix(s[colon+1:], "//") {
		return s
	}
	start := colon + 3
	end := strings.IndexAny(s[start:], "/?#")
	if end < 0 {
		return s[:start]
	}
	return s[:start] + s[start+end:]
}
