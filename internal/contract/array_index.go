package contract

import "strconv"

// ArrayIndex reads a JSON pointer segment as an array index, as RFC 6901
// writes one: "0", or decimal digits without a leading zero. ok is false
// for anything else, "01", "+1", "-0" and " 1" included (strconv.Atoi would
// read them as indexes), and for an index past int.
func ArrayIndex(seg string) (int, bool) {
	if seg == "" || seg[0] < '0' || seg[0] > '9' || (seg[0] == '0' && len(seg) > 1) {
		return 0, false
	}
	i, err := strconv.Atoi(seg)
	return i, err == nil
}

// looseIndex reports whether seg is read as an index from 0 by strconv.Atoi
// but is not one as RFC 6901 writes it (ArrayIndex): with a sign or a
// leading zero ("01", "+1", "-0"). canon is the index as RFC 6901 writes it.
func looseIndex(seg string) (canon string, loose bool) {
	n, err := strconv.Atoi(seg)
	if _, ok := ArrayIndex(seg); err != nil || ok || n < 0 {
		return "", false
	}
	return strconv.Itoa(n), true
}
