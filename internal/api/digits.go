package api

import "math"

// plainDigits reads an integer the API takes in a request (GET /v1/jobs's
// limit, an attempt's seq, Prefer's wait, an SDK's retry count): ASCII
// decimal digits only, as docs/api.md writes them — no sign, space, decimal
// point or exponent, which strconv.Atoi's "+5" and "-0" would let through as
// numbers the caller did not write. Leading zeros are read as decimal ("007"
// is 7). ok is false for anything else, and for "". A number too large for
// an int64 is math.MaxInt64: every caller bounds it and refuses or caps it
// there, so it need not be told apart.
func plainDigits(v string) (n int64, ok bool) {
	if v == "" {
		return 0, false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + d
	}
	return n, true
}
